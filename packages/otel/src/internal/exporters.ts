// Per edition: the OTLP exporters, @effect/opentelemetry's here, effect/observability's in the Effect 4 edition.
/**
 * The exporters `ErpTelemetry.layer` starts, as its plan says (`exporting.ts`): each sends on the collector's guarded
 * HttpClient and encodes through the shaping serialization (`shape.ts`), reading no variables of its own. The Effect 3
 * edition's are `@effect/opentelemetry`'s, riding on `@effect/platform`'s fetch client.
 */
import * as OtlpLogger from "@effect/opentelemetry/OtlpLogger"
import * as OtlpMetrics from "@effect/opentelemetry/OtlpMetrics"
import * as OtlpSerialization from "@effect/opentelemetry/OtlpSerialization"
import * as OtlpTracer from "@effect/opentelemetry/OtlpTracer"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as RuntimeFlags from "effect/RuntimeFlags"
import type * as Scope from "effect/Scope"
import type * as Exporting from "./exporting.js"
import type * as OtelSettings from "./otelSettings.js"
import * as Shape from "./shape.js"

const serializationOf = (protocol: OtelSettings.Protocol) =>
  Effect.provide(
    OtlpSerialization.OtlpSerialization,
    protocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf
  )

// The exporters read OTEL_RESOURCE_ATTRIBUTES themselves and add its service.name once more: they are given the
// resolved resource, and no variables.
const noVariables = ConfigProvider.fromMap(new Map())

/** The Effect 3 edition's exporters for `plan`, each sending on the collector's guard with the shaping encoding. */
export const make = (plan: Exporting.Plan): Effect.Effect<Exporting.Exporters, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { collector, runtimeMetrics, scopes } = plan
    const fetch = yield* Effect.provide(HttpClient.HttpClient, FetchHttpClient.layer)
    const serving = (destination: OtelSettings.Destination) =>
      Effect.map(serializationOf(destination.protocol), (encode) =>
        Layer.mergeAll(
          Layer.succeed(HttpClient.HttpClient, collector.guard(fetch, destination.timeoutMillis)),
          Layer.succeed(OtlpSerialization.OtlpSerialization, Shape.serialization(encode, { runtimeMetrics, scopes }))
        ))
    const build = <A>(
      destination: OtelSettings.Destination,
      make: Effect.Effect<A, never, HttpClient.HttpClient | OtlpSerialization.OtlpSerialization | Scope.Scope>
    ) =>
      Effect.flatMap(
        serving(destination),
        (services) => make.pipe(Effect.provide(services), Effect.withConfigProvider(noVariables))
      )
    const minimum = LogLevel.fromLiteral(plan.logLevel ?? "Warning")
    return {
      logs: (signal) =>
        Effect.map(
          build(signal.destination, OtlpLogger.make(signal.options)),
          (logger) => Logger.add(Logger.filterLogLevel(logger, LogLevel.greaterThanEqual(minimum)))
        ),
      metrics: (signal) =>
        Effect.as(
          build(signal.destination, OtlpMetrics.make(signal.options)),
          runtimeMetrics ? RuntimeFlags.enableRuntimeMetrics : Layer.empty
        ),
      traces: (signal) => Effect.map(build(signal.destination, OtlpTracer.make(signal.options)), Layer.setTracer)
    }
  })
