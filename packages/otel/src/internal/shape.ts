/**
 * What @effect/opentelemetry's OTLP exporters send, brought to the conventions before it is encoded (it hands its
 * OTLP data to the `OtlpSerialization` service, which this wraps). What each step corrects, and what would be worth
 * proposing upstream:
 *
 * - Span status. An interrupted span ends with status OK (its message Effect's "All fibers interrupted without
 *   errors."): it becomes ERROR, saying `interrupted`, with `error.type: interrupted` (it did not complete). A failed
 *   span carries `span.label: ⚠︎ Interrupted` and `status.interrupted: true` whatever the failure: dropped, but on the
 *   interrupted. A successful span's OK becomes UNSET, as instrumentation should leave it (the trace API's spec: OK is
 *   the application's to set); so does the span of work the client cancelled (`erp.cancelled`), which ends with a
 *   success.
 * - Every ERROR span says `error.type`, as the HTTP conventions ask of a failed operation: the client's spans set it
 *   themselves; any other (the program's own) gets its exception's type (a tagged error's tag), else `_OTHER`.
 * - A failed HTTP attempt that was answered (`http.response.status_code`) is no exception: its `exception` event, with
 *   Effect's rendering of the failure and its stack, is dropped; `error.type` and the status say it.
 * - Metrics. The unit travels as a `unit` tag, exported both as the metric's unit and as an attribute of each point:
 *   the attribute is dropped. Tags are strings; the conventions' integers (`server.port`,
 *   `http.response.status_code`) are sent as integers. Effect's fiber runtime metrics (`effect_fiber_*`) are left out
 *   unless asked for.
 */
import type * as OtlpResource from "@effect/opentelemetry/OtlpResource"
import type * as HttpBody from "@effect/platform/HttpBody"

type KeyValue = OtlpResource.KeyValue

interface Status {
  code: number
  message?: string | undefined
}

interface Span {
  attributes: Array<KeyValue>
  events: Array<{ name: string; attributes: Array<KeyValue> }>
  status: Status
}

interface TracesData {
  resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<Span> }> }>
}

interface DataPoint {
  attributes?: Array<KeyValue>
}

interface MetricData {
  name: string
  sum?: { dataPoints: Array<DataPoint> }
  gauge?: { dataPoints: Array<DataPoint> }
  histogram?: { dataPoints: Array<DataPoint> }
}

interface MetricsData {
  resourceMetrics: Array<{ scopeMetrics: Array<{ metrics: Array<MetricData> }> }>
}

const STATUS_UNSET = 0
const STATUS_OK = 1
const STATUS_ERROR = 2

const BOGUS = new Set(["span.label", "status.interrupted"])

const errorType = (value: string): KeyValue => ({ key: "error.type", value: { stringValue: value } })

/** `error.type` of a failed span that does not say it: its exception's type, else the conventions' `_OTHER`. */
const withErrorType = (span: Span, attributes: Array<KeyValue>): Array<KeyValue> => {
  if (attributes.some((a) => a.key === "error.type")) return attributes
  const exception = span.events.find((e) => e.name === "exception")
  const type = exception?.attributes.find((a) => a.key === "exception.type")?.value.stringValue
  return [...attributes, errorType(typeof type === "string" && type !== "" ? type : "_OTHER")]
}

/** One span, by the conventions (see the module's comment). */
const span = (span: Span): Span => {
  const { status } = span
  if (status.code === STATUS_OK) {
    // OK with a message is how the exporter writes an interruption.
    if (status.message === undefined || status.message === "") return { ...span, status: { code: STATUS_UNSET } }
    const attributes = span.attributes.filter((a) => !BOGUS.has(a.key))
    return {
      ...span,
      attributes: [
        ...attributes,
        ...(attributes.some((a) => a.key === "error.type") ? [] : [errorType("interrupted")]),
        { key: "status.interrupted", value: { boolValue: true } }
      ],
      status: { code: STATUS_ERROR, message: "interrupted" }
    }
  }
  if (status.code !== STATUS_ERROR) return span
  const answered = span.attributes.some((a) => a.key === "http.response.status_code")
  return {
    ...span,
    attributes: withErrorType(span, span.attributes.filter((a) => !BOGUS.has(a.key))),
    events: answered ? span.events.filter((e) => e.name !== "exception") : span.events
  }
}

export const traces = (data: TracesData): TracesData => ({
  resourceSpans: data.resourceSpans.map((resource) => ({
    ...resource,
    scopeSpans: resource.scopeSpans.map((scope) => ({ ...scope, spans: scope.spans.map(span) }))
  }))
})

const UNIT_TAGS = new Set(["unit", "time_unit"])
const INTEGERS = new Set(["server.port", "http.response.status_code", "erp.result.code"])

const attributes = (list: Array<KeyValue> | undefined): Array<KeyValue> | undefined =>
  list?.filter((a) => !UNIT_TAGS.has(a.key)).map((a) => {
    if (!INTEGERS.has(a.key) || typeof a.value.stringValue !== "string") return a
    const value = Number(a.value.stringValue)
    return Number.isInteger(value) ? { key: a.key, value: { intValue: value } } : a
  })

const points = <P extends { dataPoints: Array<DataPoint> }>(data: P | undefined): P | undefined =>
  data === undefined
    ? undefined
    : { ...data, dataPoints: data.dataPoints.map((p) => ({ ...p, attributes: attributes(p.attributes) })) }

const metric = (m: MetricData): MetricData => {
  const out: MetricData = { ...m }
  if (m.sum !== undefined) out.sum = points(m.sum)!
  if (m.gauge !== undefined) out.gauge = points(m.gauge)!
  if (m.histogram !== undefined) out.histogram = points(m.histogram)!
  return out
}

export const metrics = (data: MetricsData, options: { readonly runtimeMetrics: boolean }): MetricsData => ({
  resourceMetrics: data.resourceMetrics.map((resource) => ({
    ...resource,
    scopeMetrics: resource.scopeMetrics.map((scope) => ({
      ...scope,
      metrics: scope.metrics
        .filter((m) => options.runtimeMetrics || !m.name.startsWith("effect_fiber_"))
        .map(metric)
    }))
  }))
})

/** The serialization's functions, each shaping its data first. */
export interface Serialization {
  readonly traces: (data: unknown) => HttpBody.HttpBody
  readonly metrics: (data: unknown) => HttpBody.HttpBody
  readonly logs: (data: unknown) => HttpBody.HttpBody
}

export const serialization = (
  encode: Serialization,
  options: { readonly runtimeMetrics: boolean }
): Serialization => ({
  traces: (data) => encode.traces(traces(data as TracesData)),
  metrics: (data) => encode.metrics(metrics(data as MetricsData, options)),
  logs: encode.logs
})
