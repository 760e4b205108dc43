/**
 * @since 0.1.0
 */
export * as ErpTelemetry from "./ErpTelemetry.js"

/**
 * @since 0.1.0
 */
export * as Variables from "./Variables.js"
