/**
 * A test OTLP/HTTP receiver on a loopback port the system picks: it accepts `POST /v1/traces`, `/v1/metrics` and
 * `/v1/logs` in both encodings, decodes protobuf with the official OpenTelemetry proto definitions (the `.proto` files
 * of opentelemetry-proto as `@opentelemetry/otlp-grpc-exporter-base@0.38.0` ships them, read by protobufjs) and JSON
 * as the OTLP/JSON mapping writes it, and hands both back in one plain shape to assert on. It can also be silent
 * (accept the connection, never answer) or answer with an error status.
 */
import * as Http from "node:http"
import { createRequire } from "node:module"
import type * as Net from "node:net"
import * as Path from "node:path"
import protobuf from "protobufjs"

const require = createRequire(import.meta.url)
const PROTOS = Path.join(
  Path.dirname(require.resolve("@opentelemetry/otlp-grpc-exporter-base/package.json")),
  "build/protos"
)

const root = new protobuf.Root()
root.resolvePath = (_origin, target) => Path.join(PROTOS, target)
root.loadSync([
  "opentelemetry/proto/collector/trace/v1/trace_service.proto",
  "opentelemetry/proto/collector/metrics/v1/metrics_service.proto",
  "opentelemetry/proto/collector/logs/v1/logs_service.proto"
], { keepCase: false })

const requestTypes = {
  traces: root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest"),
  metrics: root.lookupType("opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest"),
  logs: root.lookupType("opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest")
}

export type Signal = keyof typeof requestTypes

export type Attributes = Record<string, unknown>

export interface ReceivedSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId: string
  readonly name: string
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  readonly kind: number
  readonly startTimeUnixNano: bigint
  readonly endTimeUnixNano: bigint
  readonly attributes: Attributes
  readonly events: ReadonlyArray<{ readonly name: string; readonly attributes: Attributes }>
  /** OTLP's StatusCode: 0 unset, 1 ok, 2 error. */
  readonly status: { readonly code: number; readonly message: string }
  readonly resource: Attributes
  /** The instrumentation scope's name and version. */
  readonly scope: string
  readonly scopeVersion: string
}

export interface ReceivedPoint {
  readonly attributes: Attributes
  /** A sum's or gauge's value. */
  readonly value?: number
  /** A histogram's. */
  readonly count?: number
  readonly sum?: number
  readonly explicitBounds?: ReadonlyArray<number>
  readonly bucketCounts?: ReadonlyArray<number>
}

export interface ReceivedMetric {
  readonly name: string
  readonly unit: string
  readonly description: string
  readonly kind: "sum" | "gauge" | "histogram" | "other"
  readonly monotonic?: boolean
  /** OTLP's AggregationTemporality: 1 delta, 2 cumulative. */
  readonly temporality?: number
  readonly points: ReadonlyArray<ReceivedPoint>
  readonly resource: Attributes
  /** The instrumentation scope's name and version. */
  readonly scope: string
  readonly scopeVersion: string
}

export interface ReceivedLog {
  readonly severityText: string
  readonly severityNumber: number
  readonly body: unknown
  readonly attributes: Attributes
  readonly traceId: string
  readonly spanId: string
  readonly resource: Attributes
  readonly scope: string
}

export interface ReceivedRequest {
  readonly signal: Signal
  readonly contentType: string
  readonly headers: Http.IncomingHttpHeaders
  /** The body as it came, read as latin1 (to search it for what must never be sent). */
  readonly raw: string
}

export type Mode =
  | { readonly _tag: "Answer" }
  | { readonly _tag: "Status"; readonly status: number }
  | { readonly _tag: "Silent" }

// --- decoding -------------------------------------------------------------------------------------------------------

const hex = (value: unknown): string => {
  if (value === undefined || value === null || value === "") return ""
  if (typeof value === "string") {
    // OTLP/JSON writes ids in hex; protobufjs' toObject would write base64: only hex reaches here.
    return value.toLowerCase()
  }
  return Buffer.from(value as Uint8Array).toString("hex")
}

const num = (value: unknown): number => (value === undefined || value === null ? 0 : Number(value))

const big = (value: unknown): bigint => (value === undefined || value === null ? 0n : BigInt(String(value)))

