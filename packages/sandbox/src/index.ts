/**
 * @since 0.1.0
 */
export * as Serve from "./Serve.js"

/**
 * @since 0.1.0
 */
export * as Fault from "./Fault.js"

/**
 * @since 0.1.0
 */
export * as RateLimit from "./RateLimit.js"

/**
 * @since 0.1.0
 */
export * as Sandbox from "./Sandbox.js"

/**
 * @since 0.1.0
 */
export * as Seed from "./Seed.js"
