import { NodeHttpClient } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { ErpClient, ErpRateLimiter } from "@erp-client/client"
import { Partner } from "@erp-client/core"
import { ListEndpoint } from "@erp-client/streams"
import { Chunk, Effect, Either, Layer, Redacted, Schema, Stream } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"

const KEY = "sk-exact-secret-31c4"

// Records as a server may write them: pretty-printed, numbers a float changes, integer-like keys, escapes.
const RECORDS = [
  `{ "id" : 1, "company_name" : "Big \\"numbers\\" \\u0026 Co", "ref" : 12345678901234567890, "limit" : 1.10,
     "rate" : 1e2, "zero" : -0.0, "2" : "two", "1" : "one", "path" : "a\\/b" }`,
  `{ "id" : 9007199254740993, "company_name" : "Past 2^53" }`,
  `{ "id" : 3, "company_name" : "Plain", "n" : 9007199254740993, "nested" : { "x" : [ 1.50, 2e-7 ] } }`
]

// The same, compact: whitespace outside strings gone, everything else as written.
const EXACT = [
  `{"id":1,"company_name":"Big \\"numbers\\" \\u0026 Co","ref":12345678901234567890,"limit":1.10,"rate":1e2,` +
  `"zero":-0.0,"2":"two","1":"one","path":"a\\/b"}`,
  `{"id":9007199254740993,"company_name":"Past 2^53"}`,
  `{"id":3,"company_name":"Plain","n":9007199254740993,"nested":{"x":[1.50,2e-7]}}`
]

const envelope = (data: string) => `{\n  "result" : { "code" : 1, "message" : null },\n  "data" : ${data}\n}\n`

/**
 * A loopback ERP for one test: `partner/list` pages RECORDS, `partner/get?id=N` answers the record at N - 1, and
 * `echo` answers with the body it received as its data; every POST body is kept as received.
 */
const serve = Effect.acquireRelease(
  Effect.async<{ readonly url: string; readonly posted: Array<string>; readonly server: Http.Server }>((resume) => {
    const posted: Array<string> = []
    const server = Http.createServer((request, response) => {
      const url = new URL(request.url ?? "/", "http://erp.invalid")
      let body = ""
      request.setEncoding("utf8")
      request.on("data", (chunk: string) => (body += chunk))
      request.on("end", () => {
        let data = "null"
        if (url.pathname === "/partner/list") {
          const offset = Number(url.searchParams.get("list_offset"))
          const count = Number(url.searchParams.get("list_count"))
          data = `[\n    ${RECORDS.slice(offset, offset + count).join(",\n    ")}\n  ]`
        } else if (url.pathname === "/partner/get") {
          data = RECORDS[Number(url.searchParams.get("id")) - 1] ?? "null"
        } else if (url.pathname === "/echo") {
          posted.push(body)
          data = body
        }
        response.writeHead(200, { "content-type": "application/json" }).end(envelope(data))
      })
    })
    server.listen(
      0,
      "127.0.0.1",
      () =>
        resume(Effect.succeed({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, posted, server }))
    )
  }),
  ({ server }) =>
    Effect.async<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
)

const clientOn = (url: string) =>
  ErpClient.layer({ baseUrl: url, apiKey: Redacted.make(KEY) }).pipe(
    Layer.provide(ErpRateLimiter.layer()),
    Layer.provide(NodeHttpClient.layerUndici)
  )

/** Runs `body` with a client on a fresh loopback server. */
const withServer = <A, E>(
  body: (server: Effect.Effect.Success<typeof serve>) => Effect.Effect<A, E, ErpClient.ErpClient>
) => Effect.flatMap(serve, (server) => body(server).pipe(Effect.provide(clientOn(server.url))))

