import { afterAll, beforeAll, beforeEach, describe, expect, it } from "@effect/vitest"
import { Fault } from "@erp-client/sandbox"
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as OutputLock from "../src/internal/outputLock.js"
import { BIN, erp, ROOT, type Run, SECRET, startGate, startSandbox, withoutSummary } from "./harness.js"

// One writer per output (docs/cli.md, "Files, resume and restart"): an export to --output FILE holds FILE.lock for its
// run. Runs started together on one FILE: one writes it, each other refuses at once with exit 1 and one line naming
// the holder, touching nothing; the file has every record exactly once. A lock whose holder is gone is taken over; a
// live one, or one on another host, is not. The runs go through a gate that holds every request until each run has
// either exited or sent one: the run holding the lock cannot finish before the others have tried it, with no clock.

type Started = Awaited<ReturnType<typeof startSandbox>>

const RUNS = 3
const keyOf = (run: number) => `${SECRET}-run${run}`
const HOST = Os.hostname()

let sandbox: Started
let slow: Started
let gate: Awaited<ReturnType<typeof startGate>>
let dir: string
const runs: Array<Run> = []
const record = (run: Run) => {
  runs.push(run)
  return run
}

beforeAll(async () => {
  const keys = [SECRET, ...Array.from({ length: RUNS }, (_, i) => keyOf(i))]
  sandbox = await startSandbox({ partners: 600, apiKeys: keys, rateLimit: { limit: 10_000, window: "30 seconds" } })
  // 60 pages of 10 at 40 ms each: a run can be killed midway.
  slow = await startSandbox({
    partners: 600,
    rateLimit: { limit: 1_000, window: "30 seconds" },
    latency: { base: "40 millis" }
  })
  gate = await startGate(sandbox.sandbox.baseUrl)
  dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "erp-lock-"))
})

beforeEach(async () => {
  gate.close()
  await sandbox.run(sandbox.sandbox.clearFaults)
})

afterAll(async () => {
  gate?.open()
  await gate?.stop()
  await sandbox?.close()
  await slow?.close()
  if (dir !== undefined) Fs.rmSync(dir, { recursive: true, force: true })
  for (const run of runs) expect(run.stdout + run.stderr).not.toContain(SECRET)
})

const seeded = (s: Started) =>
  Array.from({ length: s.sandbox.partnerCount }, (_, i) => JSON.stringify(s.sandbox.partnerAt(i)))
const lines = (text: string) => text === "" ? [] : text.trimEnd().split("\n")
const filesOf = (name: string) => Fs.readdirSync(dir).filter((file) => file === name || file.startsWith(`${name}.`))
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")

/** Polls until `check` holds (bounded). */
const until = async (check: () => boolean) => {
  for (let i = 0; i < 1_500 && !check(); i++) await new Promise((r) => setTimeout(r, 20))
  if (!check()) throw new Error("never happened")
}

/**
 * Starts `RUNS` runs of `args` (or of `args(i)` for run `i`) at once through the gate, and opens it once each has
 * exited or sent a request.
 */
const race = async (args: ReadonlyArray<string> | ((run: number) => ReadonlyArray<string>)) => {
  gate.close()
  const exited = new Set<number>()
  const started = Array.from(
    { length: RUNS },
    (_, i) =>
      erp(typeof args === "function" ? args(i) : args, {
        env: { ERP_BASE_URL: gate.url, ERP_API_KEY: keyOf(i) },
        via: "node"
      }).then((run) => {
        exited.add(i)
        return record(run)
      })
  )
  try {
    await until(() => Array.from({ length: RUNS }, (_, i) => i).every((i) => exited.has(i) || gate.seen(keyOf(i))))
  } finally {
    gate.open()
  }
  return Promise.all(started)
}

/** The line of a run refused for `holder`'s lock. */
const refusedFor = (file: string, holder: Run) =>
  new RegExp(
    `^erp: ${escape(file)} is being written by another run \\(pid ${holder.pid} on host ${escape(HOST)} since ` +
      `\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ \\(\\d+\\.\\d s ago\\), running erp partners list [^\\n]*--output ` +
      `${escape(file)}[^\\n]*\\); nothing was touched\\n$`
  )

/** One run wrote the file (every record once, nothing else left), each other refused naming it. */
const oneWriter = (results: ReadonlyArray<Run>, file: string, said: RegExp = /^$/) => {
  const winners = results.filter((run) => run.code === 0)
  expect(results.map((run) => run.code).sort(), results.map((run) => run.stderr).join("")).toEqual([
    0,
    ...Array<number>(RUNS - 1).fill(1)
  ])
  const winner = winners[0]!
  expect(withoutSummary(winner.stderr)).toMatch(said)
  for (const run of results.filter((run) => run !== winner)) {
    expect(run.stdout).toBe("")
    expect(run.stderr).toMatch(refusedFor(file, winner))
  }
  const written = lines(Fs.readFileSync(file, "utf8"))
  expect(written).toEqual(seeded(sandbox))
  expect(new Set(written).size).toBe(written.length)
  expect(filesOf(Path.basename(file))).toEqual([Path.basename(file)])
}

