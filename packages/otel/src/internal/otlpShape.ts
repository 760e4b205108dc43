/**
 * What Effect's OTLP exporters send, brought to the conventions before it is encoded (docs/observability.md): each
 * edition's `ErpTelemetry` wraps its exporters' serialization with these, telling them how its exporter writes a span's
 * end (`Dialect`). What each step corrects, and what would be worth proposing upstream:
 *
 * - Span status. A successful span's OK becomes UNSET, as instrumentation should leave it (the trace API's
 *   specification: OK is the application's to set); so does the span of work the client cancelled (`erp.cancelled`),
 *   which ends with a success. An interrupted span (Effect 3's exporter writes it OK with a message, Effect 4's UNSET
 *   with `effect.fiber.interrupted`) becomes ERROR, saying `interrupted`, with `error.type: interrupted`: it did not
 *   complete.
 * - Every ERROR span says `error.type`, as the HTTP conventions ask of a failed operation: the client's spans set it
 *   themselves; any other (the program's own) gets its exception's type (a tagged error's tag), else `_OTHER`.
 * - A failed HTTP attempt that was answered (`http.response.status_code`) is no exception: its `exception` event, with
 *   Effect's rendering of the failure and its stack, is dropped; `error.type` and the status say it.
 * - Instrumentation scope. The exporters name one scope for everything (`effect`, or the service's name): the
 *   client's spans and metrics go under the client package's name, the streams' under the streams package's, each
 *   with its version, and the program's own (and every log record, which says nothing of where it came from) under the
 *   scope the layer is given.
 * - Metrics. The unit travels as a `unit` attribute, exported both as the metric's unit and as an attribute of each
 *   point: the attribute is dropped. Attributes are strings; the conventions' integers (`server.port`,
 *   `http.response.status_code`, and `erp.result.code`) are sent as integers. Effect's fiber runtime metrics are left
 *   out unless asked for.
 *
 * Plain functions over data, the same in both editions (the Effect 4 package's copy is generated from this file).
 *
 * @since 0.1.0
 */
import * as Telemetry from "@erp-client/kernel/Telemetry"

/**
 * An OTLP attribute value, as the exporters write it before encoding.
 *
 * @since 0.1.0
 * @category Models
 */
export interface AnyValue {
  readonly stringValue?: string | null | undefined
  readonly boolValue?: boolean | null | undefined
  readonly intValue?: string | number | null | undefined
  readonly doubleValue?: number | null | undefined
  readonly arrayValue?: { readonly values: ReadonlyArray<AnyValue> } | undefined
}

/**
 * An OTLP attribute.
 *
 * @since 0.1.0
 * @category Models
 */
export interface KeyValue {
  readonly key: string
  readonly value: AnyValue
}

/**
 * An instrumentation scope, as OTLP writes it.
 *
 * @since 0.1.0
 * @category Models
 */
export interface InstrumentationScope {
  readonly name: string
  readonly version?: string | undefined
}

/**
 * A span's status: OTLP's code (0 unset, 1 ok, 2 error) and message.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Status {
  readonly code: number
  readonly message?: string | undefined
}

/**
 * The part of an OTLP span these steps read and write; the rest of it is kept as it is.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Span {
  readonly name: string
  readonly kind?: number | undefined
  readonly attributes: ReadonlyArray<KeyValue>
  readonly events: ReadonlyArray<{ readonly name: string; readonly attributes: ReadonlyArray<KeyValue> }>
  readonly status: Status
}

/**
 * OTLP traces: spans by resource and scope.
 *
 * @since 0.1.0
 * @category Models
 */
export interface TracesData {
  readonly resourceSpans: ReadonlyArray<{
    readonly scopeSpans: ReadonlyArray<{
      readonly scope?: InstrumentationScope | undefined
      readonly spans: ReadonlyArray<Span>
    }>
  }>
}

/**
 * One OTLP metric: its name, and the points of its kind.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Metric {
  readonly name: string
  readonly sum?: { readonly dataPoints: ReadonlyArray<{ readonly attributes?: ReadonlyArray<KeyValue> | undefined }> }
  readonly gauge?: { readonly dataPoints: ReadonlyArray<{ readonly attributes?: ReadonlyArray<KeyValue> | undefined }> }
  readonly histogram?: {
    readonly dataPoints: ReadonlyArray<{ readonly attributes?: ReadonlyArray<KeyValue> | undefined }>
  }
}

/**
 * OTLP metrics: metrics by resource and scope.
 *
 * @since 0.1.0
 * @category Models
 */
