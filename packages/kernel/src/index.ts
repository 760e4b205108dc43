/**
 * @since 0.1.0
 */
export * as DriftSafe from "./DriftSafe.js"

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
export * as PageOrder from "./PageOrder.js"

/**
 * @since 0.1.0
 */
export * as Pager from "./Pager.js"

/**
 * @since 0.1.0
 */
export * as PagingJudge from "./PagingJudge.js"

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
export * as ServerLimit from "./ServerLimit.js"

/**
 * @since 0.1.0
 */
export * as Slots from "./Slots.js"
