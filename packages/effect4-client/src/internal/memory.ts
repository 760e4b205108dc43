/**
 * The memory limiter's stores: the counters are Effect 4's own memory `RateLimiterStore`
 * (`RateLimiter.layerStoreMemory`, the same fixed-window arithmetic as the Effect 3 edition's and the kernel's
 * `MemoryStore`), and the holds and learned limits of `HoldStore` are the plain data of
 * `@erp-client/kernel/MemoryStore`.
 *
 * The Effect 3 edition keeps the counters by hand too, to read them in one synchronous step for a request that need not
 * wait (each request paid about a dozen Effect 3 effects on the library's store); Effect 4's effects cost a fraction
 * of that, so this edition takes the library's store and the limiter's steps as they are.
 */
import { extendHold, holdOf, learnedOf, makeState, setLearned, type State } from "@erp-client/kernel/MemoryStore"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as RateLimiter from "effect/persistence/RateLimiter"
import { HoldStore } from "./limiter.js"

/** The hold store over one state. */
export const makeHoldStore = (state: State): HoldStore["Service"] =>
  HoldStore.of({
    get: (key) => Effect.sync(() => holdOf(state, key)),
    extend: (key, untilMillis) => Effect.sync(() => extendHold(state, key, untilMillis)),
    learned: (key) =>
      Effect.clockWith((clock) => Effect.sync(() => learnedOf(state, key, clock.currentTimeMillisUnsafe()))),
    setLearned: (key, expected, next) =>
      Effect.clockWith((clock) =>
        Effect.sync(() => setLearned(state, key, expected, next, clock.currentTimeMillisUnsafe()))
      )
  })

/**
 * The memory stores, new for each limiter: a layer's value is shared between builds alive at the same time, so a
 * constant store would hand two limiters (other settings, another TestClock) one counter map.
 */
export const layer: Layer.Layer<RateLimiter.RateLimiterStore | HoldStore> = Layer.fresh(
  Layer.merge(
    Layer.fresh(RateLimiter.layerStoreMemory),
    Layer.effectContext(Effect.sync(() => Context.make(HoldStore, makeHoldStore(makeState()))))
  )
)
