import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Fault } from "@erp-client/sandbox"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Path from "node:path"
import * as Receiver from "../../otel/test/receiver.js"
import { erp, ROOT, SECRET, startSandbox } from "./harness.js"

// The compiled command against an OTLP receiver: what the standard OTEL_* variables ask for arrives, in one trace per
// command; a collector that fails costs a bounded moment and one line; nothing is sent when disabled.

let env: Awaited<ReturnType<typeof startSandbox>>
let receiver: Receiver.Receiver

const VERSION = JSON.parse(Fs.readFileSync(Path.join(ROOT, "packages/cli/package.json"), "utf8")).version

beforeAll(async () => {
  env = await startSandbox({ partners: 30, rateLimit: { resetUnit: "epoch-millis" } })
  receiver = await Receiver.start()
})

afterAll(async () => {
  await env?.close()
  await receiver?.close()
})

const closedPort = (): Promise<number> =>
  new Promise((resolve) => {
    const server = Net.createServer()
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as Net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

/**
 * A command that sends one partner/get, and how long it took from the server's arrival of that request to its exit:
 * what the telemetry's shutdown adds, on the clock of this process (the sandbox runs in it), whatever the command's
 * start-up costs on a loaded machine.
 */
const afterItsRequest = async (run: Promise<Awaited<ReturnType<typeof erp>>>) => {
  const result = await run
  const exitedAt = Date.now()
  const arrived = (await env.run(env.sandbox.requests)).filter((r) => r.endpoint === "/partner/get").at(-1)!
  return { ...result, millis: exitedAt - arrived.timeMillis }
}

const EXPORT = ["partners", "list", "--page-size", "10", "--concurrency", "1"]

// `erp partners get --id 3` without telemetry, once: what a run with a failing collector is held against.
let quietRun: ReturnType<typeof erp> | undefined
const quiet = () => (quietRun ??= erp(["partners", "get", "--id", "3"], { via: "node", env: env.env }))

describe("erp with the OTEL_* variables", () => {
  it("partners list: one trace, the command's span over the export's, attempts marked, metrics, a warning", async () => {
    receiver.clear()
    await env.run(env.sandbox.inject(Fault.Fault.Status({ status: 503 }), { times: 1, endpoint: "/partner/list" }))
    await env.run(
      env.sandbox.inject(Fault.Fault.TooManyRequests({ resetAfter: "50 millis" }), {
        times: 1,
        endpoint: "/partner/list"
      })
    )
    const run = await erp(EXPORT, {
      via: "node",
      env: { ...env.env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: "nightly-sync" }
    })
    expect(run.stderr).toBe("")
    expect(run.code).toBe(0)
    expect(run.stdout.trim().split("\n")).toHaveLength(30)

    // Each signal at least once: a machine slow enough to reach an export's schedule (the logs' 1 s, the trace's
    // 5 s) before the program ends sends one more, besides the last at the end.
    expect([...new Set(receiver.requests.map((r) => r.signal))].sort()).toEqual(["logs", "metrics", "traces"])
    for (const request of receiver.requests) {
      expect(request.contentType).toBe("application/x-protobuf")
      expect(request.raw).not.toContain(SECRET)
    }
    const spans = receiver.spans
    if (process.env.ERP_PRINT_SPANS) console.log(Receiver.tree(spans, (k) => !k.startsWith("url.")))
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1)
    expect(spans[0]!.resource).toMatchObject({
      "service.name": "nightly-sync",
      "service.version": VERSION,
      "telemetry.sdk.name": "@erp-client/otel"
    })
    const root = spans.find((s) => s.parentSpanId === "")!
    expect(root).toMatchObject({ name: "erp partners list", kind: 1, status: { code: 0 } })
    expect(root.attributes).toMatchObject({ "process.executable.name": "erp", "process.exit.code": 0 })
    const pages = spans.find((s) => s.name === "ListEndpoint.pages")!
    expect(pages.parentSpanId).toBe(root.spanId)
    expect(pages.attributes).toMatchObject({ "erp.records": 30 })
    const attempts = spans.filter((s) => s.name === "GET partner/list")
    expect(attempts.map((s) => s.attributes["http.response.status_code"]).slice(0, 3)).toEqual([503, 429, 200])
    expect(attempts.slice(0, 3).map((s) => [s.status.code, s.attributes["error.type"]])).toEqual([
      [2, "503"],
      [2, "429"],
      [0, undefined]
    ])
    expect(attempts.slice(0, 3).map((s) => s.attributes["http.request.resend_count"])).toEqual([undefined, 1, 2])
    for (const attempt of attempts) {
      expect(attempt.kind).toBe(3)
      expect(attempt.attributes["server.address"]).toBe("127.0.0.1")
    }

    const metrics = Receiver.latestMetrics(receiver.metrics)
    expect(metrics.get("http.client.request.duration")).toMatchObject({ kind: "histogram", unit: "s" })
    expect(metrics.get("erp.client.requests")).toMatchObject({ kind: "sum", monotonic: true, unit: "{request}" })
    expect(metrics.get("erp.client.retries")).toMatchObject({ kind: "sum", monotonic: true, unit: "{retry}" })
    expect([...metrics.keys()].filter((name) => name.startsWith("effect_"))).toEqual([])

    // The instrumentation scope: the package that made each span and metric, with its version (not the service).
    const scopeOf = (name: string) => {
      const span = spans.find((s) => s.name === name)!
      return `${span.scope} ${span.scopeVersion}`
    }
    expect(scopeOf("erp partners list")).toBe(`@erp-client/cli ${VERSION}`)
    expect(scopeOf("ListEndpoint.pages")).toBe(`@erp-client/streams ${VERSION}`)
    expect(scopeOf("ErpClient.list")).toBe(`@erp-client/client ${VERSION}`)
    expect(scopeOf("GET partner/list")).toBe(`@erp-client/client ${VERSION}`)
    expect(metrics.get("http.client.request.duration")).toMatchObject({
      scope: "@erp-client/client",
      scopeVersion: VERSION
    })
    expect(metrics.get("erp.client.records.streamed")).toMatchObject({ scope: "@erp-client/streams" })

    // The retry's warning as a log record (stderr showed nothing without --verbose).
    expect(receiver.logs.map((l) => [l.severityText, l.traceId, l.scope])).toEqual([
      ["WARN", root.traceId, "@erp-client/cli"]
    ])
  })

  it("partners list at --concurrency 8, exit 0: no ERROR span; the pages fetched past the end are cancelled", async () => {
    // 30 partners, pages of 3, 8 in flight: the empty page at 30 ends the list while the pages fetched after it are
    // still on the wire (each answered 30 ms after it arrives).
    const own = await startSandbox({ partners: 30, latency: { base: "30 millis" } })
    try {
      receiver.clear()
      const run = await erp(["partners", "list", "--page-size", "3", "--concurrency", "8"], {
        via: "node",
        env: { ...own.env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }
      })
      expect(run.stderr).toBe("")
      expect(run.code).toBe(0)
      expect(run.stdout.trim().split("\n")).toHaveLength(30)

      const spans = receiver.spans
      if (process.env.ERP_PRINT_SPANS) console.log(Receiver.tree(spans, (k) => !k.startsWith("url.")))
      expect(spans.filter((s) => s.status.code === 2).map((s) => `${s.name}: ${s.status.message}`)).toEqual([])
      const attempts = spans.filter((s) => s.name === "GET partner/list")
      const cancelled = attempts.filter((s) => s.attributes["erp.cancelled"] === true)
      expect(cancelled.length).toBeGreaterThanOrEqual(1)
      expect(cancelled.length).toBeLessThanOrEqual(7)
      for (const attempt of attempts) {
        if (attempt.attributes["erp.cancelled"] === true) {
          expect(attempt.attributes).toMatchObject({ "erp.cancel_reason": "list-ended" })
          expect(attempt.attributes["error.type"]).toBeUndefined()
          expect(attempt.attributes["http.response.status_code"]).toBeUndefined()
        } else {
          expect(attempt.attributes["http.response.status_code"]).toBe(200)
        }
      }
      const calls = spans.filter((s) => s.name === "ErpClient.list" && s.attributes["erp.cancelled"] === true)
      expect(calls.map((s) => s.attributes["erp.cancel_reason"])).toEqual(cancelled.map(() => "list-ended"))

      // Every attempt is in the duration, the cancelled ones with error.type cancelled.
      const metrics = Receiver.latestMetrics(receiver.metrics)
      const duration = metrics.get("http.client.request.duration")!
      expect(duration.points.reduce((n, p) => n + p.count!, 0)).toBe(attempts.length)
      expect(duration.points.filter((p) => p.attributes["error.type"] === "cancelled").map((p) => p.count)).toEqual([
        cancelled.length
      ])
    } finally {
      await own.close()
    }
  })

  it("partners get a partner that does not exist (http/json): the ERP's NotFound counted; the HTTP 200 is no error", async () => {
    receiver.clear()
    const run = await erp(["partners", "get", "--id", "999999"], {
      via: "node",
      env: { ...env.env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" }
    })
    expect(run.code).toBe(4)
    expect(receiver.requests.every((r) => r.contentType === "application/json")).toBe(true)
    const get = receiver.spans.find((s) => s.name === "ErpClient.get")!
    expect(get.status.code).toBe(2)
    expect(get.attributes).toMatchObject({ "error.type": "NotFound", "erp.result.code": 0 })
    const attempt = receiver.spans.find((s) => s.name === "GET partner/get")!
    expect(attempt.status.code).toBe(0)
    expect(attempt.attributes["http.response.status_code"]).toBe(200)
    expect(attempt.attributes["error.type"]).toBeUndefined()
    const metrics = Receiver.latestMetrics(receiver.metrics)
    expect(metrics.get("erp.client.api_errors")).toMatchObject({ kind: "sum", monotonic: true, unit: "{error}" })
    expect(metrics.get("erp.client.api_errors")!.points).toEqual([{
      attributes: { "erp.endpoint": "partner/get", "erp.error.type": "NotFound", "erp.result.code": 0 },
      value: 1
    }])
  })

  it("Ctrl-C: 130, and what the interrupted export recorded is sent, its spans saying they were interrupted", async () => {
    receiver.clear()
    await env.run(env.sandbox.inject(Fault.Fault.Hang(), { times: 1, endpoint: "/partner/list", after: 1 }))
    const run = await erp(EXPORT, {
      via: "node",
      env: { ...env.env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
      interruptWhen: env.listRequests(2)
    })
    expect(run.code).toBe(130)
    expect(run.stderr).toBe("erp: interrupted (SIGINT)\n")
    const root = receiver.spans.find((s) => s.parentSpanId === "")!
    expect(root).toMatchObject({ name: "erp partners list", status: { code: 2, message: "interrupted (SIGINT)" } })
    expect(root.attributes).toMatchObject({ "process.exit.code": 130, "error.type": "130" })
    const pages = receiver.spans.find((s) => s.name === "ListEndpoint.pages")!
    expect(pages.status).toEqual({ code: 2, message: "interrupted" })
    expect(pages.attributes).toMatchObject({ "erp.records": 10, "error.type": "interrupted" })
    // The hung request: its call and its attempt end in ERROR, interrupted, and the attempt is in the duration.
    const hung = receiver.spans.filter((s) =>
      s.name === "GET partner/list" && s.attributes["http.response.status_code"] === undefined
    )
    expect(hung.map((s) => [s.status, s.attributes["error.type"]])).toEqual([[
      { code: 2, message: "interrupted" },
      "interrupted"
    ]])
    for (const span of receiver.spans.filter((s) => s.status.code === 2)) {
      expect(span.attributes["error.type"], span.name).toBeDefined()
    }
    const duration = Receiver.latestMetrics(receiver.metrics).get("http.client.request.duration")!
    expect(duration.points.filter((p) => p.attributes["error.type"] === "interrupted").map((p) => p.count)).toEqual([
      1
    ])
  })

  it("a refused collector: the data and the exit status unchanged, one line, a moment", async () => {
    const port = await closedPort()
    const run = await afterItsRequest(erp(["partners", "get", "--id", "3"], {
      via: "node",
      env: { ...env.env, OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` }
    }))
    const { stdout } = await quiet()
    expect(run.code).toBe(0)
    expect(run.stdout).toBe(stdout)
    expect(run.stderr).toBe(`erp: telemetry not sent: http://127.0.0.1:${port}/v1/traces: connection refused\n`)
    // Far below the 8.5 to 10.5 s a dead collector cost before (a bound, not a measurement: pnpm bench measures).
    expect(run.millis).toBeLessThan(5_000)
  })

  it("a silent collector: given up on within the shutdown budget, one line", async () => {
    const silent = await Receiver.start({ _tag: "Silent" })
    try {
      const run = await afterItsRequest(erp(["partners", "get", "--id", "3"], {
        via: "node",
        env: { ...env.env, OTEL_EXPORTER_OTLP_ENDPOINT: silent.url }
      }))
      const { stdout } = await quiet()
      expect(run.code).toBe(0)
      expect(run.stdout).toBe(stdout)
      expect(run.stderr).toMatch(
        new RegExp(`^erp: telemetry not sent: ${silent.url}/v1/traces: no answer within 1\\.\\d s\\n$`)
      )
      // The shutdown budget (the line says it was the one given up on), and no other wait.
      expect(run.millis).toBeLessThan(5_000)
    } finally {
      await silent.close()
    }
  })

  it("http/json to a signal's own endpoint: only that signal, in JSON; OTEL_SDK_DISABLED=true: nothing", async () => {
    receiver.clear()
    const json = await erp(["partners", "get", "--id", "3", "--id", "4"], {
      via: "node",
      env: {
        ...env.env,
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name=test"
      }
    })
    expect(json.code).toBe(0)
    expect(receiver.requests.map((r) => [r.signal, r.contentType])).toEqual([["traces", "application/json"]])
    expect(receiver.spans[0]!.resource).toMatchObject({ "service.name": "erp", "deployment.environment.name": "test" })
    const root = receiver.spans.find((s) => s.parentSpanId === "")!
    expect(root.name).toBe("erp partners get")
    expect(receiver.spans.filter((s) => s.name === "ErpClient.get").map((s) => s.parentSpanId)).toEqual([
      root.spanId,
      root.spanId
    ])

    receiver.clear()
    const disabled = await erp(["partners", "get", "--id", "3"], {
      via: "node",
      env: { ...env.env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SDK_DISABLED: "true" }
    })
    expect(disabled.code).toBe(0)
    expect(receiver.requests).toEqual([])
  })
})
