/**
 * The rate limiter's stores as plain data: the counters of a fixed window and a token bucket (the arithmetic of
 * `@effect/experimental`'s `RateLimiterStore`, line for line), the holds (a key held until a time: an endpoint
 * paused for the server, a slot busy), the limits learned from the server and the log that keeps them, in maps an
 * edition's limiter reads and writes directly, in one synchronous step where nothing waits (docs/rate-limit.md).
 * Whatever has lapsed is swept from the maps as they grow, so they hold about what one window holds, whatever the
 * limit.
 *
 * @since 0.1.0
 */
import { logWait } from "./internal/logWait.js"
import type { Learned } from "./ServerLimit.js"
import {
  inFlightFrom,
  limiterKeyOfSlot,
  logInFlightAt,
  type LogWindows,
  logWindows,
  slotIndexOf,
  slotKey,
  slotOf,
  ticketKey
} from "./Slots.js"

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
  /** For each key with a learned limit, the requests it counts (see `Log`). */
  readonly logs: Map<string, Log>
  /** When to sweep next (the maps' size then), and the last log entry's number. */
  readonly upkeep: { sweepAt: number; entries: number }
}

/**
 * The log of a learned limit: each entry's time (epoch ms) is its request's timeout and a margin after its start while
 * it is in flight (`Slots.logInFlightAt`), the margin after its end once it ended (`Slots.logEndedAt`); it counts for a
 * window after that, and is kept for `keepMillis` (`Slots.logWindows`).
 *
 * @since 0.1.0
 * @category Models
 */
export interface Log {
  keepMillis: number
  readonly entries: Map<string, number>
}

/**
 * The size of the maps at which the first sweep of what has lapsed runs; each sweep sets the next at twice what it
 * leaves, so sweeping costs a constant per write and the maps hold at most about twice what one window holds.
 *
 * @since 0.1.0
 * @category Constants
 */
export const sweepFloor = 1_024

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
  learned: new Map(),
  logs: new Map(),
  upkeep: { sweepAt: sweepFloor, entries: 0 }
})

/**
 * How many entries the state holds: counters, buckets, holds, learned limits and log entries. It stays about what one
 * window holds (see `sweep`).
 *
 * @example
 * ```ts
 * import { MemoryStore } from "@erp-client/kernel"
 *
 * const state = MemoryStore.makeState()
 * MemoryStore.extendHold(state, "erp:k:partner/list", 5_000)
 * console.log(MemoryStore.size(state)) // => 1
 * ```
 *
 * @since 0.1.0
 * @category Stores
 */
export const size = (state: State): number => {
  let entries = state.counters.size + state.buckets.size + state.holds.size + state.learned.size
  for (const log of state.logs.values()) entries += log.entries.size
  return entries
}

/**
 * Removes what has lapsed at `now`: counters past their expiry, holds past their end, learned limits past their time
 * and their logs, log entries no longer counted. None of them changes an answer: a lapsed counter counts as absent, a
 * past hold as none. Runs by itself as the maps grow (`maybeSweep`); bucket state is kept (a bucket's tokens outlive
 * any expiry).
 */
const sweep = (state: State, now: number): void => {
  for (const [key, counter] of state.counters) if (counter.expiresAt <= now) state.counters.delete(key)
  for (const [key, until] of state.holds) if (until <= now) state.holds.delete(key)
  for (const key of state.learned.keys()) learnedOf(state, key, now)
  for (const [key, log] of state.logs) {
    if (state.learned.has(key)) pruneLog(log, now)
    else state.logs.delete(key)
  }
  state.upkeep.sweepAt = Math.max(sweepFloor, 2 * size(state))
}

const maybeSweep = (state: State, now: number): void => {
  if (state.counters.size + state.holds.size >= state.upkeep.sweepAt) sweep(state, now)
}

const pruneLog = (log: Log, now: number): void => {
  for (const [entry, at] of log.entries) if (at <= now - log.keepMillis) log.entries.delete(entry)
}

