/**
 * @since 0.1.0
 */
export * as Decoder from "./Decoder.js"

/**
 * @since 0.1.0
 */
export * as Envelope from "./Envelope.js"

/**
 * @since 0.1.0
 */
export * as ErpError from "./ErpError.js"

/**
 * @since 0.1.0
 */
export * as JsonText from "./JsonText.js"

/**
 * @since 0.1.0
 */
export * as ListQuery from "./ListQuery.js"

/**
 * @since 0.1.0
 */
export * as Page from "./Page.js"

/**
 * @since 0.1.0
 */
export * as Partner from "./Partner.js"
