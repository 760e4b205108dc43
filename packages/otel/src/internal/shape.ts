/**
 * What the edition's OTLP exporters send, brought to the conventions before it is encoded (they hand their OTLP data
 * to the `OtlpSerialization` service, which this wraps): `internal/otlpShape.ts` (the same steps in both editions; what
 * each corrects is said there), told how the edition's exporter writes a span's end (the adapter's `dialect`).
 */
import {
  asLogs,
  asMetrics,
  asTraces,
  dialect,
  type HttpBody,
  type LogsInput,
  type MetricsInput,
  type TracesInput
} from "./edition.js"
import * as OtlpShape from "./otlpShape.js"

export { dialect }

/** The scopes the data is filed under. */
export type Scopes = OtlpShape.Scopes

/** The serialization's functions (`OtlpSerialization`'s service), each shaping its data first. */
export interface Serialization {
  readonly traces: (data: TracesInput) => HttpBody
  readonly metrics: (data: MetricsInput) => HttpBody
  readonly logs: (data: LogsInput) => HttpBody
}

// The shaping steps keep every field they do not read (the resource, a span's ids and times, a point's values): the
// data they give back is the exporter's, shaped.
export const serialization = (
  encode: Serialization,
  options: { readonly runtimeMetrics: boolean; readonly scopes: Scopes }
): Serialization => ({
  traces: (data) => encode.traces(OtlpShape.traces(asTraces(data), dialect, options.scopes)),
  metrics: (data) => encode.metrics(OtlpShape.metrics(asMetrics(data), dialect, options)),
  logs: (data) => encode.logs(OtlpShape.logs(asLogs(data), options.scopes))
})
