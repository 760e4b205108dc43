import { FetchHttpClient, HttpClientRequest } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { ErpClient, ErpRateLimiter } from "@erp-client/client"
import { Fault, Sandbox } from "@erp-client/sandbox"
import { Context, Effect, Layer, Redacted, Schema } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { targetOf } from "../src/internal/transport.js"

const KEY = "sk-transport-secret-55aa"

/** A loopback server for one test; it records the headers of every request it gets. */
const serve = (handler: Http.RequestListener) =>
  Effect.acquireRelease(
    Effect.async<{ url: string; seen: Array<Http.IncomingHttpHeaders>; server: Http.Server }>((resume) => {
      const seen: Array<Http.IncomingHttpHeaders> = []
      const server = Http.createServer((req, res) => {
        seen.push(req.headers)
        handler(req, res)
      })
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server })))
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() =>
          resume(Effect.void)
        )
      })
  )

const envelope = JSON.stringify({ result: { code: 1, message: null }, data: { id: 1 } })

const clients = {
  undici: NodeHttpClient.layerUndici,
  fetch: FetchHttpClient.layer
} as const

describe("redirects", () => {
  for (const [name, transport] of Object.entries(clients)) {
    it.scoped(`are refused, and the key never reaches the other origin (${name})`, () =>
      Effect.gen(function*() {
        // The sandbox answers with a redirect to a second loopback server that records what reaches it.
        const other = yield* serve((_, res) => res.end(envelope))
        const sandbox = yield* Layer.build(Sandbox.layer({ apiKeys: [KEY], partners: 3 })).pipe(
          Effect.map(Context.get(Sandbox.Sandbox)),
          Effect.orDie
        )
        yield* sandbox.inject(Fault.Fault.Redirect({ location: `${other.url}/partner/get?id=1` }))
        const error = yield* Effect.flatMap(ErpClient.ErpClient, (client) =>
          Effect.flip(client.get("partner/get", Schema.Unknown, { params: [["id", "1"]] }))).pipe(
            Effect.provide(
              ErpClient.layer({ baseUrl: sandbox.baseUrl, apiKey: Redacted.make(KEY), retries: 0 }).pipe(
                Layer.provide(ErpRateLimiter.layer()),
                Layer.provide(transport)
              )
            )
          )
        expect(error).toMatchObject({ _tag: "HttpStatusError", status: 302 })
        expect(error.message).toContain("redirects are not followed")
        const log = yield* sandbox.requests
        expect(log.map((r) => [r.status, r.keyValid])).toEqual([[302, true]])
        expect(other.seen).toHaveLength(0)
      }))
  }
})

describe("hostile bodies", () => {
  const client = (url: string, options: Partial<Parameters<typeof ErpClient.layer>[0]> = {}) =>
    ErpClient.layer({ baseUrl: url, apiKey: Redacted.make(KEY), retries: 0, ...options }).pipe(
      Layer.provide(ErpRateLimiter.layer()),
      Layer.provide(NodeHttpClient.layerUndici)
    )

  it.scoped("a body over the cap is refused, declared or not", () =>
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
          ErpClient.ErpClient,
          (c) => Effect.flip(c.get("partner/get", Schema.Unknown))
        ).pipe(
          Effect.provide(client(server.url, { maxBodyBytes: 16 * 1024 }))
        )
        expect(error).toMatchObject({ _tag: "ResponseTooLarge", limitBytes: 16 * 1024, endpoint: "partner/get" })
      }
      // Under the cap, the same client reads the body.
      const small = yield* serve((_, res) => res.end(envelope))
      const ok = yield* Effect.flatMap(ErpClient.ErpClient, (c) => c.get("partner/get", Schema.Unknown)).pipe(
        Effect.provide(client(small.url, { maxBodyBytes: 16 * 1024 }))
      )
      expect(ok).toEqual({ id: 1 })
    }))

  it.scopedLive("a body trickled byte by byte hits the timeout, as a typed error", () =>
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
      const error = yield* Effect.flatMap(ErpClient.ErpClient, (c) => Effect.flip(c.get("partner/get", Schema.Unknown)))
        .pipe(
          Effect.provide(client(trickle.url, { timeout: "400 millis" }))
        )
      timers.forEach(clearInterval)
      expect(error).toMatchObject({ _tag: "TimeoutError", timeoutMillis: 400 })
      expect(error.message).not.toContain(KEY)
    }))
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
