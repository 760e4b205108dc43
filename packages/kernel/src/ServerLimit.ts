/**
 * What the server says about its limit and about when to come back, read from one response's headers: plain
 * functions over data (docs/ARCHITECTURE.md, "Rate limit").
 *
 * @since 0.1.0
 */

/**
 * `X-RateLimit-Reset` as the server wrote it, and what it was read as.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Reset {
  /** The header's text, as sent: what messages quote. */
  readonly raw: string
  /** When the window resets (epoch ms), read as epoch ms, epoch seconds or seconds from now (see `parse`). */
  readonly at: number
  /**
   * Whether the reset is one to wait for: not in the past (a server whose clock is behind, or a reset that already
   * passed) and not beyond the longest wait the client accepts (a wrong unit, or a hostile header). A reset that is not
   * is treated as unknown: the client backs off by its own schedule instead.
   */
  readonly usable: boolean
}

/**
 * @since 0.1.0
 * @category Models
 */
export interface ServerLimit {
  readonly limit: number | undefined
  readonly remaining: number | undefined
  readonly reset: Reset | undefined
  /** `X-RateLimit-Reset` as sent when it could not be read (neither a number nor a date): the reset is unknown. */
  readonly unreadableReset?: string | undefined
}

const headerText = (headers: Readonly<Record<string, string | undefined>>, name: string): string | undefined => {
  const raw = headers[name]?.trim()
  return raw === undefined || raw === "" ? undefined : raw
}

const headerNumber = (headers: Readonly<Record<string, string | undefined>>, name: string): number | undefined => {
  const raw = headerText(headers, name)
  const value = raw === undefined ? Number.NaN : Number(raw)
  return Number.isFinite(value) ? value : undefined
}

// An ISO 8601 date-time (`2026-11-26T10:00:30Z`, `…+01:00`, fractions of a second) or an HTTP date (RFC 9110's
// IMF-fixdate `Thu, 26 Nov 2026 10:00:30 GMT`, and the obsolete RFC 850 and asctime forms). Checked by shape before
// `Date.parse`, which also reads many texts no server means as a date (`"5 x"`, a bare `"2026"`).
const isoDateTime = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/i
const httpDate =
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? +(\d{1,2}[ -][A-Z][a-z]{2}[ -]\d{2,4} \d{2}:\d{2}:\d{2} GMT|[A-Z][a-z]{2} +\d{1,2} \d{2}:\d{2}:\d{2} \d{4})$/

/**
 * A date as servers write it in a header, in epoch milliseconds: an ISO 8601 date-time (UTC when it names no zone) or
 * an HTTP date; `undefined` for anything else.
 *
 * @example
 * ```ts
 * import { ServerLimit } from "@erp-client/kernel"
 *
 * console.log(ServerLimit.parseDate("2026-11-26T10:00:30Z")) // => 1795687230000
 * console.log(ServerLimit.parseDate("Thu, 26 Nov 2026 10:00:30 GMT")) // => 1795687230000
 * console.log(ServerLimit.parseDate("soon")) // => undefined
 * ```
 *
 * @since 0.1.0
 * @category Reading
 */
export const parseDate = (raw: string): number | undefined => {
  const text = raw.trim()
  let at = Number.NaN
  if (isoDateTime.test(text)) {
    // Without a zone, `Date.parse` reads a date-time as local time: a header's time is UTC.
    at = Date.parse(/(Z|[+-]\d{2}:?\d{2})$/i.test(text) ? text.replace(" ", "T") : `${text.replace(" ", "T")}Z`)
  } else if (httpDate.test(text)) at = Date.parse(text)
  return Number.isFinite(at) ? at : undefined
}

/**
 * Reads `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset`. The contract does not give the unit of
 * the reset (docs/erp-api-v2.md, "Limits"), so every plausible one is accepted: epoch milliseconds (>= 1e12), epoch
 * seconds (>= 1e9), seconds from now (any smaller number), and a date (ISO 8601 or HTTP date, see `parseDate`). A reset
 * in the past or more than `maxWaitMillis` ahead is kept (messages quote it) but not used (see `Reset.usable`); one that
 * is none of these is `unreadableReset`, and the reset is unknown.
 *
 * @example
 * ```ts
 * import { ServerLimit } from "@erp-client/kernel"
 *
 * const now = 1_700_000_000_000
 * const limit = ServerLimit.parse(
 *   { "x-ratelimit-limit": "100", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "1700000012" },
 *   now,
 *   60_000
 * )
 * console.log(limit) // => { limit: 100, remaining: 0, reset: { raw: '1700000012', at: 1700000012000, usable: true } }
 * ```
 *
 * @since 0.1.0
 * @category Reading
 */
