/**
 * The memory limiter's stores: the counters of `RateLimiterStore` (its fixed window and token bucket) and the holds of
 * `HoldStore` over the plain data of `@erp-client/kernel/MemoryStore`, whose arithmetic this re-exports. The stores the
 * limiter reaches through effects are thin wrappers; `slots.ts` also reads and writes the maps directly, so that a
 * request that need not wait takes its place in one synchronous step (`fastAcquire` there).
 *
 * Written by hand rather than taken from `RateLimiter.layerStoreMemory` of `@effect/experimental`: that store keeps
 * its counters out of reach, so each request paid about a dozen effects on it to find out that it need not wait
 * (`pnpm bench cost`, lookups). The counters' arithmetic is that store's, line for line, and `memory.test.ts` holds
 * the two to the same answers.
 */
import * as RateLimiter from "@effect/experimental/RateLimiter"
import {
  admitLogged,
  claimHold,
  countLogged,
  dropLogged,
  endLogged,
  extendHold,
  fixedWindow,
  holdOf,
  learnedOf,
  makeState,
  seedLogged,
  setLearned,
  settleHold,
  type State,
  tokenBucket
} from "@erp-client/kernel/MemoryStore"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { HoldStore } from "./limiter.js"

export * from "@erp-client/kernel/MemoryStore"

/** The state behind the memory stores, for the limiter's synchronous path. */
export class Memory extends Context.Tag("@erp-client/client/ErpRateLimiter/Memory")<Memory, State>() {}

/** The two stores over one state, and the state itself. */
export const context = (
  state: State
): Context.Context<Memory | RateLimiter.RateLimiterStore | HoldStore> =>
  Context.make(Memory, state).pipe(
    Context.add(
      RateLimiter.RateLimiterStore,
      RateLimiter.RateLimiterStore.of({
        fixedWindow: (options) =>
          Effect.clockWith((clock) =>
            Effect.sync(() =>
              fixedWindow(
                state,
                options.key,
                options.tokens,
                Duration.toMillis(options.refillRate),
                options.limit,
                clock.unsafeCurrentTimeMillis()
              )
            )
          ),
        tokenBucket: (options) =>
          Effect.clockWith((clock) =>
            Effect.sync(() =>
              tokenBucket(state, options, Duration.toMillis(options.refillRate), clock.unsafeCurrentTimeMillis())
            )
          )
      })
    ),
    Context.add(
      HoldStore,
      HoldStore.of({
        get: (key) => Effect.sync(() => holdOf(state, key)),
        extend: (key, untilMillis) =>
          Effect.clockWith((clock) =>
            Effect.sync(() => extendHold(state, key, untilMillis, clock.unsafeCurrentTimeMillis()))
          ),
        // A claim is its mark's end: the marks of one slot's claims differ (`MemoryStore.settleHold`).
        claim: (key, untilMillis) =>
          Effect.clockWith((clock) =>
            Effect.sync(() => {
              const busyUntil = claimHold(state, key, untilMillis, clock.unsafeCurrentTimeMillis())
              return busyUntil === 0 ? { claim: String(untilMillis) } : { busyUntil }
            })
          ),
        settle: (key, claim, untilMillis) =>
          Effect.clockWith((clock) =>
            Effect.sync(() => settleHold(state, key, Number(claim), untilMillis, clock.unsafeCurrentTimeMillis()))
          ),
        learned: (key) =>
          Effect.clockWith((clock) => Effect.sync(() => learnedOf(state, key, clock.unsafeCurrentTimeMillis()))),
        setLearned: (key, expected, next) =>
          Effect.clockWith((clock) =>
            Effect.sync(() => setLearned(state, key, expected, next, clock.unsafeCurrentTimeMillis()))
          ),
        admitLogged: (key, windows) =>
          Effect.clockWith((clock) =>
            Effect.sync(() => admitLogged(state, key, windows, clock.unsafeCurrentTimeMillis()))
          ),
        markLogged: (key, entry, _keepMillis, atMillis) => Effect.sync(() => endLogged(state, key, entry, atMillis)),
        dropLogged: (key, entry) => Effect.sync(() => dropLogged(state, key, entry)),
        countLogged: (key, windowMillis) =>
          Effect.clockWith((clock) =>
            Effect.sync(() => countLogged(state, key, windowMillis, clock.unsafeCurrentTimeMillis()))
          ),
        seedLogged: (key, configured, slotWindowMillis) =>
          Effect.clockWith((clock) =>
            Effect.sync(() =>
              seedLogged(state, key, configured.windowMillis, clock.unsafeCurrentTimeMillis(), slotWindowMillis)
            )
          )
      })
    )
  )

/**
 * The memory stores, new for each limiter: Effect shares a layer's value between builds alive at the same time, so a
 * constant store would hand two limiters (other settings, another TestClock) one counter map.
 */
export const layer: Layer.Layer<Memory | RateLimiter.RateLimiterStore | HoldStore> = Layer.fresh(
  Layer.effectContext(Effect.sync(() => context(makeState())))
)
