/**
 * What the server says about its limit and about when to come back, read from one response's headers: plain
 * functions over data (docs/ARCHITECTURE.md, "Rate limit").
 *
 * @since 0.1.0
 */
import { defaultMarginMillis } from "./Settings.js"

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
 * A limit learned from the server, stricter than the limiter's own (docs/rate-limit.md, "What the limiter learns"): at
 * most `limit` requests in any `windowMillis`, the window the server counts in, kept by the limiter beside its own limit
 * (it never lets more through than either allows).
 *
 * - `from: "header"`: the server said `limit` in `X-RateLimit-Limit`; the window is read from its resets (the
 *   shortest time from a request's start to its reset among the requests it counted alone, `freshMillis`, unless the
 *   server shows its window is longer than that; else the longest time seen, `sampleMillis`), or taken as the
 *   limiter's own while no usable reset came.
 * - `from: "refusals"`: the server said nothing of its limit but answered 429. While `refusedMillis` is set, the limiter
 *   probes (one request at a time) for when the server accepts again: that time is the window. Then the limit climbs
 *   while the server accepts and halves when it refuses again (`ceiling`: the level it last refused at).
 *
 * @since 0.1.0
 * @category Models
 */
export interface Learned {
  readonly limit: number
  /** The window the limit holds in (ms). */
  readonly windowMillis: number
  /** When it took its present value (epoch ms): a 429 to a request that started before was met under the one before. */
  readonly sinceMillis: number
  /** How long it holds unless heard again. */
  readonly ttlMillis: number
  readonly from: "header" | "refusals"
  /** `header`: the longest time from a request's start to its answer's reset (ms), when a usable reset came. */
  readonly sampleMillis?: number | undefined
  /**
   * `header`: the shortest such time for a request the server counted alone (`X-RateLimit-Remaining` one below its
   * limit): a sliding window is at most that long.
   */
  readonly freshMillis?: number | undefined
  /** `header`: what the window is at least: the longest time from an answer to its reset, less the reset's rounding. */
  readonly lowerMillis?: number | undefined
  /** `refusals`: the start of the request whose 429 opened a probe not yet answered by an accepted request (epoch ms). */
  readonly refusedMillis?: number | undefined
  /** `refusals`: the limit the server last refused at: the limit climbs back to it by halves, past it by doubling steps. */
  readonly ceiling?: number | undefined
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
  /** `X-RateLimit-Remaining`, when sent. */
  readonly remaining?: number | undefined
  /** `X-RateLimit-Reset`, when sent and usable: the reset as read, and its text (which tells its resolution). */
  readonly reset?: Pick<Reset, "at" | "raw"> | undefined
  /**
   * For a first 429 that does not say the limit: how many requests the limiter counts in its own window (what the
   * server refused to take more of).
   */
  readonly counted?: number | undefined
}

/**
 * The limiter's own limit and window, which what is learned is judged against.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Configured {
  readonly limit: number
  readonly windowMillis: number
}

/**
 * How long a limit read from `X-RateLimit-Limit` holds without being heard again: an hour.
 *
 * @since 0.1.0
 * @category Constants
 */
export const headerLimitTtlMillis = 3_600_000

/**
 * How long a limit learned from 429s holds without changing, in the limiter's windows (50 minutes at the contract's
 * 30 s): then the limiter tries its own limit again.
 *
 * @since 0.1.0
 * @category Constants
 */
export const guessedLimitWindows = 100

/**
 * The resolution of a reset as the server wrote it (ms): 1 for epoch milliseconds or a fraction of a second, 1000 for
 * whole seconds (epoch seconds, seconds from now, a date to the second). A reset in whole seconds is rounded (up, by
 * most servers), so a window read from it may be up to that much long.
 *
 * @example
 * ```ts
 * import { ServerLimit } from "@erp-client/kernel"
 *
 * console.log(ServerLimit.resetStepMillis("1700000012"), ServerLimit.resetStepMillis("1700000012345")) // => 1000 1
 * console.log(ServerLimit.resetStepMillis("Thu, 26 Nov 2026 10:00:30 GMT")) // => 1000
 * ```
 *
 * @since 0.1.0
 * @category Reading
 */
export const resetStepMillis = (raw: string): number => {
  const text = raw.trim()
  if (/^-?\d+$/.test(text)) return Number(text) >= 1e12 ? 1 : 1000
  return /[.,]\d/.test(text) ? 1 : 1000
}

