import { Slots } from "@erp-client/kernel"
import { Fault } from "@erp-client/sandbox"
import { afterAll, describe, expect, it } from "vitest"
import { erp, SECRET, startSandbox } from "./harness.js"

// The compiled command against servers that say wait: a limit lower than the client was told (with resets written as
// dates, or no headers at all), Retry-After: 3600 on a 429, a gateway's 401 and 403, a 500 with the server's own
// message, and a batch of lookups of which every twentieth keeps failing. Bounds read the server's request log, never
// a clock of the test's own.

const started: Array<Awaited<ReturnType<typeof startSandbox>>> = []
const sandboxOf = async (options: Parameters<typeof startSandbox>[0]) => {
  const s = await startSandbox(options)
  started.push(s)
  return s
}
afterAll(async () => {
  await Promise.all(started.map((s) => s.close()))
})

const lines = (text: string) => text.split("\n").filter((line) => line !== "")

describe("a server with a lower limit than the client was told", () => {
  for (const resetUnit of ["epoch-seconds", "iso", "http-date"] as const) {
    it(`settles at once with X-RateLimit-Limit (reset as ${resetUnit}): every record, no 429`, async () => {
      const s = await sandboxOf({ partners: 150, rateLimit: { limit: 10, window: "1 second", resetUnit } })
      const run = await erp(["partners", "list", "--page-size", "10", "--concurrency", "4"], {
        env: { ...s.env, ERP_RATE_LIMIT: "100", ERP_RATE_WINDOW: "1" }
      })
      expect(run.code, run.stderr).toBe(0)
      expect(lines(run.stdout)).toHaveLength(150)
      const stats = await s.run(s.sandbox.stats)
      expect(stats.tooManyRequests).toBe(0)
      expect(stats.maxObservedInWindow["/partner/list"]).toBeLessThanOrEqual(10)
    })
  }

  it("that does not send its limit: finds it within a few 429s, every record", async () => {
    const s = await sandboxOf({ partners: 300, rateLimit: { limit: 10, window: "1 second", headers: false } })
    const run = await erp(["partners", "list", "--page-size", "10", "--concurrency", "4", "--verbose"], {
      env: { ...s.env, ERP_RATE_LIMIT: "100", ERP_RATE_WINDOW: "1" }
    })
    expect(run.code, run.stderr).toBe(0)
    expect(new Set(lines(run.stdout).map((line) => JSON.parse(line).id)).size).toBe(300)
    const stats = await s.run(s.sandbox.stats)
    // The pages in flight when it first refused, one a probe until it accepts again, one now and then as the limit
    // climbs back.
    expect(stats.tooManyRequests).toBeGreaterThan(0)
    // Before the client learned limits: 47 x 429 for the same export.
    expect(stats.tooManyRequests).toBeLessThanOrEqual(30)
    expect(run.stderr).toContain("the server answered 429 without saying its limit: sending one request at a time")
    expect(run.stderr).toMatch(
      /the server accepted again after [\d.]+ s: keeping \d+ per [\d.]+ s beside the limiter's/
    )
    expect(run.stderr).not.toContain(SECRET)
    // Nor the digest the limiter knows the key by: anyone holding the logs could test a guessed key against it.
    expect(run.stderr).toContain("erp.endpoint=partner/list")
    expect(run.stderr).not.toContain(await Slots.keyIdOf(SECRET))
    expect(run.stderr).not.toContain((await Slots.keyIdOf(SECRET)).slice(0, 8))
  })
})

describe("Retry-After: 3600 on a 429", () => {
  it("is believed at once: exit 5, one request, the wait asked for in the message", async () => {
    const s = await sandboxOf({
      partners: 50,
      inject: [{ fault: Fault.Fault.TooManyRequests({ retryAfter: "3600" }), times: Infinity }]
    })
    const run = await erp(["partners", "list"], { env: s.env })
    expect(run.code).toBe(5)
    expect(run.stdout).toBe("")
    expect(run.stderr).toContain(
      "partner/list: rate limited: the server asked to wait 3600 s (Retry-After: 3600), past the rate-limit budget " +
        "of 300 s: not waited for"
    )
    expect((await s.run(s.sandbox.stats)).requests).toBe(1)
  })
})

describe("messages that say what happened", () => {
  it("HTTP 401 and 403 from a gateway are a refused key: exit 3", async () => {
    for (const status of [401, 403]) {
      const s = await sandboxOf({ partners: 5, inject: [{ fault: Fault.Fault.Status({ status }), times: Infinity }] })
      const run = await erp(["partners", "get", "--id", "3"], { env: s.env })
      expect(run.code).toBe(3)
      expect(run.stderr).toContain(`the API key was refused (HTTP ${status})`)
      expect(run.stderr).not.toContain(SECRET)
    }
  })

  it("a 500 whose body is the envelope shows the server's message", async () => {
    const s = await sandboxOf({ partners: 5, failingIds: { ids: [3], message: "database unavailable" } })
    const run = await erp(["partners", "get", "--id", "3"], { env: { ...s.env, ERP_RETRY_BUDGET: "1" } })
    expect(run.code).toBe(1)
    expect(run.stderr).toContain("unexpected HTTP status 500 (the server said: database unavailable)")
  })
})

describe("a batch of lookups with ids that keep failing", () => {
  it("is answered line for line in order, the failing ids retried side by side within one budget", async () => {
    const s = await sandboxOf({ partners: 300, rateLimit: false, failingIds: { every: 20 } })
    const ids = Array.from({ length: 200 }, (_, i) => i + 1)
    const run = await erp(["partners", "get", "--stdin", "--concurrency", "4"], {
      env: { ...s.env, ERP_RETRY_BUDGET: "4", ERP_RETRY_BASE_DELAY: "0.2", ERP_RATE_LIMIT: "10000" },
      stdin: ids.join("\n") + "\n"
    })
    expect(run.code).toBe(1)
    const written = lines(run.stdout).map((line) => JSON.parse(line).id)
    expect(written).toEqual(ids.filter((id) => id % 20 !== 0))
    const failures = run.stderr.split("\n").filter((line) => line.includes("HTTP status 500"))
    expect(failures).toHaveLength(10)
    // By the server's clock: every failing id's attempts within one budget of 4 s of the first request, plus the time
    // the rest takes; one budget after another would be 10 x 4 s.
    const log = await s.run(s.sandbox.requests)
    const span = log.at(-1)!.timeMillis - log[0]!.timeMillis
    expect(span).toBeLessThan(15_000)
    expect((await s.run(s.sandbox.stats)).maxInFlight).toBeLessThanOrEqual(4)
  })
})
