import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Fault } from "@erp-client/sandbox"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { erp, openRequestsAfterwards, parseCsv, type Run, SECRET, startSandbox } from "./harness.js"

type Started = Awaited<ReturnType<typeof startSandbox>>

const PARTNERS = 240
let env: Started
let slow: Started
let dir: string
const outputs: Array<Run> = []
const record = (run: Run) => {
  outputs.push(run)
  return run
}

const seededLines = (s: Started) =>
  Array.from({ length: s.sandbox.partnerCount }, (_, i) => JSON.stringify(s.sandbox.partnerAt(i)))

// The one line an export to --output ends with, read back: `erp: 240 records written to F (98,765 bytes): 6 pages, 7
// requests, 0.4 s`, with `; 120 of them by the run resumed` after the bytes when it resumed one.
const SUMMARY = new RegExp(
  String.raw`^erp: ([\d,]+) records? written to (.+) \(([\d,]+) bytes?(?:; ([\d,]+) of them by the run resumed)?\): ` +
    String.raw`([\d,]+) pages?, ([\d,]+) requests?, \d+\.\d s\n$`
)
const summaryOf = (stderr: string) => {
  const match = SUMMARY.exec(stderr)
  expect(match, stderr).not.toBeNull()
  const n = (i: number) => match![i] === undefined ? 0 : Number(match![i]!.replace(/,/g, ""))
  return { records: n(1), file: match![2], bytes: n(3), resumed: n(4), pages: n(5), requests: n(6) }
}
const listRequestCount = async (s: Started) => (await s.run(s.sandbox.stats)).byEndpoint["/partner/list"] ?? 0

beforeAll(async () => {
  env = await startSandbox({ partners: PARTNERS, rateLimit: { limit: 1_000, window: "30 seconds" } })
  // A slow one: 60 pages of 10 at 60 ms each, so an export can be interrupted or broken midway.
  slow = await startSandbox({
    partners: 600,
    rateLimit: { limit: 1_000, window: "30 seconds" },
    latency: { base: "60 millis" }
  })
  dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "erp-cli-"))
})

afterAll(async () => {
  await env?.close()
  await slow?.close()
  if (dir !== undefined) Fs.rmSync(dir, { recursive: true, force: true })
})

