import { afterAll, afterEach, beforeAll, describe, expect, it } from "@effect/vitest"
import { Fault } from "@erp-client/sandbox"
import { Effect, Option } from "effect"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import * as SavedExport from "../src/internal/savedExport.js"
import { erp, openRequestsAfterwards, type Run, SECRET, startSandbox, withoutSummary } from "./harness.js"

// Work is never thrown away (docs/cli.md, "Files, resume and restart"): an export to a file that fails or is stopped keeps the records
// of its complete pages, says so in its one line, and `--resume` finishes it. Signals stop the command in order.

type Started = Awaited<ReturnType<typeof startSandbox>>

let slow: Started
let dir: string
const runs: Array<Run> = []
const record = (run: Run) => {
  runs.push(run)
  return run
}

beforeAll(async () => {
  // 60 pages of 10 at 40 ms each: an export can be broken or stopped midway.
  slow = await startSandbox({
    partners: 600,
    rateLimit: { limit: 1_000, window: "30 seconds" },
    latency: { base: "40 millis" }
  })
  dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "erp-kept-"))
})

afterEach(async () => {
  await slow.run(slow.sandbox.clearFaults)
  await slow.run(slow.sandbox.setKeys([SECRET]))
})

afterAll(async () => {
  await slow?.close()
  if (dir !== undefined) Fs.rmSync(dir, { recursive: true, force: true })
  for (const run of runs) expect(run.stdout + run.stderr).not.toContain(SECRET)
})

const seeded = () =>
  Array.from({ length: slow.sandbox.partnerCount }, (_, i) => JSON.stringify(slow.sandbox.partnerAt(i)))
const filesOf = (name: string) => Fs.readdirSync(dir).filter((file) => file.startsWith(`${name}.`)).sort()
const lines = (text: string) => text === "" ? [] : text.trimEnd().split("\n")
const pageArgs = (file: string) => ["--page-size", "10", "--concurrency", "1", "--output", file]

const HOW = "run the same command with --resume to continue, or --restart to start over"

/**
 * The export a failed or stopped run kept, checked against its one line: the line names the part file and the records
 * in it, the state agrees, the part holds exactly the records of the complete pages (the first ones of the list, each
 * once, nothing cut short).
 */
const keptExport = (run: Run, file: string, said: RegExp) => {
  const stderr = lines(run.stderr)
  expect(stderr).toHaveLength(1)
  const match = new RegExp(`^erp: ${said.source}; kept (\\d+) records in (.+): ${HOW}$`).exec(stderr[0]!)
  expect(match, stderr[0]).not.toBeNull()
  expect(match![2]).toBe(`${file}.part`)
  const records = Number(match![1])
  const part = Fs.readFileSync(`${file}.part`, "utf8")
  const state = JSON.parse(Fs.readFileSync(`${file}.resume.json`, "utf8"))
  expect(state.records).toBe(records)
  expect(Buffer.byteLength(part)).toBe(state.bytes)
  expect(records).toBeGreaterThan(0)
  expect(records).toBeLessThan(600)
  expect(lines(part)).toEqual(seeded().slice(0, records))
  return { records, state }
}

/** `--resume` finishes a kept export: every record exactly once, and only the file is left. */
const resumeFinishes = async (args: ReadonlyArray<string>, name: string, file: string) => {
  const resumed = record(await erp([...args, "--resume"], { env: slow.env }))
  expect(withoutSummary(resumed.stderr)).toBe("")
  expect(resumed.code).toBe(0)
  expect(lines(Fs.readFileSync(file, "utf8"))).toEqual(seeded())
  expect(filesOf(name)).toEqual([])
  expect(Fs.readdirSync(dir).filter((f) => f === name)).toEqual([name])
}

/** Polls until `check` holds (bounded): for what the command writes as it goes. */
const until = async (check: () => boolean) => {
  for (let i = 0; i < 1_500 && !check(); i++) await new Promise((r) => setTimeout(r, 20))
  if (!check()) throw new Error("never happened")
}

