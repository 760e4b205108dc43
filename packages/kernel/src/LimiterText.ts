/**
 * The lines the rate limiter logs, as plain functions: a wait worth telling, a limit learned from the server, and a
 * shared store's outage and return (docs/rate-limit.md). Both editions' limiters log these, so an operator reads the
 * same lines whichever edition runs; none of them holds a Redis URL or the key.
 *
 * @since 0.1.0
 */
import { seconds } from "./internal/text.js"
import type { Learned } from "./ServerLimit.js"

/**
 * Whether a wait for the limiter's own spacing is worth an operator's attention (a second or more), or only a
 * debugging line: the usual short spacing is not.
 *
 * @example
 * ```ts
 * import { LimiterText } from "@erp-client/kernel"
 *
 * console.log(LimiterText.spacingIsNews(1_000), LimiterText.spacingIsNews(50)) // => true false
 * ```
 *
 * @since 0.1.0
 * @category Notes
 */
export const spacingIsNews = (delayMillis: number): boolean => delayMillis >= 1_000

/**
 * The line of a wait for the limiter's own spacing.
 *
 * @example
 * ```ts
 * import { LimiterText } from "@erp-client/kernel"
 *
 * console.log(LimiterText.spacing(1_050)) // => waiting 1050 ms for the client-side rate limit
 * ```
 *
 * @since 0.1.0
 * @category Notes
 */
export const spacing = (delayMillis: number): string => `waiting ${delayMillis} ms for the client-side rate limit`

/**
 * The line of a wait for a pause the server asked for.
 *
 * @example
 * ```ts
 * import { LimiterText } from "@erp-client/kernel"
 *
 * console.log(LimiterText.pause(5_000)) // => waiting 5000 ms: the server asked to pause
 * ```
 *
 * @since 0.1.0
 * @category Notes
 */
export const pause = (delayMillis: number): string => `waiting ${delayMillis} ms: the server asked to pause`

/**
 * The line said once by whoever changed the limit learned for a key (`ServerLimit.learn`'s result `next`, `before` it
 * the one the request was admitted under), or `undefined` when the change is no news (a header's limit renewed).
 *
 * @example
 * ```ts
 * import { LimiterText } from "@erp-client/kernel"
 *
 * const configured = { limit: 100, windowMillis: 30_000 }
 * const next = { limit: 20, windowMillis: 3_000, sinceMillis: 0, ttlMillis: 3_600_000, from: "header" as const, sampleMillis: 3_000 }
 * console.log(LimiterText.learned({ configured, before: undefined }, next))
 * // => the server's limit is 20 per 3 s (X-RateLimit-Limit, its window from X-RateLimit-Reset), stricter than the limiter's 100 per 30 s: keeping both
 * ```
 *
 * @since 0.1.0
 * @category Notes
 */
export const learned = (
  context: {
    /** The limiter's own limit and window. */
    readonly configured: { readonly limit: number; readonly windowMillis: number }
    /** The limit learned before the change, if any. */
    readonly before: Learned | undefined
  },
  next: Learned | null
): string | undefined => {
  const { before, configured } = context
  const ours = `the limiter's ${configured.limit} per ${seconds(configured.windowMillis)}`
  if (next === null) {
    return before?.from === "refusals"
      ? `the server accepts what ${ours} lets through again: keeping it alone`
      : `the server's limit (X-RateLimit-Limit) is kept by ${ours}: keeping it alone`
  }
  const rate = `${next.limit} per ${seconds(next.windowMillis)}`
  if (next.from === "header") {
    if (before?.from === "header" && before.limit === next.limit && before.windowMillis === next.windowMillis) {
      return undefined
    }
    const window = next.sampleMillis === undefined
      ? "its window unknown: taken as the limiter's"
      : "its window from X-RateLimit-Reset"
    return `the server's limit is ${rate} (X-RateLimit-Limit, ${window}), stricter than ${ours}: keeping both`
  }
  if (next.refusedMillis !== undefined) {
    return "the server answered 429 without saying its limit: sending one request at a time until it accepts again"
  }
  if (before?.refusedMillis !== undefined) {
    return `the server accepted again after ${
      seconds(next.windowMillis)
    }: keeping ${rate} beside ${ours} (half of the ${before.ceiling} it had refused more of)`
  }
  const was = before === undefined ? "" : ` (was ${before.limit} per ${seconds(before.windowMillis)})`
  return next.limit < (before?.limit ?? Infinity) || next.windowMillis > (before?.windowMillis ?? 0)
    ? `the server answered 429 again: keeping ${rate}${was}`
    : `the server accepted a whole window: keeping ${rate}${was}`
}