const anyValue = (value: any): unknown => {
  if (value === undefined || value === null) return undefined
  if ("stringValue" in value && value.stringValue !== undefined && value.stringValue !== null) return value.stringValue
  if ("boolValue" in value && value.boolValue !== undefined && value.boolValue !== null) return value.boolValue
  if ("intValue" in value && value.intValue !== undefined && value.intValue !== null) return Number(value.intValue)
  if ("doubleValue" in value && value.doubleValue !== undefined && value.doubleValue !== null) return value.doubleValue
  if (value.arrayValue !== undefined && value.arrayValue !== null) {
    return (value.arrayValue.values ?? []).map(anyValue)
  }
  if (value.kvlistValue !== undefined && value.kvlistValue !== null) return attributes(value.kvlistValue.values)
  return undefined
}

const attributes = (list: ReadonlyArray<any> | undefined): Attributes => {
  const out: Attributes = {}
  for (const kv of list ?? []) out[kv.key] = anyValue(kv.value)
  return out
}

/** Protobuf as protobufjs decodes it, or JSON as OTLP/JSON writes it, as one plain object (camelCase fields). */
const decodeBody = (signal: Signal, contentType: string, body: Buffer): any => {
  if (contentType.startsWith("application/x-protobuf")) {
    const type = requestTypes[signal]
    return type.toObject(type.decode(body), { longs: String, enums: Number, defaults: false, oneofs: false })
  }
  if (contentType.startsWith("application/json")) return JSON.parse(body.toString("utf8"))
  throw new Error(`unexpected content type ${contentType}`)
}

const spansOf = (data: any): Array<ReceivedSpan> =>
  (data.resourceSpans ?? []).flatMap((rs: any) =>
    (rs.scopeSpans ?? []).flatMap((ss: any) =>
      (ss.spans ?? []).map((span: any): ReceivedSpan => ({
        traceId: hex(span.traceId),
        spanId: hex(span.spanId),
        parentSpanId: hex(span.parentSpanId),
        name: span.name,
        kind: num(span.kind),
        startTimeUnixNano: big(span.startTimeUnixNano),
        endTimeUnixNano: big(span.endTimeUnixNano),
        attributes: attributes(span.attributes),
        events: (span.events ?? []).map((e: any) => ({ name: e.name, attributes: attributes(e.attributes) })),
        status: { code: num(span.status?.code), message: span.status?.message ?? "" },
        resource: attributes(rs.resource?.attributes),
        scope: ss.scope?.name ?? "",
        scopeVersion: ss.scope?.version ?? ""
      }))
    )
  )

const metricsOf = (data: any): Array<ReceivedMetric> =>
  (data.resourceMetrics ?? []).flatMap((rm: any) =>
    (rm.scopeMetrics ?? []).flatMap((sm: any) =>
      (sm.metrics ?? []).map((m: any): ReceivedMetric => {
        const resource = attributes(rm.resource?.attributes)
        const base = {
          name: m.name,
          unit: m.unit ?? "",
          description: m.description ?? "",
          resource,
          scope: sm.scope?.name ?? "",
          scopeVersion: sm.scope?.version ?? ""
        }
        const numberPoint = (p: any): ReceivedPoint => ({
          attributes: attributes(p.attributes),
          value: p.asDouble !== undefined && p.asDouble !== null ? Number(p.asDouble) : num(p.asInt)
        })
        if (m.sum) {
          return {
            ...base,
            kind: "sum",
            monotonic: m.sum.isMonotonic === true,
            temporality: num(m.sum.aggregationTemporality),
            points: (m.sum.dataPoints ?? []).map(numberPoint)
          }
        }
        if (m.gauge) return { ...base, kind: "gauge", points: (m.gauge.dataPoints ?? []).map(numberPoint) }
        if (m.histogram) {
          return {
            ...base,
            kind: "histogram",
            temporality: num(m.histogram.aggregationTemporality),
            points: (m.histogram.dataPoints ?? []).map((p: any): ReceivedPoint => ({
              attributes: attributes(p.attributes),
              count: num(p.count),
              sum: num(p.sum),
              explicitBounds: (p.explicitBounds ?? []).map(Number),
              bucketCounts: (p.bucketCounts ?? []).map(Number)
            }))
          }
        }
        return { ...base, kind: "other", points: [] }
      })
    )
  )

const logsOf = (data: any): Array<ReceivedLog> =>
  (data.resourceLogs ?? []).flatMap((rl: any) =>
    (rl.scopeLogs ?? []).flatMap((sl: any) =>
      (sl.logRecords ?? []).map((r: any): ReceivedLog => ({
        severityText: r.severityText ?? "",
        severityNumber: num(r.severityNumber),
        body: anyValue(r.body),
        attributes: attributes(r.attributes),
        traceId: hex(r.traceId),
        spanId: hex(r.spanId),
        resource: attributes(rl.resource?.attributes),
        scope: sl.scope?.name ?? ""
      }))
    )
  )