describe("an export to a file that fails", () => {
  it("keeps its complete pages and says so; a run without --resume refuses them; --resume finishes", async () => {
    const name = "failed.ndjson"
    const file = Path.join(dir, name)
    const args = ["partners", "list", ...pageArgs(file)]
    const midway = slow.listRequests(6)
    const running = erp(args, { env: { ...slow.env, ERP_RETRIES: "0" } })
    await midway
    await slow.run(slow.sandbox.inject(Fault.Fault.Status({ status: 503 }), { times: Infinity }))
    const run = record(await running)
    await slow.run(slow.sandbox.clearFaults)
    expect(run.code).toBe(1)
    expect(run.stdout).toBe("")
    keptExport(run, file, /GET partner\/list: unexpected HTTP status 503/)
    expect(filesOf(name)).toEqual([`${name}.part`, `${name}.resume.json`])

    // Never overwritten by accident: the same command without --resume is refused and touches nothing.
    const before = [Fs.readFileSync(`${file}.part`), Fs.readFileSync(`${file}.resume.json`)]
    const plain = record(await erp(args, { env: slow.env }))
    expect(plain.code).toBe(2)
    expect(plain.stderr).toMatch(/an unfinished export is saved beside it .*continue it with --resume/)
    expect([Fs.readFileSync(`${file}.part`), Fs.readFileSync(`${file}.resume.json`)]).toEqual(before)

    await resumeFinishes(args, name, file)
  })

  it("drift-safe, through erp api list, with the key revoked midway: exit 3, the ids kept too", async () => {
    const name = "revoked.ndjson"
    const file = Path.join(dir, name)
    const args = ["api", "list", "partner/list", "--safe", ...pageArgs(file)]
    const midway = slow.listRequests(6)
    const running = erp(args, { env: slow.env })
    await midway
    await slow.run(slow.sandbox.revokeKey(SECRET))
    const run = record(await running)
    await slow.run(slow.sandbox.setKeys([SECRET]))
    expect(run.code).toBe(3)
    const { records, state } = keptExport(run, file, /partner\/list: the API key was refused \(Unauthorized\)/)
    // The ids file holds the id of every record kept, which the resumed run must not write again.
    const ids = lines(Fs.readFileSync(`${file}.ids.part`, "utf8"))
    expect(Buffer.byteLength(Fs.readFileSync(`${file}.ids.part`))).toBe(state.idsBytes)
    expect(ids.map(Number)).toEqual(seeded().slice(0, records).map((line) => JSON.parse(line).id))
    expect(filesOf(name)).toEqual([`${name}.ids.part`, `${name}.part`, `${name}.resume.json`])
    await resumeFinishes(args, name, file)
  })

  it("before any page is complete: nothing is left and nothing is said about keeping", async () => {
    const name = "nothing.ndjson"
    const file = Path.join(dir, name)
    await slow.run(slow.sandbox.inject(Fault.Fault.Status({ status: 503 }), { times: Infinity }))
    const run = record(await erp(["partners", "list", ...pageArgs(file)], { env: { ...slow.env, ERP_RETRIES: "0" } }))
    expect(run.code).toBe(1)
    expect(run.stderr).toBe("erp: GET partner/list: unexpected HTTP status 503\n")
    expect(filesOf(name)).toEqual([])
    expect(Fs.existsSync(file)).toBe(false)
  })

  it("at publishing, after the last page: the whole export is kept, and --resume publishes it without a request", async () => {
    const name = "blocked.ndjson"
    const file = Path.join(dir, name)
    const args = ["partners", "list", ...pageArgs(file)]
    // A directory that is not empty appears where the file should, while the export runs: the rename fails.
    const midway = slow.listRequests(3)
    const running = erp(args, { env: slow.env })
    await midway
    Fs.mkdirSync(file)
    Fs.writeFileSync(Path.join(file, "x"), "")
    const run = record(await running)
    expect(run.code).toBe(1)
    expect(lines(run.stderr)).toHaveLength(1)
    expect(run.stderr).toMatch(
      new RegExp(`^erp: cannot write the output: .*; kept 600 records in ${file}\\.part: ${HOW}\\n$`)
    )
    expect(lines(Fs.readFileSync(`${file}.part`, "utf8"))).toEqual(seeded())
    Fs.rmSync(file, { recursive: true })
    await slow.run(slow.sandbox.resetStats)
    const resumed = record(await erp([...args, "--resume"], { env: slow.env }))
    // Published without a request: the summary says so.
    expect(resumed.stderr).toMatch(/ \(\d[\d,]* bytes; 600 of them by the run resumed\): 0 pages, 0 requests, /)
    expect(withoutSummary(resumed.stderr)).toBe("")
    expect(resumed.code).toBe(0)
    expect(lines(Fs.readFileSync(file, "utf8"))).toEqual(seeded())
    expect(filesOf(name)).toEqual([])
    expect((await slow.run(slow.sandbox.stats)).requests).toBe(0)
  })

  it("a resumed run that fails again keeps all it has and says to run it again", async () => {
    const name = "twice.ndjson"
    const file = Path.join(dir, name)
    const args = ["partners", "list", ...pageArgs(file), "--resume"]
    const env = { ...slow.env, ERP_RETRIES: "0" }
    const first = slow.listRequests(4)
    const running = erp(args, { env })
    await first
    await slow.run(slow.sandbox.inject(Fault.Fault.Status({ status: 503 }), { times: Infinity }))
    record(await running)
    await slow.run(slow.sandbox.clearFaults)
    const before = JSON.parse(Fs.readFileSync(`${file}.resume.json`, "utf8")).records
    const second = slow.listRequests(4)
    const again = erp(args, { env })
    await second
    await slow.run(slow.sandbox.inject(Fault.Fault.Status({ status: 503 }), { times: Infinity }))
    const run = record(await again)
    await slow.run(slow.sandbox.clearFaults)
    expect(run.code).toBe(1)
    const match =
      /; kept (\d+) records in .+: run the same command again to continue, or with --restart instead of --resume to start over\n$/
        .exec(run.stderr)
    expect(match, run.stderr).not.toBeNull()
    expect(Number(match![1])).toBeGreaterThan(before)
    expect(lines(Fs.readFileSync(`${file}.part`, "utf8"))).toEqual(seeded().slice(0, Number(match![1])))
    await resumeFinishes(args.slice(0, -1), name, file)
  })
})

