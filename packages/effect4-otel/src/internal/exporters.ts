// Per edition: the OTLP exporters, effect/observability's here, @effect/opentelemetry's in the Effect 3 edition.
/**
 * The exporters `ErpTelemetry.layer` starts, as its plan says (`exporting.ts`): each sends on the collector's guarded
 * HttpClient and encodes through the shaping serialization (`shape.ts`), reading no variables of its own. The Effect 4
 * edition's are `effect/observability`'s, riding on `effect/http`'s fetch client.
 */
import * as ConfigProvider from "effect/ConfigProvider"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Metric from "effect/Metric"
import * as OtlpExporter from "effect/observability/OtlpExporter"
import * as OtlpLogger from "effect/observability/OtlpLogger"
import * as OtlpMetrics from "effect/observability/OtlpMetrics"
import * as OtlpSerialization from "effect/observability/OtlpSerialization"
import * as OtlpTracer from "effect/observability/OtlpTracer"
import type * as Scope from "effect/Scope"
import * as Tracer from "effect/Tracer"
import type * as Exporting from "./exporting.js"
import type * as OtelSettings from "./otelSettings.js"
import * as Shape from "./shape.js"

// Each exporter reads OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME itself: they are given the resolved resource, and
// no variables.
const noVariables = ConfigProvider.fromUnknown({})

const serviceOf = <I, S>(key: Context.Key<I, S>, layer: Layer.Layer<I>): Effect.Effect<S> =>
  Effect.provide(Effect.service(key), layer)

/** The Effect 4 edition's exporters for `plan`, each sending on the collector's guard with the shaping encoding. */
export const make = (plan: Exporting.Plan): Effect.Effect<Exporting.Exporters, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { collector, runtimeMetrics, scopes } = plan
    const fetch = yield* serviceOf(HttpClient.HttpClient, FetchHttpClient.layer)
    const encodings = {
      "http/protobuf": yield* serviceOf(OtlpSerialization.OtlpSerialization, OtlpSerialization.layerProtobuf),
      "http/json": yield* serviceOf(OtlpSerialization.OtlpSerialization, OtlpSerialization.layerJson)
    }
    // The exporters need a registry of their flushes; the layer keeps it to itself and provides nothing, as the
    // Effect 3 edition's (a `flush` of the program's would wait out each export's timeout, not the shutdown budget).
    const flusher = yield* serviceOf(OtlpExporter.Flusher, OtlpExporter.layerFlusher)
    const build = <A>(
      destination: OtelSettings.Destination,
      make: Effect.Effect<
        A,
        never,
        HttpClient.HttpClient | OtlpSerialization.OtlpSerialization | OtlpExporter.Flusher | Scope.Scope
      >
    ): Effect.Effect<A, never, Scope.Scope> =>
      make.pipe(
        Effect.provideService(HttpClient.HttpClient, collector.guard(fetch, destination.timeoutMillis)),
        Effect.provideService(
          OtlpSerialization.OtlpSerialization,
          Shape.serialization(encodings[destination.protocol], { runtimeMetrics, scopes })
        ),
        Effect.provideService(OtlpExporter.Flusher, flusher),
        Effect.provideService(ConfigProvider.ConfigProvider, noVariables)
      )

    const minimum = plan.logLevel ?? "Warn"
    return {
      logs: (signal) =>
        Effect.map(build(signal.destination, OtlpLogger.make(signal.options)), (otlp) =>
          Logger.layer([
            Logger.make<unknown, void>((entry) => {
              if (LogLevel.isGreaterThanOrEqualTo(entry.logLevel, minimum)) otlp.log(entry)
            })
          ], { mergeWithExisting: true })),
      metrics: (signal) =>
        Effect.as(
          build(signal.destination, OtlpMetrics.make(signal.options)),
          runtimeMetrics ? Metric.enableRuntimeMetricsLayer : Layer.empty
        ),
      traces: (signal) =>
        Effect.map(
          build(signal.destination, OtlpTracer.make(signal.options)),
          (tracer) => Layer.succeed(Tracer.Tracer, tracer)
        )
    }
  })
