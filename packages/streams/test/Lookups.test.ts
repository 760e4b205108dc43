import { describe, expect, it } from "@effect/vitest"
import { ErpClient } from "@erp-client/client"
import { RateLimited } from "@erp-client/core/ErpError"
import { Fault, Sandbox } from "@erp-client/sandbox"
import { Lookups, Partners, Resource } from "@erp-client/streams"
import { ErpTest } from "@erp-client/testing"
import { Chunk, Effect, Either, Fiber, Layer, Metric, Stream, TestClock } from "effect"

// Lookups, on the in-memory sandbox and the TestClock: what the sandbox was asked is the truth.

const gets = Effect.map(
  Sandbox.Sandbox,
  (sandbox) =>
    Effect.map(
      sandbox.requests,
      (log) =>
        log.filter((entry) => entry.endpoint === "/partner/get").map((entry) =>
          entry.query.map(([name, value]) => `${name}=${value}`).join("&")
        )
    )
)

const asked = Effect.flatten(gets)

// A server that takes 200 ms to answer, so lookups meet while one is in flight.
const slow = { partners: 50, latency: { base: "200 millis" } } as const

const count = (metric: Metric.Metric.Counter<number>) => Effect.map(Metric.value(metric), (state) => state.count)

describe("lookups in flight", () => {
  it.effect("identical lookups at once share one request; each caller gets the partner", () =>
    Effect.gen(function*() {
      const sharedBefore = yield* count(Lookups.metrics.shared)
      const fiber = yield* Effect.fork(
        Effect.all([Partners.get(7), Partners.get(7), Partners.get(7), Partners.get(3)], { concurrency: "unbounded" })
      )
      yield* TestClock.adjust("1 second")
      const [a, b, c, d] = yield* Fiber.join(fiber)
      expect([a.id, b.id, c.id, d.id]).toEqual([7, 7, 7, 3])
      expect((yield* asked).sort()).toEqual(["id=3", "id=7"])
      expect((yield* count(Lookups.metrics.shared)) - sharedBefore).toBe(2)
    }).pipe(Effect.provide(ErpTest.layer({ sandbox: slow }))))

  it.effect("without a cache nothing is kept: the same lookup later asks again", () =>
    Effect.gen(function*() {
      yield* ErpTest.advancing(Partners.get(7))
      yield* ErpTest.advancing(Partners.get(7))
      expect(yield* asked).toEqual(["id=7", "id=7"])
    }).pipe(Effect.provide(ErpTest.layer({ sandbox: slow }))))

  it.effect("a failure is shared by those waiting for it, and kept by nobody", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      yield* sandbox.inject(Fault.Fault.Status({ status: 500 }), { endpoint: "/partner/get", times: 1 })
      const both = yield* Effect.fork(
        Effect.all([Effect.either(Partners.get(7)), Effect.either(Partners.get(7))], { concurrency: "unbounded" })
      )
      yield* TestClock.adjust("1 second")
      const [first, second] = yield* Fiber.join(both)
      expect(Either.isLeft(first) && first.left._tag).toBe("HttpStatusError")
      expect(Either.isLeft(second) && second.left._tag).toBe("HttpStatusError")
      expect(yield* asked).toEqual(["id=7"])
      // The next lookup asks again, and gets the partner.
      expect((yield* ErpTest.advancing(Partners.get(7))).id).toBe(7)
      expect(yield* asked).toEqual(["id=7", "id=7"])
    }).pipe(Effect.provide(ErpTest.layer({ sandbox: slow, client: { retries: 0 } }))))

  it.effect("lookups by another client (another server) never share an answer", () =>
    Effect.gen(function*() {
      const other = yield* Layer.build(ErpTest.layer({ sandbox: { ...slow, seed: 2 } }))
      const theirAsked = yield* Effect.provide(gets, other)
      const theirs = yield* Effect.fork(Effect.provide(Partners.get(7), other))
      const mine = yield* Effect.fork(Partners.get(7))
      yield* TestClock.adjust("1 second")
      const [their, our] = [yield* Fiber.join(theirs), yield* Fiber.join(mine)]
      expect(their.id).toBe(7)
      expect(our.id).toBe(7)
      expect(their).not.toEqual(our)
      expect(yield* asked).toEqual(["id=7"])
      expect(yield* theirAsked).toEqual(["id=7"])
    }).pipe(Effect.scoped, Effect.provide(ErpTest.layer({ sandbox: slow }))))

  it.effect("the first caller interrupted, the others still get the answer of the one request", () =>
    Effect.gen(function*() {
      const first = yield* Effect.fork(Partners.get(7))
      yield* TestClock.adjust("50 millis")
      const second = yield* Effect.fork(Partners.get(7))
      yield* TestClock.adjust("50 millis")
      yield* Fiber.interrupt(first)
      yield* TestClock.adjust("1 second")
      expect((yield* Fiber.join(second)).id).toBe(7)
      expect(yield* asked).toEqual(["id=7"])
    }).pipe(Effect.provide(ErpTest.layer({ sandbox: slow }))))

  it.effect("every caller interrupted: the request is given up, and the next lookup asks again", () =>
    Effect.gen(function*() {
      const callers = yield* Effect.fork(
        Effect.all([Partners.get(7), Partners.get(7)], { concurrency: "unbounded" })
      )
      yield* TestClock.adjust("50 millis")
      yield* Fiber.interrupt(callers)
      const again = yield* Effect.fork(Partners.get(7))
      yield* TestClock.adjust("1 second")
      expect((yield* Fiber.join(again)).id).toBe(7)
      // Two requests: the given-up one (the server had it) and the new one, not shared with a request nobody awaits.
      expect(yield* asked).toEqual(["id=7", "id=7"])
    }).pipe(Effect.provide(ErpTest.layer({ sandbox: slow }))))
})

