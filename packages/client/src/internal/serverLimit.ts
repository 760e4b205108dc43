/**
 * What the server says about its limit and about when to come back, read from one response's headers: plain
 * functions over data (docs/ARCHITECTURE.md, "Rate limit").
 */

/** `X-RateLimit-Reset` as the server wrote it, and what it was read as. */
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

export interface ServerLimit {
  readonly limit: number | undefined
  readonly remaining: number | undefined
  readonly reset: Reset | undefined
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

/**
 * Reads `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset`. The contract does not give the unit of
 * the reset (docs/erp-api-v2.md, "Limits"), so all three plausible ones are accepted: epoch milliseconds (>= 1e12),
 * epoch seconds (>= 1e9) and seconds from now (anything smaller). A reset in the past or more than `maxWaitMillis`
 * ahead is kept (messages quote it) but not used (see `Reset.usable`).
 */
export const parse = (
  headers: Readonly<Record<string, string | undefined>>,
  nowMillis: number,
  maxWaitMillis: number
): ServerLimit => {
  const raw = headerText(headers, "x-ratelimit-reset")
  const value = headerNumber(headers, "x-ratelimit-reset")
  let reset: Reset | undefined
  if (raw !== undefined && value !== undefined) {
    // A negative value (seconds from now, skewed) is a reset in the past: unusable, like an epoch behind the clock.
    const at = value >= 1e12 ? value : value >= 1e9 ? value * 1000 : nowMillis + value * 1000
    // Epoch seconds are rounded up by most servers: a reset up to a second behind is the current second.
    reset = { raw, at, usable: at > nowMillis - 1000 && at <= nowMillis + maxWaitMillis }
  }
  return {
    limit: headerNumber(headers, "x-ratelimit-limit"),
    remaining: headerNumber(headers, "x-ratelimit-remaining"),
    reset
  }
}

/**
 * `Retry-After` (RFC 9110): seconds, or an HTTP date; the wait it asks for from `nowMillis`, never negative, or
 * `undefined` when absent or unreadable.
 */
export const retryAfter = (
  headers: Readonly<Record<string, string | undefined>>,
  nowMillis: number
): number | undefined => {
  const raw = headerText(headers, "retry-after")
  if (raw === undefined) return undefined
  if (/^\d+$/.test(raw)) return Number(raw) * 1000
  const date = Date.parse(raw)
  return Number.isFinite(date) ? Math.max(0, date - nowMillis) : undefined
}

/**
 * Whether `X-RateLimit-Remaining: 0` should pause the endpoint until the reset: only when the server's count disagrees
 * with the limiter's (it counts more requests than the limiter has started in the window: someone else spends the same
 * key's budget; or it says its limit is lower than ours). When the two agree, the limiter already holds the next request
 * until the window allows it, and waiting for a reset (rounded up to whole seconds by some servers) only starts each
 * window late.
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

/** How a reset reads in a message: `X-RateLimit-Reset: 1700003600 (in 3600 s)`. */
export const describeReset = (reset: Reset, nowMillis: number): string => {
  const seconds = Math.round((reset.at - nowMillis) / 1000)
  const when = seconds >= 0 ? `in ${seconds} s` : `${-seconds} s ago`
  return `X-RateLimit-Reset: ${reset.raw} (${when}${reset.usable ? "" : ", not waited for"})`
}
