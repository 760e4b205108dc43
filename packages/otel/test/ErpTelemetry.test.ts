import { NodeHttpClient } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { ErpClient, ErpRateLimiter } from "@erp-client/client"
import { ErpTelemetry } from "@erp-client/otel"
import { Fault, Sandbox } from "@erp-client/sandbox"
import { Partners } from "@erp-client/streams"
import { MetricReader } from "@opentelemetry/sdk-metrics"
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Effect, Layer, Redacted, Stream } from "effect"

const KEY = "sk-otel-never-exported-31c9"

/** A metric reader that only answers `collect()`. */
class InMemoryMetricReader extends MetricReader {
  protected override onShutdown() {
    return Promise.resolve()
  }
  protected override onForceFlush() {
    return Promise.resolve()
  }
}

const tree = (spans: ReadonlyArray<ReadableSpan>): string => {
  const children = new Map<string | undefined, Array<ReadableSpan>>()
  const ids = new Set(spans.map((s) => s.spanContext().spanId))
  for (const span of spans) {
    const parent = span.parentSpanContext?.spanId
    const key = parent !== undefined && ids.has(parent) ? parent : undefined
    children.set(key, [...(children.get(key) ?? []), span])
  }
  const lines: Array<string> = []
  const walk = (parent: string | undefined, depth: number) => {
    for (const span of children.get(parent) ?? []) {
      const attrs = Object.entries(span.attributes)
        .filter(([k]) => k.startsWith("erp.") || k === "http.response.status_code" || k === "http.request.resend_count")
        .map(([k, v]) => `${k}=${v}`)
        .join(" ")
      lines.push(`${"  ".repeat(depth)}${span.name} ${attrs}`)
      walk(span.spanContext().spanId, depth + 1)
    }
  }
  walk(undefined, 0)
  return lines.join("\n")
}

describe("ErpTelemetry", () => {
  it.live("exports a span per request and per stream, and the client's metrics, none holding the key", () => {
    const exporter = new InMemorySpanExporter()
    const reader = new InMemoryMetricReader()
    const telemetry = ErpTelemetry.layer({
      serviceName: "erp-client-test",
      spanProcessor: new SimpleSpanProcessor(exporter),
      metricReader: reader
    })
    const client = Layer.unwrapEffect(
      Effect.map(
        Sandbox.Sandbox,
        (sandbox) =>
          ErpClient.layer({ baseUrl: sandbox.baseUrl, apiKey: Redacted.make(KEY), retryBaseDelay: "10 millis" }).pipe(
            Layer.provide(ErpRateLimiter.layer()),
            Layer.provide(NodeHttpClient.layerUndici)
          )
      )
    ).pipe(Layer.provideMerge(Sandbox.layer({ apiKeys: [KEY], partners: 25 })))

    return Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      yield* sandbox.inject(Fault.Fault.Status({ status: 503 }), { times: 1, endpoint: "/partner/list" })
      const partners = yield* Stream.runCollect(Partners.stream({ pageSize: 10, concurrency: 1 }))
      expect(partners.length).toBe(25)
      yield* Effect.either(Partners.get(99_999))

      const spans = exporter.getFinishedSpans()
      if (process.env.ERP_PRINT_SPANS) console.log(tree(spans))
      const stream = spans.find((s) => s.name === "ListEndpoint.pages")!
      // Pages at 0, 10 and 20 (short: 5), and the empty one at 25 that ends the list.
      expect(stream.attributes).toMatchObject({ "erp.endpoint": "partner/list", "erp.pages": 4, "erp.records": 25 })
      const lists = spans.filter((s) => s.name === "ErpClient.list")
      expect(lists).toHaveLength(4)
      for (const list of lists) {
        expect(list.parentSpanContext?.spanId).toBe(stream.spanContext().spanId)
        expect(list.attributes).toMatchObject({
          "erp.endpoint": "partner/list",
          "erp.list_count": 10,
          "erp.result.code": 1
        })
      }
      expect(lists.map((s) => s.attributes["erp.list_offset"]).sort()).toEqual([0, 10, 20, 25])
      // One span per attempt under its call: the 503 and its retry, which says it was sent again.
      const http = spans.filter((s) => s.name === "GET partner/list")
      expect(http.length).toBe(5)
      expect(http.filter((s) => s.attributes["http.response.status_code"] === 503)).toHaveLength(1)
      expect(http.filter((s) => s.attributes["http.request.resend_count"] === 1)).toHaveLength(1)
      const get = spans.find((s) => s.name === "ErpClient.get")!
      expect(get.attributes["erp.result.code"]).toBe(0)

      const { resourceMetrics } = yield* Effect.promise(() => reader.collect())
      const metrics = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics)
      const names = metrics.map((m) => m.descriptor.name)
      for (
        const name of [
          "erp.client.requests",
          "http.client.request.duration",
          "erp.client.rate_limit.wait",
          "erp.client.records.streamed",
          "erp.client.retries"
        ]
      ) expect(names).toContain(name)
      const requests = metrics.find((m) => m.descriptor.name === "erp.client.requests")!
      const outcomes = requests.dataPoints.map((p) => `${p.attributes["erp.endpoint"]} ${p.attributes["erp.outcome"]}`)
      expect(outcomes).toContain("partner/list 5xx")
      expect(outcomes).toContain("partner/list 2xx")

      const exported = JSON.stringify([
        spans.map((s) => [s.name, s.attributes, s.events, s.status]),
        resourceMetrics
      ])
      expect(exported).not.toContain(KEY)
    }).pipe(Effect.provide(client), Effect.provide(telemetry))
  })
})
