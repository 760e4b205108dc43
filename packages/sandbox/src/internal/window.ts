/**
 * The server's rate limit (see `RateLimit`): its settings, the strict sliding window log per key, and the
 * `X-RateLimit-*` headers of a decision.
 */
import * as Duration from "effect/Duration"
import type * as RateLimit from "../RateLimit.js"

/** @internal */
export const defaults: RateLimit.Resolved = {
  limit: 100,
  windowMillis: 30_000,
  resetUnit: "epoch-seconds",
  headers: true,
  resetSkewMillis: 0,
  retryAfter: false
}

/** @internal */
export const signedMillis = (input: Duration.DurationInput): number => {
  if (typeof input === "number") return Number.isFinite(input) ? input : 0
  if (typeof input === "string" && input.trim().startsWith("-")) {
    return -Duration.toMillis(Duration.decode(input.trim().slice(1).trim() as Duration.DurationInput))
  }
  return Duration.toMillis(Duration.decode(input))
}

/** @internal */
export const resolve = (options: RateLimit.Options | undefined): RateLimit.Resolved => ({
  limit: Math.max(1, Math.floor(options?.limit ?? defaults.limit)),
  windowMillis: Math.max(
    1,
    options?.window === undefined ? defaults.windowMillis : Duration.toMillis(Duration.decode(options.window))
  ),
  resetUnit: options?.resetUnit ?? defaults.resetUnit,
  headers: options?.headers ?? defaults.headers,
  resetSkewMillis: options?.resetSkew === undefined ? defaults.resetSkewMillis : signedMillis(options.resetSkew),
  retryAfter: options?.retryAfter ?? defaults.retryAfter
})

/** @internal */
export const makeSlidingWindowLog = (limit: number, windowMillis: number): RateLimit.SlidingWindowLog => {
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
export const resetValue = (unit: RateLimit.ResetUnit, resetAtMillis: number, nowMillis: number): number | string => {
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
  decision: RateLimit.Decision,
  unit: RateLimit.ResetUnit,
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
