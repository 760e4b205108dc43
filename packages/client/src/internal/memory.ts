/**
 * The memory limiter's stores over the plain data of `@erp-client/kernel/MemoryStore`: the counters of
 * `RateLimiterStore` (its fixed window: the arithmetic of the library's own `RateLimiter.layerStoreMemory`, line for
 * line) and the holds and learned limits of `HoldStore`. `slots.ts` also reads and writes the state directly, so that a
 * request that need not wait takes its place in one synchronous step (`MemoryStore.acquireNow`).
 *
 * Written by hand rather than taken from `RateLimiter.layerStoreMemory`, which keeps its counters out of reach, so every
 * request would take the limiter's steps, several times slower than the synchronous step (`pnpm bench cost`). The
 * test `memory.test.ts` holds this store to the library's answers.
 */
import * as MemoryStore from "@erp-client/kernel/MemoryStore"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { nowMillis, RateLimiter, Service, storeError, unusedStoreMethods } from "./edition.js"
import { HoldStore } from "./limiter.js"

/** The state behind the memory stores, for the limiter's synchronous step. */
export class Memory extends Service<Memory, MemoryStore.State>()("@erp-client/client/ErpRateLimiter/Memory") {}

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
                nowMillis(clock)
              )
            )
          ),
        // Not offered, as by the Redis store: it lets about twice the limit through one window, which the limiter
        // exists to prevent.
        tokenBucket: () => Effect.fail(storeError("the token bucket is not offered")),
        ...unusedStoreMethods
      })
    ),
    Context.add(
      HoldStore,
      HoldStore.of({
        get: (key) => Effect.sync(() => MemoryStore.holdOf(state, key)),
        extend: (key, untilMillis) =>
          Effect.clockWith((clock) =>
            Effect.sync(() => MemoryStore.extendHold(state, key, untilMillis, nowMillis(clock)))
          ),
        // A claim is its mark's end: the marks of one slot's claims differ (`MemoryStore.settleHold`).
        claim: (key, untilMillis) =>
          Effect.clockWith((clock) =>
            Effect.sync(() => {
              const busyUntil = MemoryStore.claimHold(state, key, untilMillis, nowMillis(clock))
              return busyUntil === 0 ? { claim: String(untilMillis) } : { busyUntil }
            })
          ),
        settle: (key, claim, untilMillis, windowMillis) =>
          Effect.clockWith((clock) =>
            Effect.sync(() =>
              MemoryStore.settleHold(
                state,
                key,
                Number(claim),
                untilMillis,
                nowMillis(clock),
                windowMillis
              )
            )
          ),
        learned: (key) =>
          Effect.clockWith((clock) => Effect.sync(() => MemoryStore.learnedOf(state, key, nowMillis(clock)))),
        setLearned: (key, expected, next) =>
          Effect.clockWith((clock) =>
            Effect.sync(() => MemoryStore.setLearned(state, key, expected, next, nowMillis(clock)))
          ),
        admitLogged: (key, windows, timeoutMillis) =>
          Effect.clockWith((clock) =>
            Effect.sync(() => MemoryStore.admitLogged(state, key, windows, nowMillis(clock), timeoutMillis))
          ),
        markLogged: (key, entry, _keepMillis, atMillis) =>
          Effect.sync(() => MemoryStore.endLogged(state, key, entry, atMillis)),
        settleLogged: (key, entry, _keepMillis, atMillis) =>
          Effect.sync(() => MemoryStore.settleLogged(state, key, entry, atMillis)),
        dropLogged: (key, entry) => Effect.sync(() => MemoryStore.dropLogged(state, key, entry)),
        countLogged: (key, windowMillis) =>
          Effect.clockWith((clock) =>
            Effect.sync(() => MemoryStore.countLogged(state, key, windowMillis, nowMillis(clock)))
          ),
        seedLogged: (key, configured) =>
          Effect.clockWith((clock) =>
            Effect.sync(() => MemoryStore.seedLogged(state, key, configured.windowMillis, nowMillis(clock)))
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
