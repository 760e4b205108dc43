import { describe, expect, it } from "@effect/vitest"
import { ErpRateLimiter } from "@erp-client/client"
import { Clock, Duration, Effect, Fiber } from "effect"
import fc from "fast-check"
import { fork, isRunning, RateLimiter, rateLimiterLayer, TestClock, testClockLayer } from "./kit.js"
import { maxInAnyWindow } from "./windows.js"

// The limiter on the TestClock: bursts, keys, windows under any arrivals, late arrivals, bounds, learned limits. One
// suite, run against both editions (TEST_PAIRS in scripts/editions.ts).

/** The most starts a server with calendar windows [offset + kW, offset + (k+1)W) counts in one of them. */
const maxInCalendarWindow = (starts: ReadonlyArray<number>, window: number, offset: number): number => {
  const counts = new Map<number, number>()
  for (const start of starts) {
    const k = Math.floor((start - offset) / window)
    counts.set(k, (counts.get(k) ?? 0) + 1)
  }
  return Math.max(0, ...counts.values())
}

/**
 * Runs `arrivals` (ms after the start) through `acquire` under the TestClock and returns when each request started.
 */
const startsOf = (
  arrivals: ReadonlyArray<number>,
  acquire: () => Effect.Effect<unknown, unknown>
) =>
  Effect.gen(function*() {
    const t0 = yield* Clock.currentTimeMillis
    const fibers = yield* Effect.forEach(arrivals, (at) =>
      fork(
        Effect.sleep(Duration.millis(at)).pipe(
          Effect.andThen(acquire()),
          Effect.andThen(Clock.currentTimeMillis),
          Effect.map((now) => now - t0)
        )
      ))
    // Far enough for every queued request: arrivals plus one window per `limit` requests, generously.
    yield* TestClock.adjust(Duration.hours(24))
    return yield* Effect.forEach(fibers, Fiber.join)
  })

/** A request that ends as soon as it starts: its place, handed back at once. */
const sent = (limiter: ErpRateLimiter.Service, key: string) =>
  Effect.flatMap(
    limiter.acquire(key),
    (acquired) => Effect.flatMap(Clock.currentTimeMillis, (now) => acquired.release(now))
  )

const L = 10
const W = 1_000