/** A saved export of `file`: the first 200 records, then a 503 with no retries. */
const savedExport = async (file: string) => {
  await sandbox.run(
    sandbox.sandbox.inject(Fault.Fault.Status({ status: 503 }), { endpoint: "/partner/list", after: 4, times: 1 })
  )
  // Through the gate, open: the runs that resume it read from the same server (a resume elsewhere is refused).
  gate.open()
  const failed = record(
    await erp(["partners", "list", "--page-size", "50", "--concurrency", "1", "--output", file], {
      env: { ERP_BASE_URL: gate.url, ERP_API_KEY: SECRET, ERP_RETRIES: "0" },
      via: "node"
    })
  )
  expect(failed.code).toBe(1)
  expect(failed.stderr).toMatch(/kept 200 records in /)
  expect(filesOf(Path.basename(file)).sort()).toEqual([
    `${Path.basename(file)}.part`,
    `${Path.basename(file)}.resume.json`
  ])
}

/** A pid that no longer runs: a child's, once it has exited. */
const deadPid = () =>
  new Promise<number>((resolve, reject) => {
    const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" })
    child.on("error", reject)
    child.on("exit", () => resolve(child.pid!))
  })

const lockOf = (fields: Partial<OutputLock.LockInfo> & { readonly pid: number }) =>
  JSON.stringify({
    host: HOST,
    since: "2026-05-01T10:00:03Z",
    command: "erp partners list --output somewhere.ndjson",
    nonce: "0123456789abcdef0123456789abcdef",
    ...fields
  })

/** The note of a run that took over the stale lock `lockOf({ pid })` wrote. */
const tookOver = (file: string, pid: number, why: string) =>
  new RegExp(
    `^erp: took over the stale lock ${escape(file)}\\.lock, left by pid ${pid} on host ${escape(HOST)} since ` +
      `2026-05-01T10:00:03Z \\([^)]+ ago\\), running erp partners list --output somewhere\\.ndjson: pid ${pid} ` +
      `${escape(why)}\\n$`
  )

const ownStartTime = () => OutputLock.startTimeFromStat(Fs.readFileSync(`/proc/${process.pid}/stat`, "utf8"))

const args = (file: string, ...more: ReadonlyArray<string>) => [
  "partners",
  "list",
  "--page-size",
  "50",
  "--concurrency",
  "2",
  "--output",
  file,
  ...more
]

describe("runs started together on one --output", () => {
  it("plain: one writes the file, every record once; each other exits 1 naming it (8 rounds)", async () => {
    const file = Path.join(dir, "plain.ndjson")
    for (let round = 0; round < 8; round++) oneWriter(await race(args(file)), file)
  })

  it("--resume: one continues the saved export, the others touch nothing (3 rounds)", async () => {
    for (let round = 0; round < 3; round++) {
      const file = Path.join(dir, `resume-${round}.ndjson`)
      await savedExport(file)
      await sandbox.run(sandbox.sandbox.resetStats)
      oneWriter(await race(args(file, "--resume")), file)
      // Continued where the saved export stopped, not started over.
      const offsets = (await sandbox.run(sandbox.sandbox.requests)).map((r) =>
        Number(new Map(r.query).get("list_offset"))
      )
      expect(Math.min(...offsets)).toBe(200)
    }
  })

  it("--restart: one discards the saved export and starts over, the others delete nothing (3 rounds)", async () => {
    for (let round = 0; round < 3; round++) {
      const file = Path.join(dir, `restart-${round}.ndjson`)
      await savedExport(file)
      oneWriter(await race(args(file, "--restart")), file)
    }
  })

  it("a stale lock found by all of them at once: one takes it over and says so, the others exit 1 (3 rounds)", async () => {
    for (let round = 0; round < 3; round++) {
      const file = Path.join(dir, `stale-${round}.ndjson`)
      const pid = await deadPid()
      Fs.writeFileSync(`${file}.lock`, lockOf({ pid }))
      oneWriter(await race(args(file)), file, tookOver(file, pid, "no longer runs"))
    }
  })
})

