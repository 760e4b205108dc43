/**
 * @since 0.1.0
 */
export * as ErpTelemetry from "./ErpTelemetry.js"
