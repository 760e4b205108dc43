/**
 * The memory limiter's stores over the plain data of `@erp-client/kernel/MemoryStore`: the counters of
 * `RateLimiterStore` (its fixed window: the arithmetic of Effect 4's own `RateLimiter.layerStoreMemory`, line for
 * line) and the holds and learned limits of `HoldStore`. `slots.ts` also reads and writes the state directly, so that a
 * request that need not wait takes its place in one synchronous step (`MemoryStore.acquireNow`).
 *
 * Written by hand rather than taken from `RateLimiter.layerStoreMemory`, which keeps its counters out of reach, so every
 * request would take the limiter's steps: measured on Node 24 (20,000 acquisitions and releases, 50 keys, none
 * waiting), 21 µs each through Effect 4's store and the steps, 1.8 µs each by the synchronous step (the Effect 3
 * edition, the same kernel function: 3.1 µs). The test `memory.test.ts` holds this store to the library's answers.
 */
import * as MemoryStore from "@erp-client/kernel/MemoryStore"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as RateLimiter from "effect/persistence/RateLimiter"
import { HoldStore } from "./limiter.js"

/** The state behind the memory stores, for the limiter's synchronous step. */
export class Memory extends Context.Service<Memory, MemoryStore.State>()(
  "@erp-client/effect4-client/ErpRateLimiter/Memory"
) {}

/** The stores over one state, and the state itself. */
export const context = (
  state: MemoryStore.State
): Context.Context<Memory | RateLimiter.RateLimiterStore | HoldStore> =>
  Context.make(Memory, state).pipe(
    Context.add(
      RateLimiter.RateLimiterStore,
      RateLimiter.RateLimiterStore.of({
        fixedWindow: (options) =>
          Effect.clockWith((clock) =>
            Effect.sync(() =>
              MemoryStore.fixedWindow(
                state,
                options.key,
                options.tokens,
                Duration.toMillis(options.refillRate),
                options.limit,
                clock.currentTimeMillisUnsafe()
              )
            )
          ),
        // Not offered: it lets about twice the limit through one window, which the limiter exists to prevent.
        tokenBucket: () =>
          Effect.fail(
            new RateLimiter.RateLimiterError({
              reason: new RateLimiter.RateLimitStoreError({ message: "the token bucket is not offered" })
            })
          ),
        adaptiveConsume: () => Effect.succeed({ delay: Duration.zero, epoch: 0, phase: "inactive" }),
        adaptiveFeedback: () => Effect.void
      })
    ),
    Context.add(
      HoldStore,
      HoldStore.of({
        get: (key) => Effect.sync(() => MemoryStore.holdOf(state, key)),
        extend: (key, untilMillis) =>
          Effect.clockWith((clock) =>
            Effect.sync(() => MemoryStore.extendHold(state, key, untilMillis, clock.currentTimeMillisUnsafe()))
          ),
        // A claim is its mark's end: the marks of one slot's claims differ (`MemoryStore.settleHold`).
        claim: (key, untilMillis) =>
          Effect.clockWith((clock) =>
            Effect.sync(() => {
              const busyUntil = MemoryStore.claimHold(state, key, untilMillis, clock.currentTimeMillisUnsafe())
              return busyUntil === 0 ? { claim: String(untilMillis) } : { busyUntil }
            })
          ),
        settle: (key, claim, untilMillis) =>
          Effect.clockWith((clock) =>
            Effect.sync(() =>
              MemoryStore.settleHold(state, key, Number(claim), untilMillis, clock.currentTimeMillisUnsafe())
            )
          ),
        learned: (key) =>
          Effect.clockWith((clock) =>
            Effect.sync(() => MemoryStore.learnedOf(state, key, clock.currentTimeMillisUnsafe()))
          ),
        setLearned: (key, expected, next) =>
          Effect.clockWith((clock) =>
            Effect.sync(() => MemoryStore.setLearned(state, key, expected, next, clock.currentTimeMillisUnsafe()))
          ),
        admitLogged: (key, windows) =>
          Effect.clockWith((clock) =>
            Effect.sync(() => MemoryStore.admitLogged(state, key, windows, clock.currentTimeMillisUnsafe()))
          ),
        markLogged: (key, entry, _keepMillis, atMillis) =>
          Effect.sync(() => MemoryStore.endLogged(state, key, entry, atMillis)),
        dropLogged: (key, entry) => Effect.sync(() => MemoryStore.dropLogged(state, key, entry)),
        countLogged: (key, windowMillis) =>
          Effect.clockWith((clock) =>
            Effect.sync(() => MemoryStore.countLogged(state, key, windowMillis, clock.currentTimeMillisUnsafe()))
          ),
        seedLogged: (key, configured, slotWindowMillis) =>
          Effect.clockWith((clock) =>
            Effect.sync(() =>
              MemoryStore.seedLogged(
                state,
                key,
                configured.windowMillis,
                clock.currentTimeMillisUnsafe(),
                slotWindowMillis
              )
            )
          )
      })
    )
  )

/**
 * The memory stores, new for each limiter: a layer's value is shared between builds alive at the same time, so a
 * constant store would hand two limiters (other settings, another TestClock) one counter map.
 */
export const layer: Layer.Layer<Memory | RateLimiter.RateLimiterStore | HoldStore> = Layer.fresh(
  Layer.effectContext(Effect.sync(() => context(MemoryStore.makeState())))
)