describe("a lock already there", () => {
  const direct = (file: string, ...more: ReadonlyArray<string>) =>
    erp(args(file, ...more), { env: sandbox.env, via: "node" }).then(record)

  it("of a live process (this test's, with its start time): refused, exit 1, nothing touched", async () => {
    const file = Path.join(dir, "live.ndjson")
    Fs.writeFileSync(file, "the previous export\n")
    const lock = lockOf({ pid: process.pid, startTime: ownStartTime()! })
    Fs.writeFileSync(`${file}.lock`, lock)
    await sandbox.run(sandbox.sandbox.resetStats)
    for (const more of [[], ["--resume"], ["--restart"]]) {
      const run = await direct(file, ...more)
      expect(run.code, more.join()).toBe(1)
      expect(run.stderr).toBe(
        `erp: ${file} is being written by another run (pid ${process.pid} on host ${HOST} since 2026-05-01T10:00:03Z ` +
          `(${/\(([^()]+) ago\)/.exec(run.stderr)?.[1]} ago), running erp partners list --output ` +
          "somewhere.ndjson); nothing was touched\n"
      )
    }
    expect(Fs.readFileSync(file, "utf8")).toBe("the previous export\n")
    expect(Fs.readFileSync(`${file}.lock`, "utf8")).toBe(lock)
    expect(filesOf("live.ndjson").sort()).toEqual(["live.ndjson", "live.ndjson.lock"])
    expect((await sandbox.run(sandbox.sandbox.stats)).requests).toBe(0)
  })

  it("of a pid that now belongs to another process (its start time differs): taken over", async () => {
    const file = Path.join(dir, "reused.ndjson")
    Fs.writeFileSync(`${file}.lock`, lockOf({ pid: process.pid, startTime: "1" }))
    const run = await direct(file)
    expect(run.code).toBe(0)
    expect(withoutSummary(run.stderr)).toMatch(tookOver(file, process.pid, "is now another process"))
    expect(lines(Fs.readFileSync(file, "utf8"))).toEqual(seeded(sandbox))
    expect(filesOf("reused.ndjson")).toEqual(["reused.ndjson"])
  })

  it("of another host: never taken over, even with a pid that does not run here; the line says how to remove it", async () => {
    const file = Path.join(dir, "elsewhere.ndjson")
    const lock = lockOf({ pid: await deadPid(), host: "build-7.elsewhere.invalid" })
    Fs.writeFileSync(`${file}.lock`, lock)
    const run = await direct(file)
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(
      new RegExp(
        `^erp: ${
          escape(file)
        } is locked by a run that this host cannot check, as it runs on another host \\(pid \\d+ ` +
          `on host build-7\\.elsewhere\\.invalid since 2026-05-01T10:00:03Z \\([^)]+ ago\\), running erp ` +
          `partners list --output somewhere\\.ndjson\\); nothing was touched\\. If that run is over, remove ` +
          `${escape(file)}\\.lock by hand\\n$`
      )
    )
    expect(Fs.readFileSync(`${file}.lock`, "utf8")).toBe(lock)
    expect(filesOf("elsewhere.ndjson")).toEqual(["elsewhere.ndjson.lock"])
  })

  it("empty (a run between its create and its write): held while young, taken over once old", async () => {
    const file = Path.join(dir, "empty.ndjson")
    Fs.writeFileSync(`${file}.lock`, "")
    const young = await direct(file)
    expect(young.code).toBe(1)
    expect(young.stderr).toBe(
      `erp: ${file} is being written by another run: its lock is being written (0 bytes so far) in ${file}.lock; ` +
        "nothing was touched\n"
    )
    expect(filesOf("empty.ndjson")).toEqual(["empty.ndjson.lock"])
    const minuteAgo = new Date(Date.now() - 60_000)
    Fs.utimesSync(`${file}.lock`, minuteAgo, minuteAgo)
    const old = await direct(file)
    expect(old.code).toBe(0)
    expect(withoutSummary(old.stderr)).toMatch(
      new RegExp(`^erp: took over the stale lock ${escape(file)}\\.lock: empty for 1 min\\n$`)
    )
    expect(lines(Fs.readFileSync(file, "utf8"))).toEqual(seeded(sandbox))
    expect(filesOf("empty.ndjson")).toEqual(["empty.ndjson"])
  })

  it("left by a run killed with SIGKILL midway: --resume takes it over and finishes, every record once", async () => {
    const file = Path.join(dir, "killed.ndjson")
    const slowArgs = ["partners", "list", "--page-size", "10", "--concurrency", "1", "--output", file]
    const state = `${file}.resume.json`
    const pages = until(() => Fs.existsSync(state) && JSON.parse(Fs.readFileSync(state, "utf8")).records >= 50)
    const killed = record(await erp(slowArgs, { env: slow.env, via: "node", interruptWhen: pages, signal: "SIGKILL" }))
    expect(killed.signal).toBe("SIGKILL")
    expect(JSON.parse(Fs.readFileSync(`${file}.lock`, "utf8")).pid).toBe(killed.pid)
    const resumed = record(await erp([...slowArgs, "--resume"], { env: slow.env, via: "node" }))
    expect(resumed.code).toBe(0)
    expect(withoutSummary(resumed.stderr)).toMatch(
      new RegExp(
        `^erp: took over the stale lock ${escape(file)}\\.lock, left by pid ${killed.pid} on host ${escape(HOST)} ` +
          `since \\S+ \\(\\d+\\.\\d s ago\\), running erp partners list --page-size 10 --concurrency 1 --output ` +
          `${escape(file)}: pid ${killed.pid} has ended \\(the kernel released its lock\\)\\n$`
      )
    )
    const written = lines(Fs.readFileSync(file, "utf8"))
    expect(written).toEqual(seeded(slow))
    expect(filesOf("killed.ndjson")).toEqual(["killed.ndjson"])
  })

  it("replaced by hand while the run holds it: the run stops at its next page, publishes nothing, touches nothing", async () => {
    const file = Path.join(dir, "lost.ndjson")
    const running = erp(args(file), { env: { ERP_BASE_URL: gate.url, ERP_API_KEY: keyOf(0) }, via: "node" }).then(
      record
    )
    try {
      await until(() => gate.seen(keyOf(0)))
    } catch (error) {
      gate.open()
      throw error
    }
    const other = lockOf({ pid: process.pid, nonce: "fedcba9876543210fedcba9876543210" })
    Fs.writeFileSync(`${file}.lock`, other)
    gate.open()
    const run = await running
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(
      new RegExp(
        `^erp: cannot write the output: ${escape(file)}\\.lock no longer names this run \\(it now names pid ` +
          `${process.pid} on host ${escape(HOST)} since [^)]+\\), running erp partners list --output ` +
          `somewhere\\.ndjson\\): another run may be writing the same output; nothing was published, and ` +
          `${escape(file)}\\.part and the files beside it are left as they are\\n$`
      )
    )
    expect(Fs.existsSync(file)).toBe(false)
    expect(Fs.readFileSync(`${file}.lock`, "utf8")).toBe(other)
  })
})

