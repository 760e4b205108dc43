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
import * as Layer from "effect/Layer"
import type * as LogLevel from "effect/LogLevel"
import type { Contract } from "./editionContract.js"
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

/** The name of a log level, as `logLevel` takes it: Effect 3's `LogLevel.Literal` (`"Warning"`, …). */
export type LogLevelName = LogLevel.Literal

/** The data the exporters hand the serialization: untyped in Effect 3. */
export type TracesInput = unknown
export type MetricsInput = unknown
export type LogsInput = unknown

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

/** The adapter, with Effect 3's API: what each function does is said once, in `Contract`. */
const edition: Contract = {
  toMillis: (input) => Duration.toMillis(input),
  configString: (name) => Config.string(name),
  unwrapScoped: (self) => Layer.unwrapScoped(self),
  // Effect 3: an `Encode` request error.
  refuse: (request, description) => new HttpClientError.RequestError({ request, reason: "Encode", description }),
  // Effect 3: a `RequestError`.
  connectionFailure: (error) => error._tag === "RequestError" ? { cause: error.cause } : undefined,
  dialect,
  // Effect 3 types the exporter's data only as `unknown`.
  asTraces: (data) => data as OtlpShape.TracesData,
  asMetrics: (data) => data as OtlpShape.MetricsData,
  asLogs: (data) => data as OtlpShape.LogsData
}

export const { asLogs, asMetrics, asTraces, configString, connectionFailure, refuse, toMillis, unwrapScoped } = edition
