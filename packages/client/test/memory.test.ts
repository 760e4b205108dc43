import { RateLimiter } from "@effect/experimental"
import { describe, expect, it } from "@effect/vitest"
import type { ErpRateLimiter } from "@erp-client/client"
import { MemoryStore } from "@erp-client/kernel"
import {
  Clock,
  Context,
  Duration,
  Effect,
  Exit,
  FastCheck as fc,
  Fiber,
  Layer,
  Logger,
  LogLevel,
  TestClock,
  TestContext
} from "effect"
import * as Memory from "../src/internal/memory.js"
import * as Slots from "../src/internal/slots.js"

// The memory limiter's plain state: the same fixed-window counters as @effect/experimental's memory store, and a synchronous path
// for the requests that need not wait that takes exactly the places the limiter's steps would take.

// The limiter's own log lines (a pause waited for) are not what these tests read.
const run = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.runPromise(effect.pipe(Effect.provide(TestContext.TestContext), Logger.withMinimumLogLevel(LogLevel.None)))

describe("memory stores", () => {
  it("property: fixedWindow answers as @effect/experimental's memory store does, call for call", () =>
    fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            after: fc.integer({ min: 0, max: 3_000 }),
            key: fc.constantFrom("a", "b"),
            tokens: fc.integer({ min: 1, max: 3 }),
            refill: fc.integer({ min: 1, max: 1_000 }),
            limit: fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined })
          }),
          { minLength: 1, maxLength: 60 }
        ),
        async (calls) => {
          const [theirs, ours] = await run(
            Effect.gen(function*() {
              const experimental = yield* Layer.build(RateLimiter.layerStoreMemory)
              const store = Context.get(Memory.context(MemoryStore.makeState()), RateLimiter.RateLimiterStore)
              const reference = Context.get(experimental, RateLimiter.RateLimiterStore)
              const answers = (s: RateLimiter.RateLimiterStore["Type"]) => (call: (typeof calls)[number]) =>
                s.fixedWindow({
                  key: call.key,
                  tokens: call.tokens,
                  refillRate: Duration.millis(call.refill),
                  limit: call.limit
                })
              const theirs: Array<unknown> = []
              const ours: Array<unknown> = []
              for (const call of calls) {
                yield* TestClock.adjust(Duration.millis(call.after))
                theirs.push(yield* answers(reference)(call))
                ours.push(yield* answers(store)(call))
              }
              return [theirs, ours] as const
            }).pipe(Effect.scoped)
          )
          expect(ours).toEqual(theirs)
        }
      ),
      { numRuns: 100 }
    ))

  it("the token bucket is not offered: it lets about twice the limit through one window", async () => {
    const store = Context.get(Memory.context(MemoryStore.makeState()), RateLimiter.RateLimiterStore)
    const exit = await run(
      Effect.exit(
        store.tokenBucket({ key: "a", tokens: 1, limit: 3, refillRate: Duration.millis(100), allowOverflow: false })
      )
    )
    expect(Exit.isFailure(exit)).toBe(true)
  })

  it("holds: a later hold wins over an earlier one, never the reverse", () => {
    const state = MemoryStore.makeState()
    expect(MemoryStore.holdOf(state, "k")).toBe(0)
    MemoryStore.extendHold(state, "k", 500)
    MemoryStore.extendHold(state, "k", 300)
    expect(MemoryStore.holdOf(state, "k")).toBe(500)
    MemoryStore.extendHold(state, "k", 900)
    expect(MemoryStore.holdOf(state, "k")).toBe(900)
  })
})

// One request of a schedule: when it asks (ms after the start), bounded or not, and how long it runs once started.
// `pause` asks the limiter to pause the key instead, until that many ms after the request's own time.
interface Request {
  readonly at: number
  readonly bound: number | undefined
  readonly runs: number
  readonly pause: number | undefined
}

// What each request of `schedule` got from `limiter`: when it started (or its failure), what it says it waited, in
// the order of the schedule.
const outcomes = (limiter: ErpRateLimiter.Service, schedule: ReadonlyArray<Request>) =>
  Effect.gen(function*() {
    const t0 = yield* Clock.currentTimeMillis
    const fibers = yield* Effect.forEach(schedule, (request) =>
      Effect.fork(
        Effect.sleep(Duration.millis(request.at)).pipe(
          Effect.zipRight<
            { readonly started: number; readonly spaced: number; readonly paused: number } | "paused",
            ErpRateLimiter.PauseBeyondDeadline | ErpRateLimiter.WaitBeyondBound | ErpRateLimiter.StoreFailure,
            never
          >(
            request.pause === undefined
              ? Effect.gen(function*() {
                const acquired = yield* limiter.acquire(
                  "k",
                  undefined,
                  request.bound === undefined ? undefined : t0 + request.at + request.bound
                )
                const started = (yield* Clock.currentTimeMillis) - t0
                yield* Effect.sleep(Duration.millis(request.runs))
                yield* acquired.release(yield* Clock.currentTimeMillis)
                return { started, spaced: acquired.spacedMillis, paused: acquired.pausedMillis }
              })
              : Effect.as(limiter.pause("k", t0 + request.at + request.pause), "paused")
          ),
          Effect.exit
        )
      ))
    yield* TestClock.adjust(Duration.hours(24))
    return yield* Effect.forEach(fibers, (fiber) =>
      Effect.map(Fiber.join(fiber), (exit) =>
        Exit.isSuccess(exit) ? exit.value : String(Exit.causeOption(exit))))
  })

