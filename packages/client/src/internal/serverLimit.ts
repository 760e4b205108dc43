/**
 * What the server says about its limit in the `X-RateLimit-*` headers of one response.
 */

export interface ServerLimit {
  readonly limit: number | undefined
  readonly remaining: number | undefined
  /** When the server's window resets, epoch ms, already capped to `now + maxWait`. */
  readonly resetAt: number | undefined
}

const headerNumber = (headers: Readonly<Record<string, string | undefined>>, name: string): number | undefined => {
  const raw = headers[name]
  if (raw === undefined) return undefined
  const value = Number(raw.trim())
  return raw.trim() === "" || !Number.isFinite(value) ? undefined : value
}

/**
 * Reads `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset`. The contract does not give the unit of
 * the reset (docs/erp-api-v2.md, "Limits"), so all three plausible ones are accepted: epoch milliseconds (>= 1e12),
 * epoch seconds (>= 1e9) and seconds from now (anything smaller). The wait it implies is capped at `maxWaitMillis`,
 * so a wrong guess or a hostile header cannot park a client for hours.
 */
export const parse = (
  headers: Readonly<Record<string, string | undefined>>,
  nowMillis: number,
  maxWaitMillis: number
): ServerLimit => {
  const reset = headerNumber(headers, "x-ratelimit-reset")
  let resetAt: number | undefined
  if (reset !== undefined && reset >= 0) {
    const at = reset >= 1e12 ? reset : reset >= 1e9 ? reset * 1000 : nowMillis + reset * 1000
    resetAt = Math.min(Math.max(at, nowMillis), nowMillis + maxWaitMillis)
  }
  return {
    limit: headerNumber(headers, "x-ratelimit-limit"),
    remaining: headerNumber(headers, "x-ratelimit-remaining"),
    resetAt
  }
}