describe("a saved export checked before it is resumed", () => {
  // Killed midway (a 503 with no retries): the first records of `slow`'s list are kept.
  const interrupted = async (args: ReadonlyArray<string>) => {
    const midway = slow.listRequests(6)
    const running = erp(args, { env: { ...slow.env, ERP_RETRIES: "0" } })
    await midway
    await slow.run(slow.sandbox.inject(Fault.Fault.Status({ status: 503 }), { times: Infinity }))
    const run = record(await running)
    await slow.run(slow.sandbox.clearFaults)
    expect(run.code).toBe(1)
  }

  it("made against server A, resumed against server B: refused, exit 2, nothing touched; against A it finishes", async () => {
    // Another server, with other partners: A's first records then B's later ones would match neither.
    const other = await startSandbox({ partners: 600, seed: 99, rateLimit: { limit: 1_000, window: "30 seconds" } })
    try {
      const name = "server.ndjson"
      const file = Path.join(dir, name)
      const args = ["partners", "list", ...pageArgs(file)]
      await interrupted(args)
      const saved = () => [Fs.readFileSync(`${file}.part`), Fs.readFileSync(`${file}.resume.json`)]
      const before = saved()
      const elsewhere = record(await erp([...args, "--resume"], { env: other.env }))
      expect(elsewhere.code).toBe(2)
      const port = (url: string) => new URL(url).port
      expect(elsewhere.stderr).toBe(
        `erp: --resume: the saved export used ERP_BASE_URL=http://127.0.0.1:${port(slow.sandbox.baseUrl)}/, this ` +
          `run ERP_BASE_URL=http://127.0.0.1:${port(other.sandbox.baseUrl)}/; use the same server, or --restart to ` +
          "discard it and start over\n"
      )
      expect((await other.run(other.sandbox.stats)).requests).toBe(0)
      expect(saved()).toEqual(before)
      await resumeFinishes(args, name, file)
    } finally {
      await other.close()
    }
  })

  it("with a byte changed anywhere in its state, at every position: never resumed", async () => {
    const file = Path.join(dir, "flipped.ndjson")
    await interrupted(["api", "list", "partner/list", "--safe", ...pageArgs(file)])
    const statePath = `${file}.resume.json`
    const state = Fs.readFileSync(statePath)
    const header = JSON.parse(state.toString("utf8"))
    const options = {
      mode: "resume" as const,
      header: { server: header.server, endpoint: header.endpoint, flags: header.flags },
      keepIds: true
    }
    const inspect = () => Effect.runPromise(SavedExport.inspect(file, options))
    // Unchanged, it is taken.
    expect(Option.isOption(await inspect())).toBe(true)
    const accepted: Array<string> = []
    let tried = 0
    for (let at = 0; at < state.length; at++) {
      for (const mask of [0x01, 0x02, 0x10, 0x20, 0x80, 0xff]) {
        const flipped = Buffer.from(state)
        flipped[at] = flipped[at]! ^ mask
        Fs.writeFileSync(statePath, flipped)
        tried++
        if (!("refused" in await inspect())) accepted.push(`${at}^${mask}`)
      }
    }
    Fs.writeFileSync(statePath, state)
    expect(tried).toBe(state.length * 6)
    expect(accepted).toEqual([])
  })

  it("whose part or ids were changed since: refused, exit 2, naming the file; the same command with --restart finishes", async () => {
    const name = "changed.ndjson"
    const file = Path.join(dir, name)
    const args = ["api", "list", "partner/list", "--safe", ...pageArgs(file)]
    await interrupted(args)
    for (
      const [suffix, what] of [[".part", "the records written"], [".ids.part", "the ids a drift-safe export wrote"]]
    ) {
      const path = `${file}${suffix}`
      const original = Fs.readFileSync(path)
      const flipped = Buffer.from(original)
      flipped[Math.floor(flipped.length / 2)] = flipped[Math.floor(flipped.length / 2)]! ^ 0x01
      Fs.writeFileSync(path, flipped)
      const run = record(await erp([...args, "--resume"], { env: slow.env }))
      expect(run.code).toBe(2)
      expect(run.stderr).toBe(
        `erp: --resume: ${path} (${what}) does not match the saved export: it was changed or damaged since; ` +
          "--restart discards it and starts over\n"
      )
      expect(Fs.readFileSync(path)).toEqual(flipped)
      Fs.writeFileSync(path, original)
    }
    await resumeFinishes(args, name, file)
  })
})