describe("ErpClient exact mode", () => {
  it.scopedLive("list with exact: each valid record's text as written, index for index; the invalid one's too", () =>
    withServer(() =>
      Effect.gen(function*() {
        const client = yield* ErpClient.ErpClient
        const query = { offset: 0, count: 10, invalidRecords: "collect" } as const
        const page = yield* client.list("partner/list", Partner.Partner, { ...query, exact: true })
        expect(page.records.map((p) => p.id)).toEqual([1, 3])
        expect(page.json).toEqual([EXACT[0], EXACT[2]])
        expect(page.invalid.map((r) => [r.offset, r.json, r.error.recordId])).toEqual([
          [1, EXACT[1], "9007199254740993"]
        ])
        expect(page.invalid[0]!.error.message).toMatch(/id 9007199254740993\): an id past 2\^53 - 1/)
        // Parsed, the same records lose what a float cannot hold: what exact mode is for.
        expect(JSON.stringify(page.raw[0])).toMatch(/"1":"one","2":"two".*"ref":12345678901234567000,"limit":1\.1,/)
        const plain = yield* client.list("partner/list", Partner.Partner, query)
        expect(plain.json).toBeUndefined()
        expect(plain.raw).toEqual(page.raw)
      })
    ))

  it.scopedLive("get with exact gives { value, json }; without, the value alone", () =>
    withServer(() =>
      Effect.gen(function*() {
        const client = yield* ErpClient.ErpClient
        const exact = yield* client.get("partner/get", Partner.Partner, { params: [["id", "3"]], exact: true })
        expect(exact.json).toBe(EXACT[2])
        expect(exact.value.id).toBe(3)
        const value: Partner.Partner = yield* client.get("partner/get", Partner.Partner, { params: [["id", "3"]] })
        expect(value).toEqual(exact.value)
        // An id past 2^53 - 1 fails the call with the reason; the command line checks with an any-object schema.
        const big = yield* Effect.either(
          client.get("partner/get", Partner.Partner, { params: [["id", "2"]], exact: true })
        )
        expect(Either.isLeft(big) && big.left.message).toMatch(/cannot decode data\.id: an id past 2\^53 - 1/)
        const asSent = yield* client.get("partner/get", Schema.Unknown, { params: [["id", "2"]], exact: true })
        expect(asSent.json).toBe(EXACT[1])
      })
    ))

  it.scopedLive("post with json sends the text as written; exact gives the data as the server wrote it", () =>
    withServer((server) =>
      Effect.gen(function*() {
        const client = yield* ErpClient.ErpClient
        const text = `{ "amount" : 1.10, "ref" : 12345678901234567890, "note" : "caf\\u00e9" }`
        const echoed = yield* client.post("echo", Schema.Unknown, { json: text, exact: true })
        expect(server.posted).toEqual([text])
        expect(echoed.json).toBe(`{"amount":1.10,"ref":12345678901234567890,"note":"caf\\u00e9"}`)
        // A value is sent as JSON.stringify writes it.
        const value = yield* client.post("echo", Schema.Unknown, { body: { amount: 1.1 } })
        expect(value).toEqual({ amount: 1.1 })
        expect(server.posted[1]).toBe(`{"amount":1.1}`)
        // Text that is not JSON is refused before anything is sent.
        const refused = yield* Effect.either(client.post("echo", Schema.Unknown, { json: "{\"amount\": 1.10,}" }))
        expect(Either.isLeft(refused) && refused.left._tag).toBe("InvalidRequest")
        expect(Either.isLeft(refused) && refused.left.message).toMatch(/the body is not JSON: expected a string key/)
        expect(server.posted).toHaveLength(2)
      })
    ))
})

describe("ListEndpoint.pages with exact", () => {
  it.scopedLive("every page carries its records' texts, in order, across pages", () =>
    withServer(() =>
      Effect.gen(function*() {
        const pages = yield* ListEndpoint.pages(
          "partner/list",
          Schema.Record({ key: Schema.String, value: Schema.Unknown }),
          {
            pageSize: 2,
            exact: true
          }
        ).pipe(Stream.runCollect)
        const all = Chunk.toReadonlyArray(pages)
        // The short page is followed by one that brings nothing: the end of the list.
        expect(all.map((page) => page.json)).toEqual([[EXACT[0], EXACT[1]], [EXACT[2]], []])
        expect(all.flatMap((page) => page.raw.map((raw) => JSON.stringify(raw)))).toEqual(
          RECORDS.map((r) => JSON.stringify(JSON.parse(r)))
        )
      })
    ))
})
