/**
 * @since 0.1.0
 */
export * as Changes from "./Changes.js"

/**
 * @since 0.1.0
 */
export * as ListEndpoint from "./ListEndpoint.js"

/**
 * @since 0.1.0
 */
export * as Paginate from "./Paginate.js"

/**
 * @since 0.1.0
 */
export * as Partners from "./Partners.js"

/**
 * @since 0.1.0
 */
export * as Resource from "./Resource.js"

/**
 * @since 0.1.0
 */
export * as Lookups from "./Lookups.js"
