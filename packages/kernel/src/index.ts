/**
 * @since 0.1.0
 */
export * as ErpRules from "./ErpRules.js"

/**
 * @since 0.1.0
 */
export * as JsonText from "./JsonText.js"

/**
 * @since 0.1.0
 */
export * as MemoryStore from "./MemoryStore.js"

/**
 * @since 0.1.0
 */
export * as RedisScripts from "./RedisScripts.js"

/**
 * @since 0.1.0
 */
export * as RetryPolicy from "./RetryPolicy.js"

/**
 * @since 0.1.0
 */
export * as Seed from "./Seed.js"

/**
 * @since 0.1.0
 */
export * as ServerLimit from "./ServerLimit.js"

/**
 * @since 0.1.0
 */
export * as SlidingWindow from "./SlidingWindow.js"

/**
 * @since 0.1.0
 */
export * as Slots from "./Slots.js"
