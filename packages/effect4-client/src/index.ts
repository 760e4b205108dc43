/**
 * @since 0.1.0
 */
export * as Environment from "./Environment.js"

/**
 * @since 0.1.0
 */
export * as ErpConfig from "./ErpConfig.js"

/**
 * @since 0.1.0
 */
export * as ErpRateLimiter from "./ErpRateLimiter.js"

/**
 * @since 0.1.0
 */
export * as ErpClient from "./ErpClient.js"

/**
 * @since 0.1.0
 */
export * as ErpRateLimiterRedis from "./ErpRateLimiterRedis.js"
