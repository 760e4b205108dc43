import { describe, expect, it } from "@effect/vitest"
import type { ErpRateLimiter } from "@erp-client/effect4-client"
import { MemoryStore } from "@erp-client/kernel"
import { Arbitrary, Clock, Context, Duration, Effect, Exit, Fiber, References, Schema } from "effect"
import { RateLimiter } from "effect/persistence"
import { TestClock } from "effect/testing"
import * as Memory from "../src/internal/memory.js"
import * as Slots from "../src/internal/slots.js"

// The memory limiter's plain state: the counters Effect 4's own memory store keeps, and a synchronous step for the
// requests that need not wait that takes exactly the places the limiter's steps would take.

const Int = (minimum: number, maximum: number) => Schema.Int.check(Schema.isBetween({ minimum, maximum }))

const check = <A>(schema: Schema.Codec<A>, property: (value: A) => Effect.Effect<boolean, never, any>, runs: number) =>
  Effect.map(
    Arbitrary.checkEffect(
      Arbitrary.schema(schema),
      (value) => property(value).pipe(Effect.provide(TestClock.layer())),
      {
        runs
      }
    ),
    (result) => expect(Arbitrary.formatCheckFailure(result)).toBeUndefined()
  )

describe("memory stores", () => {
  it.effect("property: fixedWindow answers as Effect 4's memory store does, call for call", () =>
    check(
      Schema.Array(Schema.Struct({
        after: Int(0, 3_000),
        key: Schema.Literals(["a", "b"]),
        tokens: Int(1, 3),
        refill: Int(1, 1_000),
        limit: Schema.UndefinedOr(Int(1, 5))
      })).check(Schema.isBetweenLength(1, 60)),
      (calls) =>
        Effect.gen(function*() {
          const reference = yield* Effect.service(RateLimiter.RateLimiterStore).pipe(
            Effect.provide(RateLimiter.layerStoreMemory)
          )
          const ours = Context.get(Memory.context(MemoryStore.makeState()), RateLimiter.RateLimiterStore)
          for (const call of calls) {
            yield* TestClock.adjust(Duration.millis(call.after))
            const options = {
              key: call.key,
              tokens: call.tokens,
              refillRate: Duration.millis(call.refill),
              limit: call.limit
            }
            const [theirs, mine] = yield* Effect.all([reference.fixedWindow(options), ours.fixedWindow(options)])
            if (theirs[0] !== mine[0] || theirs[1] !== mine[1]) return false
          }
          return true
        }).pipe(Effect.orDie),
      100
    ))
})

// One request of a schedule: when it asks (ms after the start), bounded or not, and how long it runs once started.
// `pause` asks the limiter to pause the key instead, until that many ms after the request's own time.
const Request = Schema.Struct({
  at: Int(0, 4_000),
  bound: Schema.UndefinedOr(Int(-500, 2_500)),
  runs: Int(0, 1_500),
  pause: Schema.UndefinedOr(Int(0, 2_000))
})

type Outcome = { readonly started: number; readonly spaced: number; readonly paused: number } | "paused"

const outcomes = (limiter: ErpRateLimiter.Service, schedule: ReadonlyArray<typeof Request.Type>) =>
  Effect.gen(function*() {
    const t0 = yield* Clock.currentTimeMillis
    const fibers = yield* Effect.forEach(schedule, (request) =>
      Effect.forkChild(
        Effect.sleep(Duration.millis(request.at)).pipe(
          Effect.andThen(
            request.pause === undefined
              ? Effect.gen(
                function*(): Effect.fn.Return<
                  Outcome,
                  ErpRateLimiter.StoreFailure | ErpRateLimiter.PauseBeyondDeadline | ErpRateLimiter.WaitBeyondBound
                > {
                  const acquired = yield* limiter.acquire(
                    "k",
                    undefined,
                    request.bound === undefined ? undefined : t0 + request.at + request.bound
                  )
                  const started = (yield* Clock.currentTimeMillis) - t0
                  yield* Effect.sleep(Duration.millis(request.runs))
                  yield* acquired.release(yield* Clock.currentTimeMillis)
                  return { started, spaced: acquired.spacedMillis, paused: acquired.pausedMillis }
                }
              )
              : Effect.as(limiter.pause("k", t0 + request.at + request.pause), "paused" as Outcome)
          ),
          Effect.exit
        )
      ))
    yield* TestClock.adjust(Duration.hours(24))
    return yield* Effect.forEach(
      fibers,
      (fiber) => Effect.map(Fiber.join(fiber), (exit) => Exit.isSuccess(exit) ? exit.value : String(exit.cause))
    )
  })

// The limiter over the memory stores, with its synchronous step (`Memory` in the context) or with the steps only.
const limiterOf = (resolved: ErpRateLimiter.Resolved, fast: boolean) => {
  const context = Memory.context(MemoryStore.makeState())
  return Effect.provide(Slots.make(resolved), fast ? context : Context.omit(Memory.Memory)(context))
}

describe("the memory limiter's synchronous step", () => {
  it.effect("property: every request starts when, and waits as long as, it would through the limiter's steps alone", () =>
    check(
      Schema.Struct({ limit: Int(1, 4), schedule: Schema.Array(Request).check(Schema.isBetweenLength(1, 30)) }),
      ({ limit, schedule }) =>
        Effect.gen(function*() {
          const resolved = { limit, window: Duration.millis(1_000), margin: Duration.millis(50) }
          const fast = yield* Effect.flatMap(limiterOf(resolved, true), (limiter) => outcomes(limiter, schedule)).pipe(
            Effect.provide(TestClock.layer())
          )
          const steps = yield* Effect.flatMap(limiterOf(resolved, false), (limiter) => outcomes(limiter, schedule))
            .pipe(
              Effect.provide(TestClock.layer())
            )
          expect(fast).toEqual(steps)
          return true
        }).pipe(Effect.provideService(References.MinimumLogLevel, "None")),
      100
    ))

  it.effect("takes the synchronous step when nothing is waited for, and the steps otherwise", () =>
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
      const third = yield* Effect.forkChild(limiter.acquire("k"))
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