export interface MetricsData {
  readonly resourceMetrics: ReadonlyArray<{
    readonly scopeMetrics: ReadonlyArray<{
      readonly scope?: InstrumentationScope | undefined
      readonly metrics: ReadonlyArray<Metric>
    }>
  }>
}

/**
 * OTLP logs: log records by resource and scope.
 *
 * @since 0.1.0
 * @category Models
 */
export interface LogsData {
  readonly resourceLogs: ReadonlyArray<{
    readonly scopeLogs: ReadonlyArray<{
      readonly scope?: InstrumentationScope | undefined
      readonly logRecords?: ReadonlyArray<unknown> | undefined
    }>
  }>
}

/**
 * How a span ended, as its exporter wrote it: `success`, `interrupted` (only: it did not complete), `failure`, or
 * `unset` (none of these).
 *
 * @since 0.1.0
 * @category Models
 */
export type Ending = "success" | "interrupted" | "failure" | "unset"

/**
 * How one edition's exporter writes what these steps correct.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Dialect {
  /** How the exporter wrote the span's end. */
  readonly ending: (span: Span) => Ending
  /** Attributes the exporter adds to a failed or interrupted span that say nothing true: dropped. */
  readonly dropped: ReadonlySet<string>
  /** The attribute an interrupted span carries, `true`. */
  readonly interruptedFlag: string
  /** Effect's fiber runtime metrics, by name: left out unless asked for. */
  readonly runtimeMetric: (name: string) => boolean
}

/**
 * The scopes the data is filed under: the client's and the streams' packages (one version: the packages are
 * released together), and the program's.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Scopes {
  /** The client package's name: `@erp-client/client`, `@erp-client/effect4-client`. */
  readonly client: string
  /** The streams package's name: `@erp-client/streams`, `@erp-client/effect4-streams`. */
  readonly streams: string
  /** The packages' version. */
  readonly version: string
  /** The program's own spans and metrics, and every log record. */
  readonly program: InstrumentationScope
}

const STATUS_UNSET = 0
const STATUS_ERROR = 2

// OTLP's span kind of a client span.
const KIND_CLIENT = 3

const errorType = (value: string): KeyValue => ({ key: "error.type", value: { stringValue: value } })

const hasErrorType = (attributes: ReadonlyArray<KeyValue>): boolean => attributes.some((a) => a.key === "error.type")

/** `error.type` of a failed span that does not say it: its exception's type, else the conventions' `_OTHER`. */
const withErrorType = (span: Span, attributes: ReadonlyArray<KeyValue>): ReadonlyArray<KeyValue> => {
  if (hasErrorType(attributes)) return attributes
  const exception = span.events.find((e) => e.name === "exception")
  const type = exception?.attributes.find((a) => a.key === "exception.type")?.value.stringValue
  return [...attributes, errorType(typeof type === "string" && type !== "" ? type : Telemetry.OTHER)]
}

/**
 * One span by the conventions (see the module's comment), as `dialect` says its exporter wrote it.
 *
 * @example
 * ```ts
 * import * as OtlpShape from "./otlpShape.js"
 *
 * // Effect 4's exporter writes an interrupted span UNSET, with effect.fiber.interrupted
 * const dialect: OtlpShape.Dialect = {
 *   ending: (span) =>
 *     span.status.code === 1 ? "success" : span.status.code === 2 ? "failure"
 *     : span.attributes.some((a) => a.key === "effect.fiber.interrupted") ? "interrupted" : "unset",
 *   dropped: new Set(),
 *   interruptedFlag: "effect.fiber.interrupted",
 *   runtimeMetric: (name) => name.startsWith("child_fiber")
 * }
 * const flag = { key: "effect.fiber.interrupted", value: { boolValue: true } }
 * const span = OtlpShape.span({ name: "ErpClient.list", attributes: [flag], events: [], status: { code: 0 } }, dialect)
 * console.log(span.status, span.attributes.map((a) => a.key)) // => { code: 2, message: 'interrupted' } [ 'error.type', 'effect.fiber.interrupted' ]
 * ```
 *
 * @since 0.1.0
 * @category Spans
 */
