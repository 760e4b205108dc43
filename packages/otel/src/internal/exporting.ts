/**
 * What `ErpTelemetry.layer` asks of the edition's exporters (`internal/exporters.ts`, one file per edition): for each
 * signal sent, its collector and its exporter's options, as both editions' OTLP exporters take them, and the shaping
 * and guarding the exporters are given.
 */
import * as Duration from "effect/Duration"
import type * as Collector from "./collector.js"
import type { LogLevelName } from "./edition.js"
import type * as OtelSettings from "./otelSettings.js"
import type * as Shape from "./shape.js"

/** The resource every export carries. */
export interface Resource {
  readonly serviceName: string
  readonly serviceVersion: string | undefined
  readonly attributes: Readonly<Record<string, unknown>>
}

/** An exporter's options, as `OtlpTracer.make`, `OtlpMetrics.make` and `OtlpLogger.make` take them. */
export interface ExporterOptions {
  readonly resource: Resource
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly exportInterval: Duration.Duration
  readonly shutdownTimeout: Duration.Duration
}

/** One signal to send: where (the collector's guard reads its timeout and protocol), and its exporter's options. */
export interface Signal<Options = ExporterOptions> {
  readonly destination: OtelSettings.Destination
  readonly options: Options
}

/** The exporters to start, and what they are given. */
export interface Plan {
  readonly logs: Signal | undefined
  readonly metrics: Signal | undefined
  readonly traces: Signal<ExporterOptions & { readonly maxBatchSize: number }> | undefined
  /** The least level of the log records sent (undefined: the edition's warning level). */
  readonly logLevel: LogLevelName | undefined
  readonly runtimeMetrics: boolean
  readonly scopes: Shape.Scopes
  readonly collector: Collector.Collector
}

/** The plan for `settings`: each signal they send, every exporter given up on `shutdownMillis` after the end. */
export const plan = (
  settings: OtelSettings.Resolved,
  given: {
    readonly resource: Resource
    readonly shutdownMillis: number
    readonly logLevel: LogLevelName | undefined
    readonly runtimeMetrics: boolean
    readonly scopes: Shape.Scopes
    readonly collector: Collector.Collector
  }
): Plan => {
  const signal = (destination: OtelSettings.Destination | undefined, intervalMillis: number): Signal | undefined =>
    destination === undefined ? undefined : {
      destination,
      options: {
        resource: given.resource,
        url: destination.url,
        headers: destination.headers,
        exportInterval: Duration.millis(intervalMillis),
        // A backstop: the collector's guard gives up within the budget.
        shutdownTimeout: Duration.millis(given.shutdownMillis + 500)
      }
    }
  const traces = signal(settings.traces, settings.traceIntervalMillis)
  return {
    logs: signal(settings.logs, settings.logIntervalMillis),
    metrics: signal(settings.metrics, settings.metricIntervalMillis),
    traces: traces === undefined
      ? undefined
      : { ...traces, options: { ...traces.options, maxBatchSize: settings.traceBatchSize } },
    logLevel: given.logLevel,
    runtimeMetrics: given.runtimeMetrics,
    scopes: given.scopes,
    collector: given.collector
  }
}
