import { describe, expect, it } from "@effect/vitest"
import { Partners } from "@erp-client/effect4-streams"
import { ErpTest, Sandbox } from "@erp-client/effect4-testing"
import { Effect, Fiber, Stream } from "effect"
import { TestClock } from "effect/testing"

// The test kit's time patterns on a paged export paced by the limit: 3,000 partners in pages of 100 are 30 full pages
// and the empty one after them, 31 requests at 10 a second. Here rather than in effect4-testing, whose tests cannot
// import this package (it tests with effect4-testing). The Effect 3 twin: testing's TimePatterns.test.ts.
const options = {
  sandbox: { partners: 3000, maxListCount: 100, rateLimit: { limit: 10, window: "1 second" } }
} as const

const exportIds = Stream.runCollect(Partners.stream({ pageSize: 100 })).pipe(
  Effect.map((partners) => Array.from(partners, (partner) => partner.id))
)

describe("a 31-page export paced by the limit, on the TestClock", () => {
  it.effect("ErpTest.advancing carries it through every wait", () =>
    Effect.gen(function*() {
      const ids = yield* ErpTest.advancing(exportIds)
      const sandbox = yield* Sandbox.Sandbox
      expect(ids).toStrictEqual(Array.from({ length: 3000 }, (_, i) => i + 1))
      const stats = yield* sandbox.stats
      expect(stats.byEndpoint["/partner/list"]).toBeGreaterThanOrEqual(31)
      expect(stats.tooManyRequests).toBe(0)
      const log = yield* sandbox.requests
      // 31 requests at most 10 a second: the last starts at least three seconds after the first.
      expect(log[log.length - 1].timeMillis - log[0].timeMillis).toBeGreaterThanOrEqual(3000)
    }).pipe(Effect.provide(ErpTest.layer(options))))

  // Why the READMEs show `advancing`: Effect 4's adjust does not wait for a fiber already running when it is called,
  // nor for work resumed by a promise (the body read), so the export's later waits land past the one adjust.
  it.effect("fork, one TestClock.adjust and join leave it unfinished on Effect 4", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(exportIds)
      yield* TestClock.adjust("1 minute")
      const sandbox = yield* Sandbox.Sandbox
      expect(fiber.pollUnsafe()).toBeUndefined()
      expect((yield* sandbox.stats).byEndpoint["/partner/list"]).toBeLessThan(31)
      yield* Fiber.interrupt(fiber)
    }).pipe(Effect.provide(ErpTest.layer({ ...options, stallWarning: false }))))
})
