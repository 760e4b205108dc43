/**
 * The rate limiter's stores as plain data: the counters of a fixed window and a token bucket (the arithmetic of
 * `RateLimiterStore` in `@effect/experimental` 0.61, line for line), the holds (a key held until a time: an endpoint
 * paused for the server, a slot busy) and the limits learned from the server, in maps an edition's limiter reads and
 * writes directly, in one synchronous step where nothing waits (docs/rate-limit.md).
 *
 * @since 0.1.0
 */
import type { Learned } from "./ServerLimit.js"
import { busyFrom, slotKey, slotOf, ticketKey } from "./Slots.js"

/**
 * A fixed-window counter: the tokens taken and when the count lapses (epoch ms).
 *
 * @since 0.1.0
 * @category Models
 */
export interface Counter {
  count: number
  expiresAt: number
}

/**
 * A token bucket: the tokens left and when it was last refilled (epoch ms).
 *
 * @since 0.1.0
 * @category Models
 */
export interface Bucket {
  tokens: number
  lastRefill: number
}

/**
 * One memory limiter's state.
 *
 * @since 0.1.0
 * @category Models
 */
export interface State {
  readonly counters: Map<string, Counter>
  readonly buckets: Map<string, Bucket>
  /** Until when each key is held (epoch ms). */
  readonly holds: Map<string, number>
  /** The limit learned for each key (see `HoldStore.learned`). */
  readonly learned: Map<string, Learned>
}

/**
 * @example
 * ```ts
 * import { MemoryStore } from "@erp-client/kernel"
 *
 * const state = MemoryStore.makeState()
 * console.log(state.counters.size, state.holds.size) // => 0 0
 * ```
 *
 * @since 0.1.0
 * @category Stores
 */
export const makeState = (): State => ({
  counters: new Map(),
  buckets: new Map(),
  holds: new Map(),
  learned: new Map()
})

/**
 * `RateLimiterStore.fixedWindow` at `now`: takes `tokens` and returns the count after it and the counter's time to
 * live. Over a `limit`, nothing is taken and the count returned is past the limit.
 *
 * @example
 * ```ts
 * import { MemoryStore } from "@erp-client/kernel"
 *
 * // A spacer: one token a second, at most one counted at a time
 * const state = MemoryStore.makeState()
 * console.log(MemoryStore.fixedWindow(state, "slot:0", 1, 1_000, 1, 0)) // => [ 1, 1000 ]
 * console.log(MemoryStore.fixedWindow(state, "slot:0", 1, 1_000, 1, 200)) // => [ 2, 800 ]
 * console.log(MemoryStore.fixedWindow(state, "slot:0", 1, 1_000, 1, 1_000)) // => [ 1, 1000 ]
 * ```
 *
 * @since 0.1.0
 * @category Stores
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

/**
 * The count `fixedWindow` would return for one token at `now`, taking nothing.
 *
 * @example
 * ```ts
 * import { MemoryStore } from "@erp-client/kernel"
 *
 * const state = MemoryStore.makeState()
 * MemoryStore.fixedWindow(state, "ticket", 1, 1_000, undefined, 0)
 * console.log(MemoryStore.nextCount(state, "ticket", 10), MemoryStore.nextCount(state, "ticket", 5_000)) // => 2 1
 * ```
 *
 * @since 0.1.0
 * @category Stores
 */
export const nextCount = (state: State, key: string, now: number): number => {
  const counter = state.counters.get(key)
  return counter === undefined || counter.expiresAt <= now ? 1 : counter.count + 1
}

/**
 * Whether `key`'s counter still counts at `now` (it has not lapsed).
 *
 * @example
 * ```ts
 * import { MemoryStore } from "@erp-client/kernel"
 *
 * const state = MemoryStore.makeState()
 * MemoryStore.fixedWindow(state, "slot:0", 1, 1_000, 1, 0)
 * console.log(MemoryStore.isCounting(state, "slot:0", 999), MemoryStore.isCounting(state, "slot:0", 1_000))
 * // => true false
 * ```
 *
 * @since 0.1.0
 * @category Stores
 */
export const isCounting = (state: State, key: string, now: number): boolean => {
  const counter = state.counters.get(key)
  return counter !== undefined && counter.expiresAt > now
}

/**
 * `RateLimiterStore.tokenBucket` at `now`: the tokens left after taking `tokens`.
 *
 * @example
 * ```ts
 * import { MemoryStore } from "@erp-client/kernel"
 *
 * const state = MemoryStore.makeState()
 * const take = { key: "bucket", tokens: 1, limit: 2, allowOverflow: false }
 * console.log(MemoryStore.tokenBucket(state, take, 1_000, 0)) // => 1
 * console.log(MemoryStore.tokenBucket(state, take, 1_000, 0)) // => 0
 * console.log(MemoryStore.tokenBucket(state, take, 1_000, 0)) // => -1
 * ```
 *
 * @since 0.1.0
 * @category Stores
 */
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

