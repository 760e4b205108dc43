/**
 * The shared limiter's failure policy, as plain data (docs/rate-limit.md, "Through Redis", and README, "Sharing the
 * limit through Redis"): an outage of its store starts at the first failure (the one warning) and ends at the first
 * answer (the one line of its return); meanwhile the store is tried again at most once a second and every request in
 * between gets the last failure at once; and what each operation of the limiter does while the store fails, by policy
 * (`fail`: nothing is sent the shared budget has not counted; `local`: this process's own limit). Each edition's
 * `ErpRateLimiterRedis` keeps one state per limiter and wires these to its store and its memory limiter.
 *
 * @since 0.1.0
 */

/**
 * What a request does while the store is unreachable or failing.
 *
 * @since 0.1.0
 * @category Models
 */
export type FailurePolicy = "fail" | "local"

/**
 * One limiter's outage (mutable: a limiter's own).
 *
 * @since 0.1.0
 * @category Models
 */
export interface State {
  /** Epoch ms of the first failure of this outage, 0 while the store answers. */
  since: number
  /** While down: when the store is tried again. */
  nextProbe: number
  /** The last failure, said again to the requests before the next probe. */
  description: string
}

/**
 * While the store is down, it is tried again at most this often; meanwhile requests fail (or go local) at once
 * instead of each waiting for a timeout.
 *
 * @since 0.1.0
 * @category Constants
 */
export const PROBE_INTERVAL_MILLIS = 1_000

/**
 * A limiter's state while its store answers.
 *
 * @example
 * ```ts
 * import { Outage } from "@erp-client/kernel"
 *
 * console.log(Outage.makeState()) // => { since: 0, nextProbe: 0, description: '' }
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const makeState = (): State => ({ since: 0, nextProbe: 0, description: "" })

/**
 * The last failure's description while the store is down and not yet due for another try, else `undefined` (try the
 * store).
 *
 * @example
 * ```ts
 * import { Outage } from "@erp-client/kernel"
 *
 * const state = Outage.makeState()
 * Outage.failed(state, 10_000, "Redis fixedWindow: not connected")
 * console.log(Outage.shortCircuit(state, 10_500), Outage.shortCircuit(state, 11_000))
 * // => Redis fixedWindow: not connected undefined
 * ```
 *
 * @since 0.1.0
 * @category Decisions
 */
export const shortCircuit = (state: State, nowMillis: number): string | undefined =>
  state.since !== 0 && nowMillis < state.nextProbe ? state.description : undefined

/**
 * A failure of the store, noted: whether it starts an outage (and so is said, once).
 *
 * @example
 * ```ts
 * import { Outage } from "@erp-client/kernel"
 *
 * const state = Outage.makeState()
 * console.log(Outage.failed(state, 10_000, "down"), Outage.failed(state, 11_000, "down")) // => true false
 * ```
 *
 * @since 0.1.0
 * @category Decisions
 */
export const failed = (state: State, nowMillis: number, description: string): boolean => {
  const first = state.since === 0
  if (first) state.since = nowMillis
  state.nextProbe = nowMillis + PROBE_INTERVAL_MILLIS
  state.description = description
  return first
}

/**
 * The store answered: how long it had been down (said once, as its return), or `undefined` when it was not.
 *
 * @example
 * ```ts
 * import { Outage } from "@erp-client/kernel"
 *
 * const state = Outage.makeState()
 * Outage.failed(state, 10_000, "down")
 * console.log(Outage.answered(state, 12_300), Outage.answered(state, 12_400)) // => 2300 undefined
 * ```
 *
 * @since 0.1.0
 * @category Decisions
 */
export const answered = (state: State, nowMillis: number): number | undefined => {
  if (state.since === 0) return undefined
  const down = nowMillis - state.since
  state.since = 0
  state.nextProbe = 0
  state.description = ""
  return down
}

/**
 * An operation of the limiter on its store.
 *
 * @since 0.1.0
 * @category Models
 */
export type Operation = "acquire" | "release" | "learn" | "pause" | "inUse"

/**
 * What an operation does while the store fails: `fail` (with the store's failure: the client's
 * `RateLimiterUnavailable`), `local` (this process's memory limiter instead), or `ignore` (nothing: a limit not learned
 * costs a 429 later, never the answer at hand; a slot not handed back under `local` is only its busy mark). A pause
 * under `local` is kept locally always, so an outage that starts now still honours it.
 *
 * @example
 * ```ts
 * import { Outage } from "@erp-client/kernel"
 *
 * console.log(Outage.fallback("fail", "acquire"), Outage.fallback("local", "acquire"), Outage.fallback("fail", "learn"))
 * // => fail local ignore
 * ```
 *
 * @since 0.1.0
 * @category Decisions
 */
export const fallback = (policy: FailurePolicy, operation: Operation): "fail" | "local" | "ignore" => {
  switch (operation) {
    case "learn":
      return "ignore"
    case "release":
      return policy === "local" ? "ignore" : "fail"
    case "pause":
      return policy === "local" ? "ignore" : "fail"
    case "acquire":
    case "inUse":
      return policy
  }
}