describe("Lookups.layer: the opt-in cache", () => {
  const cache = Lookups.layer({ timeToLive: "1 minute", capacity: 100 })

  it.effect("an answer is kept for its time to live: a lookup meanwhile sends nothing", () =>
    Effect.gen(function*() {
      const cachedBefore = yield* count(Lookups.metrics.cached)
      const first = yield* ErpTest.advancing(Partners.get(7))
      const again = yield* ErpTest.advancing(Partners.get(7))
      expect(again).toEqual(first)
      expect(yield* asked).toEqual(["id=7"])
      expect((yield* count(Lookups.metrics.cached)) - cachedBefore).toBe(1)
      yield* TestClock.adjust("1 minute")
      yield* ErpTest.advancing(Partners.get(7))
      expect(yield* asked).toEqual(["id=7", "id=7"])
    }).pipe(Effect.provide(cache), Effect.provide(ErpTest.layer({ sandbox: slow }))))

  it.effect("invalidate forgets one: the next lookup of it asks the server, the others stay kept", () =>
    Effect.gen(function*() {
      yield* ErpTest.advancing(Effect.all([Partners.get(7), Partners.get(3)], { concurrency: 2 }))
      yield* Lookups.invalidate(Partners.resource, Partners.byId, 7)
      yield* ErpTest.advancing(Effect.all([Partners.get(7), Partners.get(3)], { concurrency: 2 }))
      expect((yield* asked).sort()).toEqual(["id=3", "id=7", "id=7"])
    }).pipe(Effect.provide(cache), Effect.provide(ErpTest.layer({ sandbox: slow }))))

  it.effect("a lookup by company name is kept apart from one by id", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      const name = String(sandbox.partnerAt(4).company_name)
      const byName = yield* ErpTest.advancing(Partners.getByCompanyName(name))
      yield* ErpTest.advancing(Partners.getByCompanyName(name))
      yield* ErpTest.advancing(Partners.get(5))
      expect(byName.id).toBe(5)
      expect((yield* asked).length).toBe(2)
    }).pipe(Effect.provide(cache), Effect.provide(ErpTest.layer({ sandbox: slow }))))
})

