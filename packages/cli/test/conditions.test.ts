import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Seed } from "@erp-client/sandbox"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { erp, startSandbox } from "./harness.js"

// The compiled command with --where and --customers against servers that ignore conditions (every one, or those on a
// field they do not know): the whole list comes back, the records say otherwise, and the export fails with exit 1
// and one line before it writes a record that does not satisfy the condition; to a file, nothing is published. Against
// a server that applies them, the output is what it was: every record served, byte for byte.

type Started = Awaited<ReturnType<typeof startSandbox>>

let unknown: Started
let ignoring: Started
let applying: Started
let dir: string

const noLimit = { rateLimit: { limit: 10_000, window: "30 seconds" } } as const

const servedLines = async (s: Started, where?: (record: Seed.ServedRecord) => boolean) =>
  (await s.run(s.sandbox.visiblePartners)).filter((record) => where === undefined || where(record)).map((record) =>
    Seed.recordJson(record)
  )

const isCustomer = (record: Seed.ServedRecord) =>
  record.is_customer === 1 || record.is_customer === "1" || record.is_customer === true

const ndjson = (stdout: string) => stdout.split("\n").filter((line) => line !== "")

const HINT = " (--no-check-where takes the records as served)"

beforeAll(async () => {
  unknown = await startSandbox({ partners: 300, ignoreConditions: "unknown", ...noLimit })
  ignoring = await startSandbox({ partners: 300, ignoreConditions: "all", ...noLimit })
  applying = await startSandbox({
    partners: 300,
    oddRecords: { rate: 0.3, kinds: ["customer-flag-string", "customer-flag-boolean", "number-beyond-double"] },
    ...noLimit
  })
  dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "erp-conditions-"))
})

afterAll(async () => {
  await unknown?.close()
  await ignoring?.close()
  await applying?.close()
  if (dir !== undefined) Fs.rmSync(dir, { recursive: true, force: true })
})

describe("a server that ignores a condition on a field it does not know", () => {
  it("--where nonexistent_field=1: exit 1, nothing on stdout, one line saying so", async () => {
    const runs = await Promise.all([
      erp(["partners", "list", "--where", "nonexistent_field=1"], { env: unknown.env, via: "node" }),
      erp(["api", "list", "partner/list", "--where", "nonexistent_field=1", "--format", "table"], {
        env: unknown.env,
        via: "node"
      }),
      erp(["partners", "list", "--where", "nonexistent_field=1", "--safe", "--format", "csv"], {
        env: unknown.env,
        via: "node"
      })
    ])
    for (const run of runs) {
      expect(run.code).toBe(1)
      expect(run.stdout).toBe("")
      expect(run.stderr).toBe(
        "erp: partner/list: the server ignored the condition nonexistent_field=1: the record at offset 0 (id 1) has " +
          `no field nonexistent_field${HINT}\n`
      )
    }
  })

  it("--output FILE: exit 1, no FILE, nothing beside it", async () => {
    const file = Path.join(dir, "unknown.csv")
    const run = await erp(
      ["partners", "list", "--where", "nonexistent_field=1", "--format", "csv", "--output", file, "--resume"],
      { env: unknown.env, via: "node" }
    )
    expect(run.code).toBe(1)
    expect(run.stdout).toBe("")
    expect(run.stderr).toMatch(/^erp: partner\/list: the server ignored the condition nonexistent_field=1: .*\n$/)
    expect(Fs.readdirSync(dir).filter((name) => name.startsWith("unknown.csv"))).toStrictEqual([])
  })

  it("--no-check-where takes the records as served: the whole list, exit 0", async () => {
    const run = await erp(["partners", "list", "--where", "nonexistent_field=1", "--no-check-where"], {
      env: unknown.env,
      via: "node"
    })
    expect(run.code).toBe(0)
    expect(run.stderr).toBe("")
    expect(ndjson(run.stdout)).toStrictEqual(await servedLines(unknown))
  })

  it("a field it knows is applied: --customers as from a server that applies every condition", async () => {
    const run = await erp(["partners", "list", "--customers"], { env: unknown.env, via: "node" })
    expect(run.code).toBe(0)
    expect(ndjson(run.stdout)).toStrictEqual(await servedLines(unknown, isCustomer))
  })
})