describe("two names for one file", () => {
  /** One run wrote `written` (every record once); each other exited 1 naming it, whatever name it came by. */
  const oneWriterOf = (results: ReadonlyArray<Run>, written: (winner: number) => string) => {
    expect(results.map((run) => run.code).sort(), results.map((run) => run.stderr).join("")).toEqual([0, 1, 1])
    const winner = results.findIndex((run) => run.code === 0)
    expect(withoutSummary(results[winner]!.stderr)).toBe("")
    for (const run of results.filter((_, i) => i !== winner)) {
      expect(run.stdout).toBe("")
      expect(run.stderr).toMatch(
        new RegExp(
          `^erp: \\S+ is being written by another run \\(pid ${results[winner]!.pid} on host ${escape(HOST)} ` +
            `since [^\\n]+, running erp partners list [^\\n]+\\); nothing was touched\\n$`
        )
      )
    }
    expect(lines(Fs.readFileSync(written(winner), "utf8"))).toEqual(seeded(sandbox))
    return winner
  }

  it("the file and a symbolic link to it: one lock, and the file written through the link, which stays (3 rounds)", async () => {
    for (let round = 0; round < 3; round++) {
      const real = Path.join(dir, `real-${round}.ndjson`)
      const alias = Path.join(dir, `alias-${round}.ndjson`)
      Fs.symlinkSync(Path.basename(real), alias)
      oneWriterOf(await race((i) => args(i === 1 ? alias : real)), () => real)
      expect(Fs.readlinkSync(alias)).toBe(Path.basename(real))
      expect(filesOf(`real-${round}.ndjson`)).toEqual([`real-${round}.ndjson`])
      expect(filesOf(`alias-${round}.ndjson`)).toEqual([`alias-${round}.ndjson`])
    }
  })

  it("the file and a hard link to it: one lock, on the file's device and inode (3 rounds)", async () => {
    for (let round = 0; round < 3; round++) {
      const names = [Path.join(dir, `first-${round}.ndjson`), Path.join(dir, `second-${round}.ndjson`)]
      Fs.writeFileSync(names[0]!, "the previous export\n")
      Fs.linkSync(names[0]!, names[1]!)
      const nameOf = (run: number) => names[run === 1 ? 1 : 0]!
      const winner = oneWriterOf(await race((i) => args(nameOf(i))), nameOf)
      // Replaced by a rename: the other name keeps the file it named.
      const other = names.find((name) => name !== nameOf(winner))!
      expect(Fs.readFileSync(other, "utf8")).toBe("the previous export\n")
    }
  })
})

