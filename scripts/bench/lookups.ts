/**
 * `pnpm bench lookups`: what lookups cost the rate limit, and what the test kit costs a test.
 *
 * - Requests per 1,000 lookups over 100 distinct partners (a shuffled sequence, 16 in flight), without a cache (only
 *   lookups in flight together share a request) and with `Lookups.layer`; the baseline is one request per lookup.
 *   On the in-memory sandbox (its request log is the count), no limit in play.
 * - The test kit: a test whose lookups meet three windows of the server (3 requests per 30 s, the client told 100),
 *   run on `ErpTest.layer` under a `TestClock` moved a window at a time, in what `it.effect` gives a test (the test
 *   services, no default logger): its wall time, beside the minute and a half of ERP time it covers.
 */
import { Sandbox } from "@erp-client/sandbox"
import { Lookups, Partners } from "@erp-client/streams"
import { ErpTest } from "@erp-client/testing"
import { Effect, Fiber, Layer, Logger, Random, TestClock, TestContext } from "effect"
import { log, median, round, type Row } from "./common.js"

const REPS = Number(process.env.BENCH_REPS ?? 3)

// 1,000 ids over 100 distinct, in an order fixed by the seed.
const sequence = Effect.gen(function*() {
  const ids = Array.from({ length: 1_000 }, (_, i) => (i % 100) + 1)
  return yield* Random.shuffle(ids)
}).pipe(Effect.withRandom(Random.make(42)))

const requestsFor = (cache: boolean) =>
  Effect.gen(function*() {
    const ids = Array.from(yield* sequence)
    const sandbox = yield* Sandbox.Sandbox
    yield* Effect.forEach(ids, (id) => Partners.get(id), { concurrency: 16, discard: true })
    return (yield* sandbox.stats).byEndpoint["/partner/get"] ?? 0
  }).pipe(
    cache ? Effect.provide(Lookups.layer({ timeToLive: "1 hour", capacity: 1_000 })) : (self) => self,
    Effect.provide(
      ErpTest.layer({
        sandbox: { partners: 200, rateLimit: false },
        rateLimiter: { limit: 1_000_000, window: "30 seconds" },
        stallWarning: false
      })
    ),
    Effect.runPromise
  )

// What `it.effect` of @effect/vitest runs a test in: the test services (TestClock, …) and no default logger.
const itEffectEnvironment = TestContext.TestContext.pipe(Layer.provide(Logger.remove(Logger.defaultLogger)))

// Twelve lookups against a server allowing 3 per 30 s, on the TestClock: three windows waited out, none slept.
const testKitRun = async () => {
  const start = performance.now()
  const tooMany = await Effect.gen(function*() {
    const sandbox = yield* Sandbox.Sandbox
    // As a test would: the lookups in a fiber, the clock moved a window at a time.
    const fiber = yield* Effect.fork(
      Effect.forEach(Array.from({ length: 12 }, (_, i) => i + 1), (id) => Partners.get(id), { discard: true })
    )
    for (let window = 0; window < 4; window++) yield* TestClock.adjust("31 seconds")
    yield* Fiber.join(fiber)
    return (yield* sandbox.stats).tooManyRequests
  }).pipe(
    Effect.provide(
      ErpTest.layer({
        sandbox: { partners: 20, rateLimit: { limit: 3, window: "30 seconds" } },
        rateLimiter: { limit: 100, window: "30 seconds" },
        stallWarning: false
      })
    ),
    Effect.provide(itEffectEnvironment),
    Effect.runPromise
  )
  return { millis: performance.now() - start, tooMany }
}

export const lookups = async (): Promise<Array<Row>> => {
  const without = await requestsFor(false)
  const withCache = await requestsFor(true)
  log("lookups: requests counted")
  // One warm-up (JIT), not counted.
  await testKitRun()
  const samples: Array<number> = []
  let tooMany = 0
  for (let rep = 0; rep < REPS; rep++) {
    const run = await testKitRun()
    samples.push(run.millis)
    tooMany = run.tooMany
  }
  log("lookups: test kit done")
  return [
    {
      name: "lookups, requests per 1,000 lookups over 100 distinct partners, 16 in flight",
      parameters: { lookups: 1_000, distinct: 100, concurrency: 16, sandbox: "in memory, no limit" },
      figures: { requestsWithoutCache: without, requestsWithCache: withCache },
      baseline: { requestsOneEach: 1_000 },
      ratio: round(withCache / 1_000, 3),
      ratioOf: "requests with Lookups.layer / one request per lookup",
      target: "100 with the cache (one per distinct partner), fewer than 1,000 without",
      met: withCache === 100 && without < 1_000
    },
    {
      name: "test kit, a test waiting out three windows of the server's limit (ErpTest.layer, TestClock)",
      parameters: { lookups: 12, serverLimit: "3 per 30 s", clientLimit: "100 per 30 s", reps: REPS },
      figures: { wallMs: round(median(samples), 1), tooManyRequests: tooMany },
      baseline: { erpTimeMs: 90_000 },
      ratio: round(median(samples) / 90_000, 5),
      ratioOf: "wall time / the ERP time the test covers (three 30 s windows)",
      target: "under 100 ms of wall time",
      met: median(samples) < 100
    }
  ]
}
