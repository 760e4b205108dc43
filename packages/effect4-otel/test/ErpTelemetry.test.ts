import { NodeHttpClient } from "@effect/platform-node"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { ErpClient, ErpRateLimiter } from "@erp-client/effect4-client"
import { ErpTelemetry, Variables } from "@erp-client/effect4-otel"
import { Fault, Serve } from "@erp-client/sandbox"
import { ConfigProvider, Data, Effect, Layer, Logger, Redacted, Schema } from "effect"
import * as Fs from "node:fs"
import * as Net from "node:net"
// The Effect 3 edition's test OTLP receiver (plain Node: protobuf decoded with the official proto definitions, and
// OTLP/JSON), read by both editions' tests.
import * as Receiver from "../../otel/test/receiver.js"

// The Effect 4 client's calls, against the Effect 3 sandbox on loopback, exported through effect/observability's OTLP
// exporters to a test receiver, and read against OpenTelemetry's HTTP semantic conventions, as the Effect 3 edition's.

const KEY = "sk-e4otel-never-exported-8d21"

// The conventions' boundaries of http.client.request.duration, in seconds.
const BOUNDARIES = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]

const Row = Schema.Struct({ id: Schema.Number })

let receiver: Receiver.Receiver
let sandbox: Serve.Started

beforeAll(async () => {
  receiver = await Receiver.start()
  sandbox = await Serve.start({ apiKeys: [KEY], partners: 25, rateLimit: { resetUnit: "epoch-millis" } })
})

afterAll(async () => {
  await sandbox?.close()
  await receiver?.close()
})

class SyncStepFailed extends Data.TaggedError("SyncStepFailed") {}

/** The Effect 4 client on the sandbox over loopback HTTP, retrying quickly. */
const clientOn = (options: Partial<ErpClient.Options> = {}) =>
  ErpClient.layer({ baseUrl: sandbox.baseUrl, apiKey: Redacted.make(KEY), retryBaseDelay: "10 millis", ...options })
    .pipe(Layer.provide(ErpRateLimiter.layer()), Layer.provide(NodeHttpClient.layerUndici))

/** The variables the layer reads, and nothing of the test process's environment. */
const variables = (env: Record<string, string>) =>
  Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))

/** The program's log lines at warning and above, kept (in place of the console's). */
const warnings = () => {
  const lines: Array<string> = []
  const layer = Logger.layer([
    Logger.make(({ logLevel, message }) => {
      if (logLevel === "Warn" || logLevel === "Error") lines.push([message].flat().join(" "))
    })
  ])
  return { lines, layer }
}