describe("links planted beside the output", () => {
  const direct = (file: string, ...more: ReadonlyArray<string>) =>
    erp(args(file, ...more), { env: sandbox.env, via: "node" }).then(record)

  it("FILE.part, FILE.ids.part, FILE.resume.json.tmp and FILE.lock as links: nothing written through; each said", async () => {
    const victim = Path.join(dir, "victim.txt")
    Fs.writeFileSync(victim, "not the export\n")
    Fs.chmodSync(victim, 0o600)
    // A link to where nothing is yet: an exclusive create never makes it.
    const absent = Path.join(dir, "absent.txt")
    const file = Path.join(dir, "planted.ndjson")
    Fs.symlinkSync(victim, `${file}.part`)
    Fs.symlinkSync(absent, `${file}.ids.part`)
    Fs.symlinkSync(victim, `${file}.resume.json.tmp`)
    Fs.symlinkSync(victim, `${file}.lock`)
    const run = await direct(file, "--safe")
    expect(run.code, run.stderr).toBe(0)
    expect(lines(withoutSummary(run.stderr))).toEqual([
      `erp: removed ${file}.part, a symbolic link to ${victim} that this run did not make (nothing was written ` +
      "through it)",
      `erp: removed ${file}.ids.part, a symbolic link to ${absent} that this run did not make (nothing was written ` +
      "through it)",
      `erp: took over the stale lock ${file}.lock: a symbolic link, which no run makes`,
      `erp: removed ${file}.resume.json.tmp, a symbolic link to ${victim} that this run did not make (nothing was ` +
      "written through it)"
    ])
    expect(Fs.readFileSync(victim, "utf8")).toBe("not the export\n")
    expect(Fs.statSync(victim).mode & 0o777).toBe(0o600)
    expect(Fs.existsSync(absent)).toBe(false)
    expect(lines(Fs.readFileSync(file, "utf8"))).toEqual(seeded(sandbox))
    expect(filesOf("planted.ndjson")).toEqual(["planted.ndjson"])
  })

  it("a saved export whose part was replaced by a link: --resume refuses it, exit 2, the victim untouched", async () => {
    const victim = Path.join(dir, "victim-resume.txt")
    const file = Path.join(dir, "relinked.ndjson")
    await savedExport(file)
    Fs.renameSync(`${file}.part`, victim)
    Fs.symlinkSync(victim, `${file}.part`)
    const before = Fs.readFileSync(victim)
    const run = record(
      await erp(["partners", "list", "--page-size", "50", "--concurrency", "1", "--output", file, "--resume"], {
        env: { ERP_BASE_URL: gate.url, ERP_API_KEY: SECRET },
        via: "node"
      })
    )
    expect(run.code).toBe(2)
    expect(run.stderr).toBe(
      `erp: --resume: ${file}.part (the records written) is missing or is a symbolic link, not the saved export's; ` +
        "--restart discards it and starts over\n"
    )
    expect(Fs.readFileSync(victim)).toEqual(before)
  })

  it("a FILE that is a link is written through to the file it leads to, which keeps its mode; the link stays", async () => {
    const data = Path.join(dir, "data")
    Fs.mkdirSync(data)
    const real = Path.join(data, "real.ndjson")
    Fs.writeFileSync(real, "the previous export\n")
    Fs.chmodSync(real, 0o640)
    const link = Path.join(dir, "link.ndjson")
    Fs.symlinkSync("data/real.ndjson", link)
    // A link to a file that does not exist yet: made where it leads.
    const dangling = Path.join(dir, "dangling.ndjson")
    Fs.symlinkSync("data/new.ndjson", dangling)
    for (const name of [link, dangling]) {
      const run = await direct(name)
      expect([run.code, withoutSummary(run.stderr)]).toEqual([0, ""])
    }
    expect(Fs.readlinkSync(link)).toBe("data/real.ndjson")
    expect(Fs.readlinkSync(dangling)).toBe("data/new.ndjson")
    expect(lines(Fs.readFileSync(real, "utf8"))).toEqual(seeded(sandbox))
    expect(lines(Fs.readFileSync(Path.join(data, "new.ndjson"), "utf8"))).toEqual(seeded(sandbox))
    expect(Fs.statSync(real).mode & 0o777).toBe(0o640)
    expect(Fs.readdirSync(data).sort()).toEqual(["new.ndjson", "real.ndjson"])
  })
})

