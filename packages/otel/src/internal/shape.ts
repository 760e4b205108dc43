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
 * - Instrumentation scope. The exporters name one scope for everything, the service's name: the client's spans and
 *   metrics go under `@erp-client/client`, the streams' under `@erp-client/streams`, each with its version, and the
 *   program's own (and every log record, which says nothing of where it came from) under the scope the layer is given.
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

/** An instrumentation scope, as OTLP writes it. */
export interface Scope {
  readonly name: string
  readonly version?: string | undefined
}

interface Span {
  name: string
  kind?: number
  attributes: Array<KeyValue>
  events: Array<{ name: string; attributes: Array<KeyValue> }>
  status: Status
}

interface TracesData {
  resourceSpans: Array<{ scopeSpans: Array<{ scope?: Scope; spans: Array<Span> }> }>
}

interface LogsData {
  resourceLogs: Array<{ scopeLogs: Array<{ scope?: Scope; logRecords: Array<unknown> }> }>
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
  resourceMetrics: Array<{ scopeMetrics: Array<{ scope?: Scope; metrics: Array<MetricData> }> }>
}

const STATUS_UNSET = 0
const STATUS_OK = 1
const STATUS_ERROR = 2

const BOGUS = new Set(["span.label", "status.interrupted"])

// OTLP's span kind of a client span.
const KIND_CLIENT = 3

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

/** Where the telemetry came from: the library's packages, or the program (`undefined`). */
type Origin = "client" | "streams" | undefined

/** The scopes the data is filed under: the library's packages' (one version: they are released together), the rest. */
export interface Scopes {
  readonly version: string
  readonly program: Scope
}

const scopeOf = (origin: Origin, scopes: Scopes): Scope =>
  origin === undefined ? scopes.program : { name: `@erp-client/${origin}`, version: scopes.version }

const spanOrigin = (span: Span): Origin =>
  span.name.startsWith("ErpClient.") ||
    (span.kind === KIND_CLIENT && span.attributes.some((a) => a.key === "erp.endpoint"))
    ? "client"
    : span.name.startsWith("ListEndpoint.")
    ? "streams"
    : undefined

// The streams package's metrics; the client's are every other `erp.client.*` and the conventions' duration.
const STREAMS_METRICS = /^erp\.client\.(records\.|paging\.|lookups)/

const metricOrigin = (name: string): Origin =>
  STREAMS_METRICS.test(name)
    ? "streams"
    : name.startsWith("erp.client.") || name === "http.client.request.duration"
    ? "client"
    : undefined

/** The items of every scope of one resource, filed again under the scope of their origin, one group each. */
const refile = <A, K extends string>(
  groups: Array<{ scope?: Scope } & { [key in K]: Array<A> }>,
  key: K,
  origin: (item: A) => Origin,
  scopes: Scopes
): Array<{ scope: Scope } & { [key in K]: Array<A> }> => {
  const byOrigin = new Map<Origin, Array<A>>()
  for (const group of groups) {
    for (const item of group[key]) {
      const from = origin(item)
      const items = byOrigin.get(from)
      if (items === undefined) byOrigin.set(from, [item])
      else items.push(item)
    }
  }
  return [...byOrigin].map(([from, items]) => ({ scope: scopeOf(from, scopes), [key]: items }) as any)
}

export const traces = (data: TracesData, scopes: Scopes): TracesData => ({
  resourceSpans: data.resourceSpans.map((resource) => ({
    ...resource,
    scopeSpans: refile(
      resource.scopeSpans.map((scope) => ({ ...scope, spans: scope.spans.map(span) })),
      "spans",
      spanOrigin,
      scopes
    )
  }))
})

export const logs = (data: LogsData, scopes: Scopes): LogsData => ({
  resourceLogs: data.resourceLogs.map((resource) => ({
    ...resource,
    scopeLogs: resource.scopeLogs.map((scope) => ({ ...scope, scope: scopes.program }))
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

export const metrics = (
  data: MetricsData,
  options: { readonly runtimeMetrics: boolean; readonly scopes: Scopes }
): MetricsData => ({
  resourceMetrics: data.resourceMetrics.map((resource) => ({
    ...resource,
    scopeMetrics: refile(
      resource.scopeMetrics.map((scope) => ({
        ...scope,
        metrics: scope.metrics
          .filter((m) => options.runtimeMetrics || !m.name.startsWith("effect_fiber_"))
          .map(metric)
      })),
      "metrics",
      (m: MetricData) => metricOrigin(m.name),
      options.scopes
    )
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
  options: { readonly runtimeMetrics: boolean; readonly scopes: Scopes }
): Serialization => ({
  traces: (data) => encode.traces(traces(data as TracesData, options.scopes)),
  metrics: (data) => encode.metrics(metrics(data as MetricsData, options)),
  logs: (data) => encode.logs(logs(data as LogsData, options.scopes))
})