/**
 * Whether the limiter's own limit already keeps `learned`: no window of `learned.windowMillis` can hold more than
 * `learned.limit` of the limiter's starts (the limiter lets at most `configured.limit` start in any of its windows, so
 * at most `configured.limit` times the windows it takes to cover one of the server's). Then there is nothing to keep.
 *
 * @example
 * ```ts
 * import { ServerLimit } from "@erp-client/kernel"
 *
 * const configured = { limit: 100, windowMillis: 30_000 }
 * // 20 per 3 s: the limiter's 100 per 30 s could start 100 in 3 s
 * console.log(ServerLimit.implied({ limit: 20, windowMillis: 3_000 }, configured)) // => false
 * // 100 per 3 s, or 200 per a minute: already kept
 * console.log(ServerLimit.implied({ limit: 100, windowMillis: 3_000 }, configured)) // => true
 * console.log(ServerLimit.implied({ limit: 200, windowMillis: 60_000 }, configured)) // => true
 * ```
 *
 * @since 0.1.0
 * @category Learning
 */
export const implied = (
  learned: { readonly limit: number; readonly windowMillis: number },
  configured: Configured
): boolean => learned.limit >= configured.limit * Math.max(1, Math.ceil(learned.windowMillis / configured.windowMillis))

/**
 * The window read from a time between a request's start and the reset its answer announced (`sampleMillis`): the
 * server's window is at most that long (a sliding window announces its reset a window after the oldest request it
 * counts; a fixed one, the end of its window), and at least `lowerMillis` when known (a reset is at most a window
 * after its answer). A reset written in whole seconds can make the reading up to a second longer than the server's,
 * and the request's way to the server adds to it: when the limiter's own window lies within what the reading allows
 * (at least `lowerMillis`, or within that rounding and the margin), the server's window is taken to be the limiter's.
 *
 * @example
 * ```ts
 * import { ServerLimit } from "@erp-client/kernel"
 *
 * // A 3 s window announced in epoch seconds, rounded up: 3.6 s from the start
 * console.log(ServerLimit.windowFromSample(3_600, 1_000, 30_000)) // => 3600
 * // ...and the limiter's own window is 3 s: the same window
 * console.log(ServerLimit.windowFromSample(3_600, 1_000, 3_000)) // => 3000
 * // In epoch ms, 3.3 s from a start whose answer came 0.4 s later: at least 2.9 s, so 3 s may be it
 * console.log(ServerLimit.windowFromSample(3_300, 1, 3_000, 2_899)) // => 3000
 * ```
 *
 * @since 0.1.0
 * @category Learning
 */
export const windowFromSample = (
  sampleMillis: number,
  stepMillis: number,
  configuredWindowMillis: number,
  lowerMillis?: number
): number => {
  const slack = stepMillis + defaultMarginMillis(configuredWindowMillis)
  const from = Math.min(sampleMillis - slack, lowerMillis ?? Infinity)
  return configuredWindowMillis <= sampleMillis && configuredWindowMillis >= from
    ? configuredWindowMillis
    : Math.max(1, Math.ceil(sampleMillis))
}

/**
 * The window of a probe after a first 429 that does not say the limit: one request's share of the limiter's window
 * (from 100 ms to a second), so the probe sends one request at a time while it finds when the server accepts again;
 * the pauses the 429s bring set its pace.
 *
 * @example
 * ```ts
 * import { ServerLimit } from "@erp-client/kernel"
 *
 * console.log(ServerLimit.probeWindowMillis({ limit: 100, windowMillis: 30_000 })) // => 300
 * ```
 *
 * @since 0.1.0
 * @category Learning
 */
export const probeWindowMillis = (configured: Configured): number =>
  Math.min(1_000, Math.max(100, Math.ceil(configured.windowMillis / configured.limit)))

/**
 * The step by which a limit learned from 429s climbs after a window the server accepted: by halves back toward the
 * level it last refused (`ceiling`), then by steps that double past it (1, 2, 4, …), so a server that has relaxed is
 * followed within a few windows, and one that has not costs a 429 now and then.
 *
 * @example
 * ```ts
 * import { ServerLimit } from "@erp-client/kernel"
 *
 * console.log([6, 9, 11, 12, 13, 15].map((limit) => ServerLimit.climbStep(limit, 12))) // => [ 3, 2, 1, 1, 2, 4 ]
 * ```
 *
 * @since 0.1.0
 * @category Learning
 */
export const climbStep = (limit: number, ceiling: number): number =>
  limit < ceiling - 1 ? Math.ceil((ceiling - limit) / 2) : Math.max(1, limit - ceiling + 1)

