import { NodeHttpClient } from "@effect/platform-node"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { ErpClient, ErpRateLimiter } from "@erp-client/effect4-client"
import { Partner } from "@erp-client/effect4-core"
import { Fault, Serve } from "@erp-client/sandbox"
import { Effect, Layer, Logger, Redacted, Schema, Tracer } from "effect"
import { FetchHttpClient, HttpClientRequest } from "effect/http"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { inspect } from "node:util"
import { targetOf } from "../src/internal/transport.js"

// The client on the wire: the Effect 3 sandbox on loopback (driven with promises), and small servers of our own.

const KEY = "sk-transport-secret-55aa"

/** A loopback server for one test; it records the headers of every request it gets. */
const serve = (handler: Http.RequestListener) =>
  Effect.acquireRelease(
    Effect.callback<{ url: string; seen: Array<Http.IncomingHttpHeaders>; server: Http.Server }>((resume) => {
      const seen: Array<Http.IncomingHttpHeaders> = []
      const server = Http.createServer((req, res) => {
        seen.push(req.headers)
        handler(req, res)
      })
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server })))
    }),
    ({ server }) =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() =>
          resume(Effect.void)
        )
      })
  )

const envelope = JSON.stringify({ result: { code: 1, message: null }, data: { id: 1 } })

const transports = { undici: NodeHttpClient.layerUndici, fetch: FetchHttpClient.layer } as const

const clientOn = (
  url: string,
  options: Partial<Parameters<typeof ErpClient.layer>[0]> = {},
  transport: Layer.Layer<any> = NodeHttpClient.layerUndici,
  key = KEY
) =>
  ErpClient.layer({ baseUrl: url, apiKey: Redacted.make(key), retries: 0, ...options }).pipe(
    Layer.provide(ErpRateLimiter.layer()),
    Layer.provide(transport)
  )

describe("on the wire", () => {
  let sandbox: Serve.Started
  beforeAll(async () => {
    sandbox = await Serve.start({ apiKeys: [KEY], partners: 50, rateLimit: false })
  })
  afterAll(() => sandbox.close())

  for (const [name, transport] of Object.entries(transports)) {
    it.effect(`redirects are refused, and the key never reaches the other origin (${name})`, () =>
      Effect.gen(function*() {
        const other = yield* serve((_, res) => res.end(envelope))
        const before = (yield* Effect.promise(() => sandbox.requests())).length
        yield* Effect.promise(() =>
          sandbox.inject(Fault.Fault.Redirect({ location: `${other.url}/partner/get?id=1` }), { times: 1 })
        )
        const error = yield* Effect.flatMap(
          Effect.service(ErpClient.ErpClient),
          (client) => Effect.flip(client.get("partner/get", Schema.Unknown, { params: [["id", "1"]] }))
        ).pipe(
          Effect.provide(clientOn(sandbox.baseUrl, {}, transport))
        )
        expect(error).toMatchObject({ _tag: "HttpStatusError", status: 302 })
        expect(error.message).toContain("redirects are not followed")
        const log = (yield* Effect.promise(() => sandbox.requests())).slice(before)
        expect(log.map((r) => [r.status, r.keyValid])).toEqual([[302, true]])
        expect(other.seen).toHaveLength(0)
      }))
  }

  it.effect("a partner and a page from the sandbox: records keep every field as sent, known ones typed", () =>
    Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      const page = yield* client.list("partner/list", Partner.Partner, { offset: 0, count: 10, exact: true })
      expect(page.records.length).toBe(10)
      expect(page.json!.map((text) => JSON.parse(text))).toEqual(page.raw)
      const one = yield* client.get("partner/get", Partner.Partner, { params: [["id", "3"]], selector: "id=3" })
      expect(one.id).toBe(3)
      const missing = yield* Effect.flip(
        client.get("partner/get", Partner.Partner, { params: [["id", "999999"]], selector: "id=999999" })
      )
      expect(missing.message).toBe("partner/get: not found (id=999999)")
    }).pipe(Effect.provide(clientOn(sandbox.baseUrl))))

  it.live("a refused key is Unauthorized, and the key is in no error, log line, span attribute or JSON", () => {
    const WRONG = "sk-wrong-key-DO-NOT-LEAK"
    const lines: Array<string> = []
    const logger = Logger.make(({ message }) => {
      lines.push(inspect(message, { depth: 10 }))
    })
    const spans: Array<Tracer.NativeSpan> = []
    const tracer = Tracer.make({
      span(options) {
        const span = new Tracer.NativeSpan(options)
        spans.push(span)
        return span
      }
    })
    return Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      const refused = yield* Effect.flip(client.get("partner/get", Partner.Partner, { params: [["id", "3"]] }))
      expect(refused._tag).toBe("Unauthorized")
      // A 503 retried (logged), then a timeout: failures with every kind of message.
      yield* Effect.promise(() => sandbox.inject(Fault.Fault.Status({ status: 503 }), { times: 1 }))
      const retried = yield* Effect.result(client.get("partner/get", Partner.Partner, { params: [["id", "3"]] }))
      const texts = [
        refused.message,
        String(refused),
        inspect(refused, { depth: 10 }),
        JSON.stringify(refused),
        JSON.stringify(retried),
        ...lines,
        ...spans.flatMap((span) => [...span.attributes.values()].map((value) => inspect(value)))
      ]
      expect(lines.length).toBeGreaterThan(0)
      expect(spans.some((span) => span.attributes.get("url.full") !== undefined)).toBe(true)
      for (const text of texts) expect(text).not.toContain(WRONG)
    }).pipe(
      Effect.provide(
        clientOn(sandbox.baseUrl, { retries: 2, retryBaseDelay: "10 millis" }, NodeHttpClient.layerUndici, WRONG)
      ),
      Effect.provide(Logger.layer([logger])),
      Effect.withTracer(tracer)
    )
  })
})

