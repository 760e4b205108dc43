// Per edition: the Effect APIs this package uses whose names or shapes differ between Effect 3 and Effect 4.
/**
 * The Effect 4 edition's side of the otel package's adapter (docs/editions.md): each name here has a twin of the same
 * type in `packages/otel/src/internal/edition.ts`, written with Effect 3's API. The shared modules, copied here from
 * the Effect 3 package by `scripts/editions.ts`, import what differs from here and everything else from `effect`
 * itself. The exporters themselves differ more than a name: they are `internal/exporters.ts`, one file per edition.
 */
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import type * as HttpBodyModule from "effect/http/HttpBody"
import type * as HttpClientModule from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Layer from "effect/Layer"
import type * as LogLevel from "effect/LogLevel"
import type * as OtlpLogger from "effect/observability/OtlpLogger"
import type * as OtlpMetrics from "effect/observability/OtlpMetrics"
import type * as OtlpTracer from "effect/observability/OtlpTracer"
import type { Contract } from "./editionContract.js"
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

/** The name of a log level, as `logLevel` takes it: Effect 4's `LogLevel` (`"Warn"`, …). */
export type LogLevelName = LogLevel.LogLevel

/** The data the exporters hand the serialization: `effect/observability`'s types. */
export type TracesInput = OtlpTracer.TraceData
export type MetricsInput = OtlpMetrics.MetricsData
export type LogsInput = OtlpLogger.LogsData

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

/** The adapter, with Effect 4's API: what each function does is said once, in `Contract`. */
const edition: Contract = {
  toMillis: (input) => Duration.toMillis(Duration.fromInputUnsafe(input)),
  configString: (name) => Config.String(name),
  unwrapScoped: (self) => Layer.unwrap(self),
  // Effect 4: an `EncodeError` reason.
  refuse: (request, description) =>
    new HttpClientError.HttpClientError({ reason: new HttpClientError.EncodeError({ request, description }) }),
  // Effect 4: a `TransportError` reason.
  connectionFailure: (error) => error.reason._tag === "TransportError" ? { cause: error.reason.cause } : undefined,
  dialect,
  // The exporter's data is of the shaping steps' types already.
  asTraces: (data) => data,
  asMetrics: (data) => data,
  asLogs: (data) => data
}

export const { asLogs, asMetrics, asTraces, configString, connectionFailure, refuse, toMillis, unwrapScoped } = edition
