/**
 * What `effect/observability`'s OTLP exporters send, brought to the conventions before it is encoded (they hand their
 * OTLP data to the `OtlpSerialization` service, which this wraps): `internal/otlpShape.ts`, the same steps as the
 * Effect 3 edition's (what each corrects is said there), told how Effect 4's exporter writes a span's end:
 *
 * - a success is OK; a failure is ERROR, its message the first error's, with an `exception` event for each;
 * - an interruption (and nothing else) is UNSET with `effect.fiber.interrupted: true`, which the interrupted span keeps;
 * - it adds no attribute that says something untrue, so none is dropped;
 * - Effect's fiber runtime metrics (`Metric.enableRuntimeMetrics`) are `child_fibers_active`, `child_fibers_started`,
 *   `child_fiber_successes` and `child_fiber_failures`.
 */
import type * as HttpBody from "effect/http/HttpBody"
import type * as OtlpLogger from "effect/observability/OtlpLogger"
import type * as OtlpMetrics from "effect/observability/OtlpMetrics"
import type * as OtlpTracer from "effect/observability/OtlpTracer"
import * as OtlpShape from "./otlpShape.js"

/** The scopes the data is filed under. */
export type Scopes = OtlpShape.Scopes

const STATUS_OK = 1
const STATUS_ERROR = 2

const INTERRUPTED = "effect.fiber.interrupted"

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

/** The serialization's functions (`OtlpSerialization`'s service). */
export interface Serialization {
  readonly traces: (data: OtlpTracer.TraceData) => HttpBody.HttpBody
  readonly metrics: (data: OtlpMetrics.MetricsData) => HttpBody.HttpBody
  readonly logs: (data: OtlpLogger.LogsData) => HttpBody.HttpBody
}

// The shaping steps keep every field they do not read (the resource, a span's ids and times, a point's values): the
// data they give back is the exporter's, shaped.
export const serialization = (
  encode: Serialization,
  options: { readonly runtimeMetrics: boolean; readonly scopes: Scopes }
): Serialization => ({
  traces: (data) => encode.traces(OtlpShape.traces(data, dialect, options.scopes)),
  metrics: (data) => encode.metrics(OtlpShape.metrics(data, dialect, options)),
  logs: (data) => encode.logs(OtlpShape.logs(data, options.scopes))
})
