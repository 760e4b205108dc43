import { describe, expect, it } from "@effect/vitest"
import * as CollectorGuard from "../src/internal/collectorGuard.js"
import * as OtelSettings from "../src/internal/otelSettings.js"
import * as OtlpShape from "../src/internal/otlpShape.js"

// The telemetry export's decisions both editions' ErpTelemetry take: the OTEL_* settings, the collector kept out of the
// program's way, and the OTLP data brought to the conventions.

describe("OtelSettings", () => {
  it("a signal's own endpoint as it is, the general one with /v1/<signal>; headers and attributes percent-decoded", () => {
    const settings = OtelSettings.resolve({
      OTEL_EXPORTER_OTLP_ENDPOINT: "https://collector.example:4318/base/",
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: "https://metrics.example/ingest",
      OTEL_EXPORTER_OTLP_HEADERS: "api-key=a%2Cb,x=1",
      OTEL_EXPORTER_OTLP_LOGS_HEADERS: "x=2",
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_TIMEOUT: "2500",
      OTEL_EXPORTER_OTLP_LOGS_TIMEOUT: "700",
      OTEL_RESOURCE_ATTRIBUTES: "service.name=svc,service.version=1.2,team=a%20b",
      OTEL_BSP_SCHEDULE_DELAY: "200",
      OTEL_METRIC_EXPORT_INTERVAL: "not a number"
    })
    expect([settings.serviceName, settings.serviceVersion, settings.attributes]).toEqual(["svc", "1.2", {
      team: "a b"
    }])
    expect(settings.traces).toEqual({
      url: "https://collector.example:4318/base/v1/traces",
      protocol: "http/json",
      headers: { "api-key": "a,b", x: "1" },
      timeoutMillis: 2500
    })
    expect(settings.metrics).toMatchObject({ url: "https://metrics.example/ingest", protocol: "http/protobuf" })
    expect(settings.logs).toMatchObject({ headers: { "api-key": "a,b", x: "2" }, timeoutMillis: 700 })
    expect([settings.traceIntervalMillis, settings.metricIntervalMillis, settings.logIntervalMillis]).toEqual([
      200,
      60_000,
      1_000
    ])
    expect(settings.problems).toEqual([])
  })

  it("the options win over the variables; the defaults past both", () => {
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://from-env:4318",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://traces-from-env/v1/traces",
      OTEL_SERVICE_NAME: "from-env",
      OTEL_TRACES_EXPORTER: "none",
      OTEL_SDK_DISABLED: "true"
    }
    const settings = OtelSettings.resolve(env, {
      endpoint: "http://from-code:4318",
      serviceName: "from-code",
      traces: true,
      disabled: false,
      headers: { authorization: "Bearer t" }
    })
    expect(settings.disabled).toBe(false)
    expect(settings.serviceName).toBe("from-code")
    // The endpoint given in code is every signal's: a signal's own variable no longer applies.
    expect(settings.traces).toMatchObject({
      url: "http://from-code:4318/v1/traces",
      headers: { authorization: "Bearer t" }
    })
    const none = OtelSettings.resolve({})
    expect([none.serviceName, none.disabled, none.traces?.url, none.traces?.timeoutMillis]).toEqual([
      "unknown_service:node",
      false,
      "http://localhost:4318/v1/traces",
      10_000
    ])
    expect(OtelSettings.resolve({ OTEL_SDK_DISABLED: " TRUE " }).disabled).toBe(true)
  })

  it("grpc and unknown exporters are said, and that signal is not sent", () => {
    const settings = OtelSettings.resolve({
      OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
      OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: "http/json",
      OTEL_METRICS_EXPORTER: "prometheus"
    })
    expect([settings.traces, settings.metrics, settings.logs?.protocol]).toEqual([undefined, undefined, "http/json"])
    expect(settings.problems).toEqual([
      "the OTLP protocol grpc is not supported (http/protobuf or http/json): no traces are sent",
      "OTEL_METRICS_EXPORTER=prometheus is not supported (otlp or none): no metrics are sent"
    ])
  })

  it("askedSignals and namesService: what a program that exports only when told sends, and under which name", () => {
    expect(OtelSettings.askedSignals({ OTEL_SERVICE_NAME: "x" })).toEqual([])
    expect(OtelSettings.askedSignals({ OTEL_EXPORTER_OTLP_ENDPOINT: " " })).toEqual([])
    expect(OtelSettings.askedSignals({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" })).toEqual(OtelSettings.SIGNALS)
    expect(OtelSettings.askedSignals({ OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: "http://c/v1/logs" })).toEqual(["logs"])
    expect(OtelSettings.namesService({ OTEL_RESOURCE_ATTRIBUTES: "team=a, service.name=b" })).toBe(true)
    expect(OtelSettings.namesService({ OTEL_RESOURCE_ATTRIBUTES: "service.name=" })).toBe(false)
  })
})

describe("CollectorGuard", () => {
  it("a failure said once, exports dropped for a minute, then tried again", () => {
    const state = CollectorGuard.makeState()
    expect(CollectorGuard.paused(state, 0)).toBe(false)
    expect(CollectorGuard.failed(state, 1_000)).toBe(true)
    expect(CollectorGuard.paused(state, 60_999)).toBe(true)
    // A failure within the pause (another signal's export, already on its way) is not said again, and extends it.
    expect(CollectorGuard.failed(state, 2_000)).toBe(false)
    expect(CollectorGuard.paused(state, 61_500)).toBe(true)
    expect(CollectorGuard.paused(state, 62_000)).toBe(false)
    expect(CollectorGuard.failed(state, 62_000)).toBe(true)
  })

  it("once the program ends, an export gets what is left of the shutdown budget, never less than 0", () => {
    const state = CollectorGuard.makeState()
    expect(CollectorGuard.allowedMillis(state, 0, 10_000)).toBe(10_000)
    CollectorGuard.shutdown(state, 1_000, CollectorGuard.SHUTDOWN_MILLIS)
    expect(CollectorGuard.allowedMillis(state, 1_000, 10_000)).toBe(1_500)
    expect(CollectorGuard.allowedMillis(state, 2_000, 300)).toBe(300)
    expect(CollectorGuard.allowedMillis(state, 3_000, 10_000)).toBe(0)
  })

  it("says a failed connection in a few words", () => {
    const cause = (code: string) => new TypeError("fetch failed", { cause: Object.assign(new Error("x"), { code }) })
    expect(["ECONNREFUSED", "ENOTFOUND", "UND_ERR_SOCKET"].map((code) => CollectorGuard.describeTransport(cause(code))))
      .toEqual(["connection refused", "host not found", "connection closed"])
    expect(CollectorGuard.describeTransport(new TypeError("fetch failed", { cause: new Error("bad port") }))).toBe(
      "bad port"
    )
    expect(CollectorGuard.describeTransport(undefined)).toBe("the connection failed")
    expect(CollectorGuard.noAnswer(250)).toBe("no answer within 0.3 s")
  })
})

describe("OtlpShape", () => {
  // As Effect 4's exporter writes a span's end: OK, ERROR, or UNSET with effect.fiber.interrupted when interrupted.
  const dialect: OtlpShape.Dialect = {
    ending: (span) =>
      span.status.code === 1
        ? "success"
        : span.status.code === 2
        ? "failure"
        : span.attributes.some((a) => a.key === "effect.fiber.interrupted")
        ? "interrupted"
        : "unset",
    dropped: new Set(["bogus"]),
    interruptedFlag: "effect.fiber.interrupted",
    runtimeMetric: (name) => name.startsWith("child_fiber")
  }
  const text = (key: string, value: string): OtlpShape.KeyValue => ({ key, value: { stringValue: value } })
  const exception = (type: string) => ({ name: "exception", attributes: [text("exception.type", type)] })
  const scopes: OtlpShape.Scopes = {
    client: "@erp-client/effect4-client",
    streams: "@erp-client/effect4-streams",
    version: "0.1.0",
    program: { name: "crm-sync", version: "2.0.0" }
  }
  const keys = (span: OtlpShape.Span) => Object.fromEntries(span.attributes.map((a) => [a.key, a.value]))

  it("a success is UNSET; an interruption ERROR interrupted; every ERROR says error.type", () => {
    const ok = OtlpShape.span({ name: "a", attributes: [], events: [], status: { code: 1 } }, dialect)
    expect(ok.status).toEqual({ code: 0 })
    const interrupted = OtlpShape.span({
      name: "b",
      attributes: [text("bogus", "x"), { key: "effect.fiber.interrupted", value: { boolValue: true } }],
      events: [],
      status: { code: 0 }
    }, dialect)
    expect(interrupted.status).toEqual({ code: 2, message: "interrupted" })
    expect(keys(interrupted)).toEqual({
      "error.type": { stringValue: "interrupted" },
      "effect.fiber.interrupted": { boolValue: true }
    })
    const failed = OtlpShape.span(
      { name: "c", attributes: [text("bogus", "x")], events: [exception("SyncStepFailed")], status: { code: 2 } },
      dialect
    )
    expect(keys(failed)).toEqual({ "error.type": { stringValue: "SyncStepFailed" } })
    expect(failed.events).toHaveLength(1)
    const defect = OtlpShape.span({ name: "d", attributes: [], events: [], status: { code: 2 } }, dialect)
    expect(keys(defect)).toEqual({ "error.type": { stringValue: "_OTHER" } })
    const unset = { name: "e", attributes: [], events: [], status: { code: 0 } }
    expect(OtlpShape.span(unset, dialect)).toBe(unset)
  })

  it("an answered attempt's failure keeps its error.type and loses its exception event", () => {
    const attempt = OtlpShape.span({
      name: "GET partner/list",
      kind: 3,
      attributes: [text("http.response.status_code", "503"), text("error.type", "503")],
      events: [exception("StatusAnswer"), { name: "other", attributes: [] }],
      status: { code: 2, message: "HTTP 503" }
    }, dialect)
    expect(keys(attempt)["error.type"]).toEqual({ stringValue: "503" })
    expect(attempt.events.map((e) => e.name)).toEqual(["other"])
  })

  it("spans, metrics and log records under the scope of the package that made them", () => {
    const span = (name: string, kind = 1, attributes: Array<OtlpShape.KeyValue> = []) => ({
      name,
      kind,
      attributes,
      events: [],
      status: { code: 1 }
    })
    const traces = OtlpShape.traces(
      {
        resourceSpans: [{
          scopeSpans: [{
            scope: { name: "effect" },
            spans: [
              span("ErpClient.list"),
              span("sync"),
              span("GET partner/list", 3, [text("erp.endpoint", "partner/list")]),
              span("ListEndpoint.pages"),
              span("GET elsewhere", 3)
            ]
          }]
        }]
      },
      dialect,
      scopes
    )
    expect(traces.resourceSpans[0]!.scopeSpans.map((g) => [g.scope, g.spans.map((s) => s.name)])).toEqual([
      [{ name: "@erp-client/effect4-client", version: "0.1.0" }, ["ErpClient.list", "GET partner/list"]],
      [scopes.program, ["sync", "GET elsewhere"]],
      [{ name: "@erp-client/effect4-streams", version: "0.1.0" }, ["ListEndpoint.pages"]]
    ])
    const metric = (name: string) => ({ name, sum: { dataPoints: [] } })
    const metrics = OtlpShape.metrics(
      {
        resourceMetrics: [{
          scopeMetrics: [{
            scope: { name: "crm-sync" },
            metrics: [
              metric("erp.client.requests"),
              metric("erp.client.records.streamed"),
              metric("http.client.request.duration"),
              metric("sync.done"),
              metric("child_fibers_started")
            ]
          }]
        }]
      },
      dialect,
      { scopes, runtimeMetrics: false }
    )
    expect(metrics.resourceMetrics[0]!.scopeMetrics.map((g) => [g.scope?.name, g.metrics.map((m) => m.name)])).toEqual([
      ["@erp-client/effect4-client", ["erp.client.requests", "http.client.request.duration"]],
      ["@erp-client/effect4-streams", ["erp.client.records.streamed"]],
      ["crm-sync", ["sync.done"]]
    ])
    const withRuntime = OtlpShape.metrics(
      {
        resourceMetrics: [{ scopeMetrics: [{ metrics: [metric("child_fibers_started")] }] }]
      },
      dialect,
      { scopes, runtimeMetrics: true }
    )
    expect(withRuntime.resourceMetrics[0]!.scopeMetrics[0]!.metrics.map((m) => m.name)).toEqual([
      "child_fibers_started"
    ])
    const logs = OtlpShape.logs(
      { resourceLogs: [{ scopeLogs: [{ scope: { name: "effect" }, logRecords: [{}] }] }] },
      scopes
    )
    expect(logs.resourceLogs[0]!.scopeLogs[0]!.scope).toEqual(scopes.program)
  })

  it("metric points: no unit attribute, the conventions' integers as integers", () => {
    const shaped = OtlpShape.metrics(
      {
        resourceMetrics: [{
          scopeMetrics: [{
            metrics: [{
              name: "http.client.request.duration",
              histogram: {
                dataPoints: [{
                  attributes: [
                    text("unit", "s"),
                    text("server.port", "8443"),
                    text("http.response.status_code", "503"),
                    text("erp.result.code", "0"),
                    text("error.type", "503"),
                    text("server.address", "127.0.0.1")
                  ]
                }]
              }
            }]
          }]
        }]
      },
      dialect,
      { scopes, runtimeMetrics: false }
    )
    const point = shaped.resourceMetrics[0]!.scopeMetrics[0]!.metrics[0]!.histogram!.dataPoints[0]!
    expect(point.attributes).toEqual([
      { key: "server.port", value: { intValue: 8443 } },
      { key: "http.response.status_code", value: { intValue: 503 } },
      { key: "erp.result.code", value: { intValue: 0 } },
      text("error.type", "503"),
      text("server.address", "127.0.0.1")
    ])
  })
})