describe("signals", () => {
  it("SIGTERM midway: exit 143 after an orderly stop, one line saying what was kept; --resume finishes", async () => {
    const name = "term.ndjson"
    const file = Path.join(dir, name)
    const args = ["partners", "list", ...pageArgs(file)]
    const run = record(
      await erp(args, { env: slow.env, via: "node", interruptWhen: slow.listRequests(8), signal: "SIGTERM" })
    )
    expect(run.signal).toBeNull()
    expect(run.code).toBe(143)
    keptExport(run, file, /interrupted \(SIGTERM\)/)
    expect(await openRequestsAfterwards(slow)).toBe(0)
    await resumeFinishes(args, name, file)
  })

  it("SIGTERM sent twice at once, as timeout sends it (to the command, then its process group): the same stop", async () => {
    const name = "timeout.ndjson"
    const file = Path.join(dir, name)
    const args = ["partners", "list", ...pageArgs(file)]
    const run = record(
      await erp(args, {
        env: slow.env,
        via: "node",
        interruptWhen: slow.listRequests(8),
        signal: "SIGTERM",
        signalGroupToo: true
      })
    )
    // The copy is meant to arrive with the first signal: then the stop ends as one signal's does, 143. Sent late (this
    // runner held up between the two on a loaded machine: a CI run on 2 cores met it), it may land as the process
    // exits, once Node has closed its signal watchers, and end it by the signal; the stop itself, its one line, the
    // file and its state kept (keptExport) and the resume, must be whole either way.
    if (run.copyAfterMillis! < 20 || run.signal === null) {
      expect(run.signal).toBeNull()
      expect(run.code).toBe(143)
    } else expect(run.signal).toBe("SIGTERM")
    keptExport(run, file, /interrupted \(SIGTERM\)/)
    await resumeFinishes(args, name, file)
  })

  it("SIGTERM while the first request is still out: 143, nothing to keep and nothing left", async () => {
    const name = "early.ndjson"
    const file = Path.join(dir, name)
    await slow.run(slow.sandbox.inject(Fault.Fault.Hang(), { times: 1 }))
    const run = record(
      await erp(["partners", "list", ...pageArgs(file)], {
        env: slow.env,
        via: "node",
        interruptWhen: slow.listRequests(1),
        signal: "SIGTERM"
      })
    )
    expect(run.code).toBe(143)
    expect(run.stderr).toBe("erp: interrupted (SIGTERM)\n")
    expect(filesOf(name)).toEqual([])
    // The hung request was cancelled, not left open.
    expect(await openRequestsAfterwards(slow)).toBe(0)
  })

  it("SIGTERM during a rate-limit wait: the wait is cut short, 143, the pages before it kept", async () => {
    const name = "waiting.ndjson"
    const file = Path.join(dir, name)
    const args = ["partners", "list", ...pageArgs(file)]
    // Three requests a window of five minutes: the fourth page waits far longer than the run is allowed.
    const env = { ...slow.env, ERP_RATE_LIMIT: "3", ERP_RATE_WINDOW: "300" }
    const state = `${file}.resume.json`
    const threePages = until(() => Fs.existsSync(state) && JSON.parse(Fs.readFileSync(state, "utf8")).records === 30)
    const run = record(await erp(args, { env, via: "node", interruptWhen: threePages, signal: "SIGTERM" }))
    expect(run.code).toBe(143)
    const { records } = keptExport(run, file, /interrupted \(SIGTERM\)/)
    expect(records).toBe(30)
    await resumeFinishes(args, name, file)
  })

  it("Ctrl-C (SIGINT): 130, the same stop; an export to stdout has nothing to keep and says only that", async () => {
    const name = "int.ndjson"
    const file = Path.join(dir, name)
    const args = ["partners", "list", ...pageArgs(file)]
    const run = record(await erp(args, { env: slow.env, via: "node", interruptWhen: slow.listRequests(6) }))
    expect(run.code).toBe(130)
    keptExport(run, file, /interrupted \(SIGINT\)/)
    await resumeFinishes(args, name, file)

    const piped = record(
      await erp(["partners", "list", "--page-size", "10", "--concurrency", "1"], {
        env: slow.env,
        via: "node",
        interruptWhen: slow.listRequests(6),
        signal: "SIGTERM"
      })
    )
    expect(piped.code).toBe(143)
    expect(piped.stderr).toBe("erp: interrupted (SIGTERM)\n")
    // What reached stdout is whole records, the first of the list.
    const written = lines(piped.stdout)
    expect(written.length).toBeGreaterThan(0)
    expect(written).toEqual(seeded().slice(0, written.length))
  })
})

