/**
 * The server's rate limit (see `SlidingWindow`): its settings, the strict sliding window log per key, and the
 * `X-RateLimit-*` headers of a decision.
 */
import type * as SlidingWindow from "../SlidingWindow.js"
import * as Duration from "./duration.js"

/** @internal */
export const defaults: SlidingWindow.Resolved = {
  limit: 100,
  windowMillis: 30_000,
  resetUnit: "epoch-seconds",
  headers: true,
  resetSkewMillis: 0,
  retryAfter: false
}

/** @internal */
export const resolve = <D>(
  options: SlidingWindow.Options<D> | undefined,
  toMillis: (input: D) => number
): SlidingWindow.Resolved => ({
  limit: Math.max(1, Math.floor(options?.limit ?? defaults.limit)),
  windowMillis: Math.max(1, options?.window === undefined ? defaults.windowMillis : toMillis(options.window)),
  resetUnit: options?.resetUnit ?? defaults.resetUnit,
  headers: options?.headers ?? defaults.headers,
  resetSkewMillis: options?.resetSkew === undefined
    ? defaults.resetSkewMillis
    : Duration.signedMillis(options.resetSkew, toMillis),
  retryAfter: options?.retryAfter ?? defaults.retryAfter
})

/** @internal */
export const makeSlidingWindowLog = (limit: number, windowMillis: number): SlidingWindow.SlidingWindowLog => {
  // Times of allowed requests per key, oldest first; each log holds at most `limit` entries.
  const logs = new Map<string, Array<number>>()
  const prune = (key: string, nowMillis: number): Array<number> => {
    const log = logs.get(key)
    if (log === undefined) return []
    // An entry at time s is in (now - window, now] iff s > now - window.
    while (log.length > 0 && log[0] <= nowMillis - windowMillis) log.shift()
    if (log.length === 0) logs.delete(key)
    return log
  }
  return {
    limit,
    windowMillis,
    check: (key, nowMillis, commit = true) => {
      const log = prune(key, nowMillis)
      if (log.length >= limit) {
        return { allowed: false, limit, remaining: 0, resetAtMillis: log[0] + windowMillis }
      }
      // A clock that stepped back must not unsort the log: count the request at the latest time seen.
      const at = log.length > 0 ? Math.max(nowMillis, log[log.length - 1]) : nowMillis
      if (commit) {
        log.push(at)
        if (log.length === 1) logs.set(key, log)
      }
      const counted = commit ? log.length : log.length + 1
      const oldest = log.length > 0 ? log[0] : at
      return { allowed: true, limit, remaining: limit - counted, resetAtMillis: oldest + windowMillis }
    },
    count: (key, nowMillis) => prune(key, nowMillis).length,
    reset: () => logs.clear()
  }
}

/** @internal */
export const resetValue = (
  unit: SlidingWindow.ResetUnit,
  resetAtMillis: number,
  nowMillis: number
): number | string => {
  switch (unit) {
    case "epoch-seconds":
      return Math.ceil(resetAtMillis / 1000)
    case "epoch-millis":
      return Math.ceil(resetAtMillis)
    case "seconds":
      return Math.max(0, Math.ceil((resetAtMillis - nowMillis) / 1000))
    // Dates to the second, rounded up as the epoch seconds are.
    case "iso":
      return new Date(Math.ceil(resetAtMillis / 1000) * 1000).toISOString().replace(".000Z", "Z")
    case "http-date":
      return new Date(Math.ceil(resetAtMillis / 1000) * 1000).toUTCString()
  }
}

/** @internal */
export const headers = (
  decision: SlidingWindow.Decision,
  unit: SlidingWindow.ResetUnit,
  nowMillis: number,
  skewMillis = 0,
  retryAfter = false
): Record<string, string> => ({
  "x-ratelimit-limit": String(decision.limit),
  "x-ratelimit-remaining": String(Math.max(0, decision.remaining)),
  "x-ratelimit-reset": String(resetValue(unit, decision.resetAtMillis + skewMillis, nowMillis)),
  // A 429 says when to come back in the standard header too, when the window is set to (`retryAfter`).
  ...(decision.allowed || retryAfter !== true
    ? {}
    : { "retry-after": String(Math.max(0, Math.ceil((decision.resetAtMillis - nowMillis) / 1000))) })
})