export const parse = (
  headers: Readonly<Record<string, string | undefined>>,
  nowMillis: number,
  maxWaitMillis: number
): ServerLimit => {
  const raw = headerText(headers, "x-ratelimit-reset")
  const value = headerNumber(headers, "x-ratelimit-reset")
  let reset: Reset | undefined
  let unreadableReset: string | undefined
  if (raw !== undefined) {
    // A negative value (seconds from now, skewed) is a reset in the past: unusable, like an epoch behind the clock.
    const at = value === undefined
      ? parseDate(raw)
      : value >= 1e12
      ? value
      : value >= 1e9
      ? value * 1000
      : nowMillis + value * 1000
    // Epoch seconds are rounded up by most servers: a reset up to a second behind is the current second.
    if (at !== undefined) reset = { raw, at, usable: at > nowMillis - 1000 && at <= nowMillis + maxWaitMillis }
    else unreadableReset = raw
  }
  const limit = headerNumber(headers, "x-ratelimit-limit")
  return {
    limit,
    remaining: headerNumber(headers, "x-ratelimit-remaining"),
    reset,
    ...(unreadableReset === undefined ? {} : { unreadableReset })
  }
}

/**
 * `Retry-After` (RFC 9110): seconds, or an HTTP date; the wait it asks for from `nowMillis`, never negative, or
 * `undefined` when absent or unreadable.
 *
 * @example
 * ```ts
 * import { ServerLimit } from "@erp-client/kernel"
 *
 * const now = Date.UTC(2026, 10, 26, 10, 0, 0)
 * console.log(ServerLimit.retryAfter({ "retry-after": "5" }, now)) // => 5000
 * console.log(ServerLimit.retryAfter({ "retry-after": "Thu, 26 Nov 2026 10:00:07 GMT" }, now)) // => 7000
 * ```
 *
 * @since 0.1.0
 * @category Reading
 */
export const retryAfter = (
  headers: Readonly<Record<string, string | undefined>>,
  nowMillis: number
): number | undefined => {
  const raw = headerText(headers, "retry-after")
  if (raw === undefined) return undefined
  if (/^\d+$/.test(raw)) return Number(raw) * 1000
  const date = parseDate(raw)
  return date === undefined ? undefined : Math.max(0, date - nowMillis)
}

/**
 * Whether `X-RateLimit-Remaining: 0` should pause the endpoint until the reset: only when the server's count disagrees
 * with the limiter's (it counts more requests than the limiter has started in the window: someone else spends the same
 * key's budget; or it says its limit is lower than ours). When the two agree, the limiter already holds the next request
 * until the window allows it, and waiting for a reset (rounded up to whole seconds by some servers) only starts each
 * window late.
 *
 * @example
 * ```ts
 * import { ServerLimit } from "@erp-client/kernel"
 *
 * const now = 1_700_000_000_000
 * const limit = ServerLimit.parse({ "x-ratelimit-remaining": "0", "x-ratelimit-reset": "5" }, now, 60_000)
 * // The server counts 100 in its window where the limiter started 40: someone else spends the key's budget
 * console.log(ServerLimit.pausesOnEmpty(limit, { limit: 100, inUse: 40 })) // => true
 * console.log(ServerLimit.pausesOnEmpty(limit, { limit: 100, inUse: 100 })) // => false
 * ```
 *
 * @since 0.1.0
 * @category Reading
 */
export const pausesOnEmpty = (
  limit: ServerLimit,
  ours: { readonly limit: number; readonly inUse: number }
): boolean => {
  const { remaining, reset } = limit
  if (remaining === undefined || remaining > 0 || reset === undefined || !reset.usable) return false
  const serverLimit = limit.limit ?? ours.limit
  return serverLimit - remaining > ours.inUse || serverLimit < ours.limit
}

/**
 * How a reset reads in a message: `X-RateLimit-Reset: 1700003600 (in 3600 s)`.
 *
 * @example
 * ```ts
 * import { ServerLimit } from "@erp-client/kernel"
 *
 * const now = 1_700_000_000_000
 * const { reset } = ServerLimit.parse({ "x-ratelimit-reset": "1700003600" }, now, 60_000)
 * console.log(ServerLimit.describeReset(reset!, now)) // => X-RateLimit-Reset: 1700003600 (in 3600 s, not waited for)
 * ```
 *
 * @since 0.1.0
 * @category Reading
 */
