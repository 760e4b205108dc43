/**
 * What @effect/opentelemetry's OTLP exporters send, brought to the conventions before it is encoded (it hands its
 * OTLP data to the `OtlpSerialization` service, which this wraps): `internal/otlpShape.ts` (the same steps in both
 * editions; what each corrects is said there), told how this exporter writes a span's end:
 *
 * - a success is OK without a message; an interruption is OK with a message (Effect's "All fibers interrupted without
 *   errors."); a failure is ERROR;
 * - a failed span carries `span.label: ⚠︎ Interrupted` and `status.interrupted: true` whatever the failure: dropped,
 *   but on the interrupted, which say `status.interrupted: true`;
 * - Effect's fiber runtime metrics are `effect_fiber_*`.
 */
import type * as HttpBody from "@effect/platform/HttpBody"
import * as OtlpShape from "./otlpShape.js"

/** The scopes the data is filed under. */
export type Scopes = OtlpShape.Scopes

const STATUS_OK = 1
const STATUS_ERROR = 2

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

/** The serialization's functions, each shaping its data first. */
export interface Serialization {
  readonly traces: (data: unknown) => HttpBody.HttpBody
  readonly metrics: (data: unknown) => HttpBody.HttpBody
  readonly logs: (data: unknown) => HttpBody.HttpBody
}

export const serialization = (
  encode: Serialization,
  options: { readonly runtimeMetrics: boolean; readonly scopes: Scopes }
): Serialization => ({
  traces: (data) => encode.traces(OtlpShape.traces(data as OtlpShape.TracesData, dialect, options.scopes)),
  metrics: (data) => encode.metrics(OtlpShape.metrics(data as OtlpShape.MetricsData, dialect, options)),
  logs: (data) => encode.logs(OtlpShape.logs(data as OtlpShape.LogsData, options.scopes))
})