describe("Resource.getMany", () => {
  const ids = [7, 7, 3, 7, 3, 12, 999, 12]

  it.effect("answers every value in the order given; with the cache, one request per distinct value", () =>
    Effect.gen(function*() {
      const results = yield* ErpTest.advancing(
        Stream.runCollect(Resource.getMany(Partners.resource, Partners.byId, ids, { concurrency: 4 }))
      )
      const out = Chunk.toReadonlyArray(results)
      expect(out.map((r) => r.value)).toEqual(ids)
      expect(out.map((r) => Either.isRight(r.result) ? r.result.right.id : r.result.left._tag)).toEqual([
        7,
        7,
        3,
        7,
        3,
        12,
        "NotFound",
        12
      ])
      expect((yield* asked).sort()).toEqual(["id=12", "id=3", "id=7", "id=999"])
    }).pipe(Effect.provide(Lookups.layer()), Effect.provide(ErpTest.layer({ sandbox: slow }))))

  it.effect("without the cache: the same answers in order, repeats in flight together sent once", () =>
    Effect.gen(function*() {
      const results = yield* ErpTest.advancing(
        Stream.runCollect(Resource.getMany(Partners.resource, Partners.byId, ids, { concurrency: 8 }))
      )
      expect(Chunk.toReadonlyArray(results).map((r) => r.value)).toEqual(ids)
      // All eight are in flight at once: one request per distinct id.
      expect((yield* asked).sort()).toEqual(["id=12", "id=3", "id=7", "id=999"])
    }).pipe(Effect.provide(ErpTest.layer({ sandbox: slow }))))
})

describe("ErpClient.withMaxWait: a lookup that would rather fail than wait", () => {
  // The client's own limit: 3 per 30 seconds.
  const limited = ErpTest.layer({
    sandbox: { partners: 50, rateLimit: false },
    rateLimiter: { limit: 3, window: "30 seconds" }
  })

  it.effect("past the bound it fails at once with RateLimited saying the wait it needed, and takes no place", () =>
    Effect.gen(function*() {
      yield* Effect.forEach([1, 2, 3], (id) => Partners.get(id), { concurrency: 3 })
      const refused = yield* Effect.flip(Partners.get(4).pipe(ErpClient.withMaxWait("1 second")))
      expect(refused).toBeInstanceOf(RateLimited)
      expect(refused).toMatchObject({ maxWaitMillis: 1_000, neededMillis: expect.any(Number) })
      expect(refused._tag === "RateLimited" && refused.neededMillis).toBeGreaterThan(29_000)
      expect(refused.message).toContain("nothing was sent")
      expect(yield* asked).toEqual(["id=1", "id=2", "id=3"])
      // It took no place in the limit: a window later, three lookups start together.
      const three = yield* Effect.fork(Effect.forEach([4, 5, 6], (id) => Partners.get(id), { concurrency: 3 }))
      yield* TestClock.adjust("31 seconds")
      yield* Fiber.join(three)
      const log = (yield* (yield* Sandbox.Sandbox).requests).filter((entry) => entry.endpoint === "/partner/get")
      expect(log.length).toBe(6)
      expect(new Set(log.slice(3).map((entry) => entry.timeMillis)).size).toBe(1)
    }).pipe(Effect.provide(limited)))

  it.effect("a wait within the bound is waited", () =>
    Effect.gen(function*() {
      yield* Effect.forEach([1, 2, 3], (id) => Partners.get(id), { concurrency: 3 })
      yield* TestClock.adjust("29 seconds")
      const fourth = yield* Effect.fork(Partners.get(4).pipe(ErpClient.withMaxWait("3 seconds")))
      yield* TestClock.adjust("3 seconds")
      expect((yield* Fiber.join(fourth)).id).toBe(4)
    }).pipe(Effect.provide(limited)))

  it.effect("a pause the server asked for, past the bound: RateLimited at once, nothing sent", () =>
    Effect.gen(function*() {
      // The server allows 2 per 30 s; the client was told 100. After the second, the server says none remain.
      yield* Effect.forEach([1, 2], (id) => Partners.get(id))
      const refused = yield* Effect.flip(Partners.get(3).pipe(ErpClient.withMaxWait("1 second")))
      expect(refused._tag).toBe("RateLimited")
      expect(yield* asked).toEqual(["id=1", "id=2"])
    }).pipe(Effect.provide(ErpTest.layer({
      sandbox: { partners: 20, rateLimit: { limit: 2, window: "30 seconds" } },
      rateLimiter: { limit: 100, window: "30 seconds" }
    }))))
})
