/**
 * What the standard OpenTelemetry variables ask for, read without loading any exporter: for a program that exports
 * only when told (as the `erp` command does), to decide before it loads `ErpTelemetry`. The reading is
 * `internal/otelSettings.ts`'s, one source for both editions.
 *
 * @since 0.1.0
 */
import * as OtelSettings from "./internal/otelSettings.js"

/**
 * One of the three signals.
 *
 * @since 0.1.0
 * @category Models
 */
export type Signal = OtelSettings.Signal

/**
 * The three signals, in the order they are listed.
 *
 * @since 0.1.0
 * @category Constants
 */
export const SIGNALS: ReadonlyArray<Signal> = OtelSettings.SIGNALS

/**
 * The signals an environment asks a program for that exports only when told: an OTLP endpoint is set
 * (`OTEL_EXPORTER_OTLP_ENDPOINT` for every signal, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, … for that one), less those
 * whose exporter is `none` (`OTEL_TRACES_EXPORTER=none`, …); none at all with `OTEL_SDK_DISABLED=true`.
 *
 * @example
 * ```ts
 * import { Variables } from "@erp-client/otel"
 *
 * // A program passes process.env; here a collector for every signal, but no log records
 * const signals = Variables.askedSignals({
 *   OTEL_EXPORTER_OTLP_ENDPOINT: "http://localhost:4318",
 *   OTEL_LOGS_EXPORTER: "none"
 * })
 * console.log(signals) // => [ 'traces', 'metrics' ]
 * ```
 *
 * @since 0.1.0
 * @category Settings
 */
export const askedSignals: (env: Readonly<Record<string, string | undefined>>) => ReadonlyArray<Signal> =
  OtelSettings.askedSignals

/**
 * Whether the environment names the service (`OTEL_SERVICE_NAME`, or `service.name` in `OTEL_RESOURCE_ATTRIBUTES`):
 * a program with a name of its own uses it only when not.
 *
 * @example
 * ```ts
 * import { Variables } from "@erp-client/otel"
 *
 * // The deployment names the service, so a program's own default name is not used
 * const env = { OTEL_RESOURCE_ATTRIBUTES: "service.name=partner-sync,deployment.environment=production" }
 * console.log(Variables.namesService(env)) // => true
 * console.log(Variables.namesService({})) // => false
 * ```
 *
 * @since 0.1.0
 * @category Settings
 */
export const namesService: (env: Readonly<Record<string, string | undefined>>) => boolean = OtelSettings.namesService
