import { describe, expect, it } from "@effect/vitest"
import { Sandbox } from "@erp-client/sandbox"
import { Partners } from "@erp-client/streams"
import { Chunk, Effect, Fiber, Stream, TestClock } from "effect"
import { ErpTest } from "../src/index.js"

// A paged export paced by the limit: 3,000 partners in pages of 100 are 30 full pages and the empty one after them,
// 31 requests at 10 a second, so the limiter makes the export wait on the TestClock between windows. The README shows
// `ErpTest.advancing` for it, the pattern that works in both editions (effect4-streams' TestKitTime.test.ts).
const options = {
  sandbox: { partners: 3000, maxListCount: 100, rateLimit: { limit: 10, window: "1 second" } }
} as const

const exportIds = Stream.runCollect(Partners.stream({ pageSize: 100 })).pipe(
  Effect.map((partners) => Chunk.toReadonlyArray(partners).map((partner) => partner.id))
)

const expectEveryPartner = (ids: ReadonlyArray<number>) =>
  Effect.gen(function*() {
    const sandbox = yield* Sandbox.Sandbox
    expect(ids).toStrictEqual(Array.from({ length: 3000 }, (_, i) => i + 1))
    const stats = yield* sandbox.stats
    expect(stats.byEndpoint["/partner/list"]).toBeGreaterThanOrEqual(31)
    expect(stats.tooManyRequests).toBe(0)
    const log = yield* sandbox.requests
    // 31 requests at most 10 a second: the last starts at least three seconds after the first.
    expect(log[log.length - 1].timeMillis - log[0].timeMillis).toBeGreaterThanOrEqual(3000)
  })

describe("a 31-page export paced by the limit, on the TestClock", () => {
  it.effect("ErpTest.advancing carries it through every wait", () =>
    Effect.gen(function*() {
      yield* expectEveryPartner(yield* ErpTest.advancing(exportIds))
    }).pipe(Effect.provide(ErpTest.layer(options))))

  it.effect("on Effect 3, fork, one TestClock.adjust and join do too", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.fork(exportIds)
      yield* TestClock.adjust("1 minute")
      yield* expectEveryPartner(yield* Fiber.join(fiber))
    }).pipe(Effect.provide(ErpTest.layer(options))))
})