describe("erp partners list", () => {
  it("writes NDJSON: one object a line, every field exactly as the server sent it, nothing else on stdout", async () => {
    // Through the README's `pnpm --silent erp` itself (the other tests run what it runs, without pnpm's start).
    const run = record(
      await erp(["partners", "list", "--page-size", "50", "--concurrency", "3"], { env: env.env, via: "pnpm" })
    )
    expect(run.code).toBe(0)
    expect(run.stderr).toBe("")
    const lines = run.stdout.trimEnd().split("\n")
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow()
    expect(lines).toEqual(seededLines(env))
  })

  it("filters with --customers and --where", async () => {
    const run = record(await erp(["partners", "list", "--customers", "--where", "country=HU"], { env: env.env }))
    expect(run.code).toBe(0)
    const got = run.stdout.trimEnd().split("\n").map((l) => JSON.parse(l))
    const expected = seededLines(env).map((l) => JSON.parse(l)).filter((p) => p.is_customer === 1 && p.country === "HU")
    expect(expected.length).toBeGreaterThan(5)
    expect(got).toEqual(expected)
  })

  it("writes CSV that reads back to the same records (commas, quotes, newlines, accents)", async () => {
    const csv = record(await erp(["partners", "list", "--format", "csv"], { env: env.env }))
    expect(csv.code).toBe(0)
    const [header, ...rows] = parseCsv(csv.stdout)
    const records = seededLines(env).map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(rows).toHaveLength(records.length)
    expect(header!.slice(0, 4)).toEqual(["id", "company_name", "tax_number", "is_customer"])
    rows.forEach((row, i) => {
      const record = records[i]!
      header!.forEach((column, c) => {
        if (column === "other_fields") return expect(row[c]).toBe("")
        const value = record[column]
        const text = value === null || value === undefined
          ? ""
          : typeof value === "object"
          ? JSON.stringify(value)
          : String(value)
        expect(row[c]).toBe(text)
      })
    })
    expect(records.some((r) => /[",]/.test(String(r.company_name)))).toBe(true)
    // Exact: phone numbers start with +, as sent; a note says what a spreadsheet would make of them.
    expect(rows[0]![header!.indexOf("phone")]).toMatch(/^\+36 /)
    expect(csv.stderr.trimEnd().split("\n")).toHaveLength(1)
    expect(csv.stderr).toMatch(/^erp: some CSV cells start with =, \+, -, @.*--spreadsheet/)
  })

  it("--spreadsheet writes formula-like cells as text (a leading '), every other cell exact", async () => {
    const run = record(await erp(["partners", "list", "--format", "csv", "--spreadsheet"], { env: env.env }))
    expect(run.code).toBe(0)
    expect(run.stderr).toBe("")
    const [header, ...rows] = parseCsv(run.stdout)
    const records = seededLines(env).map((l) => JSON.parse(l) as Record<string, unknown>)
    let guarded = 0
    rows.forEach((row, i) => {
      header!.forEach((column, c) => {
        if (column === "other_fields") return
        const value = records[i]![column]
        const text = value === null || value === undefined
          ? ""
          : typeof value === "object"
          ? JSON.stringify(value)
          : String(value)
        const formulaLike = /^[=+\-@\t\r]/.test(text) && !/^[+-]?\d+(\.\d+)?$/.test(text)
        if (formulaLike) guarded++
        expect(row[c]).toBe(formulaLike ? `'${text}` : text)
      })
    })
    expect(guarded).toBeGreaterThanOrEqual(records.length)
  })

  it("writes a table for people", async () => {
    const run = record(await erp(["partners", "list", "--format", "table"], { env: env.env }))
    expect(run.code).toBe(0)
    const lines = run.stdout.trimEnd().split("\n")
    expect(lines[0]).toMatch(/^id\s+company_name\s+tax_number\s+customer$/)
    expect(lines).toHaveLength(PARTNERS + 2)
  })

  it("--output writes the whole file, and only when complete", async () => {
    const file = Path.join(dir, "all.ndjson")
    const run = record(await erp(["partners", "list", "--output", file], { env: env.env }))
    expect(run.code).toBe(0)
    expect(run.stdout).toBe("")
    expect(Fs.readFileSync(file, "utf8").trimEnd().split("\n")).toEqual(seededLines(env))
    expect(Fs.readdirSync(dir).filter((f) => f.startsWith("all.ndjson"))).toEqual(["all.ndjson"])
  })

  it("a failure midway leaves no file that looks whole: it keeps its complete pages in the part file and says so", async () => {
    const file = Path.join(dir, "broken.ndjson")
    const midway = slow.listRequests(10)
    const running = erp(["partners", "list", "--page-size", "10", "--concurrency", "1", "--output", file], {
      env: slow.env
    })
    await midway
    await slow.run(slow.sandbox.inject(Fault.Fault.Unauthorized(), { times: Infinity }))
    const run = record(await running)
    await slow.run(slow.sandbox.clearFaults)
    expect(run.code).toBe(3)
    expect(run.stderr.trim().split("\n")).toHaveLength(1)
    expect(run.stderr).toMatch(
      /^erp: partner\/list: the API key was refused \(Unauthorized\); kept \d+ records in .*broken\.ndjson\.part: /
    )
    expect(Fs.readdirSync(dir).filter((f) => f.startsWith("broken")).sort()).toEqual([
      "broken.ndjson.part",
      "broken.ndjson.resume.json"
    ])
  })

  it("Ctrl-C stops cleanly with 130, keeps the complete pages, says so, and leaves no request open", async () => {
    const file = Path.join(dir, "interrupted.ndjson")
    const run = record(
      await erp(["partners", "list", "--page-size", "10", "--concurrency", "1", "--output", file], {
        env: slow.env,
        via: "tsx",
        interruptWhen: slow.listRequests(10)
      })
    )
    expect(run.code).toBe(130)
    expect(run.stderr).toMatch(
      /^erp: interrupted \(SIGINT\); kept \d+ records in .*interrupted\.ndjson\.part: [^\n]+\n$/
    )
    expect(Fs.existsSync(file)).toBe(false)
    // Nothing is left open at the server once the command is gone.
    expect(await openRequestsAfterwards(slow)).toBe(0)
  })

  it("a reader that stops early (| head -1) ends the export quietly: exit 0, nothing on stderr, no request open", async () => {
    const run = record(
      await erp(["partners", "list", "--page-size", "10", "--concurrency", "4"], {
        env: slow.env,
        closeStdoutWhen: (stdout) => stdout.includes("\n")
      })
    )
    expect(run.stderr).toBe("")
    expect(run.code).toBe(0)
    // What was read before the pipe closed is the start of the export.
    const lines = run.stdout.split("\n").filter((line) => line !== "")
    expect(lines.length).toBeGreaterThan(0)
    expect(lines.slice(0, -1)).toEqual(seededLines(slow).slice(0, lines.length - 1))
    expect(await openRequestsAfterwards(slow)).toBe(0)
  })

  it("an export to --output ends with one summary line on stderr, --quiet with none; to stdout, stderr says nothing", async () => {
    const file = Path.join(dir, "summary.ndjson")
    await env.run(env.sandbox.resetStats)
    const run = record(await erp(["partners", "list", "--page-size", "50", "--output", file], { env: env.env }))
    expect([run.code, run.stdout]).toEqual([0, ""])
    const requests = await listRequestCount(env)
    const summary = summaryOf(run.stderr)
    expect(summary).toMatchObject({ records: PARTNERS, file, bytes: Fs.statSync(file).size, resumed: 0 })
    // 240 records in pages of 50: five, then the empty page that ends the list; pages fetched ahead cost requests too.
    // The summary counts the requests started: one of the (at most 3) pages in flight past the end may be cancelled
    // before it reaches the server.
    expect(summary.pages).toBe(6)
    expect(requests).toBeGreaterThanOrEqual(6)
    expect(summary.requests).toBeGreaterThanOrEqual(requests)
    expect(summary.requests).toBeLessThanOrEqual(requests + 3)
    expect(Fs.readFileSync(file, "utf8").trimEnd().split("\n")).toEqual(seededLines(env))

    const quiet = record(await erp(["partners", "list", "--output", file, "--quiet"], { env: env.env }))
    expect([quiet.code, quiet.stderr]).toEqual([0, ""])
    expect(Fs.readFileSync(file, "utf8").trimEnd().split("\n")).toEqual(seededLines(env))

    // erp api list too; CSV's one warning comes first, the summary last.
    const csv = Path.join(dir, "summary.csv")
    const api = record(await erp(["api", "list", "partner/list", "--format", "csv", "--output", csv], { env: env.env }))
    expect(api.code).toBe(0)
    const said = api.stderr.trimEnd().split("\n")
    expect(said).toHaveLength(2)
    expect(said[0]).toMatch(/^erp: some CSV cells start with/)
    expect(summaryOf(`${said[1]}\n`)).toMatchObject({ records: PARTNERS, file: csv, bytes: Fs.statSync(csv).size })
    // To stdout, out of a terminal: nothing on stderr.
    const toStdout = record(await erp(["api", "list", "partner/list"], { env: env.env }))
    expect([toStdout.code, toStdout.stderr]).toEqual([0, ""])
  })

  it("--resume continues an interrupted export from its last complete page", async () => {
    const file = Path.join(dir, "resumed.ndjson")
    const args = ["partners", "list", "--page-size", "10", "--concurrency", "1", "--output", file, "--resume"]
    const first = record(await erp(args, { env: slow.env, via: "tsx", interruptWhen: slow.listRequests(10) }))
    expect(first.code).toBe(130)
    const state = JSON.parse(Fs.readFileSync(`${file}.resume.json`, "utf8"))
    expect(state.next.offset).toBeGreaterThan(0)
    expect(state.next.offset).toBeLessThan(600)
    await slow.run(slow.sandbox.resetStats)
    const second = record(await erp(args, { env: slow.env }))
    expect(second.code).toBe(0)
    expect(Fs.readFileSync(file, "utf8").trimEnd().split("\n")).toEqual(seededLines(slow))
    // Its summary: the whole file, the records the first run wrote, and this run's pages and requests.
    const requests = await listRequestCount(slow)
    expect(summaryOf(second.stderr)).toEqual({
      records: 600,
      file,
      bytes: Fs.statSync(file).size,
      resumed: state.records,
      pages: requests,
      requests
    })
    expect(Fs.readdirSync(dir).filter((f) => f.startsWith("resumed"))).toEqual(["resumed.ndjson"])
    // The second run started where the first stopped.
    const offsets = (await slow.run(slow.sandbox.requests)).map((r) => Number(new Map(r.query).get("list_offset")))
    expect(Math.min(...offsets)).toBe(state.next.offset)
  })

  it("a resume with other flags is refused and touches nothing; no flag refuses too; --restart starts over", async () => {
    const file = Path.join(dir, "refused.ndjson")
    const args = (pageSize: string) => [
      "partners",
      "list",
      "--page-size",
      pageSize,
      "--concurrency",
      "1",
      "--output",
      file
    ]
    const first = record(
      await erp([...args("20"), "--resume"], { env: slow.env, via: "tsx", interruptWhen: slow.listRequests(5) })
    )
    expect(first.code).toBe(130)
    const saved = () => [Fs.readFileSync(`${file}.part`), Fs.readFileSync(`${file}.resume.json`)]
    const before = saved()
    expect(before[0]!.length).toBeGreaterThan(0)
    // The saved state keeps the flags one by one, to name a difference.
    expect(JSON.parse(before[1]!.toString("utf8")).flags["--page-size"]).toBe(20)

    const other = record(await erp([...args("50"), "--resume"], { env: slow.env }))
    expect(other.code).toBe(2)
    expect(other.stdout).toBe("")
    expect(other.stderr).toBe(
      "erp: --resume: the saved export used --page-size 20, this run --page-size 50; use the same flags, or " +
        "--restart to discard it and start over\n"
    )
    expect(saved()).toEqual(before)

    const plain = record(await erp(args("20"), { env: slow.env }))
    expect(plain.code).toBe(2)
    expect(plain.stderr.trimEnd().split("\n")).toEqual([
      `erp: ${file}: an unfinished export is saved beside it (${file}.resume.json); continue it with --resume, or ` +
      "discard it with --restart"
    ])
    expect(saved()).toEqual(before)

    const restarted = record(await erp([...args("50"), "--restart"], { env: slow.env }))
    expect(summaryOf(restarted.stderr)).toMatchObject({ records: 600, file, bytes: Fs.statSync(file).size, resumed: 0 })
    expect(restarted.code).toBe(0)
    expect(Fs.readFileSync(file, "utf8").trimEnd().split("\n")).toEqual(seededLines(slow))
    expect(Fs.readdirSync(dir).filter((f) => f.startsWith("refused"))).toEqual(["refused.ndjson"])
  })

  it("--safe --resume over a list that changes: interrupted, resumed, every partner present throughout once", async () => {
    // One insert and one delete at seeded positions before every list answer.
    const drifting = await startSandbox({
      partners: 600,
      rateLimit: { limit: 1_000, window: "30 seconds" },
      latency: { base: "40 millis" },
      drift: { inserts: 1, deletes: 1, seed: 4 }
    })
    try {
      const initial = new Set(await drifting.run(drifting.sandbox.partnerIds))
      const file = Path.join(dir, "safe.ndjson")
      const args = [
        "partners",
        "list",
        "--page-size",
        "20",
        "--concurrency",
        "2",
        "--output",
        file,
        "--resume",
        "--safe"
      ]
      const first = record(await erp(args, { env: drifting.env, via: "tsx", interruptWhen: drifting.listRequests(8) }))
      expect(first.code).toBe(130)
      // Beside the part file: every id written so far, which the resumed run must not write again.
      const state = JSON.parse(Fs.readFileSync(`${file}.resume.json`, "utf8"))
      const upTo = (path: string, bytes: number) =>
        Fs.readFileSync(path).subarray(0, bytes).toString("utf8").trimEnd().split("\n")
      const written = upTo(`${file}.part`, state.bytes)
      const kept = upTo(`${file}.ids.part`, state.idsBytes)
      expect(kept.map(Number)).toEqual(written.map((line) => JSON.parse(line).id))
      expect(kept.length).toBeGreaterThan(0)
      const second = record(await erp(args, { env: drifting.env }))
      expect(second.code).toBe(0)
      const ids = Fs.readFileSync(file, "utf8").trimEnd().split("\n").map((line) => JSON.parse(line).id as number)
      expect(summaryOf(second.stderr)).toMatchObject({ records: ids.length, file, resumed: kept.length })
      const final = await drifting.run(drifting.sandbox.partnerIds)
      expect(ids.length - new Set(ids).size).toBe(0)
      const emitted = new Set(ids)
      expect(final.filter((id) => initial.has(id) && !emitted.has(id))).toEqual([])
      expect(Fs.readdirSync(dir).filter((f) => f.startsWith("safe"))).toEqual(["safe.ndjson"])
    } finally {
      await drifting.close()
    }
  })
})

describe("erp partners get", () => {
  it("prints one JSON object by id and by an awkward company name", async () => {
    const byId = record(await erp(["partners", "get", "--id", "17"], { env: env.env }))
    expect(byId.code).toBe(0)
    expect(byId.stdout).toBe(JSON.stringify(env.sandbox.partnerAt(16)) + "\n")
    const awkward = seededLines(env).map((l) => JSON.parse(l)).find((p) => /[&+=%]/.test(p.company_name))
    const byName = record(await erp(["partners", "get", "--company-name", awkward.company_name], { env: env.env }))
    expect(byName.code).toBe(0)
    expect(JSON.parse(byName.stdout)).toEqual(awkward)
  })

  it("many lookups, mixed --id and --company-name: NDJSON in the order asked, a line on stderr for each missing, 4", async () => {
    const awkward = env.sandbox.partnerAt(seededLines(env).findIndex((l) => /[&+=%]/.test(JSON.parse(l).company_name)))
    const run = record(
      await erp([
        "partners",
        "get",
        "--company-name",
        awkward.company_name as string,
        "--id",
        "17",
        "--id",
        "99999",
        "--company-name",
        "No Such Partner & Co",
        "--id",
        "3"
      ], { env: env.env })
    )
    expect(run.code).toBe(4)
    expect(run.stdout).toBe(
      [awkward, env.sandbox.partnerAt(16), env.sandbox.partnerAt(2)].map((p) => JSON.stringify(p) + "\n").join("")
    )
    expect(run.stderr.trimEnd().split("\n")).toEqual([
      "erp: partner/get: not found (id=99999)",
      "erp: partner/get: not found (company_name=\"No Such Partner & Co\")"
    ])
  })

  it("--stdin: 50 lookups in one process, in input order; digits are an id, name: a company name", async () => {
    await env.run(env.sandbox.resetStats)
    const wanted = Array.from({ length: 48 }, (_, i) => env.sandbox.partnerAt((i * 7) % PARTNERS))
    const lines = wanted.map((p, i) => i % 2 === 0 ? String(p.id) : p.company_name)
    lines.splice(10, 0, "name:4711", "")
    lines.push("99999")
    const run = record(
      await erp(["partners", "get", "--stdin", "--concurrency", "8"], { env: env.env, stdin: lines.join("\n") })
    )
    expect(run.code).toBe(4)
    expect(run.stdout).toBe(wanted.map((p) => JSON.stringify(p) + "\n").join(""))
    expect(run.stderr.trimEnd().split("\n")).toEqual([
      "erp: partner/get: not found (company_name=\"4711\")",
      "erp: partner/get: not found (id=99999)"
    ])
    const gets = (await env.run(env.sandbox.requests)).filter((r) => r.endpoint === "/partner/get")
    expect(gets).toHaveLength(50)
    expect(gets.some((r) => r.query.some(([name, value]) => name === "company_name" && value === "4711"))).toBe(true)
  })
})

describe("exit codes", () => {
  it("2 for a usage error: unknown flag, bad value, bad --where, missing setting", async () => {
    for (
      const [args, extra] of [
        [["partners", "list", "--bogus"], {}],
        [["partners", "list", "--format", "xml"], {}],
        [["partners", "list", "--where", "a]b=1"], {}],
        [["partners", "get"], {}],
        [["partners", "get", "--stdin", "--id", "3"], {}],
        [["partners", "list", "--output", "x.ndjson", "--resume", "--restart"], {}],
        [["partners", "list"], { ERP_BASE_URL: undefined }],
        [["partners", "list"], { ERP_BASE_URL: "http://erp.example.com" }],
        [["partners", "list"], { ERP_API_KEY: "bad\u0001key" }]
      ] as const
    ) {
      const run = record(await erp(args, { env: { ...env.env, ...extra } }))
      expect(run.code, args.join(" ")).toBe(2)
      expect(run.stdout).toBe("")
      // One line, which says what was wrong.
      expect(run.stderr, args.join(" ")).toMatch(/^erp: [^\n]+\n$/)
    }
  })

  it("settings: a missing one says which variable to set; a bare number of seconds is a duration", async () => {
    const missing = record(await erp(["partners", "get", "--id", "1"], { env: { ...env.env, ERP_API_KEY: undefined } }))
    expect(missing.code).toBe(2)
    expect(missing.stderr).toBe("erp: ERP_API_KEY is not set: export ERP_API_KEY=<your API key>\n")
    const seconds = record(
      await erp(["partners", "get", "--id", "1"], {
        env: {
          ...env.env,
          ERP_RATE_WINDOW: "30",
          ERP_TIMEOUT: "10",
          ERP_RATE_LIMIT_BUDGET: "60",
          ERP_REDIS_TIMEOUT: "2"
        }
      })
    )
    expect(seconds.stderr).toBe("")
    expect(seconds.code).toBe(0)
    const wrong = record(await erp(["partners", "get", "--id", "1"], { env: { ...env.env, ERP_TIMEOUT: "soon" } }))
    expect(wrong.code).toBe(2)
    expect(wrong.stderr).toBe(
      "erp: ERP_TIMEOUT must be a positive duration: seconds (30) or with a unit (\"500 millis\", \"2 minutes\")\n"
    )
  })

  it("3 for Unauthorized, 4 for Not found, 5 for rate limited past the budget, 1 for anything else", async () => {
    const unauthorized = record(await erp(["partners", "list"], { env: { ...env.env, ERP_API_KEY: "sk-wrong-Zx81" } }))
    expect(unauthorized.code).toBe(3)
    expect(unauthorized.stderr).not.toContain("sk-wrong-Zx81")
    const notFound = record(await erp(["partners", "get", "--id", "99999"], { env: env.env }))
    expect(notFound.code).toBe(4)
    expect(notFound.stderr.trim()).toBe("erp: partner/get: not found (id=99999)")
    await env.run(
      env.sandbox.inject(Fault.Fault.TooManyRequests({ resetAfter: "300 millis", resetUnit: "epoch-millis" }), {
        times: Infinity
      })
    )
    const limited = record(
      await erp(["partners", "get", "--id", "1", "--verbose"], {
        env: { ...env.env, ERP_RATE_LIMIT_BUDGET: "2 seconds" }
      })
    )
    await env.run(env.sandbox.clearFaults)
    expect(limited.code).toBe(5)
    expect(limited.stderr).toContain("429")
    // What used the budget: the 429s one after another, not the server's wait of a few hundred ms each.
    expect(limited.stderr.trim().split("\n").at(-1)).toMatch(
      /^erp: partner\/get: rate limited: \d+ answers 429 over [\d.]+ s used up the rate-limit budget of 2 s /
    )
    // A body cut short is retried (a proxy's hiccup); one that stays broken fails, saying its attempts.
    await env.run(env.sandbox.inject(Fault.Fault.MalformedJson(), { times: Infinity }))
    const malformed = record(await erp(["partners", "get", "--id", "1"], { env: { ...env.env, ERP_RETRIES: "1" } }))
    await env.run(env.sandbox.clearFaults)
    expect(malformed.code).toBe(1)
    expect(malformed.stderr.trim().split("\n")).toHaveLength(1)
    expect(malformed.stderr).toMatch(/^erp: partner\/get id=1: cannot decode the body: .*\(2 attempts over/)
  })
})

describe("the key", () => {
  it("never appears on stdout or stderr, not even with --verbose", async () => {
    await env.run(env.sandbox.inject(Fault.Fault.Status({ status: 503 }), { times: 2 }))
    record(await erp(["partners", "list", "--verbose"], { env: env.env }))
    record(await erp(["partners", "get", "--id", "1", "--verbose"], { env: { ...env.env, ERP_API_KEY: `${SECRET}x` } }))
    expect(outputs.length).toBeGreaterThan(25)
    for (const run of outputs) {
      expect(run.stdout).not.toContain(SECRET)
      expect(run.stderr).not.toContain(SECRET)
    }
  })
})

/** Runs `erp ARGS` (a sandbox), runs `probe` against the base URL it prints, then interrupts it. */
const serveWhile = (args: ReadonlyArray<string>, probe: (baseUrl: string) => Promise<void>) => {
  let resolveUrl: (url: string) => void = () => {}
  const printed = new Promise<string>((resolve) => (resolveUrl = resolve))
  return erp(args, {
    via: "tsx",
    onStdout: (text) => {
      const url = /export ERP_BASE_URL=(\S+)/.exec(text)
      if (url !== null) resolveUrl(url[1]!)
    },
    interruptWhen: printed.then(probe)
  })
}

describe("erp sandbox", () => {
  it("serves on the port it prints, with the key it prints, until interrupted", async () => {
    const args = ["sandbox", "--port", "0", "--partners", "30", "--limit", "5", "--window", "60", "--inserts", "2"]
    const served = serveWhile(args, async (baseUrl) => {
      const response = await fetch(`${baseUrl}/partner/get?id=3`, { headers: { "X-API-KEY": "sandbox-key" } })
      expect(response.headers.get("x-ratelimit-limit")).toBe("5")
      expect(((await response.json()) as { data: { id: number } }).data.id).toBe(3)
      // Two partners are inserted before each list answer.
      const listed = await fetch(`${baseUrl}/partner/list?list_offset=0&list_count=100`, {
        headers: { "X-API-KEY": "sandbox-key" }
      })
      expect(((await listed.json()) as { data: Array<unknown> }).data).toHaveLength(32)
    })
    const run = await served
    expect(run.stdout).toContain("export ERP_API_KEY=sandbox-key")
    expect(run.code).toBe(130)
  })

  it("differs from the contract's silences on request: odd records, a default page, other messages", async () => {
    const args = [
      "sandbox",
      "--port",
      "0",
      "--partners",
      "200",
      "--odd-rate",
      "0.5",
      "--odd-kind",
      "tax-number-eu-vat",
      "--odd-kind",
      "company-name-null",
      "--default-list-count",
      "7",
      "--not-found-message",
      "Not Found",
      "--max-list-count",
      "50"
    ]
    const headers = { "X-API-KEY": "sandbox-key" }
    const served = serveWhile(args, async (baseUrl) => {
      // No list_count: the default page. Asked 100: the largest page, 50.
      const first = (await (await fetch(`${baseUrl}/partner/list?list_offset=0`, { headers })).json()) as {
        data: Array<Record<string, unknown>>
      }
      expect(first.data).toHaveLength(7)
      const page =
        (await (await fetch(`${baseUrl}/partner/list?list_offset=0&list_count=100`, { headers })).json()) as {
          data: Array<Record<string, unknown>>
        }
      expect(page.data).toHaveLength(50)
      const strays = page.data.filter((p) => p.company_name === null || /^[A-Z]{2}\d/.test(String(p.tax_number)))
      expect(strays.length).toBeGreaterThan(10)
      expect(strays.length).toBeLessThan(40)
      const missing = await (await fetch(`${baseUrl}/partner/get?id=99999`, { headers })).json()
      expect(missing).toEqual({ result: { code: 0, message: "Not Found" }, data: null })
    })
    const run = await served
    expect(run.code).toBe(130)
    const usage = await erp(["sandbox", "--odd-kind", "tax-number-null"])
    expect(usage.code).toBe(2)
    expect(usage.stderr.trim()).toBe("erp: --odd-kind needs --odd-rate")
  })

  it("refuses out-of-range options as a usage error", async () => {
    const run = await erp(["sandbox", "--port", "70000"])
    expect(run.code).toBe(2)
    expect(run.stderr.trim()).toBe("erp: --port must be from 0 to 65535, got 70000")
  })
})
