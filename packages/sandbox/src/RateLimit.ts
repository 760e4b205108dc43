/**
 * The server's rate limit: a strict sliding window log per (API key, endpoint), and its response headers. The
 * in-memory ERP's rules (`SlidingWindow` of `@erp-client/fake-erp`), durations written as Effect's.
 *
 * @since 0.1.0
 */
import * as SlidingWindow from "@erp-client/fake-erp/SlidingWindow"
import type * as Duration from "effect/Duration"
import { toMillis } from "./internal/edition.js"

/**
 * The unit of `X-RateLimit-Reset` (the contract does not give it): epoch seconds (rounded up), epoch
 * milliseconds, seconds from now (rounded up), or a date: ISO 8601 (`2026-11-26T10:00:30Z`) or an HTTP date
 * (`Thu, 26 Nov 2026 10:00:30 GMT`), to the second, rounded up.
 *
 * @since 0.1.0
 * @category Models
 */
export type ResetUnit = SlidingWindow.ResetUnit

/**
 * The rate limit's settings (see `SlidingWindow.Options` of `@erp-client/fake-erp` for each), durations as Effect's
 * `Duration.DurationInput`: `limit` (default 100), `window` (default 30 seconds), `resetUnit` (default
 * `"epoch-seconds"`), `headers` (default true), `resetSkew` (default 0; negative puts the reset early) and
 * `retryAfter` (default false).
 *
 * @since 0.1.0
 * @category Models
 */
export type Options = SlidingWindow.Options<Duration.DurationInput>

/**
 * Options with every default filled in.
 *
 * @since 0.1.0
 * @category Models
 */
export type Resolved = SlidingWindow.Resolved

/**
 * The contract's limit: 100 requests per 30 seconds per endpoint.
 *
 * @since 0.1.0
 * @category Constants
 */
export const defaults: Resolved = SlidingWindow.defaults

/**
 * A duration in milliseconds that may be negative (`Duration` itself has no negative durations): a number is
 * milliseconds as given, a string starting with `-` is the negated duration of the rest.
 *
 * @example
 * ```ts
 * import { RateLimit } from "@erp-client/sandbox"
 *
 * console.log(RateLimit.signedMillis("2 seconds")) // => 2000
 * console.log(RateLimit.signedMillis("-5 seconds")) // => -5000
 * console.log(RateLimit.signedMillis(-1500)) // => -1500
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const signedMillis = (input: Duration.DurationInput): number => SlidingWindow.signedMillis(input, toMillis)

/**
 * The options with the contract's `defaults` filled in: `limit` rounded down and at least 1, the window at
 * least 1 millisecond, `resetSkew` in signed milliseconds (`signedMillis`).
 *
 * @example
 * ```ts
 * import { RateLimit } from "@erp-client/sandbox"
 *
 * // A stricter limit than the contract's, from a server whose clock is 5 seconds slow
 * const resolved = RateLimit.resolve({ limit: 10, window: "1 minute", resetSkew: "-5 seconds" })
 * console.log(resolved.limit, resolved.windowMillis, resolved.resetUnit, resolved.resetSkewMillis)
 * // => 10 60000 epoch-seconds -5000
 * console.log(RateLimit.resolve(undefined).windowMillis) // => 30000
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const resolve = (options: Options | undefined): Resolved => SlidingWindow.resolve(options, toMillis)

/**
 * The verdict on one request.
 *
 * @since 0.1.0
 * @category Models
 */
export type Decision = SlidingWindow.Decision

/**
 * A strict sliding window log: a request at time `t` is allowed iff fewer than `limit` requests of its key were
 * allowed within `(t - window, t]`. Rejected requests are not logged, so they never extend the wait. Time is passed
 * in by the caller (from the Effect `Clock`), which keeps this deterministic under `TestClock`.
 *
 * @since 0.1.0
 * @category Models
 */
export type SlidingWindowLog = SlidingWindow.SlidingWindowLog

/**
 * An empty `SlidingWindowLog` allowing `limit` requests per key in any `windowMillis` milliseconds.
 *
 * @example
 * ```ts
 * import { RateLimit } from "@erp-client/sandbox"
 *
 * // Two requests per second per key; the caller passes the time in epoch milliseconds
 * const log = RateLimit.makeSlidingWindowLog(2, 1000)
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
  SlidingWindow.makeSlidingWindowLog

/**
 * The value of `X-RateLimit-Reset` for a reset at `resetAtMillis`, seen at `nowMillis`.
 *
 * @example
 * ```ts
 * import { RateLimit } from "@erp-client/sandbox"
 *
 * // A window resetting 30 seconds from now, in each unit
 * const now = 1_700_000_000_000
 * console.log(RateLimit.resetValue("epoch-seconds", now + 30_000, now)) // => 1700000030
 * console.log(RateLimit.resetValue("epoch-millis", now + 30_000, now)) // => 1700000030000
 * console.log(RateLimit.resetValue("seconds", now + 30_000, now)) // => 30
 * console.log(RateLimit.resetValue("iso", now + 30_000, now)) // => 2023-11-14T22:13:50Z
 * console.log(RateLimit.resetValue("http-date", now + 30_000, now)) // => Tue, 14 Nov 2023 22:13:50 GMT
 * ```
 *
 * @since 0.1.0
 * @category Encoding
 */
export const resetValue: (unit: ResetUnit, resetAtMillis: number, nowMillis: number) => number | string =
  SlidingWindow.resetValue

/**
 * The three `X-RateLimit-*` headers of a decision, the reset shifted by `skewMillis` (default 0; see
 * `Options.resetSkew`), and for a refused request with `retryAfter`, `Retry-After` in seconds until the window allows.
 *
 * @example
 * ```ts
 * import { RateLimit } from "@erp-client/sandbox"
 *
 * // The first request of a window, its reset in seconds from now and sent 5 seconds early
 * const now = 1_700_000_000_000
 * const decision = { allowed: true, limit: 100, remaining: 99, resetAtMillis: now + 30_000 }
 * const headers = RateLimit.headers(decision, "seconds", now, -5000)
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
) => Record<string, string> = SlidingWindow.headers