describe("a server that ignores every condition", () => {
  it("--customers, changes and api infer: exit 1, nothing written, STATE not made", async () => {
    const all = await servedLines(ignoring)
    const first = (await ignoring.run(ignoring.sandbox.visiblePartners)).findIndex((record) => !isCustomer(record))
    const state = Path.join(dir, "customers.state")
    const [list, changes, infer] = await Promise.all([
      erp(["partners", "list", "--customers", "--format", "table"], { env: ignoring.env, via: "node" }),
      erp(["partners", "changes", "--since", state, "--customers"], { env: ignoring.env, via: "node" }),
      erp(["api", "infer", "partner/list", "--where", "is_customer=1"], { env: ignoring.env, via: "node" })
    ])
    expect(all.length).toBe(300)
    const line = `erp: partner/list: the server ignored the condition is_customer=1: the record at offset ${first} ` +
      `(id ${first + 1}) has is_customer 0${HINT}`
    for (const run of [list, changes, infer]) {
      expect(run.code).toBe(1)
      expect(run.stdout).toBe("")
      expect(run.stderr.trimEnd().split("\n")).toContain(line)
    }
    expect(Fs.existsSync(state)).toBe(false)
  })

  it("a page that fails after pages that pass: what was written satisfies the condition; FILE is not published", async () => {
    const partners = await ignoring.run(ignoring.sandbox.visiblePartners)
    const first = partners.findIndex((record) => !isCustomer(record))
    // Pages of `first` records: the first page holds customers only, the second starts with one that is not.
    expect(first).toBeGreaterThan(0)
    const file = Path.join(dir, "later.ndjson")
    const args = ["partners", "list", "--customers", "--page-size", String(first), "--concurrency", "1"]
    const [stdout, toFile] = await Promise.all([
      erp(args, { env: ignoring.env, via: "node" }),
      erp([...args, "--output", file], { env: ignoring.env, via: "node" })
    ])
    const customers = partners.slice(0, first).map((record) => Seed.recordJson(record))
    expect(stdout.code).toBe(1)
    expect(ndjson(stdout.stdout)).toStrictEqual(customers)
    expect(stdout.stderr).toMatch(new RegExp(`the record at offset ${first} \\(id ${first + 1}\\) has is_customer 0`))
    expect(toFile.code).toBe(1)
    expect(Fs.existsSync(file)).toBe(false)
    // The work kept for a resume holds the pages that passed, no more.
    expect(ndjson(Fs.readFileSync(`${file}.part`, "utf8"))).toStrictEqual(customers)
    expect(toFile.stderr).toContain(`kept ${first} records in ${file}.part`)
  })
})

describe("a server that applies the conditions", () => {
  it("--customers, --where and an output file: every record served, byte for byte, as with --no-check-where", async () => {
    const customers = await servedLines(applying, isCustomer)
    const named = (await applying.run(applying.sandbox.visiblePartners))[7]!
    const file = Path.join(dir, "applied.ndjson")
    const exports = [
      { args: ["partners", "list", "--customers"], expected: customers },
      { args: ["partners", "list", "--where", "is_customer=1", "--safe"], expected: customers },
      {
        args: ["api", "list", "partner/list", "--where", `company_name=${named.company_name}`],
        expected: [Seed.recordJson(named)]
      },
      {
        args: ["partners", "list", "--where", "credit_limit=12345678901234567890"],
        expected: await servedLines(
          applying,
          (r) => Seed.recordJson(r).includes("\"credit_limit\":12345678901234567890")
        )
      },
      { args: ["partners", "list", "--where", "nonexistent_field=1"], expected: [] }
    ]
    const [runs, unchecked, toFile] = await Promise.all([
      Promise.all(exports.map(({ args }) => erp(args, { env: applying.env, via: "node" }))),
      Promise.all(exports.map(({ args }) => erp([...args, "--no-check-where"], { env: applying.env, via: "node" }))),
      erp(["partners", "list", "--customers", "--output", file], { env: applying.env, via: "node" })
    ])
    expect(exports[3]!.expected.length).toBeGreaterThan(0)
    runs.forEach((run, i) => {
      const what = exports[i]!.args.join(" ")
      expect(run.code, what).toBe(0)
      expect(run.stderr, what).toBe("")
      expect(ndjson(run.stdout), what).toStrictEqual(exports[i]!.expected)
      expect(run.stdout, what).toBe(unchecked[i]!.stdout)
    })
    expect(toFile.code).toBe(0)
    expect(Fs.readFileSync(file, "utf8")).toBe(runs[0]!.stdout)
  })
})