/**
 * Until when `key` is held (epoch ms), 0 when it is not.
 *
 * @example
 * ```ts
 * import { MemoryStore } from "@erp-client/kernel"
 *
 * const state = MemoryStore.makeState()
 * console.log(MemoryStore.holdOf(state, "erp:k:partner/list")) // => 0
 * ```
 *
 * @since 0.1.0
 * @category Stores
 */
export const holdOf = (state: State, key: string): number => state.holds.get(key) ?? 0

/**
 * Holds `key` until `untilMillis`; a later hold wins over an earlier one, never the reverse.
 *
 * @example
 * ```ts
 * import { MemoryStore } from "@erp-client/kernel"
 *
 * // A later hold wins; an earlier one never cuts it short
 * const state = MemoryStore.makeState()
 * MemoryStore.extendHold(state, "erp:k:partner/list", 5_000)
 * MemoryStore.extendHold(state, "erp:k:partner/list", 2_000)
 * console.log(MemoryStore.holdOf(state, "erp:k:partner/list")) // => 5000
 * ```
 *
 * @since 0.1.0
 * @category Stores
 */
export const extendHold = (state: State, key: string, untilMillis: number): void => {
  if (holdOf(state, key) < untilMillis) state.holds.set(key, untilMillis)
}

/**
 * The limit learned for `key` at `now`, unless it has lapsed.
 *
 * @example
 * ```ts
 * import { MemoryStore } from "@erp-client/kernel"
 *
 * const state = MemoryStore.makeState()
 * MemoryStore.setLearned(state, "erp:k:partner/list", undefined, { limit: 10, sinceMillis: 0, ttlMillis: 60_000 }, 0)
 * console.log(MemoryStore.learnedOf(state, "erp:k:partner/list", 1_000)?.limit) // => 10
 * console.log(MemoryStore.learnedOf(state, "erp:k:partner/list", 60_000)) // => undefined
 * ```
 *
 * @since 0.1.0
 * @category Stores
 */
export const learnedOf = (state: State, key: string, now: number): Learned | undefined => {
  const learned = state.learned.get(key)
  if (learned === undefined || learned.sinceMillis + learned.ttlMillis > now) return learned
  state.learned.delete(key)
  return undefined
}

/**
 * `HoldStore.setLearned` at `now`.
 *
 * @example
 * ```ts
 * import { MemoryStore } from "@erp-client/kernel"
 *
 * // Changed only if it is still what the decision was made on
 * const state = MemoryStore.makeState()
 * const key = "erp:k:partner/list"
 * console.log(MemoryStore.setLearned(state, key, undefined, { limit: 50, sinceMillis: 0, ttlMillis: 60_000 }, 0)) // => true
 * console.log(MemoryStore.setLearned(state, key, undefined, { limit: 50, sinceMillis: 0, ttlMillis: 60_000 }, 0)) // => false
 * ```
 *
 * @since 0.1.0
 * @category Stores
 */
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

/**
 * A request that need not wait takes its place in one synchronous step: its ticket, its slot's counter and busy mark,
 * the same places the limiter's steps would take (docs/rate-limit.md), read and written on the state directly. It goes
 * only where those steps would not wait at all: the key not paused, the bound (if any) not passed, the slot's counter
 * lapsed and the slot not busy; then the slot, and the limit it was admitted under. Anything else changes nothing and
 * gives `undefined`: the limiter takes its steps.
 *
 * @example
 * ```ts
 * import { MemoryStore } from "@erp-client/kernel"
 *
 * // Two slots: two requests go at once, the third must wait (its slot is spaced)
 * const state = MemoryStore.makeState()
 * const limits = { limit: 2, windowMillis: 1_000, slotWindowMillis: 1_050 }
 * console.log(MemoryStore.acquireNow(state, "k", limits, 0)?.slot, MemoryStore.acquireNow(state, "k", limits, 0)?.slot)
 * // => k:slot:0 k:slot:1
 * console.log(MemoryStore.acquireNow(state, "k", limits, 10)) // => undefined
 * ```
 *
 * @since 0.1.0
 * @category Stores
 */
export const acquireNow = (
  state: State,
  key: string,
  limits: { readonly limit: number; readonly windowMillis: number; readonly slotWindowMillis: number },
  nowMillis: number,
  boundMillis?: number
): { readonly slot: string; readonly limit: number; readonly learned: Learned | undefined } | undefined => {
  if (holdOf(state, key) > nowMillis || (boundMillis !== undefined && nowMillis > boundMillis)) return undefined
  const learned = learnedOf(state, key, nowMillis)
  const limit = learned?.limit ?? limits.limit
  const ticket = ticketKey(key)
  const slot = slotKey(key, slotOf(nextCount(state, ticket, nowMillis), limit))
  if (isCounting(state, slot, nowMillis) || holdOf(state, slot) > nowMillis) return undefined
  fixedWindow(state, ticket, 1, limits.slotWindowMillis, undefined, nowMillis)
  fixedWindow(state, slot, 1, limits.slotWindowMillis, undefined, nowMillis)
  extendHold(state, slot, busyFrom({ startedMillis: nowMillis }, limits))
  return { slot, limit, learned }
}
