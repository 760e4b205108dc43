import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Fault, Seed } from "@erp-client/sandbox"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { erp, parseCsv, startSandbox } from "./harness.js"

// The compiled command against servers that stray where the contract is silent: records filtered after the cut (short
// pages in the middle of the list), an ignored list_offset, ids repeated by distinct records. Each export writes every
// record the server serves exactly once, or fails with exit 1 and one line; none ends with exit 0 and fewer records.
// An outage longer than the retry budget keeps what was fetched, and --resume finishes it, each record once. The runs
// of a test are independent and run side by side, to keep the file's wall time short. (Clamped pages:
// unsaid.test.ts; kept work under signals and other failures: kept.test.ts; exact numbers, NDJSON and CSV, byte for
// byte: exact.test.ts.)

type Started = Awaited<ReturnType<typeof startSandbox>>

let filtered: Started
let ignoring: Started
let repeated: Started
let outages: ReadonlyArray<Started>
let dir: string

const noLimit = { rateLimit: { limit: 10_000, window: "30 seconds" } } as const

// What the server serves, as it writes each record (NDJSON lines).
const servedLines = async (s: Started, where?: (record: Seed.ServedRecord) => boolean) =>
  (await s.run(s.sandbox.visiblePartners)).filter((record) => where === undefined || where(record)).map((record) =>
    Seed.recordJson(record)
  )

const isCustomer = (record: Seed.ServedRecord) =>
  record.is_customer === 1 || record.is_customer === "1" || record.is_customer === true

const ndjson = (stdout: string) => stdout.trimEnd().split("\n").filter((line) => line !== "")

beforeAll(async () => {
  // One partner in about twenty-five is dropped after the cut: most pages come back a record or two short.
  filtered = await startSandbox({ partners: 600, hidden: { rate: 0.04, seed: 3 }, ...noLimit })
  ignoring = await startSandbox({ partners: 300, ignoreOffset: true, ...noLimit })
  repeated = await startSandbox({ partners: 300, oddRecords: { rate: 0.1, kinds: ["duplicate-id"] }, ...noLimit })
  // A filtering server that goes down for 2 s at the fourth list page, answering HTML 503s with Retry-After: 1.
  outages = await Promise.all([0, 1].map(() =>
    startSandbox({
      partners: 300,
      hidden: { rate: 0.04, seed: 3 },
      inject: [{
        fault: Fault.Fault.Outage({ duration: "2 seconds", retryAfter: "1" }),
        endpoint: "/partner/list",
        after: 3
      }],
      ...noLimit
    })
  ))
  dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "erp-misbehaving-"))
})

afterAll(async () => {
  await filtered?.close()
  await ignoring?.close()
  await repeated?.close()
  for (const started of outages ?? []) await started.close()
  if (dir !== undefined) Fs.rmSync(dir, { recursive: true, force: true })
})

describe("a server that filters records after cutting the page", () => {
  it("partners list, --safe, api list, --customers and a CSV file each have every served record once, exit 0", async () => {
    const all = await servedLines(filtered)
    expect(all.length).toBeLessThan(600)
    const file = Path.join(dir, "filtered.csv")
    const exports = [
      ["partners", "list", "--page-size", "100"],
      ["partners", "list", "--page-size", "100", "--safe", "--concurrency", "2"],
      ["api", "list", "partner/list", "--page-size", "100"],
      ["partners", "list", "--page-size", "100", "--customers"]
    ]
    const [runs, csv] = await Promise.all([
      Promise.all(exports.map((args) => erp(args, { env: filtered.env, via: "node" }))),
      erp(["partners", "list", "--page-size", "50", "--format", "csv", "--output", file], {
        env: filtered.env,
        via: "node"
      })
    ])
    const customers = await servedLines(filtered, isCustomer)
    runs.forEach((run, i) => {
      expect(run.code, exports[i]!.join(" ")).toBe(0)
      expect(ndjson(run.stdout), exports[i]!.join(" ")).toEqual(exports[i]!.includes("--customers") ? customers : all)
    })
    // The CSV file: one row per served record, none twice.
    expect(csv.code).toBe(0)
    const rows = parseCsv(Fs.readFileSync(file, "utf8"))
    const idColumn = rows[0]!.indexOf("id")
    const ids = rows.slice(1).map((row) => row[idColumn])
    expect(ids).toEqual((await filtered.run(filtered.sandbox.visiblePartners)).map((record) => String(record.id)))
  })
})

describe("a server that ignores list_offset", () => {
  it("plain and --safe fail with exit 1 and one line naming the offset; nothing is written twice", async () => {
    const modes = [false, true]
    const runs = await Promise.all(
      modes.map((safe) =>
        erp(["partners", "list", "--page-size", "50", ...(safe ? ["--safe"] : [])], { env: ignoring.env, via: "node" })
      )
    )
    for (const [i, run] of runs.entries()) {
      expect(run.code, `safe ${modes[i]}`).toBe(1)
      const lines = run.stderr.trimEnd().split("\n")
      expect(lines.at(-1)).toMatch(/^erp: partner\/list: paging stopped at offset \d+: /)
      const written = ndjson(run.stdout)
      expect(new Set(written).size).toBe(written.length)
    }
  })
})