export const span = <S extends Span>(span: S, dialect: Dialect): S => {
  switch (dialect.ending(span)) {
    case "success":
      return { ...span, status: { code: STATUS_UNSET } }
    case "interrupted": {
      const attributes = span.attributes.filter((a) => !dialect.dropped.has(a.key) && a.key !== dialect.interruptedFlag)
      return {
        ...span,
        attributes: [
          ...attributes,
          ...(hasErrorType(attributes) ? [] : [errorType(Telemetry.INTERRUPTED)]),
          { key: dialect.interruptedFlag, value: { boolValue: true } }
        ],
        status: { code: STATUS_ERROR, message: Telemetry.INTERRUPTED }
      }
    }
    case "failure": {
      const answered = span.attributes.some((a) => a.key === "http.response.status_code")
      return {
        ...span,
        attributes: withErrorType(span, span.attributes.filter((a) => !dialect.dropped.has(a.key))),
        events: answered ? span.events.filter((e) => e.name !== "exception") : span.events
      }
    }
    case "unset":
      return span
  }
}

/** Where the telemetry came from: the library's packages, or the program (`undefined`). */
type Origin = "client" | "streams" | undefined

const scopeOf = (origin: Origin, scopes: Scopes): InstrumentationScope =>
  origin === undefined ? scopes.program : { name: scopes[origin], version: scopes.version }

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
    : name.startsWith("erp.client.") || name === Telemetry.metrics.requestDuration.name
    ? "client"
    : undefined

/** The items of every scope of one resource, filed again under the scope of their origin, one group each. */
const refile = <A>(
  groups: ReadonlyArray<ReadonlyArray<A>>,
  origin: (item: A) => Origin,
  scopes: Scopes
): Array<readonly [InstrumentationScope, Array<A>]> => {
  const byOrigin = new Map<Origin, Array<A>>()
  for (const group of groups) {
    for (const item of group) {
      const from = origin(item)
      const items = byOrigin.get(from)
      if (items === undefined) byOrigin.set(from, [item])
      else items.push(item)
    }
  }
  return [...byOrigin].map(([from, items]) => [scopeOf(from, scopes), items] as const)
}

/**
 * Traces by the conventions: each span by `span`, filed under the scope of the package that made it (the client's
 * attempts and calls, the streams' exports), the rest under the program's.
 *
 * @example
 * ```ts
 * import * as OtlpShape from "./otlpShape.js"
 *
 * const dialect: OtlpShape.Dialect = {
 *   ending: (span) => (span.status.code === 1 ? "success" : span.status.code === 2 ? "failure" : "unset"),
 *   dropped: new Set(),
 *   interruptedFlag: "effect.fiber.interrupted",
 *   runtimeMetric: () => false
 * }
 * const span = (name: string) => ({ name, attributes: [], events: [], status: { code: 1 } })
 * const data = { resourceSpans: [{ scopeSpans: [{ scope: { name: "effect" }, spans: [span("ErpClient.get"), span("sync")] }] }] }
 * const scopes = { client: "@erp-client/effect4-client", streams: "@erp-client/effect4-streams", version: "0.1.0", program: { name: "crm-sync" } }
 * const shaped = OtlpShape.traces(data, dialect, scopes)
 * console.log(shaped.resourceSpans[0]!.scopeSpans.map((s) => `${s.scope?.name}: ${s.spans.map((x) => x.name)}`))
 * // => [ '@erp-client/effect4-client: ErpClient.get', 'crm-sync: sync' ]
 * ```
 *
 * @since 0.1.0
 * @category Spans
 */
export const traces = <D extends TracesData>(data: D, dialect: Dialect, scopes: Scopes): D => ({
  ...data,
  resourceSpans: data.resourceSpans.map((resource) => ({
    ...resource,
    scopeSpans: refile(
      resource.scopeSpans.map((group) => group.spans.map((s) => span(s, dialect))),
      spanOrigin,
      scopes
    ).map(([scope, spans]) => ({ scope, spans }))
  }))
})