// --- the server -----------------------------------------------------------------------------------------------------

export interface Receiver {
  readonly url: string
  readonly port: number
  readonly requests: Array<ReceivedRequest>
  readonly spans: Array<ReceivedSpan>
  readonly metrics: Array<ReceivedMetric>
  readonly logs: Array<ReceivedLog>
  /** What the receiver does with the next requests. */
  setMode(mode: Mode): void
  /** Forgets what it received. */
  clear(): void
  /** Resolves once `predicate` holds of what was received (polled; rejects after `timeoutMillis`). */
  until(predicate: (receiver: Receiver) => boolean, timeoutMillis?: number): Promise<void>
  close(): Promise<void>
}

const PATHS: Record<string, Signal> = { "/v1/traces": "traces", "/v1/metrics": "metrics", "/v1/logs": "logs" }

export const start = async (mode: Mode = { _tag: "Answer" }): Promise<Receiver> => {
  let current = mode
  const sockets = new Set<Net.Socket>()
  const receiver: Receiver = {
    url: "",
    port: 0,
    requests: [],
    spans: [],
    metrics: [],
    logs: [],
    setMode: (next) => (current = next),
    clear: () => {
      receiver.requests.length = 0
      receiver.spans.length = 0
      receiver.metrics.length = 0
      receiver.logs.length = 0
    },
    until: (predicate, timeoutMillis = 10_000) =>
      new Promise((resolve, reject) => {
        const started = Date.now()
        const poll = () => {
          if (predicate(receiver)) resolve()
          else if (Date.now() - started > timeoutMillis) reject(new Error("the receiver never got what was expected"))
          else setTimeout(poll, 20)
        }
        poll()
      }),
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
  const server = Http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const signal = PATHS[req.url ?? ""]
      if (req.method !== "POST" || signal === undefined) {
        res.writeHead(404).end()
        return
      }
      const body = Buffer.concat(chunks)
      const contentType = String(req.headers["content-type"] ?? "")
      receiver.requests.push({ signal, contentType, headers: req.headers, raw: body.toString("latin1") })
      if (current._tag === "Silent") return
      if (current._tag === "Status") {
        res.writeHead(current.status, { "content-type": "application/json" }).end("{}")
        return
      }
      try {
        const data = decodeBody(signal, contentType, body)
        if (signal === "traces") receiver.spans.push(...spansOf(data))
        else if (signal === "metrics") receiver.metrics.push(...metricsOf(data))
        else receiver.logs.push(...logsOf(data))
        res.writeHead(200, { "content-type": contentType }).end(
          contentType.startsWith("application/json") ? "{}" : undefined
        )
      } catch (error) {
        res.writeHead(400, { "content-type": "text/plain" }).end(String(error))
      }
    })
  })
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as Net.AddressInfo).port
  Object.assign(receiver, { url: `http://127.0.0.1:${port}`, port })
  return receiver
}

/** The latest data point of each metric by name, merged over the exports (cumulative: the last one holds all). */
export const latestMetrics = (metrics: ReadonlyArray<ReceivedMetric>): Map<string, ReceivedMetric> => {
  const byName = new Map<string, ReceivedMetric>()
  for (const metric of metrics) byName.set(metric.name, metric)
  return byName
}

/** The spans as an indented tree (name and the attributes `pick` keeps), children under their parent. */
export const tree = (
  spans: ReadonlyArray<ReceivedSpan>,
  pick: (key: string) => boolean = (key) => key.startsWith("erp.") || key.startsWith("http.")
): string => {
  const ids = new Set(spans.map((s) => s.spanId))
  const children = new Map<string, Array<ReceivedSpan>>()
  for (const span of [...spans].sort((a, b) => (a.startTimeUnixNano < b.startTimeUnixNano ? -1 : 1))) {
    const parent = ids.has(span.parentSpanId) ? span.parentSpanId : ""
    children.set(parent, [...(children.get(parent) ?? []), span])
  }
  const lines: Array<string> = []
  const walk = (parent: string, depth: number) => {
    for (const span of children.get(parent) ?? []) {
      const attrs = Object.entries(span.attributes)
        .filter(([k]) => pick(k))
        .map(([k, v]) => `${k}=${Array.isArray(v) ? JSON.stringify(v) : v}`)
      const status = span.status.code === 2 ? ` [ERROR${span.status.message ? `: ${span.status.message}` : ""}]` : ""
      lines.push(`${"  ".repeat(depth)}${span.name}${status} ${attrs.join(" ")}`.trimEnd())
      walk(span.spanId, depth + 1)
    }
  }
  walk("", 0)
  return lines.join("\n")
}
