import { describe, expect, it } from "@effect/vitest"
import { ErpClient } from "@erp-client/effect4-client"
import { Lookups, Partners, Resource } from "@erp-client/effect4-streams"
import { ErpTest, Fault, Sandbox } from "@erp-client/effect4-testing"
import { Clock, Effect, Fiber, Layer, Metric, Result, Schema, Stream, Tracer } from "effect"
import { TestClock } from "effect/testing"

// Lookups, on the test kit's in-memory ERP and the TestClock: what the ERP was asked is the truth.

// A server that takes 200 ms to answer, so lookups meet while one is in flight; no limit of its own.
const slow = { partners: 50, latency: { base: "200 millis" }, rateLimit: false } as const

/** The get requests the ERP saw, as their query (`id=7`). */
const asked = Effect.map(
  Effect.flatMap(Sandbox.Sandbox, (sandbox) => sandbox.requests),
  (log) =>
    log.filter((entry) => entry.endpoint === "/partner/get").map((entry) =>
      entry.query.map(([name, value]) => `${name}=${value}`).join("&")
    )
)

const stats = Effect.flatMap(Sandbox.Sandbox, (sandbox) => sandbox.stats)

const advancing = <A, E, R>(effect: Effect.Effect<A, E, R>) => ErpTest.advancing(effect)

const count = (metric: Metric.Counter<number>) => Effect.map(Metric.value(metric), (state) => state.count)