describe("erp partners get, many lookups", () => {
  const ids = ["--concurrency", "1", "--id", "7", "--id", "3", "--id", "99999", "--id", "5"]
  const found = () => [slow.sandbox.partnerAt(2), slow.sandbox.partnerAt(4)].map((p) => JSON.stringify(p) + "\n")

  it("one request per distinct partner: repeats share it, and every line is answered in its place", async () => {
    await slow.run(slow.sandbox.resetStats)
    const run = record(
      await erp(["partners", "get", "--stdin", "--concurrency", "4"], {
        env: slow.env,
        stdin: "7\n7\n3\n7\n3\n12\n99999\n99999\n"
      })
    )
    expect(run.code).toBe(4)
    expect(run.stdout).toBe(
      [7, 7, 3, 7, 3, 12].map((id) => JSON.stringify(slow.sandbox.partnerAt(id - 1)) + "\n").join("")
    )
    expect(lines(run.stderr)).toEqual([
      "erp: partner/get: not found (id=99999)",
      "erp: partner/get: not found (id=99999)"
    ])
    const asked = (await slow.run(slow.sandbox.requests)).filter((entry) => entry.endpoint === "/partner/get")
    expect(asked.map((entry) => entry.query.map(([, value]) => value).join()).sort()).toEqual(["12", "3", "7", "99999"])
  })

  it("an error the server reports for one lookup is said with its id; the batch goes on; exit 1 wins over 4", async () => {
    await slow.run(
      slow.sandbox.inject(Fault.Fault.UnknownCode({ code: 0, message: "Internal error" }), {
        times: 1,
        endpoint: "/partner/get"
      })
    )
    const run = record(await erp(["partners", "get", ...ids], { env: slow.env }))
    expect(run.code).toBe(1)
    expect(run.stdout).toBe(found().join(""))
    expect(lines(run.stderr)).toEqual([
      "erp: partner/get id=7: the server reported an error (code 0): Internal error",
      "erp: partner/get: not found (id=99999)"
    ])
  })

  it("an answer that does not decode, and a connection lost past the retries, each said with what was looked up", async () => {
    await slow.run(slow.sandbox.inject(Fault.Fault.NotEnvelope({}), { times: 1, endpoint: "/partner/get" }))
    await slow.run(slow.sandbox.inject(Fault.Fault.DropBeforeResponse(), { times: 1, endpoint: "/partner/get" }))
    const run = record(
      await erp(
        ["partners", "get", "--concurrency", "1", "--id", "7", "--company-name", "A & B", "--id", "3"],
        { env: { ...slow.env, ERP_RETRIES: "0" } }
      )
    )
    expect(run.code).toBe(1)
    expect(run.stdout).toBe(JSON.stringify(slow.sandbox.partnerAt(2)) + "\n")
    const said = lines(run.stderr)
    expect(said).toHaveLength(2)
    expect(said[0]).toMatch(/^erp: partner\/get id=7: cannot decode /)
    expect(said[1]).toMatch(/^erp: partner\/get company_name="A & B": transport failure: /)
  })

  it("Unauthorized ends the batch at once with 3: the next lookups would fail the same way", async () => {
    await slow.run(slow.sandbox.resetStats)
    await slow.run(slow.sandbox.inject(Fault.Fault.Unauthorized(), { times: 1, endpoint: "/partner/get" }))
    const run = record(await erp(["partners", "get", ...ids], { env: slow.env }))
    expect(run.code).toBe(3)
    expect(run.stdout).toBe("")
    expect(run.stderr).toBe("erp: partner/get: the API key was refused (Unauthorized)\n")
    expect((await slow.run(slow.sandbox.stats)).byEndpoint["/partner/get"]).toBe(1)
  })
})

