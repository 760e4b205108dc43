import { describe, expect, it } from "@effect/vitest"
import { ErpClient, ErpRateLimiter } from "@erp-client/effect4-client"
import { Arbitrary, Effect, Layer, Redacted, Schema } from "effect"
import { HttpClient, HttpClientResponse } from "effect/http"

/** Records the URL of every request a client sends; answers an empty page. (A limit no run of these reaches.) */
const recording = () => {
  const urls: Array<URL> = []
  const layer = ErpClient.layer({ baseUrl: "https://erp.example.com/v2", apiKey: Redacted.make("k") }).pipe(
    Layer.provide(ErpRateLimiter.layer({ limit: 1_000_000 })),
    Layer.provide(
      Layer.succeed(
        HttpClient.HttpClient,
        HttpClient.make((request, url) =>
          Effect.sync(() => {
            urls.push(new URL(url.toString()))
            return HttpClientResponse.fromWeb(
              request,
              new Response(JSON.stringify({ result: { code: 1, message: null }, data: [] }))
            )
          })
        )
      )
    )
  )
  return { urls, layer }
}

// Text that looks like query syntax, and any text at all.
// (Well-formed text: a lone surrogate cannot be sent in a URL at all, and is written U+FFFD.)
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
const Awkward = Schema.Union([
  Schema.String.check(Schema.makeFilter((s: string) => !LONE_SURROGATE.test(s))),
  Schema.Literals([
    "&",
    "=",
    "+",
    "%",
    "#",
    "[",
    "]",
    "\n",
    "\r\n",
    "%26",
    "a&list_offset=9",
    "x=1#y",
    "é".repeat(2_000)
  ]),
  Schema.Array(Schema.Literals(["&", "=", "+", "%", "#", "[", "]", "\n", " ", "?", "/", "é", "😀", "a"]))
])
const text = (value: string | ReadonlyArray<string>) => typeof value === "string" ? value : value.join("")

describe("query building", () => {
  it.live("a condition value or company name never adds or changes a parameter", () => {
    const { layer, urls } = recording()
    return Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      const result = yield* Arbitrary.checkEffect(
        Arbitrary.schema(Schema.Tuple([Awkward, Awkward])),
        ([valueOf, nameOf]) =>
          Effect.gen(function*() {
            const value = text(valueOf)
            const name = text(nameOf)
            urls.length = 0
            yield* client.list("partner/list", Schema.Unknown, { offset: 20, count: 10, where: { city: value } })
            yield* Effect.result(client.get("partner/get", Schema.Unknown, { params: [["company_name", name]] }))
            expect([...urls[0]!.searchParams]).toEqual([
              ["list_offset", "20"],
              ["list_count", "10"],
              ["list_condition[city]", value]
            ])
            expect(urls[0]!.pathname).toBe("/v2/partner/list")
            expect(urls[0]!.hash).toBe("")
            expect([...urls[1]!.searchParams]).toEqual([["company_name", name]])
            expect(urls[1]!.hash).toBe("")
            return true
          }).pipe(Effect.orDie),
        { runs: 300 }
      )
      expect(Arbitrary.formatCheckFailure(result)).toBeUndefined()
    }).pipe(Effect.provide(layer))
  })

  it.live("condition field names outside [A-Za-z0-9_] are refused before any request", () => {
    const { layer, urls } = recording()
    return Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      const Field = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(12)).check(
        Schema.makeFilter((field: string) => !/^[A-Za-z0-9_]+$/.test(field))
      )
      const result = yield* Arbitrary.checkEffect(
        Arbitrary.schema(Field),
        (field) =>
          Effect.map(
            Effect.flip(client.list("partner/list", Schema.Unknown, { offset: 0, count: 10, where: { [field]: 1 } })),
            (error) => error._tag === "InvalidRequest"
          ),
        { runs: 300 }
      )
      expect(Arbitrary.formatCheckFailure(result)).toBeUndefined()
      expect(urls).toHaveLength(0)
    }).pipe(Effect.provide(layer))
  })
})