describe("hostile bodies", () => {
  it.effect("a body over the cap is refused, declared or not", () =>
    Effect.gen(function*() {
      const big = "x".repeat(64 * 1024)
      const declared = yield* serve((_, res) => {
        res.writeHead(200, { "content-length": String(big.length) })
        res.end(big)
      })
      const chunked = yield* serve((_, res) => {
        res.writeHead(200, { "transfer-encoding": "chunked" })
        for (let i = 0; i < 64; i++) res.write("y".repeat(1024))
        res.end()
      })
      for (const server of [declared, chunked]) {
        const error = yield* Effect.flatMap(
          Effect.service(ErpClient.ErpClient),
          (c) => Effect.flip(c.get("partner/get", Schema.Unknown))
        ).pipe(Effect.provide(clientOn(server.url, { maxBodyBytes: 16 * 1024 })))
        expect(error).toMatchObject({ _tag: "ResponseTooLarge", limitBytes: 16 * 1024, endpoint: "partner/get" })
      }
      const small = yield* serve((_, res) => res.end(envelope))
      const ok = yield* Effect.flatMap(Effect.service(ErpClient.ErpClient), (c) => c.get("partner/get", Schema.Unknown))
        .pipe(
          Effect.provide(clientOn(small.url, { maxBodyBytes: 16 * 1024 }))
        )
      expect(ok).toEqual({ id: 1 })
    }))

  it.live("a body trickled byte by byte hits the timeout, as a typed error", () =>
    Effect.gen(function*() {
      const timers: Array<NodeJS.Timeout> = []
      const trickle = yield* serve((_, res) => {
        res.writeHead(200, { "content-type": "application/json" })
        let i = 0
        const timer = setInterval(() => {
          if (res.destroyed || i >= envelope.length) return clearInterval(timer)
          res.write(envelope[i++]!)
        }, 50)
        timers.push(timer)
      })
      const error = yield* Effect.flatMap(Effect.service(ErpClient.ErpClient), (c) =>
        Effect.flip(c.get("partner/get", Schema.Unknown)))
        .pipe(Effect.provide(clientOn(trickle.url, { timeout: "400 millis" })))
      timers.forEach(clearInterval)
      expect(error).toMatchObject({ _tag: "TimeoutError", timeoutMillis: 400 })
      expect(error.message).not.toContain(KEY)
    }))
})

describe("the limit, as the server counts it", () => {
  it.live(
    "an export against a strict sandbox (10 per second) keeps to it: at most 10 in any window, no 429",
    () =>
      Effect.gen(function*() {
        const strict = yield* Effect.acquireRelease(
          Effect.promise(() =>
            Serve.start({ apiKeys: [KEY], partners: 300, rateLimit: { limit: 10, window: "1 second" } })
          ),
          (sandbox) => Effect.promise(() => sandbox.close())
        )
        const pages = yield* Effect.flatMap(Effect.service(ErpClient.ErpClient), (client) =>
          Effect.forEach(
            Array.from({ length: 30 }, (_, i) => i * 10),
            (offset) => client.list("partner/list", Partner.Partner, { offset, count: 10 }),
            { concurrency: 8 }
          )).pipe(
            Effect.provide(
              ErpClient.layer({ baseUrl: strict.baseUrl, apiKey: Redacted.make(KEY) }).pipe(
                Layer.provide(ErpRateLimiter.layer({ limit: 10, window: "1 second" })),
                Layer.provide(NodeHttpClient.layerUndici)
              )
            )
          )
        expect(pages.flatMap((page) => page.records.map((record) => record.id))).toHaveLength(300)
        const stats = yield* Effect.promise(() => strict.stats())
        expect(stats.tooManyRequests).toBe(0)
        expect(stats.maxObservedInWindow["/partner/list"]).toBeLessThanOrEqual(10)
        expect(stats.byEndpoint["/partner/list"]).toBe(30)
      }),
    30_000
  )
})

describe("the limiter's key", () => {
  it("is the endpoint's path: a query written into the URL makes no key of its own", () => {
    const target = targetOf("https://erp.example/api/v2/")
    expect(target(HttpClientRequest.get("https://erp.example/api/v2/partner/get?id=1"))).toEqual({
      endpoint: "partner/get",
      method: "GET"
    })
    expect(target(HttpClientRequest.get("https://erp.example/api/v2/partner/get?id=2#x")).endpoint).toBe("partner/get")
    expect(target(HttpClientRequest.post("https://erp.example/api/v2/partner/list")).endpoint).toBe("partner/list")
  })
})
