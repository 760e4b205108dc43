import { HttpClient, HttpClientResponse } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { ErpClient, ErpRateLimiter } from "@erp-client/client"
import { ErpTelemetry } from "@erp-client/otel"
import { Fault, Sandbox } from "@erp-client/sandbox"
import { ListEndpoint, Partners } from "@erp-client/streams"
import { ConfigProvider, Data, Deferred, Effect, Fiber, FiberId, Layer, Redacted, Schema, Stream } from "effect"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Settings from "../src/internal/settings.js"
import * as Receiver from "./receiver.js"

const KEY = "sk-otel-never-exported-31c9"

// The conventions' boundaries of http.client.request.duration, in seconds.
const BOUNDARIES = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]

let receiver: Receiver.Receiver

beforeAll(async () => {
  receiver = await Receiver.start()
})

afterAll(async () => {
  await receiver?.close()
})

class SyncStepFailed extends Data.TaggedError("SyncStepFailed") {}

/** The client on a sandbox of `partners` over loopback HTTP, retrying quickly. */
const clientOn = (options: { readonly partners: number; readonly spanHeaders?: ErpClient.Options["spanHeaders"] }) =>
  Layer.unwrapEffect(
    Effect.map(Sandbox.Sandbox, (sandbox) =>
      ErpClient.layer({
        baseUrl: sandbox.baseUrl,
        apiKey: Redacted.make(KEY),
        retryBaseDelay: "10 millis",
        spanHeaders: options.spanHeaders
      }).pipe(Layer.provide(ErpRateLimiter.layer()), Layer.provide(NodeHttpClient.layerUndici)))
  ).pipe(
    Layer.provideMerge(
      Sandbox.layer({ apiKeys: [KEY], partners: options.partners, rateLimit: { resetUnit: "epoch-millis" } })
    )
  )

/**
 * The client on a fake list endpoint of `total` records over an in-process HttpClient: a page past the end of the list
 * never answers, and the empty page that ends the list answers only once `ahead` such pages are on the wire, so the
 * export cancels exactly those.
 */
const fakeOn = (total: number, ahead: number) => {
  const past: Array<number> = []
  const enough = Deferred.unsafeMake<void>(FiberId.none)
  const http = HttpClient.make((request, url) =>
    Effect.suspend(() => {
      const body = (data: unknown) =>
        Effect.succeed(
          HttpClientResponse.fromWeb(
            request,
            new Response(JSON.stringify({ result: { code: 1, message: null }, data }))
          )
        )
      const offset = Number(url.searchParams.get("list_offset"))
      const count = Number(url.searchParams.get("list_count"))
      if (offset > total) {
        past.push(offset)
        if (past.length >= ahead) Deferred.unsafeDone(enough, Effect.void)
        return Effect.never
      }
      const records = Array.from(
        { length: Math.max(0, Math.min(count, total - offset)) },
        (_, i) => ({ id: offset + i })
      )
      return offset === total ? Effect.zipRight(Deferred.await(enough), body(records)) : body(records)
    })
  )
  return ErpClient.layer({ baseUrl: "https://erp.example.com/", apiKey: Redacted.make(KEY) }).pipe(
    Layer.provide(ErpRateLimiter.layer()),
    Layer.provide(Layer.succeed(HttpClient.HttpClient, http))
  )
}

/** The variables the layer reads, and nothing of the test process's environment. */
const variables = (env: Record<string, string>) =>
  Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))

