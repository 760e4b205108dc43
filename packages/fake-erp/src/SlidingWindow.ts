/**
 * The in-memory ERP's rate limit (docs/erp-api-v2.md, "Limits"): a strict sliding window log per (API key, endpoint),
 * its settings and its `X-RateLimit-*` response headers, as plain functions over data. Time is passed in by the
 * caller, which keeps it deterministic under a test clock. `ErpRules` serves it; the Effect 3 sandbox re-exports it as
 * `RateLimit`.
 *
 * @since 0.1.0
 */
import type { DurationInput } from "./ErpRules.js"
import * as Duration from "./internal/duration.js"
import * as internal from "./internal/window.js"

/**
 * The unit of `X-RateLimit-Reset` (the contract does not give it): epoch seconds (rounded up), epoch
 * milliseconds, seconds from now (rounded up), or a date: ISO 8601 (`2026-11-26T10:00:30Z`) or an HTTP date
 * (`Thu, 26 Nov 2026 10:00:30 GMT`), to the second, rounded up.
 *
 * @since 0.1.0
 * @category Models
 */
export type ResetUnit = "epoch-seconds" | "epoch-millis" | "seconds" | "iso" | "http-date"

/**
 * The rate limit's settings. `D` is how durations are written: milliseconds or `"N unit"` text by default
 * (`ErpRules.DurationInput`), an edition's own duration type when it passes its reader (see `resolve`).
 *
 * @since 0.1.0
 * @category Models
 */
export interface Options<D = DurationInput> {
  /** Requests allowed per window (default 100). */
  readonly limit?: number | undefined
  /** Length of the sliding window (default 30 seconds). */
  readonly window?: D | undefined
  /** Unit of `X-RateLimit-Reset` (default `"epoch-seconds"`). */
  readonly resetUnit?: ResetUnit | undefined
  /** Whether responses carry the `X-RateLimit-*` headers (default true). */
  readonly headers?: boolean | undefined
  /**
   * Shifts `X-RateLimit-Reset` from the window's true reset (default 0), on every response that carries it: the
   * window's answers and 429s and the `TooManyRequests` fault alike. Negative puts the reset early, in the past even,
   * as a server with a slow clock does (a negative number of milliseconds, or a string such as `"-5 seconds"`);
   * `"1 hour"` is absurd, as real servers sometimes are. The window itself is not moved. In `"seconds"` from now, a
   * reset in the past is sent as 0.
   */
  readonly resetSkew?: D | undefined
  /** Whether the window's 429s also carry `Retry-After`, in seconds until the window allows again (default false). */
  readonly retryAfter?: boolean | undefined
}

/**
 * Options with every default filled in.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Resolved {
  readonly limit: number
  readonly windowMillis: number
  readonly resetUnit: ResetUnit
  readonly headers: boolean
  /** Added to the reset in `X-RateLimit-Reset`; may be negative. */
  readonly resetSkewMillis: number
  readonly retryAfter: boolean
}

/**
 * The contract's limit: 100 requests per 30 seconds per endpoint.
 *
 * @since 0.1.0
 * @category Constants
 */
export const defaults: Resolved = internal.defaults

/**
 * A duration in milliseconds that may be negative (a duration itself is not): a number is milliseconds as given, a
 * string starting with `-` is the negated duration of the rest. Durations are read by `toMillis`, by default
 * `ErpRules.millis`; an edition passes its own reader to take its own duration type.
 *
 * @example
 * ```ts
 * import { SlidingWindow } from "@erp-client/fake-erp"
 *
 * console.log(SlidingWindow.signedMillis("2 seconds")) // => 2000
 * console.log(SlidingWindow.signedMillis("-5 seconds")) // => -5000
 * console.log(SlidingWindow.signedMillis(-1500)) // => -1500
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const signedMillis: {
  (input: DurationInput): number
  <D>(input: D, toMillis: (input: D) => number): number
} = <D>(input: D, toMillis?: (input: D) => number): number =>
  Duration.signedMillis(input, toMillis ?? (Duration.millis as (input: D) => number))

/**
 * The options with the contract's `defaults` filled in: `limit` rounded down and at least 1, the window at
 * least 1 millisecond, `resetSkew` in signed milliseconds (`signedMillis`). Durations are read by `toMillis`, by
 * default `ErpRules.millis`.
 *
 * @example
 * ```ts
 * import { SlidingWindow } from "@erp-client/fake-erp"
 *
 * // A stricter limit than the contract's, from a server whose clock is 5 seconds slow
 * const resolved = SlidingWindow.resolve({ limit: 10, window: "1 minute", resetSkew: "-5 seconds" })
 * console.log(resolved.limit, resolved.windowMillis, resolved.resetUnit, resolved.resetSkewMillis)
 * // => 10 60000 epoch-seconds -5000
 * console.log(SlidingWindow.resolve(undefined).windowMillis) // => 30000
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const resolve: {
  (options: Options | undefined): Resolved
  <D>(options: Options<D> | undefined, toMillis: (input: D) => number): Resolved
} = <D>(options: Options<D> | undefined, toMillis?: (input: D) => number): Resolved =>
  internal.resolve(options, toMillis ?? (Duration.millis as (input: D) => number))

/**
 * The verdict on one request.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Decision {
  readonly allowed: boolean
  readonly limit: number
  /** Requests left in the window after this one. */
  readonly remaining: number
  /** When the oldest counted request leaves the window (epoch milliseconds). */
  readonly resetAtMillis: number
}

