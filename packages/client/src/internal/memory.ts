/**
 * The memory limiter's stores as plain data: the counters of `RateLimiterStore` (its fixed window and token bucket)
 * and the holds of `HoldStore`, in two maps, with the arithmetic as plain functions over them. The stores the limiter
 * reaches through effects are thin wrappers; `slots.ts` also reads and writes the maps directly, so that a request
 * that need not wait takes its place in one synchronous step (`fastAcquire` there).
 *
 * Written by hand rather than taken from `RateLimiter.layerStoreMemory` of `@effect/experimental`: that store keeps
 * its counters out of reach, so each request paid about a dozen effects on it to find out that it need not wait
 * (`pnpm bench cost`, lookups). The counters' arithmetic is that store's, line for line, and `memory.test.ts` holds
 * the two to the same answers.
 */
import * as RateLimiter from "@effect/experimental/RateLimiter"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { HoldStore } from "./limiter.js"
import type { Learned } from "./serverLimit.js"

/** A fixed-window counter: the tokens taken and when the count lapses (epoch ms). */
export interface Counter {
  count: number
  expiresAt: number
}

/** A token bucket: the tokens left and when it was last refilled (epoch ms). */
export interface Bucket {
  tokens: number
  lastRefill: number
}

/** One memory limiter's state. */
export interface State {
  readonly counters: Map<string, Counter>
  readonly buckets: Map<string, Bucket>
  /** Until when each key is held (epoch ms). */
  readonly holds: Map<string, number>
  /** The limit learned for each key (see `HoldStore.learned`). */
  readonly learned: Map<string, Learned>
}

export const makeState = (): State => ({
  counters: new Map(),
  buckets: new Map(),
  holds: new Map(),
  learned: new Map()
})

/**
 * `RateLimiterStore.fixedWindow` at `now`: takes `tokens` and returns the count after it and the counter's time to
 * live. Over a `limit`, nothing is taken and the count returned is past the limit.
 */
export const fixedWindow = (
  state: State,
  key: string,
  tokens: number,
  refillRateMillis: number,
  limit: number | undefined,
  now: number
): readonly [count: number, ttl: number] => {
  let counter = state.counters.get(key)
  if (!counter || counter.expiresAt <= now) {
    counter = { count: 0, expiresAt: now }
    state.counters.set(key, counter)
  }
  if (limit && counter.count + tokens > limit) return [counter.count + tokens, counter.expiresAt - now]
  counter.count += tokens
  counter.expiresAt += refillRateMillis * tokens
  return [counter.count, counter.expiresAt - now]
}

/** The count `fixedWindow` would return for one token at `now`, taking nothing. */
export const nextCount = (state: State, key: string, now: number): number => {
  const counter = state.counters.get(key)
  return counter === undefined || counter.expiresAt <= now ? 1 : counter.count + 1
}

/** Whether `key`'s counter still counts at `now` (it has not lapsed). */
export const isCounting = (state: State, key: string, now: number): boolean => {
  const counter = state.counters.get(key)
  return counter !== undefined && counter.expiresAt > now
}

/** `RateLimiterStore.tokenBucket` at `now`: the tokens left after taking `tokens`. */
export const tokenBucket = (
  state: State,
  options: { readonly key: string; readonly tokens: number; readonly limit: number; readonly allowOverflow: boolean },
  refillRateMillis: number,
  now: number
): number => {
  let bucket = state.buckets.get(options.key)
  if (!bucket) {
    bucket = { tokens: options.limit, lastRefill: now }
    state.buckets.set(options.key, bucket)
  } else {
    const tokensToAdd = Math.floor((now - bucket.lastRefill) / refillRateMillis)
    if (tokensToAdd > 0) {
      bucket.tokens = Math.min(options.limit, bucket.tokens + tokensToAdd)
      bucket.lastRefill += tokensToAdd * refillRateMillis
    }
  }
  const left = bucket.tokens - options.tokens
  if (options.allowOverflow || left >= 0) bucket.tokens = left
  return left
}

/** Until when `key` is held (epoch ms), 0 when it is not. */
export const holdOf = (state: State, key: string): number => state.holds.get(key) ?? 0

/** Holds `key` until `untilMillis`; a later hold wins over an earlier one, never the reverse. */
export const extendHold = (state: State, key: string, untilMillis: number): void => {
  if (holdOf(state, key) < untilMillis) state.holds.set(key, untilMillis)
}

/** The limit learned for `key` at `now`, unless it has lapsed. */
export const learnedOf = (state: State, key: string, now: number): Learned | undefined => {
  const learned = state.learned.get(key)
  if (learned === undefined || learned.sinceMillis + learned.ttlMillis > now) return learned
  state.learned.delete(key)
  return undefined
}

/** `HoldStore.setLearned` at `now`. */
export const setLearned = (
  state: State,
  key: string,
  expected: Learned | undefined,
  next: Learned | null,
  now: number
): boolean => {
  if (learnedOf(state, key, now) !== expected) return false
  if (next === null) state.learned.delete(key)
  else state.learned.set(key, next)
  return true
}

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
        extend: (key, untilMillis) => Effect.sync(() => extendHold(state, key, untilMillis)),
        learned: (key) =>
          Effect.clockWith((clock) => Effect.sync(() => learnedOf(state, key, clock.unsafeCurrentTimeMillis()))),
        setLearned: (key, expected, next) =>
          Effect.clockWith((clock) =>
            Effect.sync(() => setLearned(state, key, expected, next, clock.unsafeCurrentTimeMillis()))
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