const closedPort = (): Promise<number> =>
  new Promise((resolve) => {
    const server = Net.createServer()
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as Net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

describe("ErpTelemetry.layer against an OTLP receiver", () => {
  it.live("protobuf: one trace of the export, attempt spans and metrics by the HTTP conventions, no key", () =>
    Effect.gen(function*() {
      receiver.clear()
      yield* Effect.gen(function*() {
        const sandbox = yield* Sandbox.Sandbox
        // The first page: a 503, then a 429, then the answer.
        yield* sandbox.inject(Fault.Fault.Status({ status: 503 }), { times: 1, endpoint: "/partner/list" })
        yield* sandbox.inject(Fault.Fault.TooManyRequests({ resetAfter: "50 millis" }), {
          times: 1,
          endpoint: "/partner/list"
        })
        const partners = yield* Stream.runCollect(Partners.stream({ pageSize: 10, concurrency: 1 }))
        expect(partners.length).toBe(25)
        yield* Effect.either(Partners.get(99_999))
        // A step of the program's own that fails: its span in error says its error.type too.
        yield* Effect.either(Effect.fail(new SyncStepFailed()).pipe(Effect.withSpan("sync.step")))
      }).pipe(
        Effect.provide(clientOn({ partners: 25, spanHeaders: { response: ["X-RateLimit-Remaining", "x-api-key"] } })),
        Effect.provide(ErpTelemetry.layer({ serviceName: "crm-sync" })),
        variables({
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
          OTEL_EXPORTER_OTLP_HEADERS: "x-collector-token=t%20ok",
          OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name=test,service.name=ignored-for-the-option"
        })
      )

      // Everything arrived by the layer's end, as protobuf, with the headers asked for.
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
        "telemetry.sdk.name": "@erp-client/otel",
        "telemetry.sdk.language": "nodejs",
        "telemetry.sdk.version": ErpTelemetry.VERSION
      })
      expect(typeof spans[0]!.resource["service.instance.id"]).toBe("string")
      // Each span under the scope of the package that made it, with its version; not the service's name.
      const scopes = new Map(spans.map((s) => [s.name, `${s.scope} ${s.scopeVersion}`]))
      expect(scopes.get("GET partner/list")).toBe(`@erp-client/client ${ErpTelemetry.VERSION}`)
      expect(scopes.get("ErpClient.list")).toBe(`@erp-client/client ${ErpTelemetry.VERSION}`)
      expect(scopes.get("ListEndpoint.pages")).toBe(`@erp-client/streams ${ErpTelemetry.VERSION}`)
      // The program's own spans: the scope the layer is given, by default the service's name (and version).
      expect(scopes.get("sync.step")).toBe("crm-sync ")

      // The export's span over its pages (0, 10, 20, and the empty one at 25 that ends the list), each page's call
      // under it, each attempt under its call, one trace.
      const pages = spans.find((s) => s.name === "ListEndpoint.pages")!
      expect(pages.attributes).toMatchObject({ "erp.endpoint": "partner/list", "erp.pages": 4, "erp.records": 25 })
      expect(pages.status.code).toBe(0)
      const lists = spans.filter((s) => s.name === "ErpClient.list")
      expect(lists.map((s) => s.attributes["erp.list_offset"]).sort()).toEqual([0, 10, 20, 25])
      for (const list of lists) {
        expect(list.parentSpanId).toBe(pages.spanId)
        expect(list.traceId).toBe(pages.traceId)
      }
      const attempts = spans.filter((s) => s.name === "GET partner/list")
      expect(attempts).toHaveLength(6)
      const port = Number(new URL(attempts[0]!.attributes["url.full"] as string).port)
      for (const attempt of attempts) {
        expect(lists.map((s) => s.spanId)).toContain(attempt.parentSpanId)
        expect(attempt.kind).toBe(3)
        expect(attempt.attributes).toMatchObject({
          "http.request.method": "GET",
          "server.address": "127.0.0.1",
          "server.port": port
        })
        expect(attempt.attributes["url.full"]).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/partner\/list\?list_offset=/)
        expect(Object.keys(attempt.attributes)).not.toContain("span.label")
      }
      const first = lists.find((s) => s.attributes["erp.list_offset"] === 0)!
      const firstPage = attempts.filter((s) => s.parentSpanId === first.spanId)
        .sort((a, b) => (a.startTimeUnixNano < b.startTimeUnixNano ? -1 : 1))
      expect(
        firstPage.map((s) => [s.attributes["http.response.status_code"], s.attributes["http.request.resend_count"]])
      )
        .toEqual([[503, undefined], [429, 1], [200, 2]])
      expect(firstPage.map((s) => s.status.code)).toEqual([2, 2, 0])
      expect(firstPage.map((s) => s.attributes["error.type"])).toEqual(["503", "429", undefined])
      // An answered failure is no exception.
      expect(firstPage[0]!.events.filter((e) => e.name === "exception")).toEqual([])
      // Headers only as asked, never the key.
      expect(firstPage[2]!.attributes["http.response.header.x-ratelimit-remaining"]).toEqual([expect.any(String)])
      expect(Object.keys(firstPage[2]!.attributes).filter((k) => k.includes("api-key"))).toEqual([])
      const get = spans.find((s) => s.name === "ErpClient.get")!
      const getAttempt = spans.find((s) => s.parentSpanId === get.spanId)!
      expect(getAttempt.name).toBe("GET partner/get")
      expect(getAttempt.attributes).toMatchObject({ "http.response.status_code": 200 })

      // Metrics: the conventions' histogram, monotonic counters with units, no runtime metrics, no unit attribute.
      const metrics = Receiver.latestMetrics(receiver.metrics)
      const duration = metrics.get("http.client.request.duration")!
      expect(duration).toMatchObject({ kind: "histogram", unit: "s", temporality: 2 })
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
        duration.points.filter((p) =>
          p.attributes["http.response.status_code"] === status && p.attributes["erp.endpoint"] === "partner/list"
        )
      expect(byStatus(503)[0]!.attributes["error.type"]).toBe("503")
      expect(byStatus(429)[0]!.attributes["error.type"]).toBe("429")
      expect(byStatus(200)[0]!.attributes["error.type"]).toBeUndefined()
      for (
        const [name, unit] of [
          ["erp.client.requests", "{request}"],
          ["erp.client.retries", "{retry}"],
          ["erp.client.too_many_requests", "{response}"],
          ["erp.client.records.streamed", "{record}"],
          ["erp.client.rate_limit.pause_wait", "s"]
        ]
      ) {
        expect(metrics.get(name!), name).toMatchObject({ kind: "sum", monotonic: true, unit, temporality: 2 })
      }
      expect(metrics.get("erp.client.rate_limit.wait")).toMatchObject({ kind: "histogram", unit: "s" })
      // The 429's pause, as the retry's wait: one observation of one request, by reason.
      const waits = metrics.get("erp.client.rate_limit.wait.duration")!
      expect(waits).toMatchObject({ kind: "histogram", unit: "s", scope: "@erp-client/client" })
      expect(waits.points.map((p) => [p.attributes["erp.rate_limit.reason"], p.count])).toEqual([["server-pause", 1]])
      expect(metrics.get("erp.client.records.streamed")).toMatchObject({ scope: "@erp-client/streams" })
      expect(duration).toMatchObject({ scope: "@erp-client/client", scopeVersion: ErpTelemetry.VERSION })
      // The NotFound of Partners.get(99_999): an error of the ERP's, counted; on the wire a 200.
      expect(metrics.get("erp.client.api_errors")!.points.map((p) => p.attributes)).toEqual([
        { "erp.endpoint": "partner/get", "erp.error.type": "NotFound", "erp.result.code": 0 }
      ])
      expect(get).toMatchObject({ status: { code: 2 }, attributes: { "error.type": "NotFound" } })
      expect(getAttempt.status.code).toBe(0)
      expect(getAttempt.attributes["error.type"]).toBeUndefined()
      expect(spans.find((s) => s.name === "sync.step")).toMatchObject({
        status: { code: 2 },
        attributes: { "error.type": "SyncStepFailed" }
      })
      const requests = metrics.get("erp.client.requests")!
      expect(requests.points.map((p) => `${p.attributes["erp.endpoint"]} ${p.attributes["erp.outcome"]}`))
        .toEqual(expect.arrayContaining(["partner/list 5xx", "partner/list 429", "partner/list 2xx"]))
      expect([...metrics.keys()].filter((name) => name.startsWith("effect_"))).toEqual([])

      // Log records: the retry's warning, in the trace of its call; the 429's info line is below the level sent.
      expect(receiver.logs.map((l) => l.severityText)).toEqual(["WARN"])
      expect(receiver.logs[0]!.body).toMatch(/HTTP status 503; retrying/)
      expect(receiver.logs[0]!.traceId).toBe(pages.traceId)
    }))

  it.live("http/json: the same data in OTLP/JSON; an interrupted export ends with an error status saying so", () =>
    Effect.gen(function*() {
      receiver.clear()
      yield* Effect.gen(function*() {
        const sandbox = yield* Sandbox.Sandbox
        // The second page hangs until the export is interrupted.
        yield* sandbox.inject(Fault.Fault.Hang(), { times: 1, endpoint: "/partner/list", after: 1 })
        const fiber = yield* Effect.fork(Stream.runDrain(Partners.stream({ pageSize: 10, concurrency: 1 })))
        yield* Effect.sleep("300 millis")
        yield* Fiber.interrupt(fiber)
      }).pipe(
        Effect.provide(clientOn({ partners: 25 })),
        Effect.provide(ErpTelemetry.layer({ metrics: false, logs: false })),
        variables({
          OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`,
          OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
          OTEL_SERVICE_NAME: "from-the-variable"
        })
      )
      expect(receiver.requests.map((r) => [r.signal, r.contentType])).toEqual([["traces", "application/json"]])
      expect(receiver.requests[0]!.raw).not.toContain(KEY)
      const spans = receiver.spans
      expect(spans[0]!.resource["service.name"]).toBe("from-the-variable")
      const pages = spans.find((s) => s.name === "ListEndpoint.pages")!
      expect(pages.status).toEqual({ code: 2, message: "interrupted" })
      expect(pages.attributes["error.type"]).toBe("interrupted")
      expect(pages.attributes["erp.pages"]).toBe(1)
      const hung = spans.filter((s) =>
        s.name === "GET partner/list" && s.attributes["http.response.status_code"] === undefined
      )
      expect(hung).toHaveLength(1)
      expect(hung[0]!.status).toEqual({ code: 2, message: "interrupted" })
      expect(hung[0]!.attributes["error.type"]).toBe("interrupted")
      expect(hung[0]!.kind).toBe(3)
      // Every span in error says why.
      for (const span of spans.filter((s) => s.status.code === 2)) expect(span.attributes["error.type"]).toBeDefined()
    }))

  it.live("pages fetched ahead past the end of the list: cancelled, no ERROR span, every attempt in the duration", () =>
    Effect.gen(function*() {
      receiver.clear()
      yield* Effect.gen(function*() {
        const pages = yield* Stream.runCollect(
          ListEndpoint.pages("thing/list", Schema.Struct({ id: Schema.Number }), { pageSize: 10, concurrency: 8 })
        )
        expect([...pages].reduce((n, page) => n + page.records.length, 0)).toBe(100)
      }).pipe(
        Effect.provide(fakeOn(100, 7)),
        Effect.provide(ErpTelemetry.layer({ serviceName: "crm-sync", logs: false })),
        variables({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url })
      )
      const spans = receiver.spans
      if (process.env.ERP_PRINT_SPANS) console.log(Receiver.tree(spans))
      expect(spans.filter((s) => s.status.code !== 0).map((s) => `${s.name} ${s.status.message}`)).toEqual([])
      const cancelled = spans.filter((s) => s.attributes["erp.cancelled"] === true)
      // 7 pages past the end (110 to 170), each its call and its attempt.
      expect(cancelled.map((s) => s.name).sort()).toEqual([
        ...Array(7).fill("ErpClient.list"),
        ...Array(7).fill("GET thing/list")
      ])
      for (const span of cancelled) {
        expect(span.attributes["erp.cancel_reason"]).toBe("list-ended")
        expect(span.attributes["error.type"]).toBeUndefined()
      }
      const metrics = Receiver.latestMetrics(receiver.metrics)
      // (Metrics are the process's, cumulative: this endpoint's points are this test's.)
      const ours = (name: string) =>
        metrics.get(name)!.points.filter((p) => p.attributes["erp.endpoint"] === "thing/list")
      const duration = ours("http.client.request.duration")
      const attempts = spans.filter((s) => s.name === "GET thing/list")
      expect(attempts).toHaveLength(18)
      expect(duration.reduce((n, p) => n + p.count!, 0)).toBe(attempts.length)
      expect(duration.filter((p) => p.attributes["error.type"] === "cancelled").map((p) => p.count)).toEqual([7])
      expect(ours("erp.client.requests").map((p) => [p.attributes["erp.outcome"], p.value]).sort()).toEqual([
        ["2xx", 11],
        ["cancelled", 7]
      ])
    }))

  it.live("a refused collector: the program's result unchanged, the failure said once", () =>
    Effect.gen(function*() {
      const port = yield* Effect.promise(closedPort)
      const failures: Array<ErpTelemetry.ExportFailure> = []
      const partners = yield* Stream.runCollect(Partners.stream({ pageSize: 10 })).pipe(
        Effect.provide(clientOn({ partners: 15 })),
        Effect.provide(ErpTelemetry.layer({
          onExportFailure: (failure) => Effect.sync(() => failures.push(failure))
        })),
        variables({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` })
      )
      expect(partners.length).toBe(15)
      expect(failures).toHaveLength(1)
      expect(failures[0]!.reason).toBe("connection refused")
      expect(failures[0]!.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/v1/(traces|metrics|logs)$`))
    }))

  it.live("a silent collector: given up on within the shutdown budget, said once", () =>
    Effect.gen(function*() {
      const silent = yield* Effect.promise(() => Receiver.start({ _tag: "Silent" }))
      const failures: Array<ErpTelemetry.ExportFailure> = []
      yield* Effect.acquireUseRelease(
        Effect.succeed(silent),
        () =>
          Stream.runCollect(Partners.stream({ pageSize: 10 })).pipe(
            Effect.provide(clientOn({ partners: 5 })),
            Effect.provide(ErpTelemetry.layer({
              shutdownTimeout: "300 millis",
              onExportFailure: (failure) => Effect.sync(() => failures.push(failure))
            })),
            variables({ OTEL_EXPORTER_OTLP_ENDPOINT: silent.url })
          ),
        () => Effect.promise(() => silent.close())
      )
      // The spans' export was sent and never answered: the others were not even tried.
      expect(silent.requests.map((r) => r.signal)).toEqual(["traces"])
      expect(failures).toHaveLength(1)
      expect(failures[0]!.reason).toMatch(/^no answer within 0\.\d s$/)
    }))

  it.live("OTEL_SDK_DISABLED=true sends nothing", () =>
    Effect.gen(function*() {
      receiver.clear()
      yield* Stream.runCollect(Partners.stream({ pageSize: 10 })).pipe(
        Effect.provide(clientOn({ partners: 5 })),
        Effect.provide(ErpTelemetry.layer()),
        variables({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SDK_DISABLED: "TRUE" })
      )
      expect(receiver.requests).toEqual([])
    }))
})

describe("the standard variables", () => {
  it("a signal's own endpoint as it is, the general one with /v1/<signal>; headers and attributes percent-decoded", () => {
    const settings = Settings.resolve({
      OTEL_EXPORTER_OTLP_ENDPOINT: "https://collector.example:4318/base/",
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: "https://metrics.example/ingest",
      OTEL_EXPORTER_OTLP_HEADERS: "api-key=a%2Cb,x=1",
      OTEL_EXPORTER_OTLP_LOGS_HEADERS: "x=2",
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_TIMEOUT: "2500",
      OTEL_RESOURCE_ATTRIBUTES: "service.name=svc,service.version=1.2,team=a%20b",
      OTEL_LOGS_EXPORTER: "none"
    })
    expect(settings.serviceName).toBe("svc")
    expect(settings.serviceVersion).toBe("1.2")
    expect(settings.attributes).toEqual({ team: "a b" })
    expect(settings.traces).toEqual({
      url: "https://collector.example:4318/base/v1/traces",
      protocol: "http/json",
      headers: { "api-key": "a,b", x: "1" },
      timeoutMillis: 2500
    })
    expect(settings.metrics).toMatchObject({ url: "https://metrics.example/ingest", protocol: "http/protobuf" })
    expect(settings.logs).toBeUndefined()
    expect(Settings.resolve({}).traces?.url).toBe("http://localhost:4318/v1/traces")
    expect(Settings.resolve({}).serviceName).toBe("unknown_service:node")
  })

  it("grpc and unknown exporters are said, and that signal is not sent", () => {
    const settings = Settings.resolve({ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc", OTEL_METRICS_EXPORTER: "prometheus" })
    expect(settings.traces).toBeUndefined()
    expect(settings.metrics).toBeUndefined()
    expect(settings.problems).toEqual([
      "the OTLP protocol grpc is not supported (http/protobuf or http/json): no traces are sent",
      "OTEL_METRICS_EXPORTER=prometheus is not supported (otlp or none): no metrics are sent",
      "the OTLP protocol grpc is not supported (http/protobuf or http/json): no logs are sent"
    ])
  })

  it("askedSignals: what a program that exports only when told sends", () => {
    expect(ErpTelemetry.askedSignals({})).toEqual([])
    expect(ErpTelemetry.askedSignals({ OTEL_SERVICE_NAME: "x" })).toEqual([])
    expect(ErpTelemetry.askedSignals({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" })).toEqual([
      "traces",
      "metrics",
      "logs"
    ])
    expect(ErpTelemetry.askedSignals({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_LOGS_EXPORTER: "none" }))
      .toEqual(["traces", "metrics"])
    expect(ErpTelemetry.askedSignals({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://c:4318/v1/traces" })).toEqual([
      "traces"
    ])
    expect(ErpTelemetry.askedSignals({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_SDK_DISABLED: "true" }))
      .toEqual([])
  })

  it("the version said in telemetry.sdk.version is the package's, and the client's and the streams' scopes'", () => {
    const version = (dir: string) =>
      JSON.parse(Fs.readFileSync(new URL(`../../${dir}/package.json`, import.meta.url), "utf8")).version
    expect(ErpTelemetry.VERSION).toBe(version("otel"))
    // The scopes of the client's and the streams' telemetry say this version too: the packages are released together.
    expect(version("client")).toBe(ErpTelemetry.VERSION)
    expect(version("streams")).toBe(ErpTelemetry.VERSION)
  })
})
