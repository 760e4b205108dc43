import { describe, expect, it } from "@effect/vitest"
import { ErpClient } from "@erp-client/effect4-client"
import { Partner } from "@erp-client/effect4-core"
import { Effect, Fiber, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { afterEach, vi } from "vitest"
import { ErpTest, Fault, Sandbox } from "../src/index.js"

// The scenario of the first test: 2,500 partners, pages of 100, 10 requests per second.
const listOptions = { partners: 2500, maxListCount: 100, rateLimit: { limit: 10, window: "1 second" } } as const

// Until the Effect 4 edition's paging lands (effect4-streams), the pages of a list of known length are asked for by
// offset, four at a time, as an export's pages are: 25 full pages and the empty one after them.
const everyPage = Effect.flatMap(ErpClient.ErpClient, (erp) =>
  Effect.forEach(
    Array.from({ length: 26 }, (_, i) => i * 100),
    (offset) => erp.list("partner/list", Partner.Partner, { offset, count: 100 }),
    { concurrency: 4 }
  ))

const partner = (id: number) =>
  Effect.flatMap(
    ErpClient.ErpClient,
    (erp) => erp.get("partner/get", Partner.Partner, { params: [["id", String(id)]], selector: `id=${id}` })
  )

const partnerNamed = (companyName: string) =>
  Effect.flatMap(ErpClient.ErpClient, (erp) =>
    erp.get("partner/get", Partner.Partner, {
      params: [["company_name", companyName]],
      selector: `company_name=${companyName}`
    }))

/** Whether the forked call is still running. */
const running = <A, E>(fiber: Fiber.Fiber<A, E>) => Effect.sync(() => fiber.pollUnsafe() === undefined)

/** The console's warnings while a test runs: the kit's stall warnings go there. */
const warnings = () => vi.spyOn(console, "warn").mockImplementation(() => undefined)

/** The kit's own lines among them (Effect's TestClock may warn on the console too). */
const kitLines = (warned: ReturnType<typeof warnings>) =>
  warned.mock.calls.map((call) => String(call[0])).filter((line) => line.startsWith("@erp-client/effect4-testing:"))

afterEach(() => {
  vi.restoreAllMocks()
})

describe("ErpTest.layer", () => {
  it.effect("pages of 2,500 partners at 10 requests per second: the limiter waits on the TestClock", () =>
    Effect.gen(function*() {
      const warned = warnings()
      const sandbox = yield* Sandbox.Sandbox
      const export_ = yield* Effect.forkChild(everyPage)
      // One second of clock time lets at most two windows of requests through: not the 26 the pages need.
      yield* TestClock.adjust("1 second")
      expect(yield* running(export_)).toBe(true)
      yield* TestClock.adjust("1 minute")
      const pages = yield* Fiber.join(export_)
      expect(pages.flatMap((page) => page.records.map((record) => record.id))).toStrictEqual(
        Array.from({ length: 2500 }, (_, i) => i + 1)
      )
      expect(pages[25].received).toBe(0)
      const stats = yield* sandbox.stats
      expect(stats.byEndpoint["/partner/list"]).toBe(26)
      expect(stats.tooManyRequests).toBe(0)
      expect(stats.maxObservedInWindow["/partner/list"]).toBe(10)
      const log = yield* sandbox.requests
      // 26 requests, at most 10 a second: the last starts at least two seconds after the first.
      expect(log[log.length - 1].timeMillis - log[0].timeMillis).toBeGreaterThanOrEqual(2000)
      expect(kitLines(warned)).toStrictEqual([])
    }).pipe(Effect.provide(ErpTest.layer({ sandbox: listOptions }))))

  it.effect("a partner that does not exist is a NotFound", () =>
    Effect.gen(function*() {
      const missing = yield* Effect.flip(partner(999_999))
      expect(missing._tag).toBe("NotFound")
      expect(missing.message).toBe("partner/get: not found (id=999999)")
      expect((yield* partner(7)).id).toBe(7)
    }).pipe(Effect.provide(ErpTest.layer({ sandbox: { partners: 10 } }))))

  it.effect("the server's window and a 429 are waited out with TestClock.adjust, then the request goes", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      // The server allows 3 requests per 30 seconds; this client was told 100. After the third, the server says
      // none remain (X-RateLimit-Remaining: 0): the client pauses until its window frees a place.
      for (const id of [1, 2, 3]) yield* partner(id)
      const fourth = yield* Effect.forkChild(partner(4))
      yield* TestClock.adjust("29 seconds")
      expect(yield* running(fourth)).toBe(true)
      yield* TestClock.adjust("2 seconds")
      expect((yield* Fiber.join(fourth)).id).toBe(4)
      // A 429 whatever the window says, its reset 20 seconds ahead: the client waits for it and retries.
      yield* sandbox.inject(Fault.Fault.TooManyRequests({ resetAfter: "20 seconds" }))
      const fifth = yield* Effect.forkChild(partner(5))
      yield* TestClock.adjust("19 seconds")
      expect(yield* running(fifth)).toBe(true)
      yield* TestClock.adjust("2 seconds")
      expect((yield* Fiber.join(fifth)).id).toBe(5)
      const log = yield* sandbox.requests
      expect(log.map((entry) => entry.status)).toStrictEqual([200, 200, 200, 200, 429, 200])
      expect(log[3].timeMillis - log[0].timeMillis).toBeGreaterThanOrEqual(30_000)
      expect(log[5].timeMillis - log[4].timeMillis).toBeGreaterThanOrEqual(20_000)
      expect((yield* sandbox.stats).tooManyRequests).toBe(1)
    }).pipe(
      Effect.provide(ErpTest.layer({
        sandbox: { partners: 10, rateLimit: { limit: 3, window: "30 seconds" } },
        rateLimiter: { limit: 100 }
      }))
    ))

  it.effect("an outage is ridden out: retried within the budget until the sandbox answers again", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      yield* sandbox.inject(Fault.Fault.Outage({ duration: "5 seconds" }))
      expect((yield* ErpTest.advancing(partner(3))).id).toBe(3)
      const log = yield* sandbox.requests
      expect(log.length).toBeGreaterThan(2)
      expect(log.slice(0, -1).every((entry) => entry.status === 503 && entry.fault === "Outage")).toBe(true)
      expect(log[log.length - 1]).toMatchObject({ status: 200, endpoint: "/partner/get" })
      expect(log[log.length - 1].timeMillis - log[0].timeMillis).toBeGreaterThanOrEqual(5000)
    }).pipe(Effect.provide(ErpTest.layer({ sandbox: { partners: 10 } }))))

  it.effect("records the requests it saw, never the key", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      const client = yield* ErpClient.ErpClient
      yield* partner(2)
      yield* Effect.flip(partnerNamed("Nobody & Co."))
      yield* client.httpClient.get("partner/list", { urlParams: { list_offset: "0", list_count: "2" } })
      const log = yield* sandbox.requests
      expect(
        log.map(({ endpoint, keyValid, method, query, status }) => ({ endpoint, keyValid, method, query, status }))
      ).toStrictEqual([
        { method: "GET", endpoint: "/partner/get", query: [["id", "2"]], status: 200, keyValid: true },
        {
          method: "GET",
          endpoint: "/partner/get",
          query: [["company_name", "Nobody & Co."]],
          status: 200,
          keyValid: true
        },
        {
          method: "GET",
          endpoint: "/partner/list",
          query: [["list_offset", "0"], ["list_count", "2"]],
          status: 200,
          keyValid: true
        }
      ])
      expect(JSON.stringify(log)).not.toContain("s3cret")
      expect(yield* sandbox.stats).toMatchObject({ requests: 3, byStatus: { "200": 3 }, inFlight: 0 })
    }).pipe(Effect.provide(ErpTest.layer({ sandbox: { partners: 10, apiKeys: ["s3cret-test-key"] } }))))

  it.effect("a wrong key is Unauthorized", () =>
    Effect.gen(function*() {
      const refused = yield* Effect.flip(partner(42))
      expect(refused._tag).toBe("Unauthorized")
      expect((yield* (yield* Sandbox.Sandbox).requests).map((entry) => entry.keyValid)).toStrictEqual([false])
    }).pipe(
      Effect.provide(ErpTest.layer({
        sandbox: { partners: [{ id: 42, company_name: "Acme Kft.", tax_number: "12345678-2-42", is_customer: 1 }] },
        client: { apiKey: Redacted.make("not-the-key") }
      }))
    ))

  it.effect("given partners: listed and found as given", () =>
    Effect.gen(function*() {
      const erp = yield* ErpClient.ErpClient
      const acme = yield* partnerNamed("Acme Kft.")
      expect(acme).toMatchObject({ id: 42, tax_number: "12345678-2-42", is_customer: 1, segment: "B2B" })
      const customers = yield* erp.list("partner/list", Partner.Partner, {
        offset: 0,
        count: 100,
        where: { is_customer: 1 }
      })
      expect(customers.records.map((record) => record.id)).toStrictEqual([42])
      expect(yield* Effect.flip(partner(44))).toMatchObject({ _tag: "NotFound" })
    }).pipe(
      Effect.provide(ErpTest.layer({
        sandbox: {
          partners: [
            { id: 42, company_name: "Acme Kft.", tax_number: "12345678-2-42", is_customer: 1, segment: "B2B" },
            { id: 43, company_name: "Beta Bt.", tax_number: "87654321-1-11", is_customer: 0 }
          ]
        }
      }))
    ))

  it.effect("the limiter takes the sandbox's limit unless told otherwise; the client's settings are the kit's", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      // 2 per 10 seconds: the third request waits for the client's own limit, so the server never says 429.
      const three = yield* Effect.forkChild(Effect.forEach([1, 2, 3], partner))
      yield* TestClock.adjust("10 seconds")
      expect(yield* running(three)).toBe(true)
      yield* TestClock.adjust("1 second")
      expect((yield* Fiber.join(three)).map((record) => record.id)).toStrictEqual([1, 2, 3])
      expect((yield* sandbox.stats).tooManyRequests).toBe(0)
      // A hung request times out after 10 seconds (clientDefaults.timeout) and is tried again.
      yield* sandbox.inject(Fault.Fault.Hang())
      const hung = yield* Effect.forkChild(partner(4))
      yield* TestClock.adjust("9999 millis")
      expect(yield* running(hung)).toBe(true)
      yield* TestClock.adjust("1 second")
      expect((yield* Fiber.join(hung)).id).toBe(4)
      expect((yield* sandbox.requests).slice(3).map((entry) => entry.fault ?? entry.status)).toStrictEqual([
        "Hang",
        200
      ])
    }).pipe(
      Effect.provide(ErpTest.layer({ sandbox: { partners: 10, rateLimit: { limit: 2, window: "10 seconds" } } }))
    ))
})

