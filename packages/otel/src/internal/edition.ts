// Per edition: the Effect APIs this package uses whose names or shapes differ between Effect 3 and Effect 4.
/**
 * The Effect 3 edition's side of the otel package's adapter (docs/editions.md): each name here has a twin of the same
 * type in `packages/effect4-otel/src/internal/edition.ts`, written with Effect 4's API. The shared modules import what
 * differs from here and everything else from `effect` itself. The exporters themselves differ more than a name:
 * they are `internal/exporters.ts`, one file per edition.
 */
import type * as HttpBodyModule from "@effect/platform/HttpBody"
import type * as HttpClientModule from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as LogLevel from "effect/LogLevel"
import type * as Scope from "effect/Scope"
import type * as OtlpShape from "./otlpShape.js"

export * as HttpClient from "@effect/platform/HttpClient"
export * as HttpClientError from "@effect/platform/HttpClientError"

/** A request's body, as the serialization makes it. */
export type HttpBody = HttpBodyModule.HttpBody

/** An HttpClient that fails with any `HttpClientError` and needs nothing. */
export type AnyHttpClient = HttpClientModule.HttpClient

/** A request of the platform. */
export type Request = HttpClientRequest.HttpClientRequest

/** What `Duration` reads as a duration: Effect 3's `DurationInput`. */
export type DurationInput = Duration.DurationInput

/** `input` in milliseconds. */
export const toMillis = (input: DurationInput): number => Duration.toMillis(input)

/** A text setting: Effect 3's `Config.string`. */
export const configString = (name: string): Config.Config<string> => Config.string(name)

/** The name of a log level, as `logLevel` takes it: Effect 3's `LogLevel.Literal` (`"Warning"`, …). */
export type LogLevelName = LogLevel.Literal

/** The layer `self` makes, its scope the layer's: Effect 3's `Layer.unwrapScoped`. */
export const unwrapScoped = (self: Effect.Effect<Layer.Layer<never>, never, Scope.Scope>): Layer.Layer<never> =>
  Layer.unwrapScoped(self)

/**
 * A request refused before it is sent, with `description`: not a transport error, so the exporter does not retry it,
 * and pauses.
 */
export const refuse = (request: Request, description: string): HttpClientError.HttpClientError =>
  new HttpClientError.RequestError({ request, reason: "Encode", description })

/** The cause of `error` when the connection failed (Effect 3: a `RequestError`), else `undefined`. */
export const connectionFailure = (error: HttpClientError.HttpClientError): { readonly cause: unknown } | undefined =>
  error._tag === "RequestError" ? { cause: error.cause } : undefined

const STATUS_OK = 1
const STATUS_ERROR = 2

/**
 * How `@effect/opentelemetry`'s exporter writes a span's end (`internal/otlpShape.ts` corrects it):
 *
 * - a success is OK without a message; an interruption is OK with a message (Effect's "All fibers interrupted without
 *   errors."); a failure is ERROR;
 * - a failed span carries `span.label: ⚠︎ Interrupted` and `status.interrupted: true` whatever the failure: dropped,
 *   but on the interrupted, which say `status.interrupted: true`;
 * - Effect's fiber runtime metrics are `effect_fiber_*`.
 */
export const dialect: OtlpShape.Dialect = {
  ending: (span) =>
    span.status.code === STATUS_OK
      ? span.status.message === undefined || span.status.message === "" ? "success" : "interrupted"
      : span.status.code === STATUS_ERROR
      ? "failure"
      : "unset",
  dropped: new Set(["span.label", "status.interrupted"]),
  interruptedFlag: "status.interrupted",
  runtimeMetric: (name) => name.startsWith("effect_fiber_")
}

/** The data the exporters hand the serialization: untyped in Effect 3. */
export type TracesInput = unknown
export type MetricsInput = unknown
export type LogsInput = unknown

/** The exporter's data as the shaping steps read it (Effect 3 types it only as `unknown`). */
export const asTraces = (data: TracesInput): TracesInput & OtlpShape.TracesData => data as OtlpShape.TracesData
export const asMetrics = (data: MetricsInput): MetricsInput & OtlpShape.MetricsData => data as OtlpShape.MetricsData
export const asLogs = (data: LogsInput): LogsInput & OtlpShape.LogsData => data as OtlpShape.LogsData