describe("lookups in flight", () => {
  it.effect("identical lookups at once share one request; each caller gets the partner", () => {
    return Effect.gen(function*() {
      const [sharedBefore, sentBefore] = [yield* count(Lookups.metrics.shared), yield* count(Lookups.metrics.sent)]
      const fiber = yield* Effect.forkChild(
        Effect.all([Partners.get(7), Partners.get(7), Partners.get(7), Partners.get(3)], { concurrency: "unbounded" })
      )
      yield* TestClock.adjust("1 second")
      const [a, b, c, d] = yield* Fiber.join(fiber)
      expect([a.id, b.id, c.id, d.id]).toEqual([7, 7, 7, 3])
      expect([...yield* asked].sort()).toEqual(["id=3", "id=7"])
      expect((yield* count(Lookups.metrics.shared)) - sharedBefore).toBe(2)
      expect((yield* count(Lookups.metrics.sent)) - sentBefore).toBe(2)
    }).pipe(Effect.provide(ErpTest.layer({ sandbox: slow })))
  })

  it.effect("without a cache nothing is kept: the same lookup later asks again", () => {
    return Effect.gen(function*() {
      yield* advancing(Partners.get(7))
      yield* advancing(Partners.get(7))
      expect(yield* asked).toEqual(["id=7", "id=7"])
    }).pipe(Effect.provide(ErpTest.layer({ sandbox: slow })))
  })

  it.effect("a failure is shared by those waiting for it, and kept by nobody", () => {
    return Effect.gen(function*() {
      yield* (yield* Sandbox.Sandbox).inject(Fault.Fault.Status({ status: 500 }), {
        endpoint: "/partner/get",
        times: 1
      })
      const both = yield* Effect.forkChild(
        Effect.all([Effect.result(Partners.get(7)), Effect.result(Partners.get(7))], { concurrency: "unbounded" })
      )
      yield* TestClock.adjust("1 second")
      const [first, second] = yield* Fiber.join(both)
      expect(Result.isFailure(first) && first.failure._tag).toBe("HttpStatusError")
      expect(Result.isFailure(second) && second.failure._tag).toBe("HttpStatusError")
      expect(yield* asked).toEqual(["id=7"])
      expect((yield* advancing(Partners.get(7))).id).toBe(7)
      expect(yield* asked).toEqual(["id=7", "id=7"])
    }).pipe(Effect.provide(ErpTest.layer({ sandbox: slow, client: { retries: 0 } })))
  })

  it.effect("lookups by another client (another server) never share an answer", () => {
    return Effect.gen(function*() {
      const other = yield* Layer.build(ErpTest.layer({ sandbox: { ...slow, seed: 2 } }))
      const their = yield* Effect.forkChild(Effect.provide(Partners.get(7), other))
      const our = yield* Effect.forkChild(Partners.get(7))
      yield* TestClock.adjust("1 second")
      const [t, o] = [yield* Fiber.join(their), yield* Fiber.join(our)]
      expect([t.id, o.id]).toEqual([7, 7])
      expect(t).not.toEqual(o)
      expect([yield* asked, yield* Effect.provide(asked, other)]).toEqual([["id=7"], ["id=7"]])
    }).pipe(Effect.provide(ErpTest.layer({ sandbox: slow })))
  })

  it.effect("the first caller interrupted, the others still get the answer of the one request", () => {
    return Effect.gen(function*() {
      const first = yield* Effect.forkChild(Partners.get(7))
      yield* TestClock.adjust("50 millis")
      const second = yield* Effect.forkChild(Partners.get(7))
      yield* TestClock.adjust("50 millis")
      yield* Fiber.interrupt(first)
      yield* TestClock.adjust("1 second")
      expect((yield* Fiber.join(second)).id).toBe(7)
      expect(yield* asked).toEqual(["id=7"])
    }).pipe(Effect.provide(ErpTest.layer({ sandbox: slow })))
  })

  it.effect("every caller interrupted: the request is given up, and the next lookup asks again", () => {
    return Effect.gen(function*() {
      const callers = yield* Effect.forkChild(
        Effect.all([Partners.get(7), Partners.get(7)], { concurrency: "unbounded" })
      )
      yield* TestClock.adjust("50 millis")
      yield* Fiber.interrupt(callers)
      // Given up: the ERP saw it end before its answer.
      expect((yield* stats).inFlight).toBe(0)
      const again = yield* Effect.forkChild(Partners.get(7))
      yield* TestClock.adjust("1 second")
      expect((yield* Fiber.join(again)).id).toBe(7)
      expect(yield* asked).toEqual(["id=7", "id=7"])
    }).pipe(Effect.provide(ErpTest.layer({ sandbox: slow })))
  })

  it.effect("the request's span is a child of the first caller's span, and it outlives that caller", () => {
    const spans: Array<Tracer.NativeSpan> = []
    const tracer = Tracer.make({
      span(options) {
        const span = new Tracer.NativeSpan(options)
        spans.push(span)
        return span
      }
    })
    return Effect.gen(function*() {
      const first = yield* Effect.forkChild(Partners.get(7).pipe(Effect.withSpan("first caller")))
      yield* TestClock.adjust("50 millis")
      const second = yield* Effect.forkChild(Partners.get(7).pipe(Effect.withSpan("second caller")))
      yield* TestClock.adjust("50 millis")
      yield* Fiber.interrupt(first)
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(second)
      const byName = (name: string) => spans.filter((span) => span.name === name)
      const [caller] = byName("first caller")
      const [call] = byName("ErpClient.get")
      expect(byName("ErpClient.get")).toHaveLength(1)
      expect(call!.parent._tag === "Some" && call!.parent.value.spanId).toBe(caller!.spanId)
      // The call was answered, though the caller it was made for was interrupted.
      expect(call!.status._tag === "Ended" && call!.status.exit._tag).toBe("Success")
    }).pipe(Effect.withTracer(tracer), Effect.provide(ErpTest.layer({ sandbox: slow })))
  })

  it.effect("a resource without a get endpoint is an InvalidRequest, nothing sent", () => {
    return Effect.gen(function*() {
      const noGet = Resource.make({ name: "notes", description: "notes", list: "note/list", schema: Schema.Unknown })
      expect(yield* Effect.flip(Resource.get(noGet, Partners.byId, 1))).toMatchObject({
        _tag: "InvalidRequest",
        endpoint: "note/list"
      })
      expect(yield* (yield* Sandbox.Sandbox).requests).toEqual([])
    }).pipe(Effect.provide(ErpTest.layer({ sandbox: slow })))
  })
})