describe("ErpTest: never a silent hang", () => {
  it.effect("a call waiting on a TestClock nobody advances is named in one warning line, with TestClock.adjust", () =>
    Effect.gen(function*() {
      const warned = warnings()
      yield* partner(1)
      // The limiter allows one request per 30 seconds: this one waits for the clock, which the test does not move.
      const stuck = yield* Effect.forkChild(partner(2))
      yield* TestClock.withLive(
        Effect.sleep("50 millis").pipe(Effect.repeat({ until: () => kitLines(warned).length > 0, times: 100 }))
      )
      // Half a second more: still one line for this stall.
      yield* TestClock.withLive(Effect.sleep("500 millis"))
      const lines = kitLines(warned)
      expect(lines).toHaveLength(1)
      expect(lines[0]).toContain("an ErpClient call (GET partner/get)")
      expect(lines[0]).toContain("it waits for the client's rate limit until 30.6 s ahead on the TestClock")
      expect(lines[0]).toContain("TestClock.adjust(\"31 seconds\")")
      expect(lines[0]).not.toContain("\n")
      // Advanced, it goes on.
      yield* TestClock.adjust("31 seconds")
      expect((yield* Fiber.join(stuck)).id).toBe(2)
    }).pipe(
      Effect.provide(ErpTest.layer({
        sandbox: { partners: 10, rateLimit: { limit: 1, window: "30 seconds" } },
        stallWarning: "200 millis"
      }))
    ))

  it.effect("a hung request: the line says the sandbox holds it, and how far the client's timeout is", () =>
    Effect.gen(function*() {
      const warned = warnings()
      const sandbox = yield* Sandbox.Sandbox
      // Past Effect's own TestClock warning, which only comes before the test's first adjust.
      yield* TestClock.adjust("4 seconds")
      yield* sandbox.inject(Fault.Fault.Hang())
      const stuck = yield* Effect.forkChild(partner(2))
      yield* TestClock.withLive(
        Effect.sleep("50 millis").pipe(Effect.repeat({ until: () => kitLines(warned).length > 0, times: 100 }))
      )
      const [line] = kitLines(warned)
      expect(line).toContain(
        "the sandbox holds a request unanswered (a Hang fault, or latency or a Delay fault on the TestClock), until " +
          "the client's timeout; the next wake-up is 10 s ahead on the TestClock"
      )
      expect(line).toContain("TestClock.adjust(\"10 seconds\")")
      // The timeout, then the retry's backoff (from 10 ms).
      yield* TestClock.adjust("11 seconds")
      expect((yield* Fiber.join(stuck)).id).toBe(2)
    }).pipe(Effect.provide(ErpTest.layer({ sandbox: { partners: 10 }, stallWarning: "200 millis" }))))

  it.effect("stallWarning: false writes nothing", () =>
    Effect.gen(function*() {
      const warned = warnings()
      yield* partner(1)
      const stuck = yield* Effect.forkChild(partner(2))
      yield* TestClock.withLive(Effect.sleep("600 millis"))
      expect(kitLines(warned)).toStrictEqual([])
      yield* TestClock.adjust("31 seconds")
      expect((yield* Fiber.join(stuck)).id).toBe(2)
    }).pipe(
      Effect.provide(ErpTest.layer({
        sandbox: { partners: 10, rateLimit: { limit: 1, window: "30 seconds" } },
        stallWarning: false
      }))
    ))

  it.effect("advancing gives up after upTo of clock time, saying so", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      yield* sandbox.inject(Fault.Fault.Hang())
      // The client times out a hung request (10 seconds by the kit's defaults) and retries it: answered then.
      expect((yield* ErpTest.advancing(partner(5))).id).toBe(5)
      expect((yield* sandbox.requests).map((entry) => entry.fault ?? entry.status)).toStrictEqual(["Hang", 200])
      const never = yield* Effect.exit(ErpTest.advancing(Effect.never, { step: "1 second", upTo: "1 minute" }))
      expect(String(never)).toContain("ErpTest.advancing: the effect was still running after 1m of TestClock time")
    }).pipe(Effect.provide(ErpTest.layer({ sandbox: { partners: 10 } }))))

  it.live("advancing under the live clock just runs the effect", () =>
    Effect.gen(function*() {
      expect(yield* ErpTest.advancing(partner(3).pipe(Effect.map((record) => record.id)))).toBe(3)
    }).pipe(Effect.provide(ErpTest.layer({ sandbox: { partners: 10 } }))))
})
