/**
 * What `ErpTelemetry.layer` asks of the edition's exporters (`internal/exporters.ts`, one file per edition): for each
 * signal sent, its collector and its exporter's options, as both editions' OTLP exporters take them, and the shaping
 * and guarding the exporters are given.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
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

/**
 * The edition's exporters, one per signal, each started in the layer's scope (`internal/exporters.ts`): what each
 * gives the program (a logger, the runtime metrics, a tracer) as a layer.
 */
export interface Exporters {
  readonly logs: (signal: Signal) => Effect.Effect<Layer.Layer<never>, never, Scope.Scope>
  readonly metrics: (signal: Signal) => Effect.Effect<Layer.Layer<never>, never, Scope.Scope>
  readonly traces: (signal: NonNullable<Plan["traces"]>) => Effect.Effect<Layer.Layer<never>, never, Scope.Scope>
}

/**
 * The exporters the plan sends to, started, and their layers. Made in this order, they flush at the end in the
 * reverse: spans first, then metrics, then log records.
 */
export const start = (plan: Plan, exporters: Exporters): Effect.Effect<Array<Layer.Layer<never>>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const layers: Array<Layer.Layer<never>> = []
    if (plan.logs !== undefined) layers.push(yield* exporters.logs(plan.logs))
    if (plan.metrics !== undefined) layers.push(yield* exporters.metrics(plan.metrics))
    if (plan.traces !== undefined) layers.push(yield* exporters.traces(plan.traces))
    return layers
  })