export const describeReset = (reset: Reset, nowMillis: number): string => {
  const seconds = Math.round((reset.at - nowMillis) / 1000)
  const when = seconds >= 0 ? `in ${seconds} s` : `${-seconds} s ago`
  return `X-RateLimit-Reset: ${reset.raw} (${when}${reset.usable ? "" : ", not waited for"})`
}

/**
 * A limit learned from the server, lower than the limiter's own (docs/ARCHITECTURE.md, "Rate limit"): the limiter
 * then deals requests to `limit` of its slots instead of all of them, so it keeps the server's real rate.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Learned {
  readonly limit: number
  /** When it was learned (epoch ms): a 429 to a request that started before was met under the limit before it. */
  readonly sinceMillis: number
  /** How long it holds unless heard again: the server's own header is trusted longer than a guess from 429s. */
  readonly ttlMillis: number
}

/**
 * What one answer told about the server's limit.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Heard {
  /** `X-RateLimit-Limit`, when sent. */
  readonly serverLimit: number | undefined
  readonly tooManyRequests: boolean
  /** When the request started (epoch ms). */
  readonly startedMillis: number
}

/**
 * How long a limit read from `X-RateLimit-Limit` holds without being heard again: an hour.
 *
 * @since 0.1.0
 * @category Constants
 */
export const headerLimitTtlMillis = 3_600_000

/**
 * How long a limit guessed from 429s holds, in windows (50 minutes at the contract's 30 s): then the limiter tries its
 * own limit again, and halves anew if the server still refuses. Long, so an export settles once rather than probing
 * every few windows; a guess made from a passing storm (another client on the key) costs rate, never records.
 *
 * @since 0.1.0
 * @category Constants
 */
export const guessedLimitWindows = 100

/**
 * The limit to keep after an answer, from the limit learned so far (`undefined`: the limiter's own, `configured`):
 * `undefined` to keep what there is, `null` to forget it, or the new one.
 *
 * - `X-RateLimit-Limit` below `configured` is the limit (the server says so; every answer repeats it, which renews it
 *   once half its time has gone); at or above it, the limiter's own stands and anything learned is forgotten. A value that is not a whole number of at least 1 is
 *   not a limit.
 * - A 429 without `X-RateLimit-Limit` says the server counts fewer than the limiter lets through, without saying how
 *   many. The first is noted (the limit stays, `sinceMillis` marks it): one 429 may be a passing storm (another client
 *   on the key, a proxy) that the pause it brings is enough for. One more, to a request started after that, halves the
 *   limit (at least 1), and so on: only once for the requests started under the same limit, so a burst of 429s
 *   answering one window's requests halves it once, not once each. An export settles within a few 429s instead of
 *   meeting one every window.
 *
 * @example
 * ```ts
 * import { ServerLimit } from "@erp-client/kernel"
 *
 * const now = 1_700_000_000_000
 * // The server says 10 where the limiter was told 100
 * const heard = { serverLimit: 10, tooManyRequests: false, startedMillis: now - 50 }
 * console.log(ServerLimit.learn(100, undefined, heard, now, 30_000))
 * // => { limit: 10, sinceMillis: 1700000000000, ttlMillis: 3600000 }
 * ```
 *
 * @since 0.1.0
 * @category Learning
 */
export const learn = (
  configured: number,
  current: Learned | undefined,
  heard: Heard,
  nowMillis: number,
  windowMillis: number
): Learned | null | undefined => {
  const { serverLimit } = heard
  if (serverLimit !== undefined && Number.isSafeInteger(serverLimit) && serverLimit >= 1) {
    if (serverLimit >= configured) return current === undefined ? undefined : null
    // Every answer repeats it: renewed when half its time has gone, not written at every answer.
    return current?.limit === serverLimit && nowMillis - current.sinceMillis < current.ttlMillis / 2
      ? undefined
      : { limit: serverLimit, sinceMillis: nowMillis, ttlMillis: headerLimitTtlMillis }
  }
  if (!heard.tooManyRequests) return undefined
  const guessed = { sinceMillis: nowMillis, ttlMillis: guessedLimitWindows * windowMillis }
  // The first is noted for a few windows: a second within them is a repeat.
  if (current === undefined) return { limit: configured, sinceMillis: nowMillis, ttlMillis: 10 * windowMillis }
  if (current.limit <= 1 || heard.startedMillis < current.sinceMillis) return undefined
  return { limit: Math.max(1, Math.floor(current.limit / 2)), ...guessed }
}