/**
 * A strict sliding window log: a request at time `t` is allowed iff fewer than `limit` requests of its key were
 * allowed within `(t - window, t]`. Rejected requests are not logged, so they never extend the wait. Time is passed
 * in by the caller (from its clock), which keeps this deterministic under a test clock.
 *
 * @since 0.1.0
 * @category Models
 */
export interface SlidingWindowLog {
  readonly limit: number
  readonly windowMillis: number
  /** Decides on a request at `nowMillis`; with `commit: false` an allowed request is not counted. */
  readonly check: (key: string, nowMillis: number, commit?: boolean) => Decision
  /** How many requests of `key` are counted in the window ending at `nowMillis`. */
  readonly count: (key: string, nowMillis: number) => number
  readonly reset: () => void
}

/**
 * An empty `SlidingWindowLog` allowing `limit` requests per key in any `windowMillis` milliseconds.
 *
 * @example
 * ```ts
 * import { SlidingWindow } from "@erp-client/fake-erp"
 *
 * // Two requests per second per key; the caller passes the time in epoch milliseconds
 * const log = SlidingWindow.makeSlidingWindowLog(2, 1000)
 * const key = "sk-live-4f9a2c partner/list"
 * log.check(key, 0)
 * console.log(log.check(key, 100).remaining) // => 0
 * console.log(log.check(key, 200)) // => { allowed: false, limit: 2, remaining: 0, resetAtMillis: 1000 }
 * // At 1000 the request made at 0 has left the window
 * console.log(log.check(key, 1000).allowed) // => true
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const makeSlidingWindowLog: (limit: number, windowMillis: number) => SlidingWindowLog =
  internal.makeSlidingWindowLog

/**
 * The value of `X-RateLimit-Reset` for a reset at `resetAtMillis`, seen at `nowMillis`.
 *
 * @example
 * ```ts
 * import { SlidingWindow } from "@erp-client/fake-erp"
 *
 * // A window resetting 30 seconds from now, in each unit
 * const now = 1_700_000_000_000
 * console.log(SlidingWindow.resetValue("epoch-seconds", now + 30_000, now)) // => 1700000030
 * console.log(SlidingWindow.resetValue("epoch-millis", now + 30_000, now)) // => 1700000030000
 * console.log(SlidingWindow.resetValue("seconds", now + 30_000, now)) // => 30
 * console.log(SlidingWindow.resetValue("iso", now + 30_000, now)) // => 2023-11-14T22:13:50Z
 * console.log(SlidingWindow.resetValue("http-date", now + 30_000, now)) // => Tue, 14 Nov 2023 22:13:50 GMT
 * ```
 *
 * @since 0.1.0
 * @category Encoding
 */
export const resetValue: (unit: ResetUnit, resetAtMillis: number, nowMillis: number) => number | string =
  internal.resetValue

/**
 * The three `X-RateLimit-*` headers of a decision, the reset shifted by `skewMillis` (default 0; see
 * `Options.resetSkew`), and for a refused request with `retryAfter`, `Retry-After` in seconds until the window allows.
 *
 * @example
 * ```ts
 * import { SlidingWindow } from "@erp-client/fake-erp"
 *
 * // The first request of a window, its reset in seconds from now and sent 5 seconds early
 * const now = 1_700_000_000_000
 * const decision = { allowed: true, limit: 100, remaining: 99, resetAtMillis: now + 30_000 }
 * const headers = SlidingWindow.headers(decision, "seconds", now, -5000)
 * console.log(headers["x-ratelimit-remaining"], headers["x-ratelimit-reset"]) // => 99 25
 * ```
 *
 * @since 0.1.0
 * @category Encoding
 */
export const headers: (
  decision: Decision,
  unit: ResetUnit,
  nowMillis: number,
  skewMillis?: number,
  retryAfter?: boolean
) => Record<string, string> = internal.headers
