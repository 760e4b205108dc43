import { FetchHttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { ErpClient, ErpRateLimiter } from "@erp-client/client"
import { Fault, Sandbox } from "@erp-client/sandbox"
import { Partners, Resource } from "@erp-client/streams"
import { Chunk, Effect, Either, Fiber, Layer, Option, Redacted, Schema, Stream, TestClock, TestServices } from "effect"
import { afterEach, vi } from "vitest"
import { ErpTest } from "../src/index.js"

// The scenario of the first test: 2,500 partners, pages of 100, 10 requests per second.
const listOptions = { partners: 2500, maxListCount: 100, rateLimit: { limit: 10, window: "1 second" } } as const

const everyPartner = Effect.map(Stream.runCollect(Partners.stream({ pageSize: 100 })), Chunk.toReadonlyArray)

/** The console's warnings while a test runs: the kit's stall warnings go there. */
const warnings = () => vi.spyOn(console, "warn").mockImplementation(() => undefined)

afterEach(() => {
  vi.restoreAllMocks()
})

describe("ErpTest.layer", () => {
  it.effect("lists 2,500 partners at 10 requests per second: the limiter waits on the TestClock", () =>
    Effect.gen(function*() {
      const warned = warnings()
      const sandbox = yield* Sandbox.Sandbox
      const export_ = yield* Effect.fork(everyPartner)
      // One second of clock time lets at most two windows of requests through: not the 26 the export needs.
      yield* TestClock.adjust("1 second")
      expect(Option.isNone(yield* Fiber.poll(export_))).toBe(true)
      yield* TestClock.adjust("1 minute")
      const partners = yield* Fiber.join(export_)
      expect(partners.map((partner) => partner.id)).toStrictEqual(Array.from({ length: 2500 }, (_, i) => i + 1))
      const stats = yield* sandbox.stats
      // 25 full pages and the empty one after them, and at most 3 more in flight past the end (concurrency 4).
      expect(stats.byEndpoint["/partner/list"]).toBeGreaterThanOrEqual(26)
      expect(stats.byEndpoint["/partner/list"]).toBeLessThanOrEqual(29)
      expect(stats.tooManyRequests).toBe(0)
      expect(stats.maxObservedInWindow["/partner/list"]).toBeLessThanOrEqual(10)
      const log = yield* sandbox.requests
      // At least 26 requests, at most 10 a second: the last starts at least two seconds after the first.
      expect(log[log.length - 1].timeMillis - log[0].timeMillis).toBeGreaterThanOrEqual(2000)
      expect(warned).not.toHaveBeenCalled()
    }).pipe(Effect.provide(ErpTest.layer({ sandbox: listOptions }))))

  it.effect("a partner that does not exist is a NotFound", () =>
    Effect.gen(function*() {
      const missing = yield* Effect.flip(Partners.get(999_999))
      expect(missing._tag).toBe("NotFound")
      expect(missing.message).toBe("partner/get: not found (id=999999)")
      expect((yield* Partners.get(7)).id).toBe(7)
    }).pipe(Effect.provide(ErpTest.layer({ sandbox: { partners: 10 } }))))

  it.effect("the server's window and a 429 are waited out with TestClock.adjust, then the request goes", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      // The server allows 3 requests per 30 seconds; this client was told 100. After the third, the server says
      // none remain (X-RateLimit-Remaining: 0): the client pauses until its window frees a place.
      for (const id of [1, 2, 3]) yield* Partners.get(id)
      const fourth = yield* Effect.fork(Partners.get(4))
      yield* TestClock.adjust("29 seconds")
      expect(Option.isNone(yield* Fiber.poll(fourth))).toBe(true)
      yield* TestClock.adjust("2 seconds")
      expect((yield* Fiber.join(fourth)).id).toBe(4)
      // A 429 whatever the window says, its reset 20 seconds ahead: the client waits for it and retries.
      yield* sandbox.inject(Fault.Fault.TooManyRequests({ resetAfter: "20 seconds" }))
      const fifth = yield* Effect.fork(Partners.get(5))
      yield* TestClock.adjust("19 seconds")
      expect(Option.isNone(yield* Fiber.poll(fifth))).toBe(true)
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
      const partner = yield* ErpTest.advancing(Partners.get(3))
      expect(partner.id).toBe(3)
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
      yield* Partners.get(2)
      yield* Effect.flip(Partners.getByCompanyName("Nobody & Co."))
      yield* client.httpClient.get("partner/list?list_offset=0&list_count=2")
      const log = yield* sandbox.requests
      expect(
        log.map(({ endpoint, keyValid, method, query, status }) => ({ endpoint, keyValid, method, query, status }))
      )
        .toStrictEqual([
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

  it.effect("a wrong key is Unauthorized; partners given as records are served as given", () =>
    Effect.gen(function*() {
      const refused = yield* Effect.flip(Partners.get(42))
      expect(refused._tag).toBe("Unauthorized")
    }).pipe(
      Effect.provide(ErpTest.layer({
        sandbox: { partners: [{ id: 42, company_name: "Acme Kft.", tax_number: "12345678-2-42", is_customer: 1 }] },
        client: { apiKey: Redacted.make("not-the-key") }
      }))
    ))

  it.effect("given partners: listed and found as given", () =>
    Effect.gen(function*() {
      const acme = yield* Partners.getByCompanyName("Acme Kft.")
      expect(acme).toMatchObject({ id: 42, tax_number: "12345678-2-42", is_customer: 1, segment: "B2B" })
      const customers = yield* Effect.map(
        Stream.runCollect(Partners.stream({ where: { is_customer: 1 } })),
        Chunk.toReadonlyArray
      )
      expect(customers.map((partner) => partner.id)).toStrictEqual([42])
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
})

describe("ErpTest.layer: a declared resource, served from its records", () => {
  const products = Resource.make({
    name: "products",
    description: "products",
    list: "product/list",
    get: "product/get",
    schema: Schema.Struct({ id: Schema.Number, name: Schema.String, active: Schema.Literal(0, 1) })
  })
  const records = Array.from({ length: 230 }, (_, index) => ({
    id: index + 1,
    name: `Product ${index + 1}`,
    active: index % 5 === 0 ? 0 : 1
  }))
  const sandbox = {
    maxListCount: 50,
    rateLimit: { limit: 4, window: "1 second" },
    resources: [{ list: products.list, get: products.get, records }]
  } as const

  it.effect("Resource.stream pages it at the limit on the TestClock, filtered; get by id, NotFound for none", () =>
    Effect.gen(function*() {
      const erp = yield* Sandbox.Sandbox
      const all = yield* Effect.fork(Stream.runCollect(Resource.stream(products, { pageSize: 100 })))
      yield* TestClock.adjust("10 seconds")
      expect(Chunk.toReadonlyArray(yield* Fiber.join(all))).toStrictEqual(records)
      const inactive = yield* Effect.fork(Stream.runCollect(Resource.stream(products, { where: { active: 0 } })))
      yield* TestClock.adjust("10 seconds")
      expect(Chunk.toReadonlyArray(yield* Fiber.join(inactive))).toStrictEqual(
        records.filter((record) => record.active === 0)
      )
      expect(yield* Resource.get(products, products.selectors[0]!, 17)).toStrictEqual(records[16])
      const missing = yield* Effect.either(Resource.get(products, products.selectors[0]!, 231))
      expect(Either.isLeft(missing) && missing.left._tag).toBe("NotFound")
      expect((yield* erp.stats).maxObservedInWindow["/product/list"]).toBeLessThanOrEqual(4)
    }).pipe(Effect.provide(ErpTest.layer({ sandbox }))))
})

describe("ErpTest: the same scenario on a socket", () => {
  it.effect("Sandbox.layer with the client on fetch gives the same records as the in-memory kit", () =>
    Effect.gen(function*() {
      const inMemory = yield* ErpTest.advancing(everyPartner).pipe(
        Effect.provide(ErpTest.layer({ sandbox: listOptions }))
      )
      const onSocket = yield* ErpTest.advancing(everyPartner).pipe(
        Effect.provide(
          Layer.unwrapEffect(
            Effect.map(
              Sandbox.Sandbox,
              (sandbox) =>
                ErpClient.layer({ baseUrl: sandbox.baseUrl, apiKey: Redacted.make(sandbox.apiKey) }).pipe(
                  Layer.provide(ErpRateLimiter.layer({ limit: 10, window: "1 second" })),
                  Layer.provide(FetchHttpClient.layer)
                )
            )
          ).pipe(Layer.provideMerge(Sandbox.layer(listOptions)))
        )
      )
      expect(onSocket).toHaveLength(2500)
      expect(inMemory).toStrictEqual(onSocket)
    }))
})

describe("ErpTest: never a silent hang", () => {
  it.effect("a call waiting on a TestClock nobody advances is named in one warning line, with TestClock.adjust", () =>
    Effect.gen(function*() {
      const warned = warnings()
      yield* Partners.get(1)
      // The limiter allows one request per 30 seconds: this one waits for the clock, which the test does not move.
      const stuck = yield* Effect.fork(Partners.get(2))
      yield* TestServices.provideLive(
        Effect.sleep("50 millis").pipe(Effect.repeat({ until: () => warned.mock.calls.length > 0, times: 100 }))
      )
      expect(warned).toHaveBeenCalledTimes(1)
      const line = String(warned.mock.calls[0][0])
      expect(line).toContain("an ErpClient call (GET partner/get)")
      expect(line).toContain("it waits for the client's rate limit until 30.6 s ahead on the TestClock")
      expect(line).toContain("TestClock.adjust(\"31 seconds\")")
      expect(line).not.toContain("\n")
      // Advanced, it goes on.
      yield* TestClock.adjust("31 seconds")
      expect((yield* Fiber.join(stuck)).id).toBe(2)
    }).pipe(
      Effect.provide(ErpTest.layer({
        sandbox: { partners: 10, rateLimit: { limit: 1, window: "30 seconds" } },
        stallWarning: "200 millis"
      }))
    ))

  it.effect("advancing gives up after upTo of clock time, saying so", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      yield* sandbox.inject(Fault.Fault.Hang())
      // The client times out a hung request (10 seconds by the kit's defaults) and retries it: answered then.
      expect((yield* ErpTest.advancing(Partners.get(5))).id).toBe(5)
      expect((yield* sandbox.requests).map((entry) => entry.fault ?? entry.status)).toStrictEqual(["Hang", 200])
      const never = yield* Effect.exit(ErpTest.advancing(Effect.never, { step: "1 second", upTo: "1 minute" }))
      expect(String(never)).toContain("ErpTest.advancing: the effect was still running after 1m of TestClock time")
    }).pipe(Effect.provide(ErpTest.layer({ sandbox: { partners: 10 } }))))
})