describe("distinct records that repeat another's id", () => {
  it("plain writes them all; --safe writes each id once and says how many it did not write, and why", async () => {
    const all = await servedLines(repeated)
    const [plain, safe] = await Promise.all([
      erp(["partners", "list"], { env: repeated.env, via: "node" }),
      erp(["partners", "list", "--safe"], { env: repeated.env, via: "node" })
    ])
    expect(plain.code).toBe(0)
    expect(ndjson(plain.stdout)).toEqual(all)
    expect(safe.code).toBe(0)
    const written = ndjson(safe.stdout)
    const ids = written.map((line) => JSON.parse(line).id)
    expect(new Set(ids).size).toBe(ids.length)
    const notWritten = all.length - written.length
    expect(notWritten).toBeGreaterThan(5)
    // The line names the first five ids it did not write (those a record before had), then how many more.
    const seen = new Set<number>()
    const repeats = all.map((line) => JSON.parse(line).id as number).filter((id) => seen.has(id) || !seen.add(id))
    expect(repeats).toHaveLength(notWritten)
    expect(safe.stderr).toContain(
      `${notWritten} records were not written (ids ${repeats.slice(0, 5).join(", ")} and ${notWritten - 5} more): ` +
        "each has the id of a record already written"
    )
  })
})

describe("an export to a file during an outage longer than the retry budget", () => {
  const HOW = "run the same command with --resume to continue, or --restart to start over"

  it("plain and --safe: exit 1, one line saying the attempts and the records kept; --resume writes every record once", async () => {
    const modes = [[], ["--safe"]]
    const files = modes.map((_, i) => Path.join(dir, `outage-${i}.ndjson`))
    const argsOf = (i: number) => [
      "partners",
      "list",
      "--page-size",
      "50",
      "--concurrency",
      "1",
      "--output",
      files[i]!,
      ...modes[i]!
    ]
    // A budget of 1.5 s: the first attempt, one more after Retry-After: 1, and the next would start past it.
    const failed = await Promise.all(
      modes.map((_, i) => erp(argsOf(i), { env: { ...outages[i]!.env, ERP_RETRY_BUDGET: "1500 millis" }, via: "node" }))
    )
    const keptOf: Array<number> = []
    for (const [i, run] of failed.entries()) {
      const mode = modes[i]!.join(" ") || "plain"
      const all = await servedLines(outages[i]!)
      expect(run.code, mode).toBe(1)
      expect(run.stdout, mode).toBe("")
      const stderr = run.stderr.trimEnd().split("\n")
      expect(stderr, mode).toHaveLength(1)
      const match = new RegExp(
        String.raw`^erp: GET partner/list: unexpected HTTP status 503 \(Retry-After: 1\)` +
          // When the last wait asked for would end past the budget, the message says so.
          String
            .raw`(?:; the server asked to wait 1 s, which would end past the retry budget of 1\.5 s: not waited for)? ` +
          String.raw`\((\d+) attempts over ` +
          String.raw`\d+\.\d s\); kept (\d+) records in (.+): ${HOW}$`
      ).exec(stderr[0]!)
      expect(match, stderr[0]).not.toBeNull()
      // The attempts said are the ones the server saw.
      const refused = (await outages[i]!.run(outages[i]!.sandbox.requests)).filter((entry) => entry.status === 503)
      expect(Number(match![1]), mode).toBe(refused.length)
      expect(refused.length, mode).toBe(2)
      // The part holds the records of the pages before the outage, as served, each once.
      expect(match![3]).toBe(`${files[i]}.part`)
      const kept = Number(match![2])
      keptOf.push(kept)
      expect(kept, mode).toBeGreaterThan(100)
      expect(ndjson(Fs.readFileSync(`${files[i]}.part`, "utf8")), mode).toEqual(all.slice(0, kept))
    }

    // The same command with --resume and the default budget (it rides out what is left of the outage): every served
    // record once, and only the file is left.
    const resumed = await Promise.all(
      modes.map((_, i) => erp([...argsOf(i), "--resume"], { env: outages[i]!.env, via: "node" }))
    )
    for (const [i, run] of resumed.entries()) {
      const mode = modes[i]!.join(" ") || "plain"
      expect(run.code, mode).toBe(0)
      const served = await servedLines(outages[i]!)
      expect(ndjson(Fs.readFileSync(files[i]!, "utf8")), mode).toEqual(served)
      // Its one line: the summary, counting the records the failed run kept.
      expect(run.stderr, mode).toMatch(
        new RegExp(
          `^erp: ${served.length.toLocaleString("en-US")} records written to ${files[i]!.replace(/[.\\/]/g, "\\$&")} ` +
            `\\([\\d,]+ bytes; ${keptOf[i]!.toLocaleString("en-US")} of them by the run resumed\\): [^\\n]+\\n$`
        )
      )
      expect(Fs.readdirSync(dir).filter((name) => name.startsWith(`outage-${i}.`)), mode).toEqual([
        `outage-${i}.ndjson`
      ])
    }
  })
})