describe("a holder that has ended", () => {
  const stateOf = (pid: number) => {
    const stat = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 1).trim()[0]
  }
  const parents: Array<ChildProcess> = []
  afterAll(() => {
    for (const parent of parents) process.kill(-parent.pid!, "SIGKILL")
  })

  /**
   * Runs `command` under a parent that never reaps it (a shell that then execs `sleep`, as a container's first
   * process may): once it ends, it stays a zombie. Its pid.
   */
  const unreaped = (command: ReadonlyArray<string>, env: Record<string, string>) =>
    new Promise<number>((resolve, reject) => {
      const parent = spawn("sh", ["-c", "\"$0\" \"$@\" & echo $!; exec sleep 120", ...command], {
        cwd: ROOT,
        env: { ...process.env, CI: "", ...env },
        detached: true,
        stdio: ["ignore", "pipe", "ignore"]
      })
      parents.push(parent)
      parent.on("error", reject)
      parent.stdout!.setEncoding("utf8").once("data", (text: string) => resolve(Number(text.trim())))
    })

  it("kill -9 of an export whose parent does not reap it, then --resume at once: resumed, every time (4 rounds)", async () => {
    for (let round = 0; round < 4; round++) {
      const name = `zombie-${round}.ndjson`
      const file = Path.join(dir, name)
      const slowArgs = ["partners", "list", "--page-size", "10", "--concurrency", "1", "--output", file]
      const state = `${file}.resume.json`
      const pid = await unreaped([process.execPath, BIN, ...slowArgs], slow.env)
      await until(() => Fs.existsSync(state) && JSON.parse(Fs.readFileSync(state, "utf8")).records >= 50)
      process.kill(pid, "SIGKILL")
      await until(() => stateOf(pid) === "Z")
      const resumed = record(await erp([...slowArgs, "--resume"], { env: slow.env, via: "node" }))
      // Still unreaped all along.
      expect(stateOf(pid)).toBe("Z")
      expect(resumed.code, resumed.stderr).toBe(0)
      expect(withoutSummary(resumed.stderr)).toMatch(
        new RegExp(
          `^erp: took over the stale lock ${escape(file)}\\.lock, left by pid ${pid} on host ${escape(HOST)} since ` +
            `[^\\n]+: pid ${pid} has ended \\(the kernel released its lock\\)\\n$`
        )
      )
      expect(lines(Fs.readFileSync(file, "utf8"))).toEqual(seeded(slow))
      expect(filesOf(name)).toEqual([name])
    }
  })

  it("pnpm erp's build lock: a builder killed with -9 and not reaped does not hold it", async () => {
    const lock = Path.join(dir, "building.lock")
    const module = JSON.stringify(Path.join(ROOT, "scripts/buildLock.js"))
    const held = Path.join(dir, "building.held")
    const holder = await unreaped([
      process.execPath,
      "--input-type=module",
      "-e",
      `const { take } = await import(${module}); await take(${JSON.stringify(lock)}); ` +
      `(await import("node:fs")).writeFileSync(${JSON.stringify(held)}, ""); setInterval(() => {}, 1000)`
    ], {})
    await until(() => Fs.existsSync(held))
    process.kill(holder, "SIGKILL")
    await until(() => stateOf(holder) === "Z")
    const waiter = spawn(process.execPath, [
      "--input-type=module",
      "-e",
      `const { take } = await import(${module}); (await take(${JSON.stringify(lock)}))(); console.log("taken")`
    ], { stdio: ["ignore", "pipe", "inherit"] })
    let said = ""
    waiter.stdout!.setEncoding("utf8").on("data", (text: string) => (said += text))
    const code = await new Promise<number | null>((resolve) => {
      const guard = setTimeout(() => waiter.kill("SIGKILL"), 20_000)
      waiter.on("close", (code) => {
        clearTimeout(guard)
        resolve(code)
      })
    })
    expect(stateOf(holder)).toBe("Z")
    expect([code, said]).toEqual([0, "taken\n"])
  })

  it("a lock file naming a zombie, left without the kernel's lock: taken over (the pid check sees the zombie)", async () => {
    const pid = await unreaped(["sleep", "0"], {})
    await until(() => stateOf(pid) === "Z")
    const file = Path.join(dir, "zombie-file.ndjson")
    const startTime = OutputLock.startTimeFromStat(Fs.readFileSync(`/proc/${pid}/stat`, "utf8"))!
    Fs.writeFileSync(`${file}.lock`, lockOf({ pid, startTime }))
    const run = record(await erp(args(file), { env: sandbox.env, via: "node" }))
    expect(run.code, run.stderr).toBe(0)
    expect(withoutSummary(run.stderr)).toMatch(tookOver(file, pid, "has ended (a zombie not yet reaped)"))
    expect(lines(Fs.readFileSync(file, "utf8"))).toEqual(seeded(sandbox))
  })

  it("a lock that names no one, with a modification time in the future, is judged by when it last changed", async () => {
    const file = Path.join(dir, "future.ndjson")
    Fs.writeFileSync(`${file}.lock`, "")
    const tomorrow = new Date(Date.now() + 86_400_000)
    Fs.utimesSync(`${file}.lock`, tomorrow, tomorrow)
    // The change time, which utimes set to now, ages; the modification time stays ahead.
    await until(() => Date.now() - Fs.statSync(`${file}.lock`).ctimeMs > OutputLock.YOUNG_MILLIS + 100)
    const run = record(await erp(args(file), { env: sandbox.env, via: "node" }))
    expect(run.code, run.stderr).toBe(0)
    expect(withoutSummary(run.stderr)).toMatch(
      new RegExp(`^erp: took over the stale lock ${escape(file)}\\.lock: empty for \\d+\\.\\d s\\n$`)
    )
  })
})