const logOf = (state: State, key: string, keepMillis: number): Log => {
  let log = state.logs.get(key)
  if (log === undefined) state.logs.set(key, log = { keepMillis, entries: new Map() })
  log.keepMillis = Math.max(log.keepMillis, keepMillis)
  return log
}

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
    maybeSweep(state, now)
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

/** Whether `key`'s counter still counts at `now` (it has not lapsed). */
const isCounting = (state: State, key: string, now: number): boolean => {
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
 * Holds `key` until `untilMillis`; a later hold wins over an earlier one, never the reverse. With `now`, a new key may
 * first sweep what has lapsed (see `sweep`).
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
export const extendHold = (state: State, key: string, untilMillis: number, now?: number): void => {
  if (holdOf(state, key) >= untilMillis) return
  if (now !== undefined && !state.holds.has(key)) maybeSweep(state, now)
  state.holds.set(key, untilMillis)
}

/**
 * Takes the slot `key` for a request that starts at `now`, if it is free: its mark (`holdOf`) has lapsed. Then the mark
 * is set to `untilMillis` (`Slots.inFlightFrom`: the request is in flight) and 0 returned; else nothing changes and the
 * mark's end is returned, the time to look again. Two requests waiting for one slot both find it free when its mark
 * lapses: the first to take it wins, the other waits for the new mark.
 *
 * @example
 * ```ts
 * import { MemoryStore } from "@erp-client/kernel"
 *
 * const state = MemoryStore.makeState()
 * console.log(MemoryStore.claimHold(state, "k:slot:0", 60_600, 0)) // => 0
 * console.log(MemoryStore.claimHold(state, "k:slot:0", 60_700, 100)) // => 60600
 * ```
 *
 * @since 0.1.0
 * @category Stores
 */
export const claimHold = (state: State, key: string, untilMillis: number, now: number): number => {
  const held = holdOf(state, key)
  if (held > now) return held
  extendHold(state, key, untilMillis, now)
  return 0
}

/**
 * The request that took the slot `key` with the mark `claimedMillis` (`claimHold`) ended: the mark becomes
 * `untilMillis` (`Slots.busyFrom`), earlier or later than the in-flight mark. Should the mark be another's (this one's
 * lapsed while it was in flight, and another request took the slot), it is only ever lengthened: the end of this
 * request never frees another's slot. The in-flight marks of one slot differ (a slot is taken only once its mark has
 * lapsed, so a later claim's mark is later), so the mark tells whose it is. With `windowMillis` (the limiter's window),
 * the entry a learned limit's log was started with for this claim while it was in flight (`seedLogged`) is told the end
 * too: it counts from `untilMillis - windowMillis` (the margin after the end) instead of the claim's bound.
 *
 * @example
 * ```ts
 * import { MemoryStore } from "@erp-client/kernel"
 *
 * // In flight for 40 s of a 30 s window: held all along, then a window after its end
 * const state = MemoryStore.makeState()
 * MemoryStore.claimHold(state, "k:slot:0", 60_600, 0)
 * console.log(MemoryStore.holdOf(state, "k:slot:0") > 40_000) // => true
 * MemoryStore.settleHold(state, "k:slot:0", 60_600, 70_000, 40_000)
 * console.log(MemoryStore.holdOf(state, "k:slot:0")) // => 70000
 * ```
 *
 * @since 0.1.0
 * @category Stores
 */
export const settleHold = (
  state: State,
  key: string,
  claimedMillis: number,
  untilMillis: number,
  now?: number,
  windowMillis?: number
): void => {
  if (holdOf(state, key) === claimedMillis) state.holds.set(key, untilMillis)
  else extendHold(state, key, untilMillis, now)
  if (windowMillis === undefined || state.logs.size === 0) return
  const entries = state.logs.get(limiterKeyOfSlot(key))?.entries
  const seed = seedName(key, claimedMillis)
  if (entries?.has(seed)) entries.set(seed, untilMillis - windowMillis)
}

/** The name of the entry `seedLogged` gives the slot `slot` marked until `untilMillis`. */
const seedName = (slot: string, untilMillis: number): string => `seed:${slot}:${untilMillis}`

/**
 * The limit learned for `key` at `now`, unless it has lapsed.
 *
 * @example
 * ```ts
 * import { MemoryStore } from "@erp-client/kernel"
 *
 * const state = MemoryStore.makeState()
 * MemoryStore.setLearned(state, "erp:k:partner/list", undefined, { limit: 10, windowMillis: 30_000, sinceMillis: 0, ttlMillis: 60_000, from: "header" }, 0)
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
  state.logs.delete(key)
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
 * console.log(MemoryStore.setLearned(state, key, undefined, { limit: 50, windowMillis: 30_000, sinceMillis: 0, ttlMillis: 60_000, from: "header" }, 0)) // => true
 * console.log(MemoryStore.setLearned(state, key, undefined, { limit: 50, windowMillis: 30_000, sinceMillis: 0, ttlMillis: 60_000, from: "header" }, 0)) // => false
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
  if (next === null) {
    state.learned.delete(key)
    state.logs.delete(key)
  } else state.learned.set(key, next)
  return true
}

/**
 * A place for a request under the learned limit of `key` (see `Slots.logWindows`), taken at `now` if fewer than
 * `limit` requests count in the window (`{ entry }`: its name in the log, for `endLogged`, `settleLogged` and
 * `dropLogged`), else how long until one would be (`{ waitMillis }`), taking nothing. The entry counts as in flight
 * (`Slots.logInFlightAt`, for the request's timeout `timeoutMillis`) until `settleLogged` tells its end.
 *
 * @example
 * ```ts
 * import { MemoryStore } from "@erp-client/kernel"
 *
 * const state = MemoryStore.makeState()
 * const windows = { limit: 1, windowMillis: 1_000, marginMillis: 50, keepMillis: 1_000 }
 * console.log(MemoryStore.admitLogged(state, "k", windows, 0, 5_000)) // => { entry: '1' }
 * // In flight: it counts until a window after its timeout and the margin
 * console.log(MemoryStore.admitLogged(state, "k", windows, 200, 5_000)) // => { waitMillis: 5850 }
 * ```
 *
 * @since 0.1.0
 * @category Learned limits
 */
export const admitLogged = (
  state: State,
  key: string,
  windows: LogWindows,
  now: number,
  timeoutMillis?: number
): { readonly entry: string } | { readonly waitMillis: number } => {
  const log = logOf(state, key, windows.keepMillis)
  pruneLog(log, now)
  let counted = 0
  for (const at of log.entries.values()) if (at > now - windows.windowMillis) counted++
  if (counted >= windows.limit) return { waitMillis: logWait([...log.entries.values()], windows, now) }
  const entry = String(++state.upkeep.entries)
  log.entries.set(entry, logInFlightAt({ startedMillis: now, timeoutMillis }, windows))
  return { entry }
}

/**
 * A logged request counts from `atMillis` if that is later than it did: one that starts later than it was admitted
 * (`Slots.logInFlightAt` from its start).
 *
 * @example
 * ```ts
 * import { MemoryStore } from "@erp-client/kernel"
 *
 * const state = MemoryStore.makeState()
 * const windows = { limit: 1, windowMillis: 1_000, marginMillis: 50, keepMillis: 1_000 }
 * const taken = MemoryStore.admitLogged(state, "k", windows, 0, 100)
 * if ("entry" in taken) MemoryStore.endLogged(state, "k", taken.entry, 400)
 * console.log(MemoryStore.admitLogged(state, "k", windows, 1_200)) // => { waitMillis: 200 }
 * ```
 *
 * @since 0.1.0
 * @category Learned limits
 */
export const endLogged = (state: State, key: string, entry: string, atMillis: number): void => {
  const entries = state.logs.get(key)?.entries
  const at = entries?.get(entry)
  if (at !== undefined && at < atMillis) entries!.set(entry, atMillis)
}

/**
 * A logged request ended: its entry counts from `atMillis` (`Slots.logEndedAt`), earlier or later than its in-flight
 * time (`Slots.logInFlightAt`). An entry given back or no longer kept stays so.
 *
 * @example
 * ```ts
 * import { MemoryStore, Slots } from "@erp-client/kernel"
 *
 * // In flight for 4 s of a 1 s window: counted all along, then a window after its end and the margin
 * const state = MemoryStore.makeState()
 * const windows = { limit: 1, windowMillis: 1_000, marginMillis: 50, keepMillis: 2_000 }
 * const taken = MemoryStore.admitLogged(state, "k", windows, 0, 10_000)
 * console.log(MemoryStore.admitLogged(state, "k", windows, 3_900, 10_000)) // => { waitMillis: 7150 }
 * if ("entry" in taken) MemoryStore.settleLogged(state, "k", taken.entry, Slots.logEndedAt({ startedMillis: 0, endedMillis: 4_000 }, windows))
 * console.log(MemoryStore.admitLogged(state, "k", windows, 4_100, 10_000)) // => { waitMillis: 950 }
 * ```
 *
 * @since 0.1.0
 * @category Learned limits
 */
export const settleLogged = (state: State, key: string, entry: string, atMillis: number): void => {
  const entries = state.logs.get(key)?.entries
  if (entries?.has(entry)) entries.set(entry, atMillis)
}

/**
 * A logged request that never started (a pause came first): its place is given back.
 *
 * @example
 * ```ts
 * import { MemoryStore } from "@erp-client/kernel"
 *
 * const state = MemoryStore.makeState()
 * const windows = { limit: 1, windowMillis: 1_000, marginMillis: 50, keepMillis: 1_000 }
 * const taken = MemoryStore.admitLogged(state, "k", windows, 0)
 * if ("entry" in taken) MemoryStore.dropLogged(state, "k", taken.entry)
 * console.log(MemoryStore.admitLogged(state, "k", windows, 10)) // => { entry: '2' }
 * ```
 *
 * @since 0.1.0
 * @category Learned limits
 */
export const dropLogged = (state: State, key: string, entry: string): void => {
  state.logs.get(key)?.entries.delete(entry)
}

/**
 * How many requests the learned limit of `key` counts at `now` in `windowMillis`.
 *
 * @example
 * ```ts
 * import { MemoryStore } from "@erp-client/kernel"
 *
 * const state = MemoryStore.makeState()
 * // In flight for its timeout of 100 ms at most, and the margin: counted until 1,150
 * MemoryStore.admitLogged(state, "k", { limit: 5, windowMillis: 1_000, marginMillis: 50, keepMillis: 1_000 }, 0, 100)
 * console.log(MemoryStore.countLogged(state, "k", 1_000, 500), MemoryStore.countLogged(state, "k", 1_000, 1_150)) // => 1 0
 * ```
 *
 * @since 0.1.0
 * @category Learned limits
 */
export const countLogged = (state: State, key: string, windowMillis: number, now: number): number => {
  let counted = 0
  for (const at of state.logs.get(key)?.entries.values() ?? []) if (at > now - windowMillis) counted++
  return counted
}

/**
 * A limit learned for `key` where there was none: the log starts with the requests the limiter's own slots already
 * count, each slot's busy mark less the limiter's window (a mark is a window and the margin after its request's start
 * or end, `Slots.busyFrom`; while the request is in flight, after its timeout, `Slots.inFlightFrom`), so the learned
 * limit holds for the requests sent just before it was learned too. An entry of a request in flight counts until its
 * end is told (`settleHold` with the window), or for its whole timeout if it never is (its holder died).
 *
 * @example
 * ```ts
 * import { MemoryStore } from "@erp-client/kernel"
 *
 * const state = MemoryStore.makeState()
 * MemoryStore.claimHold(state, "k:slot:0", 60_600, 0)
 * MemoryStore.seedLogged(state, "k", 30_000, 100)
 * // In flight: counted in a learned window of 3 s as long as it may be
 * console.log(MemoryStore.countLogged(state, "k", 3_000, 20_000)) // => 1
 * // Ended at 20 s: counted a window (and the margin) after that
 * MemoryStore.settleHold(state, "k:slot:0", 60_600, 50_600, 20_000, 30_000)
 * console.log(MemoryStore.countLogged(state, "k", 3_000, 23_500), MemoryStore.countLogged(state, "k", 3_000, 23_700)) // => 1 0
 * ```
 *
 * @since 0.1.0
 * @category Learned limits
 */
export const seedLogged = (
  state: State,
  key: string,
  configuredWindowMillis: number,
  now: number
): void => {
  const log = logOf(state, key, 2 * configuredWindowMillis)
  for (const [storeKey, until] of state.holds) {
    if (until > now && slotIndexOf(key, storeKey) !== undefined) {
      log.entries.set(seedName(storeKey, until), until - configuredWindowMillis)
    }
  }
}

/**
 * A request that need not wait takes its place in one synchronous step: its ticket, its slot's counter and in-flight
 * mark (`Slots.inFlightFrom`, for its timeout `limits.timeoutMillis`), and its place under the learned limit if there is
 * one (`Slots.logInFlightAt`), the same places the limiter's steps would take (docs/rate-limit.md). It goes only where
 * those steps would not wait at all: the key not paused, the bound (if any) not passed, the slot's counter lapsed and
 * the slot not busy, and the learned limit's log with room; then it returns the slot, its mark (for `settleHold`), the
 * limit it was admitted under and its log entry (for `settleLogged`). Anything else changes nothing and gives
 * `undefined`: the limiter takes its steps.
 *
 * @example
 * ```ts
 * import { MemoryStore } from "@erp-client/kernel"
 *
 * // Two slots: two requests go at once, the third must wait (its slot is spaced)
 * const state = MemoryStore.makeState()
 * const limits = { limit: 2, windowMillis: 1_000, slotWindowMillis: 1_050, timeoutMillis: 5_000 }
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
  limits: {
    readonly limit: number
    readonly windowMillis: number
    readonly slotWindowMillis: number
    readonly timeoutMillis?: number | undefined
  },
  nowMillis: number,
  boundMillis?: number
):
  | {
    readonly slot: string
    /** The slot's in-flight mark, until the request ends (`settleHold`). */
    readonly heldUntil: number
    readonly learned: Learned | undefined
    readonly entry: string | undefined
  }
  | undefined =>
{
  if (holdOf(state, key) > nowMillis || (boundMillis !== undefined && nowMillis > boundMillis)) return undefined
  const ticket = ticketKey(key)
  const slot = slotKey(key, slotOf(nextCount(state, ticket, nowMillis), limits.limit))
  if (isCounting(state, slot, nowMillis) || holdOf(state, slot) > nowMillis) return undefined
  const learned = learnedOf(state, key, nowMillis)
  let entry: string | undefined
  if (learned !== undefined) {
    const taken = admitLogged(state, key, logWindows(learned, limits.windowMillis), nowMillis, limits.timeoutMillis)
    if (!("entry" in taken)) return undefined
    entry = taken.entry
  }
  fixedWindow(state, ticket, 1, limits.slotWindowMillis, undefined, nowMillis)
  fixedWindow(state, slot, 1, limits.slotWindowMillis, undefined, nowMillis)
  const heldUntil = inFlightFrom({ startedMillis: nowMillis, timeoutMillis: limits.timeoutMillis }, limits)
  extendHold(state, slot, heldUntil, nowMillis)
  return { slot, heldUntil, learned, entry }
}
