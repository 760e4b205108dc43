import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Partner } from "@erp-client/core"
import { Schema } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { erp, type Run, SECRET, startSandbox } from "./harness.js"

// Where the contract says "not shown", the real server may differ from our sandbox's defaults: a largest page below
// the one asked, and records that stray from the contract's table. The command line must lose nothing either way.

type Started = Awaited<ReturnType<typeof startSandbox>>

let clamped: Started
let slowClamped: Started
let odd: Started
let dir: string
const runs: Array<Run> = []
const record = (run: Run) => {
  runs.push(run)
  return run
}

const lines = (s: Started) =>
  Array.from({ length: s.sandbox.partnerCount }, (_, i) => JSON.stringify(s.sandbox.partnerAt(i)))
const isContract = Schema.is(Partner.StrictPartner)

beforeAll(async () => {
  // 300 partners, at most 50 a page whatever is asked.
  clamped = await startSandbox({ partners: 300, maxListCount: 50, rateLimit: { limit: 1_000, window: "30 seconds" } })
  slowClamped = await startSandbox({
    partners: 200,
    maxListCount: 7,
    rateLimit: { limit: 1_000, window: "30 seconds" },
    latency: { base: "40 millis" }
  })
  // A quarter of the partners stray from the contract in every way the sandbox knows.
  odd = await startSandbox({
    partners: 400,
    oddRecords: { rate: 0.25 },
    rateLimit: { limit: 1_000, window: "30 seconds" }
  })
  dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "erp-unsaid-"))
})

afterAll(async () => {
  await clamped?.close()
  await slowClamped?.close()
  await odd?.close()
  if (dir !== undefined) Fs.rmSync(dir, { recursive: true, force: true })
  for (const run of runs) expect(run.stdout + run.stderr).not.toContain(SECRET)
})

describe("a server whose largest page is below the one asked", () => {
  it("exports every partner once, plain and drift-safe, at concurrency 1, 4 and 8, asked 100 or auto", async () => {
    for (
      const [pageSize, concurrency, safe] of [
        ["100", "1", false],
        ["auto", "4", false],
        ["100", "8", true],
        ["auto", "4", true]
      ] as const
    ) {
      const run = record(
        await erp([
          "partners",
          "list",
          "--page-size",
          pageSize,
          "--concurrency",
          concurrency,
          ...(safe ? ["--safe"] : [])
        ], { env: clamped.env })
      )
      expect(run.code, `${pageSize} ${concurrency} ${safe}`).toBe(0)
      expect(run.stderr).toBe("")
      expect(run.stdout.trimEnd().split("\n")).toEqual(lines(clamped))
    }
  })

  it("says what it learned with --verbose", async () => {
    const run = record(await erp(["partners", "list", "--verbose"], { env: clamped.env }))
    expect(run.code).toBe(0)
    expect(run.stderr).toContain("the server serves at most 50 records a page (asked 1000); paging on with 50")
  })

  it("interrupted and resumed: every partner once, and the resumed run keeps the page size it had learned", async () => {
    for (const safe of [false, true]) {
      const file = Path.join(dir, `clamped-${safe}.ndjson`)
      const args = ["partners", "list", "--concurrency", "2", "--output", file, "--resume", ...(safe ? ["--safe"] : [])]
      const first = record(
        await erp(args, { env: slowClamped.env, via: "tsx", interruptWhen: slowClamped.listRequests(8) })
      )
      expect(first.code).toBe(130)
      const state = JSON.parse(Fs.readFileSync(`${file}.resume.json`, "utf8"))
      expect(state.next).toMatchObject({ pageSize: 7, served: 7 })
      await slowClamped.run(slowClamped.sandbox.resetStats)
      const second = record(await erp(args, { env: slowClamped.env }))
      expect(second.code).toBe(0)
      expect(Fs.readFileSync(file, "utf8").trimEnd().split("\n")).toEqual(lines(slowClamped))
      // The resumed run asked for pages of 7 from its first request on: it did not learn again.
      const counts = (await slowClamped.run(slowClamped.sandbox.requests)).map((r) =>
        new Map(r.query).get("list_count")
      )
      expect(new Set(counts)).toEqual(new Set(["7"]))
    }
  })
})

describe("records that stray from the contract", () => {
  const strays = () => lines(odd).map((line) => JSON.parse(line)).filter((record) => !isContract(record))

  it("are written as sent, and counted on stderr; --verbose names each", async () => {
    expect(strays().length).toBeGreaterThan(40)
    const run = record(await erp(["partners", "list"], { env: odd.env }))
    expect(run.code).toBe(0)
    expect(run.stdout.trimEnd().split("\n")).toEqual(lines(odd))
    expect(run.stderr).toBe(
      `erp: ${strays().length} of the 400 records written do not match the contract (written as sent; --verbose ` +
        "names each, --strict fails at the first)\n"
    )
    const verbose = record(await erp(["partners", "list", "--verbose", "--format", "csv"], { env: odd.env }))
    expect(verbose.code).toBe(0)
    const named = verbose.stderr.split("\n").filter((line) => line.includes("does not match the contract"))
    expect(named.map((line) => /partner id (\d+)/.exec(line)?.[1])).toEqual(strays().map((r) => String(r.id)))
  })

  it("--strict fails at the first, exit 1, one line naming it", async () => {
    const run = record(await erp(["partners", "list", "--strict"], { env: odd.env }))
    expect(run.code).toBe(1)
    const first = strays()[0]
    expect(run.stderr.trim().split("\n")).toHaveLength(1)
    expect(run.stderr).toMatch(
      new RegExp(`^erp: partner/list: cannot decode data\\[\\d+\\]\\.\\w+ .*id ${first.id}\\)`)
    )
  })

  it("erp partners get shows such a partner, with a line on stderr saying how it strays", async () => {
    const stray = strays()[0]
    const run = record(await erp(["partners", "get", "--id", String(stray.id)], { env: odd.env }))
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout)).toEqual(stray)
    expect(run.stdout.trim()).toBe(lines(odd).find((line) => JSON.parse(line).id === stray.id))
    expect(run.stderr).toMatch(new RegExp(`^erp: partner/get: partner id ${stray.id} does not match the contract: `))
    const strict = record(await erp(["partners", "get", "--id", String(stray.id), "--strict"], { env: odd.env }))
    expect(strict.code).toBe(1)
    expect(strict.stdout).toBe("")
  })
})
