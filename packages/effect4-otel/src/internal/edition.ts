// Per edition: the Effect APIs this package uses whose names or shapes differ between Effect 3 and Effect 4.
/**
 * The Effect 4 edition's side of the otel package's adapter (docs/editions.md): each name here has a twin of the same
 * type in `packages/otel/src/internal/edition.ts`, written with Effect 3's API. The shared modules, copied here from
 * the Effect 3 package by `scripts/editions.ts`, import what differs from here and everything else from `effect`
 * itself. The exporters themselves differ more than a name: they are `internal/exporters.ts`, one file per edition.
 */
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as HttpBodyModule from "effect/http/HttpBody"
import type * as HttpClientModule from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Layer from "effect/Layer"
import type * as LogLevel from "effect/LogLevel"
import type * as OtlpLogger from "effect/observability/OtlpLogger"
import type * as OtlpMetrics from "effect/observability/OtlpMetrics"
import type * as OtlpTracer from "effect/observability/OtlpTracer"
import type * as Scope from "effect/Scope"
import type * as OtlpShape from "./otlpShape.js"

export * as HttpClient from "effect/http/HttpClient"
export * as HttpClientError from "effect/http/HttpClientError"

/** A request's body, as the serialization makes it. */
export type HttpBody = HttpBodyModule.HttpBody

/** An HttpClient that fails with any `HttpClientError` and needs nothing. */
export type AnyHttpClient = HttpClientModule.HttpClient

/** A request of the platform. */
export type Request = HttpClientRequest.HttpClientRequest

/** What `Duration` reads as a duration: Effect 4's `Duration.Input`. */
export type DurationInput = Duration.Input

/** `input` in milliseconds. */
export const toMillis = (input: DurationInput): number => Duration.toMillis(Duration.fromInputUnsafe(input))

/** A text setting: Effect 4's `Config.String`. */
export const configString = (name: string): Config.Config<string> => Config.String(name)

/** The name of a log level, as `logLevel` takes it: Effect 4's `LogLevel` (`"Warn"`, …). */
export type LogLevelName = LogLevel.LogLevel

/** The layer `self` makes, its scope the layer's: Effect 4's `Layer.unwrap`. */
export const unwrapScoped = (self: Effect.Effect<Layer.Layer<never>, never, Scope.Scope>): Layer.Layer<never> =>
  Layer.unwrap(self)

/**
 * A request refused before it is sent, with `description`: an `EncodeError`, not a transport error, so the exporter
 * does not retry it, and pauses.
 */
export const refuse = (request: Request, description: string): HttpClientError.HttpClientError =>
  new HttpClientError.HttpClientError({ reason: new HttpClientError.EncodeError({ request, description }) })

/** The cause of `error` when the connection failed (Effect 4: a `TransportError` reason), else `undefined`. */
export const connectionFailure = (error: HttpClientError.HttpClientError): { readonly cause: unknown } | undefined =>
  error.reason._tag === "TransportError" ? { cause: error.reason.cause } : undefined

const INTERRUPTED = "effect.fiber.interrupted"

const STATUS_OK = 1
const STATUS_ERROR = 2

/**
 * How `effect/observability`'s exporter writes a span's end (`internal/otlpShape.ts` corrects it):
 *
 * - a success is OK; a failure is ERROR, its message the first error's, with an `exception` event for each;
 * - an interruption (and nothing else) is UNSET with `effect.fiber.interrupted: true`, which the interrupted span keeps;
 * - it adds no attribute that says something untrue, so none is dropped;
 * - Effect's fiber runtime metrics (`Metric.enableRuntimeMetrics`) are `child_fibers_active`, `child_fibers_started`,
 *   `child_fiber_successes` and `child_fiber_failures`.
 */
export const dialect: OtlpShape.Dialect = {
  ending: (span) =>
    span.status.code === STATUS_OK
      ? "success"
      : span.status.code === STATUS_ERROR
      ? "failure"
      : span.attributes.some((a) => a.key === INTERRUPTED && a.value.boolValue === true)
      ? "interrupted"
      : "unset",
  dropped: new Set(),
  interruptedFlag: INTERRUPTED,
  runtimeMetric: (name) => name.startsWith("child_fiber")
}

/** The data the exporters hand the serialization: `effect/observability`'s types. */
export type TracesInput = OtlpTracer.TraceData
export type MetricsInput = OtlpMetrics.MetricsData
export type LogsInput = OtlpLogger.LogsData

/** The exporter's data as the shaping steps read it (it is of their types already). */
export const asTraces = (data: TracesInput): TracesInput & OtlpShape.TracesData => data
export const asMetrics = (data: MetricsInput): MetricsInput & OtlpShape.MetricsData => data
export const asLogs = (data: LogsInput): LogsInput & OtlpShape.LogsData => data