/**
 * The one warning of an outage of the shared limiter's store: what requests do meanwhile, by failure policy, and
 * whether the store had answered before (`Outage`: then requests wait for it for the grace, and the local fallback
 * starts a window after it stopped; a store never reached gets the policy at once).
 *
 * @example
 * ```ts
 * import { LimiterText } from "@erp-client/kernel"
 *
 * console.log(LimiterText.outage("Redis fixedWindow: not connected", { onFailure: "fail", graceMillis: 10_000, reachedBefore: false }))
 * // => the shared rate limit in Redis is unavailable (Redis fixedWindow: not connected); requests fail with RateLimiterUnavailable until it answers again
 * console.log(LimiterText.outage("Redis hold get: no answer within 1000 ms", { onFailure: "fail", graceMillis: 10_000, reachedBefore: true }))
 * // => the shared rate limit in Redis is unavailable (Redis hold get: no answer within 1000 ms); requests wait up to 10 s for it, then fail with RateLimiterUnavailable until it answers again
 * ```
 *
 * @since 0.1.0
 * @category Notes
 */
export const outage = (
  description: string,
  policy: { readonly onFailure: "fail" | "local"; readonly graceMillis: number; readonly reachedBefore: boolean }
): string => {
  const waits = policy.reachedBefore && policy.graceMillis > 0
  const then = policy.onFailure === "local"
    ? (waits ? "fall" : "falling") + " back to this process's own limit until it answers again" +
      (policy.reachedBefore ? " (from a window after it stopped: the count it kept is unknown)" : "") +
      ": other processes are not counted meanwhile"
    : `${waits ? "fail" : "requests fail"} with RateLimiterUnavailable until it answers again`
  return `the shared rate limit in Redis is unavailable (${description}); ` +
    (waits ? `requests wait up to ${seconds(policy.graceMillis)} for it, then ` : "") + then
}

/**
 * The line of the shared store's return after an outage.
 *
 * @example
 * ```ts
 * import { LimiterText } from "@erp-client/kernel"
 *
 * console.log(LimiterText.recovered(2_300)) // => the shared rate limit in Redis answers again after 2300 ms; it is shared again
 * ```
 *
 * @since 0.1.0
 * @category Notes
 */
export const recovered = (downMillis: number): string =>
  `the shared rate limit in Redis answers again after ${downMillis} ms; it is shared again`

/**
 * The line said when the shared store, back from an outage or a lost connection, no longer holds the mark the limiters
 * on it share (`Outage.MARK_LUA`, `Outage.marked`): it was restarted empty or replaced, and the count of the requests
 * it admitted before is lost; or when no mark had been read before, so that is unknown.
 *
 * @example
 * ```ts
 * import { LimiterText } from "@erp-client/kernel"
 *
 * console.log(LimiterText.countLost("lost", 24_400))
 * // => Redis came back without its data (restarted empty, or replaced): the requests it counted before are unknown, so requests through it wait 24400 ms more, until a window after it stopped answering
 * console.log(LimiterText.countLost("lost", 0))
 * // => Redis came back without its data (restarted empty, or replaced): the requests it counted before are unknown, but a window has passed since it stopped answering: nothing to wait for
 * ```
 *
 * @since 0.1.0
 * @category Notes
 */
export const countLost = (why: "lost" | "unknown", heldMillis: number): string =>
  (why === "lost"
    ? "Redis came back without its data (restarted empty, or replaced): the requests it counted before are unknown"
    : "Redis came back, and whether it kept its data is unknown (its mark was never read before)") +
  (heldMillis >= 1
    ? `, so requests through it wait ${Math.round(heldMillis)} ms more, until a window after it stopped answering`
    : ", but a window has passed since it stopped answering: nothing to wait for")

/**
 * A redactor for the texts a Redis client writes about a connection (its errors may quote the URL): the URL and its
 * password, as written and decoded, become `<redacted>`.
 *
 * @example
 * ```ts
 * import { LimiterText } from "@erp-client/kernel"
 *
 * const redact = LimiterText.redactor("redis://:s3cret@redis.internal:6379/0")
 * console.log(redact("WRONGPASS for s3cret")) // => WRONGPASS for <redacted>
 * ```
 *
 * @since 0.1.0
 * @category Redaction
 */
export const redactor = (url: string): (text: string) => string => {
  let secrets: ReadonlyArray<string>
  try {
    const parsed = new URL(url)
    secrets = [url, parsed.password, decodeURIComponent(parsed.password)].filter((s) => s.length > 0)
  } catch {
    secrets = [url]
  }
  return (text) => secrets.reduce((out, secret) => out.split(secret).join("<redacted>"), text)
}