/**
 * Log records, every one under the program's scope (a record says nothing of the package that logged it).
 *
 * @example
 * ```ts
 * import * as OtlpShape from "./otlpShape.js"
 *
 * const data = { resourceLogs: [{ scopeLogs: [{ scope: { name: "effect" }, logRecords: [{ body: "3 set aside" }] }] }] }
 * const shaped = OtlpShape.logs(data, { client: "", streams: "", version: "0.1.0", program: { name: "crm-sync", version: "2.0.0" } })
 * console.log(shaped.resourceLogs[0]!.scopeLogs[0]!.scope) // => { name: 'crm-sync', version: '2.0.0' }
 * ```
 *
 * @since 0.1.0
 * @category Logs
 */
export const logs = <D extends LogsData>(data: D, scopes: Scopes): D => ({
  ...data,
  resourceLogs: data.resourceLogs.map((resource) => ({
    ...resource,
    scopeLogs: resource.scopeLogs.map((group) => ({ ...group, scope: scopes.program }))
  }))
})

const UNIT_ATTRIBUTES = new Set(["unit", "time_unit"])

const INTEGERS = new Set(["server.port", "http.response.status_code", "erp.result.code"])

const pointAttributes = (list: ReadonlyArray<KeyValue> | undefined): ReadonlyArray<KeyValue> | undefined =>
  list?.filter((a) => !UNIT_ATTRIBUTES.has(a.key)).map((a) => {
    if (!INTEGERS.has(a.key) || typeof a.value.stringValue !== "string") return a
    const value = Number(a.value.stringValue)
    return Number.isInteger(value) ? { key: a.key, value: { intValue: value } } : a
  })

type Points = { readonly dataPoints: ReadonlyArray<{ readonly attributes?: ReadonlyArray<KeyValue> | undefined }> }

const points = <P extends Points>(data: P): P => ({
  ...data,
  dataPoints: data.dataPoints.map((p) => ({ ...p, attributes: pointAttributes(p.attributes) }))
})

const metric = (m: Metric): Metric => ({
  ...m,
  ...(m.sum === undefined ? {} : { sum: points(m.sum) }),
  ...(m.gauge === undefined ? {} : { gauge: points(m.gauge) }),
  ...(m.histogram === undefined ? {} : { histogram: points(m.histogram) })
})

/**
 * Metrics by the conventions: no `unit` attribute on the points, the conventions' integers as integers, Effect's
 * runtime metrics left out unless `runtimeMetrics`, each metric filed under the scope of the package that records it.
 *
 * @example
 * ```ts
 * import * as OtlpShape from "./otlpShape.js"
 *
 * const dialect: OtlpShape.Dialect = {
 *   ending: () => "unset",
 *   dropped: new Set(),
 *   interruptedFlag: "effect.fiber.interrupted",
 *   runtimeMetric: (name) => name.startsWith("child_fiber")
 * }
 * const attributes = [{ key: "unit", value: { stringValue: "s" } }, { key: "server.port", value: { stringValue: "443" } }]
 * const data = { resourceMetrics: [{ scopeMetrics: [{ scope: { name: "crm-sync" }, metrics: [
 *   { name: "http.client.request.duration", histogram: { dataPoints: [{ attributes }] } },
 *   { name: "child_fibers_started", sum: { dataPoints: [] } }
 * ] }] }] }
 * const scopes = { client: "@erp-client/effect4-client", streams: "@erp-client/effect4-streams", version: "0.1.0", program: { name: "crm-sync" } }
 * const [group] = OtlpShape.metrics(data, dialect, { scopes, runtimeMetrics: false }).resourceMetrics[0]!.scopeMetrics
 * console.log(group!.scope?.name, group!.metrics.map((m) => m.name), group!.metrics[0]!.histogram!.dataPoints[0]!.attributes)
 * // => @erp-client/effect4-client [ 'http.client.request.duration' ] [ { key: 'server.port', value: { intValue: 443 } } ]
 * ```
 *
 * @since 0.1.0
 * @category Metrics
 */
export const metrics = <D extends MetricsData>(
  data: D,
  dialect: Dialect,
  options: { readonly scopes: Scopes; readonly runtimeMetrics: boolean }
): D => ({
  ...data,
  resourceMetrics: data.resourceMetrics.map((resource) => ({
    ...resource,
    scopeMetrics: refile(
      resource.scopeMetrics.map((group) =>
        group.metrics.filter((m) => options.runtimeMetrics || !dialect.runtimeMetric(m.name)).map(metric)
      ),
      (m) => metricOrigin(m.name),
      options.scopes
    ).map(([scope, metrics]) => ({ scope, metrics }))
  }))
})
