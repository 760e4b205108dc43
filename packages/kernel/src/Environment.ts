/**
 * The environment variable each setting is read from, by option name: the one table both editions' settings modules
 * read their variables from (`ErpConfig.fromEnv`, `ErpRateLimiter.fromEnv`, `ErpRateLimiterRedis.fromEnv`) and the
 * command line's help and messages name them by. Data only.
 *
 * @since 0.1.0
 */

/**
 * The client's settings (`ErpConfig.Options`).
 *
 * @since 0.1.0
 * @category Variables
 */
export const client = {
  baseUrl: "ERP_BASE_URL",
  apiKey: "ERP_API_KEY",
  timeout: "ERP_TIMEOUT",
  retries: "ERP_RETRIES",
  retryBudget: "ERP_RETRY_BUDGET",
  retryBaseDelay: "ERP_RETRY_BASE_DELAY",
  rateLimitBudget: "ERP_RATE_LIMIT_BUDGET",
  maxServerWait: "ERP_MAX_SERVER_WAIT",
  maxBodyBytes: "ERP_MAX_BODY_BYTES"
} as const

/**
 * The rate limit's settings (`ErpRateLimiter.Options`).
 *
 * @since 0.1.0
 * @category Variables
 */
export const limiter = {
  limit: "ERP_RATE_LIMIT",
  window: "ERP_RATE_WINDOW"
} as const

/**
 * The shared limit's settings (`ErpRateLimiterRedis.Options`, besides `limiter`'s).
 *
 * @since 0.1.0
 * @category Variables
 */
export const redis = {
  url: "ERP_REDIS_URL",
  prefix: "ERP_REDIS_PREFIX",
  onFailure: "ERP_REDIS_ON_FAILURE",
  timeout: "ERP_REDIS_TIMEOUT",
  grace: "ERP_REDIS_GRACE"
} as const

/**
 * `erp mcp --http`'s settings: the bearer token every request must show (none set: loopback only).
 *
 * @since 0.1.0
 * @category Variables
 */
export const mcp = {
  token: "ERP_MCP_TOKEN"
} as const

/**
 * `erp sync`'s settings: the database it writes into when `--to` is not given (`sqlite:PATH` or `postgres://…`; read
 * as `Redacted`, it may hold a password).
 *
 * @since 0.1.0
 * @category Variables
 */
export const sync = {
  url: "ERP_SYNC_URL"
} as const

/**
 * Settings whose value is a duration: a bare number is seconds (`30`), or a number with a unit (`"500 millis"`).
 *
 * @since 0.1.0
 * @category Variables
 */
export const durations: ReadonlyArray<string> = [
  client.timeout,
  client.retryBudget,
  client.retryBaseDelay,
  client.rateLimitBudget,
  client.maxServerWait,
  limiter.window,
  redis.timeout,
  redis.grace
]

/**
 * The variable an option of any settings module is read from, by the option's name as settings errors give it
 * (`redis.timeout` for the Redis limiter's own timeout), or `undefined`.
 *
 * @example
 * ```ts
 * import { Environment } from "@erp-client/kernel"
 *
 * console.log(Environment.variableOf("retryBudget"), Environment.variableOf("redis.timeout"))
 * // => ERP_RETRY_BUDGET ERP_REDIS_TIMEOUT
 * ```
 *
 * @since 0.1.0
 * @category Variables
 */
export const variableOf = (option: string): string | undefined => {
  if (option.startsWith("redis.")) return (redis as Record<string, string>)[option.slice("redis.".length)]
  return (client as Record<string, string>)[option] ?? (limiter as Record<string, string>)[option]
}