/**
 * How many windows without a 429 a limit learned from 429s waits just under the level the server last refused at,
 * before it tries that level again: one 429 now and then, not one every few windows.
 *
 * @since 0.1.0
 * @category Constants
 */
export const climbPatience = 4

const isLimit = (value: number | undefined): value is number =>
  value !== undefined && Number.isSafeInteger(value) && value >= 1

/**
 * The limit to keep after an answer, from the limit learned so far (`undefined`: none, the limiter's own, `configured`,
 * alone): `undefined` to keep what there is, `null` to forget it, or the new one.
 *
 * - `X-RateLimit-Limit` is the limit, in the window its resets tell: for a request the server counted alone
 *   (`X-RateLimit-Remaining` one below the limit), a sliding window's reset is a window after it, so the shortest time
 *   from such a request's start to its reset is the window, to within its rounding and the way to the server; a reset
 *   nearer than the window before it (a fixed window's), or a 429 under it, shows the window is longer: then the longest
 *   time seen (`windowFromSample`; the limiter's own window while no usable reset came). It is kept while the limiter's
 *   own does not already keep it (`implied`), and forgotten when it does; renewed once half its time has gone (every
 *   answer repeats it), or when a reset tells it more.
 * - A 429 without `X-RateLimit-Limit` says the server counts fewer than the limiter lets through, without saying how
 *   many or in what window. The first opens a probe: one request at a time (`probeWindowMillis`), at the pauses the
 *   429s bring, until one is accepted; the time from the refused request's start to the accepted one's is the window,
 *   and half of what the limiter had let through in its window (`counted`) the limit. From then on a 429 to a request
 *   admitted under the present limit halves it (once for the requests started under it: a burst of 429s answering one
 *   window halves it once; at 1, the window doubles instead, up to twice the limiter's), and an accepted request started a whole window after
 *   the last change raises it (`climbStep`; `climbPatience` windows before the level last refused), until the limiter's
 *   own keeps it again and it is forgotten.
 *
 * @example
 * ```ts
 * import { ServerLimit } from "@erp-client/kernel"
 *
 * const now = 1_700_000_000_000
 * const configured = { limit: 100, windowMillis: 30_000 }
 * // The server says 20, and a reset 3 s after the request's start: 20 per 3 s
 * const heard = { serverLimit: 20, tooManyRequests: false, startedMillis: now - 50, reset: { at: now + 2_950, raw: "3" } }
 * console.log(ServerLimit.learn(configured, undefined, heard, now))
 * // => { limit: 20, windowMillis: 3000, sinceMillis: 1700000000000, ttlMillis: 3600000, from: 'header', sampleMillis: 3000, lowerMillis: 1950 }
 * ```
 *
 * @since 0.1.0
 * @category Learning
 */
export const learn = (
  configured: Configured,
  current: Learned | undefined,
  heard: Heard,
  nowMillis: number
): Learned | null | undefined => {
  if (isLimit(heard.serverLimit)) return learnFromHeader(configured, current, heard.serverLimit, heard, nowMillis)
  // The server stopped saying its limit on one answer: the limit it said stands until its time runs out.
  if (current?.from === "header") return undefined
  return heard.tooManyRequests
    ? learnFromRefusal(configured, current, heard, nowMillis)
    : learnFromAccepted(configured, current, heard, nowMillis)
}

// Kept figures change the record (a write, in Redis) only when they move by more than this share.
const moved = (before: number | undefined, after: number): boolean =>
  before === undefined || Math.abs(after - before) > Math.max(5, before * 0.005)