describe("Resource.make: a declaration of the endpoints and the schema is enough", () => {
  const products = Resource.make({
    name: "products",
    description: "products",
    list: "product/list",
    get: "product/get",
    schema: Schema.Struct({ id: Schema.Number, name: Schema.String }),
    sample: (index) => ({ id: index + 1, name: `Product ${index + 1}` })
  })

  it("defaults: the schema's fields, the id field as the one selector, no filters, columns or strict schema", () => {
    expect(products.fields).toStrictEqual(["id", "name"])
    expect(products.selectors).toStrictEqual([
      { param: "id", kind: "integer", flag: "id", description: "A product's id." }
    ])
    expect([products.idField, products.filters, products.columns, products.strict]).toStrictEqual([
      "id",
      [],
      [],
      undefined
    ])
  })

  it.effect("streamed and looked up from the kit's ERP serving its sample records", () =>
    Effect.gen(function*() {
      const all = yield* Effect.forkChild(Stream.runCollect(Resource.stream(products, { pageSize: 20 })))
      yield* TestClock.adjust("1 minute")
      expect(yield* Fiber.join(all)).toStrictEqual(Array.from({ length: 45 }, (_, index) => products.sample!(index)))
      expect(yield* Resource.get(products, products.selectors[0]!, 45)).toStrictEqual({ id: 45, name: "Product 45" })
      expect((yield* Effect.flip(Resource.get(products, products.selectors[0]!, 46)))._tag).toBe("NotFound")
    }).pipe(Effect.provide(ErpTest.layer({
      sandbox: {
        resources: [{
          list: products.list,
          get: products.get,
          records: { count: 45, record: (index) => products.sample!(index) }
        }]
      }
    }))))
})

describe("Lookups.layer: the opt-in cache", () => {
  const cache = Lookups.layer({ timeToLive: "1 minute", capacity: 100 })

  it.effect("an answer is kept for its time to live: a lookup meanwhile sends nothing", () => {
    return Effect.gen(function*() {
      const cachedBefore = yield* count(Lookups.metrics.cached)
      const first = yield* advancing(Partners.get(7))
      const again = yield* advancing(Partners.get(7))
      expect(again).toEqual(first)
      expect(yield* asked).toEqual(["id=7"])
      expect((yield* count(Lookups.metrics.cached)) - cachedBefore).toBe(1)
      yield* TestClock.adjust("1 minute")
      yield* advancing(Partners.get(7))
      expect(yield* asked).toEqual(["id=7", "id=7"])
    }).pipe(Effect.provide(cache), Effect.provide(ErpTest.layer({ sandbox: slow })))
  })

  it.effect("the time to live counts from when the lookup was sent, not from its answer", () => {
    return Effect.gen(function*() {
      const start = yield* Clock.currentTimeMillis
      const first = yield* Effect.forkChild(Partners.get(7))
      yield* TestClock.adjust("400 millis")
      yield* Fiber.join(first)
      // 900 ms after it was sent, 500 after its answer: kept.
      yield* TestClock.adjust("500 millis")
      yield* Effect.forkChild(Partners.get(7))
      expect(yield* asked).toEqual(["id=7"])
      // 1,050 ms after it was sent, 650 after its answer: gone.
      yield* TestClock.adjust("150 millis")
      expect((yield* Clock.currentTimeMillis) - start).toBe(1_050)
      yield* advancing(Partners.get(7))
      expect(yield* asked).toEqual(["id=7", "id=7"])
    }).pipe(
      Effect.provide(Lookups.layer({ timeToLive: "1 second" })),
      Effect.provide(ErpTest.layer({ sandbox: { ...slow, latency: { base: "400 millis" } } }))
    )
  })

  it.effect("past its capacity the least recently used answer goes first", () => {
    return Effect.gen(function*() {
      for (const id of [1, 2, 1, 3]) yield* advancing(Partners.get(id))
      // 1 was used after 2: 2 went to make room for 3.
      for (const id of [1, 3, 2]) yield* advancing(Partners.get(id))
      expect(yield* asked).toEqual(["id=1", "id=2", "id=3", "id=2"])
    }).pipe(Effect.provide(Lookups.layer({ capacity: 2 })), Effect.provide(ErpTest.layer({ sandbox: slow })))
  })

  it.effect("invalidate forgets one, under any bound on waiting: the next lookup of it asks, the others stay kept", () => {
    return Effect.gen(function*() {
      yield* advancing(Effect.all([Partners.get(7), Partners.get(3)], { concurrency: 2 }))
      yield* advancing(Partners.get(7).pipe(ErpClient.withMaxWait("5 seconds")))
      expect([...yield* asked].sort()).toEqual(["id=3", "id=7", "id=7"])
      yield* Lookups.invalidate(Partners.resource, Partners.byId, 7)
      yield* advancing(Effect.all([Partners.get(7), Partners.get(3)], { concurrency: 2 }))
      yield* advancing(Partners.get(7).pipe(ErpClient.withMaxWait("5 seconds")))
      expect([...yield* asked].sort()).toEqual(["id=3", "id=7", "id=7", "id=7", "id=7"])
    }).pipe(Effect.provide(cache), Effect.provide(ErpTest.layer({ sandbox: slow })))
  })

  it.effect("a lookup by company name is kept apart from one by id", () => {
    return Effect.gen(function*() {
      const name = String((yield* Sandbox.Sandbox).partnerAt(4).company_name)
      const byName = yield* advancing(Partners.getByCompanyName(name))
      yield* advancing(Partners.getByCompanyName(name))
      yield* advancing(Partners.get(5))
      expect(byName.id).toBe(5)
      expect(yield* asked).toHaveLength(2)
    }).pipe(Effect.provide(cache), Effect.provide(ErpTest.layer({ sandbox: slow })))
  })
})

