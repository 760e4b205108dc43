/**
 * `X-RateLimit-*` and `Retry-After` read from one response's headers: what the server says of its limit and of when
 * to come back (docs/ARCHITECTURE.md, "Rate limit"). The shapes are `ServerLimit`'s.
 */
import type { Reset, ServerLimit } from "../ServerLimit.js"

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
 * import * as LimitHeaders from "./limitHeaders.js"
 *
 * console.log(LimitHeaders.parseDate("2026-11-26T10:00:30Z")) // => 1795687230000
 * console.log(LimitHeaders.parseDate("Thu, 26 Nov 2026 10:00:30 GMT")) // => 1795687230000
 * console.log(LimitHeaders.parseDate("soon")) // => undefined
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
 * import * as LimitHeaders from "./limitHeaders.js"
 *
 * const now = 1_700_000_000_000
 * const limit = LimitHeaders.parse(
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
 * import * as LimitHeaders from "./limitHeaders.js"
 *
 * const now = Date.UTC(2026, 10, 26, 10, 0, 0)
 * console.log(LimitHeaders.retryAfter({ "retry-after": "5" }, now)) // => 5000
 * console.log(LimitHeaders.retryAfter({ "retry-after": "Thu, 26 Nov 2026 10:00:07 GMT" }, now)) // => 7000
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
 * How a reset reads in a message: `X-RateLimit-Reset: 1700003600 (in 3600 s)`.
 *
 * @example
 * ```ts
 * import * as LimitHeaders from "./limitHeaders.js"
 *
 * const now = 1_700_000_000_000
 * const { reset } = LimitHeaders.parse({ "x-ratelimit-reset": "1700003600" }, now, 60_000)
 * console.log(LimitHeaders.describeReset(reset!, now)) // => X-RateLimit-Reset: 1700003600 (in 3600 s, not waited for)
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