const closedPort = (): Promise<number> =>
  new Promise((resolve) => {
    const server = Net.createServer()
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as Net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

/** The metrics as received, a line a point (for ERP_PRINT_SPANS=1). */
const describeMetrics = (metrics: Map<string, Receiver.ReceivedMetric>): string =>
  [...metrics.values()].flatMap((m) =>
    m.points.map((p) =>
      `${m.name} ${m.kind}${m.monotonic ? " monotonic" : ""} ${m.unit} [${m.scope} ${m.scopeVersion}] ` +
      `${JSON.stringify(p.attributes)} ${
        m.kind === "histogram" ? `count ${p.count} sum ${p.sum?.toFixed(3)}` : p.value
      }`
    )
  ).join("\n")

const inject = (fault: Fault.Fault, endpoint: string) =>
  Effect.promise(() => sandbox.inject(fault, { times: 1, endpoint }))

describe("ErpTelemetry.layer against an OTLP receiver", () => {
  it.live("protobuf: the calls' and attempts' spans and the metrics by the HTTP conventions, the resource, the scopes", () =>
    Effect.gen(function*() {
      receiver.clear()
      yield* Effect.gen(function*() {
        const client = yield* ErpClient.ErpClient
        // The first page: a 503, then a 429, then the answer.
        yield* inject(Fault.Fault.Status({ status: 503 }), "/partner/list")
        yield* inject(Fault.Fault.TooManyRequests({ resetAfter: "50 millis" }), "/partner/list")
        for (const offset of [0, 10, 20]) {
          const page = yield* client.list("partner/list", Row, { offset, count: 10 })
          expect(page.records.length).toBe(offset === 20 ? 5 : 10)
        }
        const missing = yield* Effect.flip(client.get("partner/get", Row, { params: [["id", "99999"]] }))
        expect(missing._tag).toBe("NotFound")
        // A step of the program's own that fails: its span in error says its error.type too.
        yield* Effect.flip(Effect.fail(new SyncStepFailed()).pipe(Effect.withSpan("sync.step")))
      }).pipe(
        Effect.withSpan("nightly-sync"),
        Effect.provide(clientOn({ spanHeaders: { response: ["X-RateLimit-Remaining", "x-api-key"] } })),
        Effect.provide(ErpTelemetry.layer({ serviceName: "crm-sync" })),
        variables({
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
          OTEL_EXPORTER_OTLP_HEADERS: "x-collector-token=t%20ok",
          OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name=test,service.name=ignored-for-the-option"
        })
      )

      // Everything arrived by the layer's end, as protobuf, with the headers asked for, without the key.
      // Each signal at least once: a machine slow enough to reach an export's schedule (the logs' 1 s, the trace's
      // 5 s) before the program ends sends one more, besides the last at the end.
      expect([...new Set(receiver.requests.map((r) => r.signal))].sort()).toEqual(["logs", "metrics", "traces"])
      for (const request of receiver.requests) {
        expect(request.contentType).toBe("application/x-protobuf")
        expect(request.headers["x-collector-token"]).toBe("t ok")
        expect(request.raw).not.toContain(KEY)
      }

      const spans = receiver.spans
      if (process.env.ERP_PRINT_SPANS) console.log(Receiver.tree(spans))
      expect(spans[0]!.resource).toMatchObject({
        "service.name": "crm-sync",
        "deployment.environment.name": "test",
        "telemetry.sdk.name": "@erp-client/effect4-otel",
        "telemetry.sdk.language": "nodejs",
        "telemetry.sdk.version": ErpTelemetry.VERSION
      })
      expect(spans[0]!.resource["service.instance.id"]).toMatch(/^[0-9a-f-]{36}$/)
      // Each span under the scope of the package that made it, with its version; the program's under the service's.
      const scopes = new Map(spans.map((s) => [s.name, `${s.scope} ${s.scopeVersion}`]))
      expect(scopes.get("GET partner/list")).toBe(`@erp-client/effect4-client ${ErpTelemetry.VERSION}`)
      expect(scopes.get("ErpClient.list")).toBe(`@erp-client/effect4-client ${ErpTelemetry.VERSION}`)
      expect(scopes.get("ErpClient.get")).toBe(`@erp-client/effect4-client ${ErpTelemetry.VERSION}`)
      expect(scopes.get("nightly-sync")).toBe("crm-sync ")
      expect(scopes.get("sync.step")).toBe("crm-sync ")

      // One trace: the program's span over each call's, each attempt under its call.
      const sync = spans.find((s) => s.name === "nightly-sync")!
      expect(sync.status.code).toBe(0)
      const lists = spans.filter((s) => s.name === "ErpClient.list")
      expect(lists.map((s) => s.attributes["erp.list_offset"]).sort()).toEqual([0, 10, 20])
      for (const span of spans) expect(span.traceId).toBe(sync.traceId)
      for (const list of lists) expect(list.parentSpanId).toBe(sync.spanId)
      const attempts = spans.filter((s) => s.name === "GET partner/list")
      expect(attempts).toHaveLength(5)
      const port = Number(new URL(sandbox.baseUrl).port)
      for (const attempt of attempts) {
        expect(lists.map((s) => s.spanId)).toContain(attempt.parentSpanId)
        expect(attempt.kind).toBe(3)
        expect(attempt.attributes).toMatchObject({
          "http.request.method": "GET",
          "server.address": "127.0.0.1",
          "server.port": port,
          "erp.endpoint": "partner/list"
        })
        expect(attempt.attributes["url.full"]).toMatch(
          new RegExp(`^http://127\\.0\\.0\\.1:${port}/partner/list\\?list_offset=\\d+&list_count=10$`)
        )
      }
      const first = lists.find((s) => s.attributes["erp.list_offset"] === 0)!
      const firstPage = attempts.filter((s) => s.parentSpanId === first.spanId)
        .sort((a, b) => (a.startTimeUnixNano < b.startTimeUnixNano ? -1 : 1))
      expect(
        firstPage.map((s) => [
          s.attributes["http.response.status_code"],
          s.attributes["http.request.resend_count"],
          s.attributes["error.type"],
          s.status.code
        ])
      ).toEqual([[503, undefined, "503", 2], [429, 1, "429", 2], [200, 2, undefined, 0]])
      // An answered failure is no exception: its status and error.type say it.
      expect(firstPage.flatMap((s) => s.events.filter((e) => e.name === "exception"))).toEqual([])
      // Headers only as asked, never the key.
      expect(firstPage[2]!.attributes["http.response.header.x-ratelimit-remaining"]).toEqual([expect.any(String)])
      expect(Object.keys(firstPage[2]!.attributes).filter((k) => k.includes("api-key"))).toEqual([])
      // The NotFound the ERP said in an HTTP 200: the call failed, not the request.
      const get = spans.find((s) => s.name === "ErpClient.get")!
      expect(get).toMatchObject({ status: { code: 2 }, attributes: { "error.type": "NotFound" } })
      const getAttempt = spans.find((s) => s.parentSpanId === get.spanId)!
      expect(getAttempt).toMatchObject({ name: "GET partner/get", status: { code: 0 } })
      expect(getAttempt.attributes["http.response.status_code"]).toBe(200)
      expect(getAttempt.attributes["error.type"]).toBeUndefined()
      expect(spans.find((s) => s.name === "sync.step")).toMatchObject({
        status: { code: 2 },
        attributes: { "error.type": "SyncStepFailed" }
      })
      // No span says OK (the application's to set), and every span in error says why.
      expect(spans.filter((s) => s.status.code === 1)).toEqual([])
      for (const span of spans.filter((s) => s.status.code === 2)) expect(span.attributes["error.type"]).toBeDefined()

      // Metrics: the conventions' histogram in seconds, monotonic counters with units, no unit attribute.
      const metrics = Receiver.latestMetrics(receiver.metrics)
      if (process.env.ERP_PRINT_SPANS) console.log(describeMetrics(metrics))
      const duration = metrics.get("http.client.request.duration")!
      expect(duration).toMatchObject({
        kind: "histogram",
        unit: "s",
        temporality: 2,
        scope: "@erp-client/effect4-client",
        scopeVersion: ErpTelemetry.VERSION
      })
      for (const point of duration.points) {
        expect(point.explicitBounds).toEqual(BOUNDARIES)
        expect(point.attributes).toMatchObject({
          "http.request.method": "GET",
          "server.address": "127.0.0.1",
          "server.port": port
        })
        expect(Object.keys(point.attributes)).not.toContain("unit")
      }
      const byStatus = (status: number) =>
        duration.points.find((p) =>
          p.attributes["http.response.status_code"] === status && p.attributes["erp.endpoint"] === "partner/list"
        )!
      expect([503, 429, 200].map((status) => [byStatus(status).attributes["error.type"], byStatus(status).count]))
        .toEqual([["503", 1], ["429", 1], [undefined, 3]])
      expect(byStatus(200).sum).toBeGreaterThan(0)
      expect(byStatus(200).sum).toBeLessThan(10)
      for (
        const [name, unit] of [
          ["erp.client.requests", "{request}"],
          ["erp.client.retries", "{retry}"],
          ["erp.client.too_many_requests", "{response}"],
          ["erp.client.api_errors", "{error}"]
        ] as const
      ) {
        expect(metrics.get(name), name).toMatchObject({
          kind: "sum",
          monotonic: true,
          unit,
          temporality: 2,
          scope: "@erp-client/effect4-client"
        })
      }
      expect(metrics.get("erp.client.rate_limit.wait")).toMatchObject({ kind: "histogram", unit: "s" })
      const requests = metrics.get("erp.client.requests")!
      expect(
        requests.points.map((p) => `${p.attributes["erp.endpoint"]} ${p.attributes["erp.outcome"]} ${p.value}`).sort()
      ).toEqual(["partner/get 2xx 1", "partner/list 2xx 3", "partner/list 429 1", "partner/list 5xx 1"])
      expect(metrics.get("erp.client.retries")!.points.map((p) => p.value)).toEqual([1])
      expect(metrics.get("erp.client.too_many_requests")!.points.map((p) => p.value)).toEqual([1])
      // The NotFound of partner 99999: an error of the ERP's, counted; on the wire a 200.
      expect(metrics.get("erp.client.api_errors")!.points.map((p) => [p.attributes, p.value])).toEqual([
        [{ "erp.endpoint": "partner/get", "erp.error.type": "NotFound", "erp.result.code": 0 }, 1]
      ])
      expect([...metrics.keys()].filter((name) => name.startsWith("child_fiber"))).toEqual([])

      // Log records: the retry's warning, in the trace of its call, under the program's scope; the 429's info line is
      // below the level sent.
      expect(receiver.logs.map((l) => [l.severityText, l.severityNumber, l.scope])).toEqual([["Warn", 13, "crm-sync"]])
      expect(receiver.logs[0]!.body).toMatch(/HTTP status 503; retrying/)
      expect(receiver.logs[0]!.traceId).toBe(sync.traceId)
    }))

  it.live("http/json: the same data in OTLP/JSON; a transport failure and an interrupted call end in error, saying so", () =>
    Effect.gen(function*() {
      receiver.clear()
      yield* Effect.gen(function*() {
        const client = yield* ErpClient.ErpClient
        yield* client.get("partner/get", Row, { params: [["id", "1"]] })
        // The connection closed before an answer, not retried.
        yield* inject(Fault.Fault.DropBeforeResponse(), "/partner/get")
        const dropped = yield* Effect.flip(client.get("partner/get", Row, { params: [["id", "2"]] }))
        expect(dropped._tag).toBe("TransportError")
        // A call that hangs, given up by its caller: interrupted, it did not complete.
        yield* inject(Fault.Fault.Hang(), "/partner/get")
        const hung = yield* client.get("partner/get", Row, { params: [["id", "3"]] }).pipe(
          Effect.timeoutOption("300 millis")
        )
        expect(hung._tag).toBe("None")
      }).pipe(
        Effect.provide(clientOn({ retries: 0 })),
        Effect.provide(ErpTelemetry.layer({ logs: false })),
        variables({
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
          OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
          OTEL_SERVICE_NAME: "from-the-variable"
        })
      )
      expect(receiver.requests.map((r) => [r.signal, r.contentType]).sort()).toEqual([
        ["metrics", "application/json"],
        ["traces", "application/json"]
      ])
      for (const request of receiver.requests) expect(request.raw).not.toContain(KEY)
      const spans = receiver.spans
      if (process.env.ERP_PRINT_SPANS) console.log(Receiver.tree(spans))
      expect(spans[0]!.resource["service.name"]).toBe("from-the-variable")
      const attempts = spans.filter((s) => s.name === "GET partner/get")
        .sort((a, b) => (a.startTimeUnixNano < b.startTimeUnixNano ? -1 : 1))
      expect(attempts.map((s) => [s.kind, s.status, s.attributes["error.type"]])).toEqual([
        [3, { code: 0, message: "" }, undefined],
        [3, expect.objectContaining({ code: 2 }), "TransportError"],
        [3, { code: 2, message: "interrupted" }, "interrupted"]
      ])
      expect(attempts.map((s) => s.attributes["http.response.status_code"])).toEqual([200, undefined, undefined])
      const port = Number(new URL(sandbox.baseUrl).port)
      for (const attempt of attempts) {
        expect(attempt.attributes).toMatchObject({
          "http.request.method": "GET",
          "server.address": "127.0.0.1",
          "server.port": port,
          "url.full": expect.stringMatching(new RegExp(`^http://127\\.0\\.0\\.1:${port}/partner/get\\?id=\\d$`))
        })
      }
      expect(attempts[2]!.attributes["effect.fiber.interrupted"]).toBe(true)
      const calls = spans.filter((s) => s.name === "ErpClient.get")
        .sort((a, b) => (a.startTimeUnixNano < b.startTimeUnixNano ? -1 : 1))
      expect(calls.map((s) => [s.status.code, s.attributes["error.type"]])).toEqual([
        [0, undefined],
        [2, "TransportError"],
        [2, "interrupted"]
      ])
      // Every span in error says why.
      for (const span of spans.filter((s) => s.status.code === 2)) expect(span.attributes["error.type"]).toBeDefined()
      const duration = Receiver.latestMetrics(receiver.metrics).get("http.client.request.duration")!
      const unanswered = duration.points.filter((p) =>
        p.attributes["erp.endpoint"] === "partner/get" && p.attributes["http.response.status_code"] === undefined
      )
      expect(unanswered.map((p) => [p.attributes["error.type"], p.count]).sort()).toEqual([
        ["TransportError", 1],
        ["interrupted", 1]
      ])
    }))

  it.live("a refused collector: the program's result unchanged, one warning in its log, nothing else in its way", () =>
    Effect.gen(function*() {
      const port = yield* Effect.promise(closedPort)
      const log = warnings()
      let programEnded = 0
      const page = yield* Effect.flatMap(
        Effect.service(ErpClient.ErpClient),
        (client) => client.list("partner/list", Row, { offset: 0, count: 10 })
      ).pipe(
        Effect.tap(() => Effect.logWarning("the program's own warning")),
        Effect.tap(() => Effect.sync(() => (programEnded = Date.now()))),
        Effect.provide(clientOn()),
        Effect.provide(ErpTelemetry.layer()),
        variables({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` }),
        Effect.provide(log.layer)
      )
      expect(page.records.map((r) => r.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
      const said = log.lines.filter((line) => line.startsWith("OpenTelemetry"))
      expect(said).toHaveLength(1)
      expect(said[0]).toMatch(
        new RegExp(
          `^OpenTelemetry export to http://127\\.0\\.0\\.1:${port}/v1/(traces|metrics|logs) failed ` +
            `\\(connection refused\\); exports are dropped for a minute$`
        )
      )
      expect(log.lines).toContain("the program's own warning")
      // The program's end, its last exports refused: no wait of any budget (the refusal is at once). The bound is a
      // budget and a half, so a machine at load 8 does not cross it; the one line above says what was given up on.
      expect(Date.now() - programEnded).toBeLessThan(3_000)
    }))

  it.live("a silent collector: given up on within the default shutdown budget (at most about 2 s), said once", () =>
    Effect.gen(function*() {
      const silent = yield* Effect.promise(() => Receiver.start({ _tag: "Silent" }))
      const failures: Array<ErpTelemetry.ExportFailure> = []
      let programEnded = 0
      yield* Effect.acquireUseRelease(
        Effect.succeed(silent),
        () =>
          Effect.flatMap(
            Effect.service(ErpClient.ErpClient),
            (client) => client.get("partner/get", Row, { params: [["id", "4"]] })
          ).pipe(
            Effect.tap(() => Effect.sync(() => (programEnded = Date.now()))),
            Effect.provide(clientOn()),
            Effect.provide(ErpTelemetry.layer({
              onExportFailure: (failure) => Effect.sync(() => failures.push(failure))
            })),
            variables({ OTEL_EXPORTER_OTLP_ENDPOINT: silent.url })
          ),
        () => Effect.promise(() => silent.close())
      )
      const shutdownMillis = Date.now() - programEnded
      // The spans' export was sent and never answered: given up on at the budget's end, the others not even tried.
      expect(silent.requests.map((r) => r.signal)).toEqual(["traces"])
      expect(failures).toEqual([{ url: `${silent.url}/v1/traces`, reason: "no answer within 1.5 s" }])
      // One budget of 1.5 s and no second one (the others were not tried, above), with room for a loaded machine.
      expect(shutdownMillis).toBeLessThan(3_000)
    }))

  it.live("OTEL_SDK_DISABLED=true sends nothing; grpc is said, and that signal not sent", () =>
    Effect.gen(function*() {
      receiver.clear()
      const call = Effect.flatMap(
        Effect.service(ErpClient.ErpClient),
        (client) => client.get("partner/get", Row, { params: [["id", "5"]] })
      ).pipe(Effect.andThen(Effect.logWarning("a warning to send")), Effect.provide(clientOn()))
      yield* call.pipe(
        Effect.provide(ErpTelemetry.layer()),
        variables({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SDK_DISABLED: "TRUE" })
      )
      expect(receiver.requests).toEqual([])

      const log = warnings()
      yield* call.pipe(
        Effect.provide(ErpTelemetry.layer({ runtimeMetrics: true })),
        variables({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "grpc" }),
        Effect.provide(log.layer)
      )
      expect(log.lines).toContain(
        "OpenTelemetry: the OTLP protocol grpc is not supported (http/protobuf or http/json): no traces are sent"
      )
      expect(receiver.requests.map((r) => r.signal).sort()).toEqual(["logs", "metrics"])
      expect(receiver.logs.map((l) => l.body)).toEqual(["a warning to send"])
      // Effect's fiber runtime metrics, asked for: under the program's scope.
      expect(Receiver.latestMetrics(receiver.metrics).get("child_fibers_started")).toMatchObject({
        kind: "sum",
        scope: "unknown_service:node"
      })
    }))
})

describe("the standard variables and the versions", () => {
  it("askedSignals: what a program that exports only when told sends, as the Effect 3 edition reads it", () => {
    expect(Variables.askedSignals({})).toEqual([])
    expect(ErpTelemetry.askedSignals({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_LOGS_EXPORTER: "none" }))
      .toEqual(["traces", "metrics"])
    expect(Variables.namesService({ OTEL_SERVICE_NAME: "crm-sync" })).toBe(true)
  })

  it("the version said in telemetry.sdk.version is the package's, and the Effect 4 client's and streams' scopes'", () => {
    const version = (dir: string) =>
      JSON.parse(Fs.readFileSync(new URL(`../../${dir}/package.json`, import.meta.url), "utf8")).version
    expect(ErpTelemetry.VERSION).toBe(version("effect4-otel"))
    expect(version("effect4-client")).toBe(ErpTelemetry.VERSION)
    expect(version("effect4-streams")).toBe(ErpTelemetry.VERSION)
    expect(ErpTelemetry.SCOPES).toEqual({
      client: "@erp-client/effect4-client",
      streams: "@erp-client/effect4-streams"
    })
  })
})