describe("a run that ends with nothing", () => {
  it("refused by the server before its first page: the directories it made for FILE are gone", async () => {
    await sandbox.run(sandbox.sandbox.inject(Fault.Fault.Unauthorized(), { times: Infinity }))
    const top = Path.join(dir, "made")
    const run = record(await erp(args(Path.join(top, "deeper", "out.ndjson")), { env: sandbox.env, via: "node" }))
    expect(run.code).toBe(3)
    expect(Fs.existsSync(top)).toBe(false)
  })
})

describe("an output that exists", () => {
  it("read-only (0444) is refused before anything: exit 1, one line, the file and its mode as they were", async () => {
    const file = Path.join(dir, "readonly.ndjson")
    Fs.writeFileSync(file, "kept as it is\n")
    Fs.chmodSync(file, 0o444)
    await sandbox.run(sandbox.sandbox.resetStats)
    for (const more of [[], ["--restart"]]) {
      const run = record(await erp(args(file, ...more), { env: sandbox.env, via: "node" }))
      expect(run.code).toBe(1)
      expect(run.stderr).toBe(
        `erp: cannot write the output: ${file} is read-only for this user (mode 0444): it is not replaced; make it ` +
          "writable to replace it, or write elsewhere\n"
      )
    }
    expect(Fs.readFileSync(file, "utf8")).toBe("kept as it is\n")
    expect(Fs.statSync(file).mode & 0o777).toBe(0o444)
    expect(filesOf("readonly.ndjson")).toEqual(["readonly.ndjson"])
    expect((await sandbox.run(sandbox.sandbox.stats)).requests).toBe(0)
  })

  it("writable is replaced and keeps its mode", async () => {
    const file = Path.join(dir, "mode.ndjson")
    Fs.writeFileSync(file, "the previous export\n")
    Fs.chmodSync(file, 0o640)
    const run = record(await erp(args(file), { env: sandbox.env, via: "node" }))
    expect([run.code, withoutSummary(run.stderr)]).toEqual([0, ""])
    expect(lines(Fs.readFileSync(file, "utf8"))).toEqual(seeded(sandbox))
    expect(Fs.statSync(file).mode & 0o777).toBe(0o640)
  })
})