// The limiter over the memory stores, with its synchronous path (`Memory` in the context) or with the steps only.
const limiterOf = (resolved: ErpRateLimiter.Resolved, fast: boolean) =>
  Effect.provide(
    Slots.make(resolved),
    fast
      ? Memory.context(MemoryStore.makeState())
      : Context.omit(Memory.Memory)(Memory.context(MemoryStore.makeState()))
  )

describe("the memory limiter's synchronous path", () => {
  it("property: every request starts when, and waits as long as, it would through the limiter's steps alone", () =>
    fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.array(
          fc.record({
            at: fc.integer({ min: 0, max: 4_000 }),
            // A bound already passed: a retry whose caller's bound on waiting ran out meanwhile.
            bound: fc.option(fc.integer({ min: -500, max: 2_500 }), { nil: undefined }),
            runs: fc.integer({ min: 0, max: 1_500 }),
            pause: fc.option(fc.integer({ min: 0, max: 2_000 }), { nil: undefined, freq: 8 })
          }),
          { minLength: 1, maxLength: 30 }
        ),
        async (limit, schedule) => {
          const resolved = { limit, window: Duration.millis(1_000), margin: Duration.millis(50) }
          const [fast, steps] = await Promise.all([
            run(Effect.flatMap(limiterOf(resolved, true), (limiter) => outcomes(limiter, schedule))),
            run(Effect.flatMap(limiterOf(resolved, false), (limiter) => outcomes(limiter, schedule)))
          ])
          expect(fast).toEqual(steps)
        }
      ),
      { numRuns: 100 }
    ))

  it.effect("takes the synchronous path when nothing is waited for, and the steps otherwise", () =>
    Effect.gen(function*() {
      const state = MemoryStore.makeState()
      const limiter = yield* Effect.provide(
        Slots.make({ limit: 2, window: Duration.millis(1_000), margin: Duration.millis(50) }),
        Memory.context(state)
      )
      // Two places at once, each held while in flight (its timeout, 30 s by default, and the window and margin)
      const first = yield* limiter.acquire("k")
      const second = yield* limiter.acquire("k")
      expect([first.spacedMillis, second.spacedMillis]).toEqual([0, 0])
      expect(MemoryStore.holdOf(state, "k:slot:0")).toBe(31_050)
      expect(MemoryStore.holdOf(state, "k:slot:1")).toBe(31_050)
      // One ends at once: busy the window and the margin after its start
      yield* second.release(0)
      expect(MemoryStore.holdOf(state, "k:slot:1")).toBe(1_050)
      // A third takes the steps: its slot (the first one's) is spaced, then found held in flight, so it takes the next
      // one (the second's, free the window and the margin after its start)
      const third = yield* Effect.fork(limiter.acquire("k"))
      yield* TestClock.adjust(Duration.millis(1_050))
      expect((yield* Fiber.join(third)).spacedMillis).toBe(1_050)
      expect(MemoryStore.holdOf(state, "k:slot:1")).toBe(1_050 + 31_050)
      // The first ended late: its slot is busy a window (and the margin) after its end
      yield* TestClock.adjust(Duration.millis(450))
      yield* first.release(1_500)
      expect(MemoryStore.holdOf(state, "k:slot:0")).toBe(2_550)
    }))
})

describe("the memory limiter's size", () => {
  it.effect("what one window holds, whatever the limit: 10,000 requests at 1,000 a second keep about 2,000 entries", () =>
    Effect.gen(function*() {
      const sizes: Array<number> = []
      for (const limit of [2_000, 100_000_000]) {
        const state = MemoryStore.makeState()
        const limiter = yield* Effect.provide(
          Slots.make({ limit, window: Duration.millis(1_000), margin: Duration.millis(50) }),
          Memory.context(state)
        )
        let largest = 0
        for (let i = 0; i < 10_000; i++) {
          const acquired = yield* limiter.acquire("k")
          yield* acquired.release(yield* Clock.currentTimeMillis)
          // A request a millisecond, the clock moved twenty at a time.
          if (i % 20 === 19) yield* TestClock.adjust(Duration.millis(20))
          largest = Math.max(largest, MemoryStore.size(state))
        }
        sizes.push(largest)
      }
      // A slot counter and a busy mark for each request of the last window (and its margin), at most twice that
      // between two sweeps: not one of each per request ever made (20,000 at a limit of 100 million a second).
      for (const largest of sizes) expect(largest).toBeLessThanOrEqual(2 * 2 * 1_050 + MemoryStore.sweepFloor + 10)
    }))
})
