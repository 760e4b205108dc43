/**
 * @since 0.1.0
 */
export * as ErpRules from "./ErpRules.js"

/**
 * @since 0.1.0
 */
export * as Seed from "./Seed.js"

/**
 * @since 0.1.0
 */
export * as SlidingWindow from "./SlidingWindow.js"

/**
 * @since 0.1.0
 */
export * as StallText from "./StallText.js"

/**
 * @since 0.1.0
 */
export * as WebReply from "./WebReply.js"