describe("messages", () => {
  it("a bad flag value names the flag, for every kind the parser refuses", async () => {
    const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string, string?]> = [
      [["partners", "list", "--format", "json"], "--format: expected ndjson, csv or table, got json"],
      [["partners", "list", "--format=json"], "--format: expected ndjson, csv or table, got json"],
      [
        ["partners", "list", "--format", "nsjson"],
        "--format: expected ndjson, csv or table, got nsjson: did you mean ndjson?"
      ],
      [["partners", "list", "--format", "CSV"], "--format: expected ndjson, csv or table, got CSV: did you mean csv?"],
      [["partners", "list", "--concurrency", "x"], "--concurrency: expected a whole number, got x"],
      [["partners", "list", "--concurrency"], "--concurrency needs a value: --concurrency N"],
      [["partners", "get", "--id", "3", "--id"], "--id needs a value: --id N"],
      [["partners", "list", "--bogus"], "unknown option --bogus"],
      [["partners", "list", "--format", "csv", "--format", "table"], "--format is given more than once"],
      [["partners", "list", "extra"], "unexpected argument extra"],
      [["partners", "lst"], "unknown command lst: did you mean list?"],
      [["partners", "xyz"], "unknown command xyz: erp partners takes list, get, changes or sync"],
      [["partner", "list"], "unknown command partner: did you mean partners?", "erp"],
      [["partners", "list", "--formt", "csv"], "unknown option --formt: did you mean --format?"],
      [["partners", "list", "--fromat=csv"], "unknown option --fromat: did you mean --format?"],
      [["api", "list", "--formt", "csv", "product/list"], "unknown option --formt: did you mean --format?"],
      [["partners", "get", "--id", "5", "--stdn"], "unknown option --stdn: did you mean --stdin?"],
      [["api", "get"], "missing ENDPOINT"],
      [["partners", "list", "--output", dir], `--output: ${dir} is not a regular file`]
    ]
    for (const [args, line, named] of cases) {
      const run = record(await erp(args, { env: slow.env, via: "node" }))
      expect(run.code, args.join(" ")).toBe(2)
      expect(run.stdout).toBe("")
      const command = named ??
        ["erp", ...args.filter((arg) => ["partners", "list", "get", "api"].includes(arg))].join(" ")
      expect(run.stderr, args.join(" ")).toBe(`erp: ${line} (${command} --help)\n`)
    }
  })

  it("--verbose: a refused connection is logfmt lines and one failure line, no stack trace", async () => {
    const closed = await new Promise<number>((resolve) => {
      const server = Net.createServer().listen(0, "127.0.0.1", () => {
        const { port } = server.address() as Net.AddressInfo
        server.close(() => resolve(port))
      })
    })
    const run = record(
      await erp(["partners", "list", "--verbose"], {
        env: { ERP_BASE_URL: `http://127.0.0.1:${closed}`, ERP_API_KEY: SECRET, ERP_RETRIES: "1" }
      })
    )
    expect(run.code).toBe(1)
    const said = lines(run.stderr)
    expect(said.at(-1)).toMatch(
      /^erp: GET partner\/list: transport failure: the connection failed \(2 attempts over \d+\.\d s\)$/
    )
    for (const line of said.slice(0, -1)) expect(line).toMatch(/^timestamp=\S+ level=[A-Z]+ fiber=#\d+ message=/)
    expect(said.length).toBeGreaterThan(1)
    expect(run.stderr).not.toMatch(/\bat \S+ \(|\\n\s+at /)
  })
})
