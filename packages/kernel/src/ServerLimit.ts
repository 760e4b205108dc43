/**
 * What the server says about its limit and about when to come back, read from one response's headers: plain
 * functions over data (docs/ARCHITECTURE.md, "Rate limit").
 *
 * @since 0.1.0
 */
import * as Learning from "./internal/limitLearning.js"

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
 * // X-RateLimit-Remaining: 0, X-RateLimit-Reset: 5 (seconds from now)
 * const limit = { limit: undefined, remaining: 0, reset: { raw: "5", at: now + 5_000, usable: true } }
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
 * The limit to keep after an answer, from the limit learned so far (`undefined`: none, the limiter's own, `configured`,
 * alone): `undefined` to keep what there is, `null` to forget it, or the new one.
 *
 * - `X-RateLimit-Limit` is the limit, in the window its resets tell: for a request the server counted alone, a sliding
 *   window's reset is a window after it, so the shortest time from such a request's start to its reset is the window;
 *   a reset nearer than that, or a 429 under it, shows a longer window: then the longest time seen
 *   (`windowFromSample`). It is kept only while the limiter's own does not already keep it (`implied`), and renewed
 *   once half its time has gone.
 * - A 429 without `X-RateLimit-Limit` opens a probe, one request at a time (`probeWindowMillis`), until one is
 *   accepted: the time since the refused request is the window, half of what the limiter let through (`counted`) the
 *   limit. Then a 429 under the present limit halves it (once per limit; at 1 the window doubles instead) and a request
 *   accepted a whole window after the last change raises it (`climbStep`, `climbPatience`), until the limiter's own
 *   keeps it again and it is forgotten (docs/rate-limit.md, "What the limiter learns").
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
export const learn: (
  configured: Configured,
  current: Learned | undefined,
  heard: Heard,
  nowMillis: number
) => Learned | null | undefined = Learning.learn