describe("Resource.getMany", () => {
  const ids = [7, 7, 3, 7, 3, 12, 999, 12]
  const outcomes = (
    results: ReadonlyArray<{ readonly result: Result.Result<{ readonly id: number }, { _tag: string }> }>
  ) => results.map((r) => Result.isSuccess(r.result) ? r.result.success.id : r.result.failure._tag)

  it.effect("answers every value in the order given; with the cache, one request per distinct value", () => {
    return Effect.gen(function*() {
      const results = yield* advancing(
        Stream.runCollect(Resource.getMany(Partners.resource, Partners.byId, ids, { concurrency: 4 }))
      )
      expect(results.map((r) => r.value)).toEqual(ids)
      expect(outcomes(results)).toEqual([7, 7, 3, 7, 3, 12, "NotFound", 12])
      expect([...yield* asked].sort()).toEqual(["id=12", "id=3", "id=7", "id=999"])
    }).pipe(Effect.provide(Lookups.layer()), Effect.provide(ErpTest.layer({ sandbox: slow })))
  })

  it.effect("without the cache: the same answers in order, repeats in flight together sent once", () => {
    return Effect.gen(function*() {
      const results = yield* advancing(
        Stream.runCollect(Resource.getMany(Partners.resource, Partners.byId, ids, { concurrency: 8 }))
      )
      expect(results.map((r) => r.value)).toEqual(ids)
      expect(outcomes(results)).toEqual([7, 7, 3, 7, 3, 12, "NotFound", 12])
      expect([...yield* asked].sort()).toEqual(["id=12", "id=3", "id=7", "id=999"])
    }).pipe(Effect.provide(ErpTest.layer({ sandbox: slow })))
  })

  it.effect("failing ids are retried side by side, in input order: about one retry budget more, not one each", () => {
    return Effect.gen(function*() {
      const values = Array.from({ length: 200 }, (_, i) => i + 1)
      const started = yield* Clock.currentTimeMillis
      const results = yield* ErpTest.advancing(
        Stream.runCollect(Resource.getMany(Partners.resource, Partners.byId, values, { concurrency: 4 })),
        { step: "1 second" }
      )
      expect(results.map((result) => result.value)).toEqual(values)
      const failed = results.filter((result) => Result.isFailure(result.result))
      expect(failed.map((result) => result.value)).toEqual(values.filter((id) => id % 20 === 0))
      for (const result of failed) expect(result.result).toMatchObject({ failure: { _tag: "HttpStatusError" } })
      // Each failing id was tried more than once (its retries), and every other once.
      const sent = yield* asked
      expect(sent.filter((query) => query === "id=20").length).toBeGreaterThan(1)
      expect(sent.filter((query) => query === "id=21")).toHaveLength(1)
      // The retry budget is 60 s and 200 lookups at 100 per 30 s take about 60 s of the limit anyway: one budget
      // after another would take 10 x 60 s.
      expect((yield* Clock.currentTimeMillis) - started).toBeLessThanOrEqual(150_000)
      expect((yield* stats).maxInFlight).toBeLessThanOrEqual(4)
    }).pipe(Effect.provide(ErpTest.layer({
      sandbox: { partners: 300, failingIds: { every: 20 }, latency: { base: "50 millis" }, rateLimit: false },
      client: { retryBudget: "60 seconds", retryBaseDelay: "1 second" }
    })))
  })
})

