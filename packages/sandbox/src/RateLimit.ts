/**
 * The server's rate limit: a strict sliding window log per (API key, endpoint), and its response headers.
 *
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import * as internal from "./internal/window.js"

/**
 * The unit of `X-RateLimit-Reset` (the contract does not give it): epoch seconds (rounded up), epoch
 * milliseconds, or seconds from now (rounded up).
 *
 * @since 0.1.0
 * @category Models
 */
export type ResetUnit = "epoch-seconds" | "epoch-millis" | "seconds"

/**
 * @since 0.1.0
 * @category Models
 */
export interface Options {
  /** Requests allowed per window (default 100). */
  readonly limit?: number | undefined
  /** Length of the sliding window (default 30 seconds). */
  readonly window?: Duration.DurationInput | undefined
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
  readonly resetSkew?: Duration.DurationInput | undefined
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
}

/**
 * The contract's limit: 100 requests per 30 seconds per endpoint.
 *
 * @since 0.1.0
 * @category Constants
 */
export const defaults: Resolved = internal.defaults

/**
 * A duration in milliseconds that may be negative (`Duration` itself has no negative durations): a number is
 * milliseconds as given, a string starting with `-` is the negated duration of the rest.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const signedMillis: (input: Duration.DurationInput) => number = internal.signedMillis

/**
 * @since 0.1.0
 * @category Constructors
 */
export const resolve: (options: Options | undefined) => Resolved = internal.resolve

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
 * in by the caller (from the Effect `Clock`), which keeps this deterministic under `TestClock`.
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
 * @since 0.1.0
 * @category Constructors
 */
export const makeSlidingWindowLog: (limit: number, windowMillis: number) => SlidingWindowLog =
  internal.makeSlidingWindowLog

/**
 * The value of `X-RateLimit-Reset` for a reset at `resetAtMillis`, seen at `nowMillis`.
 *
 * @since 0.1.0
 * @category Encoding
 */
export const resetValue: (unit: ResetUnit, resetAtMillis: number, nowMillis: number) => number = internal.resetValue

/**
 * The three `X-RateLimit-*` headers of a decision, the reset shifted by `skewMillis` (default 0; see
 * `Options.resetSkew`).
 *
 * @since 0.1.0
 * @category Encoding
 */
export const headers: (
  decision: Decision,
  unit: ResetUnit,
  nowMillis: number,
  skewMillis?: number
) => Record<string, string> = internal.headers
