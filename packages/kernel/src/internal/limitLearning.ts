/**
 * How the limiter learns a stricter limit from the server's answers (docs/rate-limit.md, "What the limiter learns"):
 * `learn` of `ServerLimit`, and the windows, steps and times it works with.
 */
import type { Configured, Heard, Learned } from "../ServerLimit.js"
import { defaultMarginMillis } from "../Settings.js"

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
 */
const resetStepMillis = (raw: string): number => {
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
 * import * as Learning from "./limitLearning.js"
 *
 * const configured = { limit: 100, windowMillis: 30_000 }
 * // 20 per 3 s: the limiter's 100 per 30 s could start 100 in 3 s
 * console.log(Learning.implied({ limit: 20, windowMillis: 3_000 }, configured)) // => false
 * // 100 per 3 s, or 200 per a minute: already kept
 * console.log(Learning.implied({ limit: 100, windowMillis: 3_000 }, configured)) // => true
 * console.log(Learning.implied({ limit: 200, windowMillis: 60_000 }, configured)) // => true
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
 */
const windowFromSample = (
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
 */
const probeWindowMillis = (configured: Configured): number =>
  Math.min(1_000, Math.max(100, Math.ceil(configured.windowMillis / configured.limit)))

/**
 * The step by which a limit learned from 429s climbs after a window the server accepted: by halves back toward the
 * level it last refused (`ceiling`), then by steps that double past it (1, 2, 4, …), so a server that has relaxed is
 * followed within a few windows, and one that has not costs a 429 now and then.
 */
const climbStep = (limit: number, ceiling: number): number =>
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

// `ServerLimit.learn` (its documentation says what it keeps and when).
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