describe("ErpClient.withMaxWait: a lookup that would rather fail than wait", () => {
  // The client's own limit: 3 per 30 seconds.
  const limited = ErpTest.layer({
    sandbox: { partners: 50, rateLimit: false },
    rateLimiter: { limit: 3, window: "30 seconds" }
  })

  it.effect("past the bound it fails at once with RateLimited saying the wait it needed, and takes no place", () => {
    return Effect.gen(function*() {
      yield* Effect.forEach([1, 2, 3], (id) => Partners.get(id), { concurrency: 3 })
      const refused = yield* Effect.flip(Partners.get(4).pipe(ErpClient.withMaxWait("1 second")))
      expect(refused).toMatchObject({ _tag: "RateLimited", maxWaitMillis: 1_000 })
      expect(refused._tag === "RateLimited" && refused.neededMillis).toBeGreaterThan(29_000)
      expect(refused.message).toContain("nothing was sent")
      expect(yield* asked).toEqual(["id=1", "id=2", "id=3"])
      // It took no place in the limit: a window later, three lookups start together.
      const three = yield* Effect.forkChild(Effect.forEach([4, 5, 6], (id) => Partners.get(id), { concurrency: 3 }))
      yield* TestClock.adjust("31 seconds")
      yield* Fiber.join(three)
      const log = (yield* (yield* Sandbox.Sandbox).requests).filter((entry) => entry.endpoint === "/partner/get")
      expect(log).toHaveLength(6)
      expect(new Set(log.slice(3).map((entry) => entry.timeMillis)).size).toBe(1)
    }).pipe(Effect.provide(limited))
  })

  it.effect("a wait within the bound is waited", () => {
    return Effect.gen(function*() {
      yield* Effect.forEach([1, 2, 3], (id) => Partners.get(id), { concurrency: 3 })
      yield* TestClock.adjust("29 seconds")
      const fourth = yield* Effect.forkChild(Partners.get(4).pipe(ErpClient.withMaxWait("3 seconds")))
      yield* TestClock.adjust("3 seconds")
      expect((yield* Fiber.join(fourth)).id).toBe(4)
    }).pipe(Effect.provide(limited))
  })

  it.effect("a lookup under a bound never shares the request of one without, nor its failure", () => {
    return Effect.gen(function*() {
      yield* Effect.forEach([1, 2, 3], (id) => Partners.get(id), { concurrency: 3 })
      // An unbounded lookup of 4 waits for the limit; a bounded one of 4 meanwhile fails at once on its own.
      const patient = yield* Effect.forkChild(Partners.get(4))
      const hurried = yield* Effect.flip(Partners.get(4).pipe(ErpClient.withMaxWait("1 second")))
      expect(hurried._tag).toBe("RateLimited")
      yield* TestClock.adjust("31 seconds")
      expect((yield* Fiber.join(patient)).id).toBe(4)
      expect(yield* asked).toEqual(["id=1", "id=2", "id=3", "id=4"])
    }).pipe(Effect.provide(limited))
  })

  it.effect("a pause the server asked for, past the bound: RateLimited at once, nothing sent", () => {
    return Effect.gen(function*() {
      yield* Effect.forEach([1, 2], (id) => Partners.get(id))
      const refused = yield* Effect.flip(Partners.get(3).pipe(ErpClient.withMaxWait("1 second")))
      expect(refused._tag).toBe("RateLimited")
      expect(yield* asked).toEqual(["id=1", "id=2"])
    }).pipe(Effect.provide(ErpTest.layer({
      sandbox: { partners: 20, rateLimit: { limit: 2, window: "30 seconds" } },
      rateLimiter: { limit: 100, window: "30 seconds" }
    })))
  })
})
