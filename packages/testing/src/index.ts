/**
 * @since 0.1.0
 */
export * as ErpTest from "./ErpTest.js"