const learnFromHeader = (
  configured: Configured,
  current: Learned | undefined,
  serverLimit: number,
  heard: Heard,
  nowMillis: number
): Learned | null | undefined => {
  const was = current?.from === "header" ? current : undefined
  const { reset } = heard
  const step = reset === undefined ? 1000 : resetStepMillis(reset.raw)
  let { freshMillis, lowerMillis, sampleMillis } = was ?? {}
  if (reset !== undefined && reset.at > heard.startedMillis) {
    const upper = reset.at - heard.startedMillis
    if (sampleMillis === undefined || (upper > sampleMillis && moved(sampleMillis, upper))) sampleMillis = upper
    // Counted alone: a sliding window's reset is a window after this request, so the window is at most this long.
    const alone = heard.remaining !== undefined && heard.remaining >= serverLimit - 1
    if (alone && (freshMillis === undefined || (upper < freshMillis && moved(freshMillis, upper)))) freshMillis = upper
    // Whatever the server's window, its reset is at most a window after the request reached it.
    const lower = reset.at - step - nowMillis
    if (lower > 0 && (lowerMillis === undefined || (lower > lowerMillis && moved(lowerMillis, lower)))) {
      lowerMillis = lower
    }
  }
  // Refused under the window read: the server's is longer.
  if (heard.tooManyRequests && was !== undefined && heard.startedMillis >= was.sinceMillis) {
    lowerMillis = Math.max(lowerMillis ?? 0, was.windowMillis + 1)
  }
  const estimate = freshMillis !== undefined && freshMillis >= (lowerMillis ?? 0)
    ? freshMillis
    : sampleMillis === undefined
    ? lowerMillis
    : Math.max(sampleMillis, lowerMillis ?? 0)
  const windowMillis = estimate === undefined
    ? configured.windowMillis
    : windowFromSample(estimate, step, configured.windowMillis, lowerMillis)
  if (implied({ limit: serverLimit, windowMillis }, configured)) return current === undefined ? undefined : null
  // Every answer repeats it: written when it changes, and renewed once half its time has gone.
  const same = was !== undefined && was.limit === serverLimit && was.windowMillis === windowMillis &&
    was.sampleMillis === sampleMillis && was.freshMillis === freshMillis && was.lowerMillis === lowerMillis &&
    nowMillis - was.sinceMillis < was.ttlMillis / 2
  if (same) return undefined
  return {
    limit: serverLimit,
    windowMillis,
    sinceMillis: nowMillis,
    ttlMillis: headerLimitTtlMillis,
    from: "header",
    ...(sampleMillis === undefined ? {} : { sampleMillis }),
    ...(freshMillis === undefined ? {} : { freshMillis }),
    ...(lowerMillis === undefined ? {} : { lowerMillis })
  }
}

const refusalsTtl = (configured: Configured) => guessedLimitWindows * configured.windowMillis

const learnFromRefusal = (
  configured: Configured,
  current: Learned | undefined,
  heard: Heard,
  nowMillis: number
): Learned | undefined => {
  if (current === undefined) {
    return {
      limit: 1,
      windowMillis: probeWindowMillis(configured),
      sinceMillis: nowMillis,
      ttlMillis: refusalsTtl(configured),
      from: "refusals",
      refusedMillis: heard.startedMillis,
      ceiling: Math.max(1, Math.min(configured.limit, heard.counted ?? configured.limit))
    }
  }
  // Probing, or a 429 to a request admitted under the limit before the present one: nothing new.
  if (current.refusedMillis !== undefined || heard.startedMillis < current.sinceMillis) return undefined
  const halved = current.limit >= 2
    ? { limit: Math.floor(current.limit / 2), windowMillis: current.windowMillis }
    : { limit: 1, windowMillis: Math.min(2 * current.windowMillis, 2 * configured.windowMillis) }
  if (halved.limit === current.limit && halved.windowMillis === current.windowMillis) return undefined
  return {
    ...halved,
    sinceMillis: nowMillis,
    ttlMillis: refusalsTtl(configured),
    from: "refusals",
    ceiling: current.limit
  }
}

const learnFromAccepted = (
  configured: Configured,
  current: Learned | undefined,
  heard: Heard,
  nowMillis: number
): Learned | null | undefined => {
  // Only a request admitted under the present limit tells of it.
  if (current === undefined || heard.startedMillis < current.sinceMillis) return undefined
  const ceiling = current.ceiling ?? configured.limit
  let next: Pick<Learned, "limit" | "windowMillis">
  if (current.refusedMillis !== undefined) {
    // The probe answered: the server took this long to accept again.
    const took = heard.startedMillis - current.refusedMillis
    next = {
      limit: Math.max(1, Math.floor(ceiling / 2)),
      windowMillis: Math.min(configured.windowMillis, Math.max(probeWindowMillis(configured), took))
    }
  } else {
    const limit = current.limit + climbStep(current.limit, ceiling)
    // Back to the level the server refused at only after a few windows without a 429 just under it.
    const windows = current.limit < ceiling && limit >= ceiling ? climbPatience : 1
    if (heard.startedMillis < current.sinceMillis + windows * current.windowMillis) return undefined
    next = { limit, windowMillis: current.windowMillis }
  }
  if (implied(next, configured)) return null
  return { ...next, sinceMillis: nowMillis, ttlMillis: refusalsTtl(configured), from: "refusals", ceiling }
}