describe("the lock's decisions", () => {
  const info: OutputLock.LockInfo = {
    pid: 4242,
    host: "build-7",
    since: "2026-05-01T10:00:03Z",
    command: "erp partners list --output out.ndjson",
    nonce: "0123456789abcdef0123456789abcdef",
    startTime: "82275",
    bootId: "boot-a",
    pidNamespace: "pid:[4026531836]"
  }
  const holder = (fields: Partial<OutputLock.LockInfo> = {}): OutputLock.Observed => ({
    _tag: "Holder",
    info: { ...info, ...fields },
    ageMillis: 1_000,
    identity: info.nonce
  })
  const here: OutputLock.Here = { host: "build-7", bootId: "boot-a", pidNamespace: "pid:[4026531836]" }
  const alive = { alive: true, startTime: "82275" }
  const tag = (observed: OutputLock.Observed, where: OutputLock.Here, probe?: OutputLock.Probe) =>
    OutputLock.judge(observed, where, probe)._tag

  it("a holder that runs here is held; one gone, restarted or replaced by another process is stale", () => {
    expect(tag(holder(), here, alive)).toBe("Held")
    // EPERM (another user's process) counts as alive; no start time to compare (not Linux) leaves the pid to say.
    expect(tag(holder({ startTime: undefined }), here, { alive: true })).toBe("Held")
    expect(tag(holder(), here, { alive: true })).toBe("Held")
    expect(tag(holder(), here, { alive: false })).toBe("Stale")
    expect(tag(holder(), here, { alive: true, startTime: "99999" })).toBe("Stale")
    expect(tag(holder({ bootId: "boot-b" }), here, alive)).toBe("Stale")
  })

  it("a holder that has ended is stale: a zombie, or one whose kernel lock this run now holds (same network namespace)", () => {
    expect(tag(holder(), here, { alive: true, zombie: true, startTime: "82275" })).toBe("Stale")
    const net = { ...here, netNamespace: "net:[4026531840]" }
    const kernel = (fields: Partial<OutputLock.LockInfo>) =>
      OutputLock.judge(holder({ netNamespace: "net:[4026531840]", kernel: true, ...fields }), net, alive, true)
    expect(kernel({})).toStrictEqual({ _tag: "Stale", why: "pid 4242 has ended (the kernel released its lock)" })
    // The holder held no kernel lock, or held it where this run's is not seen: its pid says.
    expect(kernel({ kernel: undefined })._tag).toBe("Held")
    expect(kernel({ netNamespace: "net:[4026532999]" })._tag).toBe("Held")
    // This run holds no kernel lock (none on this platform): its pid says.
    expect(OutputLock.judge(holder({ netNamespace: "net:[4026531840]", kernel: true }), net, alive, false)._tag).toBe(
      "Held"
    )
  })

  it("reads whether a process has ended from its state in /proc/<pid>/stat", () => {
    const rest = Array.from({ length: 50 }, (_, i) => String(i + 4)).join(" ")
    expect(OutputLock.endedFromStat(`1234 (erp (x) y) Z ${rest}`)).toBe(true)
    expect(OutputLock.endedFromStat(`1234 (node) X ${rest}`)).toBe(true)
    expect(OutputLock.endedFromStat(`1234 (node) S ${rest}`)).toBe(false)
    expect(OutputLock.endedFromStat(`1234 (Z) R ${rest}`)).toBe(false)
    expect(OutputLock.endedFromStat("garbage")).toBe(false)
  })

  it("a symbolic link where the lock should be is stale at once: no run makes one", () => {
    const link: OutputLock.Observed = { _tag: "Unreadable", size: 0, ageMillis: 0, identity: "i9-1", link: true }
    expect(OutputLock.judge(link, here, undefined)._tag).toBe("Stale")
  })

  it("a holder on another host or in another pid namespace is never stale: this host cannot check it", () => {
    expect(tag(holder({ host: "build-8" }), here, { alive: false })).toBe("Unverifiable")
    expect(tag(holder({ host: "build-8", bootId: "boot-b" }), here, undefined)).toBe("Unverifiable")
    expect(tag(holder({ pidNamespace: "pid:[4026532500]" }), here, { alive: false })).toBe("Unverifiable")
  })

  it("a lock that names no one is held while young, stale after", () => {
    const unreadable = (ageMillis: number): OutputLock.Observed => ({
      _tag: "Unreadable",
      size: 0,
      ageMillis,
      identity: "i12-1"
    })
    expect(tag(unreadable(0), here)).toBe("Held")
    expect(tag(unreadable(OutputLock.YOUNG_MILLIS - 1), here)).toBe("Held")
    expect(tag(unreadable(OutputLock.YOUNG_MILLIS), here)).toBe("Stale")
  })

  it("reads the start time after a command name that holds spaces and parentheses", () => {
    const fields = Array.from({ length: 50 }, (_, i) => String(i + 3))
    expect(OutputLock.startTimeFromStat(`1234 (a (b) c) ${fields.join(" ")}\n`)).toBe("22")
    expect(OutputLock.startTimeFromStat("garbage")).toBeUndefined()
  })

  it("names a holder with how long ago it started, as a person reads it", () => {
    const since = Date.parse(info.since)
    expect(OutputLock.describeHolder(info, since + 12_345)).toBe(
      "pid 4242 on host build-7 since 2026-05-01T10:00:03Z (12.3 s ago), running erp partners list --output out.ndjson"
    )
    const ago = (millis: number) => /\((.+) ago\)/.exec(OutputLock.describeHolder(info, since + millis))?.[1]
    expect([ago(-5), ago(90_000), ago(3 * 3_600_000 + 5 * 60_000), ago(2 * 86_400_000 + 4 * 3_600_000)]).toEqual([
      "0.0 s",
      "1 min",
      "3 h 5 min",
      "2 d 4 h"
    ])
  })

  it("records the command line without the value of --redis", () => {
    expect(OutputLock.commandLine(["partners", "list", "--redis", "redis://:pw@h", "--output", "a b.ndjson"])).toBe(
      "erp partners list --redis <redacted> --output 'a b.ndjson'"
    )
    expect(OutputLock.commandLine(["partners", "list", "--redis=redis://:pw@h"])).toBe(
      "erp partners list --redis=<redacted>"
    )
  })

  it("read-only: what access says, and for the owner and root, the owner's write bit", () => {
    const file = { mode: 0o100444, uid: 1000 }
    expect(OutputLock.isReadOnly(file, { uid: 0, writable: true })).toBe(true)
    expect(OutputLock.isReadOnly(file, { uid: 1000, writable: true })).toBe(true)
    expect(OutputLock.isReadOnly(file, { uid: 1000, writable: false })).toBe(true)
    expect(OutputLock.isReadOnly({ ...file, mode: 0o100644 }, { uid: 0, writable: true })).toBe(false)
    // Another user's file this user may write (a group's): access alone says.
    expect(OutputLock.isReadOnly({ mode: 0o100464, uid: 1000 }, { uid: 1001, writable: true })).toBe(false)
  })
})
