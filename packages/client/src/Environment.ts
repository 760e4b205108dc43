/**
 * The environment variable each setting is read from, by option name: the one list the settings modules read their
 * variables from (`ErpConfig.fromEnv`, `ErpRateLimiter.fromEnv`, `ErpRateLimiterRedis.fromEnv`) and the command line's
 * help and messages name them by. Data only: it loads nothing. The table is `@erp-client/kernel/Environment`'s, which
 * both editions read.
 *
 * @since 0.1.0
 */
import * as Kernel from "@erp-client/kernel/Environment"

/**
 * The client's settings (`ErpConfig.Options`).
 *
 * @since 0.1.0
 * @category Variables
 */
export const client: typeof Kernel.client = Kernel.client

/**
 * The rate limit's settings (`ErpRateLimiter.Options`).
 *
 * @since 0.1.0
 * @category Variables
 */
export const limiter: typeof Kernel.limiter = Kernel.limiter

/**
 * The shared limit's settings (`ErpRateLimiterRedis.Options`, besides `limiter`'s).
 *
 * @since 0.1.0
 * @category Variables
 */
export const redis: typeof Kernel.redis = Kernel.redis

/**
 * Settings whose value is a duration: a bare number is seconds (`30`), or a number with a unit (`"500 millis"`).
 *
 * @since 0.1.0
 * @category Variables
 */
export const durations: ReadonlyArray<string> = Kernel.durations

/**
 * The variable an option of any settings module is read from, by the option's name as settings errors give it
 * (`redis.timeout` for the Redis limiter's own timeout), or `undefined`.
 *
 * @example
 * ```ts
 * import { Environment } from "@erp-client/client"
 *
 * // The variable to set when a settings error names an option
 * console.log(Environment.variableOf("retryBudget")) // => ERP_RETRY_BUDGET
 * console.log(Environment.variableOf("redis.timeout")) // => ERP_REDIS_TIMEOUT
 * ```
 *
 * @since 0.1.0
 * @category Variables
 */
export const variableOf: (option: string) => string | undefined = Kernel.variableOf
