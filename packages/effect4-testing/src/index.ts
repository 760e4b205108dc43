/**
 * @since 0.1.0
 */
export * as ErpTest from "./ErpTest.js"

/**
 * @since 0.1.0
 */
export * as Fault from "./Fault.js"

/**
 * @since 0.1.0
 */
export * as Sandbox from "./Sandbox.js"