describe("ErpRateLimiter", () => {
  it.effect("lets a burst of L through at once and the next L one window (plus margin) later", () =>
    Effect.gen(function*() {
      const limiter = yield* ErpRateLimiter.ErpRateLimiter
      const starts = yield* startsOf(Array.from({ length: 3 * L }, () => 0), () => sent(limiter, "k"))
      const sorted = [...starts].sort((a, b) => a - b)
      expect(sorted.slice(0, L).every((s) => s === 0)).toBe(true)
      expect(sorted.slice(L, 2 * L).every((s) => s === W + 50)).toBe(true)
      expect(sorted.slice(2 * L).every((s) => s === 2 * (W + 50))).toBe(true)
    }).pipe(Effect.provide(ErpRateLimiter.layer({ limit: L, window: W, margin: 50 }))))

  it.effect("keeps keys apart: one endpoint's budget never slows another", () =>
    Effect.gen(function*() {
      const limiter = yield* ErpRateLimiter.ErpRateLimiter
      const arrivals = Array.from({ length: L }, () => 0)
      const a = yield* startsOf(arrivals, () => limiter.acquire("key:partner/list"))
      const b = yield* startsOf(arrivals, () => limiter.acquire("key:partner/get"))
      expect([...a, ...b].every((s) => s === 0)).toBe(true)
    }).pipe(Effect.provide(ErpRateLimiter.layer({ limit: L, window: W }))))

  it("never starts more than L in any window, for random arrivals and any server window offset", () =>
    fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 5 * W }), { minLength: 1, maxLength: 4 * L }),
        fc.integer({ min: 0, max: W - 1 }),
        fc.integer({ min: 1, max: 49 }),
        async (arrivals, offset, jitter) => {
          const starts = await Effect.runPromise(
            Effect.gen(function*() {
              const limiter = yield* ErpRateLimiter.ErpRateLimiter
              return yield* startsOf(arrivals, () => sent(limiter, "k"))
            }).pipe(
              Effect.provide(ErpRateLimiter.layer({ limit: L, window: W, margin: 50 })),
              Effect.provide(testClockLayer)
            )
          )
          expect(maxInAnyWindow(starts, W)).toBeLessThanOrEqual(L)
          // A server whose clock sees each start up to `jitter` (< margin) later still counts at most L.
          const arrivalsAtServer = starts.map((s, i) => s + (i % 2 === 0 ? jitter : 0))
          expect(maxInCalendarWindow(arrivalsAtServer, W, offset)).toBeLessThanOrEqual(L)
          expect(maxInAnyWindow(arrivalsAtServer, W)).toBeLessThanOrEqual(L)
        }
      ),
      { numRuns: 200 }
    ))

  it.effect("the property can fail: Effect's own fixed-window algorithm alone lets L + 1 through after a gap", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter.RateLimiter
      // L = 2, W = 10 s: one request at 0, one at 4.9 s, then two at 10 s. The interval [4.9 s, 14.9 s] holds three.
      const starts = yield* startsOf(
        [0, 4_900, 10_000, 10_000],
        () =>
          limiter.consume({ key: "k", limit: 2, window: "10 seconds", algorithm: "fixed-window", onExceeded: "delay" })
            .pipe(Effect.flatMap((r) => Effect.sleep(r.delay)))
      )
      expect(maxInAnyWindow(starts, 10_000)).toBeGreaterThan(2)
    }).pipe(Effect.provide(rateLimiterLayer)))

  it.effect("the same pattern stays within L through ErpRateLimiter", () =>
    Effect.gen(function*() {
      const limiter = yield* ErpRateLimiter.ErpRateLimiter
      const starts = yield* startsOf([0, 4_900, 10_000, 10_000], () => sent(limiter, "k"))
      expect(maxInAnyWindow(starts, 10_000)).toBe(2)
    }).pipe(Effect.provide(ErpRateLimiter.layer({ limit: 2, window: "10 seconds" }))))

  it.effect("keeps a slot busy for a window (and the margin) after its request ended, however late that request left", () =>
    Effect.gen(function*() {
      const limiter = yield* ErpRateLimiter.ErpRateLimiter
      const t0 = yield* Clock.currentTimeMillis
      // Two slots. The first request only reached the server (and answered) at 300 ms, the second at once.
      const [a, b] = yield* Effect.all([limiter.acquire("k"), limiter.acquire("k")])
      yield* a!.release(t0 + 300)
      yield* b!.release(t0 + 5)
      const starts = yield* startsOf([0, 0], () => sent(limiter, "k"))
      // The slot of the late one is reused a window after it ended, the other one window plus margin after it began.
      expect([...starts].sort((x, y) => x - y)).toEqual([5 + W + 50, 300 + W + 50])
    }).pipe(Effect.provide(ErpRateLimiter.layer({ limit: 2, window: W }))))

  it.effect("a request in flight longer than the window keeps its slot; once it ends, the slot frees a window later", () =>
    Effect.gen(function*() {
      const limiter = yield* ErpRateLimiter.ErpRateLimiter
      const t0 = yield* Clock.currentTimeMillis
      // One slot, a 10 s timeout. The first request is still in flight five windows later (a slow connection).
      const first = yield* limiter.acquire("k", undefined, undefined, 10_000)
      const next = yield* fork(limiter.acquire("k"))
      yield* TestClock.adjust(Duration.millis(5 * W))
      expect(isRunning(next)).toBe(true)
      yield* first.release(t0 + 5 * W)
      yield* TestClock.adjust(Duration.millis(W + 50 - 1))
      expect(isRunning(next)).toBe(true)
      yield* TestClock.adjust(Duration.millis(1))
      expect((yield* Fiber.join(next)).startedMillis - t0).toBe(6 * W + 50)
    }).pipe(Effect.provide(ErpRateLimiter.layer({ limit: 1, window: W, margin: 50 }))))

  it.effect("a holder that never ends (its process died) keeps its slot for its timeout and a window, then lapses", () =>
    Effect.gen(function*() {
      const limiter = yield* ErpRateLimiter.ErpRateLimiter
      const t0 = yield* Clock.currentTimeMillis
      yield* limiter.acquire("k", undefined, undefined, 10_000)
      const next = yield* fork(limiter.acquire("k"))
      // The timeout, the window and the margin after its start
      yield* TestClock.adjust(Duration.millis(10_000 + W + 50 - 1))
      expect(isRunning(next)).toBe(true)
      yield* TestClock.adjust(Duration.millis(1))
      expect((yield* Fiber.join(next)).startedMillis - t0).toBe(10_000 + W + 50)
      // Without a timeout, the client's default: 30 s
      const t1 = yield* Clock.currentTimeMillis
      yield* limiter.acquire("held")
      const after = yield* fork(limiter.acquire("held"))
      yield* TestClock.adjust(Duration.millis(30_000 + W + 50 - 1))
      expect(isRunning(after)).toBe(true)
      yield* TestClock.adjust(Duration.millis(1))
      expect((yield* Fiber.join(after)).startedMillis - t1).toBe(30_000 + W + 50)
    }).pipe(Effect.provide(ErpRateLimiter.layer({ limit: 1, window: W, margin: 50 }))))

  it.effect("of two requests waiting for one slot in flight, one takes it when it frees; the other waits its turn", () =>
    Effect.gen(function*() {
      const limiter = yield* ErpRateLimiter.ErpRateLimiter
      const t0 = yield* Clock.currentTimeMillis
      const first = yield* limiter.acquire("k", undefined, undefined, 10_000)
      const waiting = yield* fork(
        Effect.all([0, 1].map(() => Effect.andThen(sent(limiter, "k"), Clock.currentTimeMillis)), {
          concurrency: "unbounded"
        })
      )
      yield* TestClock.adjust(Duration.millis(5 * W))
      yield* first.release(t0 + 5 * W)
      yield* TestClock.adjust(Duration.millis(10 * W))
      const starts = (yield* Fiber.join(waiting)).map((at) => at - t0).sort((a, b) => a - b)
      // A window (and the margin) after the first ended, and as long after that: never two at once on one slot.
      expect(starts).toEqual([6 * W + 50, 7 * W + 100])
    }).pipe(Effect.provide(ErpRateLimiter.layer({ limit: 1, window: W, margin: 50 }))))

  it.effect("under a learned limit, a request in flight longer than its window keeps its place; once it ends, a window later", () =>
    Effect.gen(function*() {
      const limiter = yield* ErpRateLimiter.ErpRateLimiter
      // Ten slots of the limiter's own, so only the learned limit's log can hold a request back. The server says 1 per
      // second (its reset a window after the request's start).
      const first = yield* limiter.acquire("k")
      yield* first.release(first.startedMillis)
      const reset = first.startedMillis + W
      yield* limiter.learn("k", first, {
        serverLimit: 1,
        tooManyRequests: false,
        startedMillis: first.startedMillis,
        reset: { at: reset, raw: String(reset) }
      })
      yield* TestClock.adjust(Duration.millis(2 * W))
      // In flight for five learned windows (a slow connection), with a 10 s timeout
      const slow = yield* limiter.acquire("k", undefined, undefined, 10_000)
      expect(slow.learned).toMatchObject({ limit: 1, windowMillis: W })
      const next = yield* fork(limiter.acquire("k", undefined, undefined, 10_000))
      yield* TestClock.adjust(Duration.millis(5 * W))
      expect(isRunning(next)).toBe(true)
      yield* slow.release(slow.startedMillis + 5 * W)
      // Free a learned window and its margin (50 ms) after it ended, not before
      yield* TestClock.adjust(Duration.millis(W + 50 - 1))
      expect(isRunning(next)).toBe(true)
      yield* TestClock.adjust(Duration.millis(1))
      const started = yield* Fiber.join(next)
      expect(started.startedMillis - slow.startedMillis).toBe(6 * W + 50)
      // Its holder never ends (its process died): its place is held for its timeout, the margin and a learned window.
      const next2 = yield* fork(limiter.acquire("k"))
      yield* TestClock.adjust(Duration.millis(10_000 + 50 + W - 1))
      expect(isRunning(next2)).toBe(true)
      yield* TestClock.adjust(Duration.millis(1))
      expect((yield* Fiber.join(next2)).startedMillis - started.startedMillis).toBe(10_000 + 50 + W)
    }).pipe(Effect.provide(ErpRateLimiter.layer({ limit: 10, window: W, margin: 50 }))))

  it.effect("waits out a pause the server asked for, and refuses to wait past the deadline", () =>
    Effect.gen(function*() {
      const limiter = yield* ErpRateLimiter.ErpRateLimiter
      const now = yield* Clock.currentTimeMillis
      yield* limiter.pause("k", now + 5_000)
      const waited = yield* fork(limiter.acquire("k"))
      yield* TestClock.adjust(Duration.seconds(4))
      expect(isRunning(waited)).toBe(true)
      yield* TestClock.adjust(Duration.seconds(1))
      expect(yield* Fiber.join(waited)).toMatchObject({ spacedMillis: 0, pausedMillis: 5_000 })
      yield* limiter.pause("k", now + 20_000)
      const refused = yield* Effect.flip(limiter.acquire("k", now + 10_000))
      expect(refused._tag).toBe("PauseBeyondDeadline")
    }).pipe(Effect.provide(ErpRateLimiter.layer({ limit: L, window: W }))))

  it.effect("a bounded acquire past its bound fails at once, saying when it could start, and takes no place", () =>
    Effect.gen(function*() {
      const limiter = yield* ErpRateLimiter.ErpRateLimiter
      const now = yield* Clock.currentTimeMillis
      yield* sent(limiter, "k")
      yield* sent(limiter, "k")
      const refused = yield* Effect.flip(limiter.acquire("k", undefined, now + 1_000))
      expect(refused).toMatchObject({ _tag: "WaitBeyondBound", startsAt: now + W + 50 })
      // Nothing was taken: the next unbounded request starts one window (and the margin) after the first two.
      const starts = yield* startsOf([0], () => limiter.acquire("k"))
      expect(starts).toEqual([W + 50])
    }).pipe(Effect.provide(ErpRateLimiter.layer({ limit: 2, window: W, margin: 50 }))))

  it.effect("a limit learned from the server is kept in its own window, beside the limiter's; judged twice, changed once", () =>
    Effect.gen(function*() {
      const limiter = yield* ErpRateLimiter.ErpRateLimiter
      const first = yield* limiter.acquire("k")
      yield* first.release(first.startedMillis)
      // The server says 2, and a reset 4 s after the request's start (in epoch ms): 2 per 4 s, beside 10 per 1 s.
      const reset = first.startedMillis + 4 * W
      yield* limiter.learn("k", first, {
        serverLimit: 2,
        tooManyRequests: false,
        startedMillis: first.startedMillis,
        reset: { at: reset, raw: String(reset) }
      })
      const admitted = yield* limiter.acquire("k")
      yield* admitted.release(admitted.startedMillis)
      expect(admitted).toMatchObject({ limit: 2, windowMillis: 4 * W, learned: { limit: 2, from: "header" } })
      // The request sent before it was learned counts too: the next two start a learned window after each of the two
      // (and its margin: the limiter's own for the first, sent under it, 2% of the learned window for the second).
      // (Which of the two takes which slot is the scheduler's: Effect 3 and 4 start forked fibers in another order.)
      const starts = yield* startsOf([0, 0], () => limiter.acquire("k"))
      expect([...starts].sort((a, b) => a - b)).toEqual([4 * W + 50, 4 * W + 80])
      // Two answers judge one X-RateLimit-Limit that says ours again: forgotten once, said once.
      const heard = { serverLimit: L, tooManyRequests: false, startedMillis: admitted.startedMillis }
      yield* limiter.learn("k", admitted, heard)
      yield* limiter.learn("k", admitted, heard)
      expect(yield* limiter.acquire("k")).toMatchObject({ limit: L, windowMillis: W, learned: undefined })
    }).pipe(Effect.provide(ErpRateLimiter.layer({ limit: L, window: W, margin: 50 }))))
})
