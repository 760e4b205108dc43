/**
 * @since 0.1.0
 */
export * as ErpTest from "./ErpTest.js"

/**
 * @since 0.1.0
 */
export * as Fault from "@erp-client/sandbox/Fault"

/**
 * @since 0.1.0
 */
export * as Sandbox from "@erp-client/sandbox/Sandbox"
