import { describe, expect, it } from "@effect/vitest"
import { ErpClient, ErpRateLimiter } from "@erp-client/client"
import { Effect, Layer, Redacted, Schema } from "effect"
import fc from "fast-check"
import { HttpClient, HttpClientResponse } from "./kit.js"

// What a client sends for awkward condition values, names and fields. One suite, run against both editions
// (TEST_PAIRS in scripts/editions.ts).

/** Records the URL of every request a client sends; answers an empty page. */
const recording = () => {
  const urls: Array<URL> = []
  const layer = ErpClient.layer({ baseUrl: "https://erp.example.com/v2", apiKey: Redacted.make("k") }).pipe(
    Layer.provide(ErpRateLimiter.layer()),
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

const awkward = fc.oneof(
  fc.fullUnicodeString({ maxLength: 64 }),
  fc.constantFrom(
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
  ),
  fc.array(fc.constantFrom("&", "=", "+", "%", "#", "[", "]", "\n", " ", "?", "/", "é", "😀", "a"), { maxLength: 30 })
    .map((parts) => parts.join(""))
)

describe("query building", () => {
  it("a condition value or company name never adds or changes a parameter", async () => {
    const { layer, urls } = recording()
    await fc.assert(
      fc.asyncProperty(awkward, awkward, async (value, name) => {
        urls.length = 0
        await Effect.runPromise(
          Effect.gen(function*() {
            const client = yield* ErpClient.ErpClient
            yield* client.list("partner/list", Schema.Unknown, { offset: 20, count: 10, where: { city: value } })
            yield* Effect.exit(client.get("partner/get", Schema.Unknown, { params: [["company_name", name]] }))
          }).pipe(Effect.provide(layer))
        )
        expect([...urls[0]!.searchParams]).toEqual([
          ["list_offset", "20"],
          ["list_count", "10"],
          ["list_condition[city]", value]
        ])
        expect(urls[0]!.pathname).toBe("/v2/partner/list")
        expect(urls[0]!.hash).toBe("")
        expect([...urls[1]!.searchParams]).toEqual([["company_name", name]])
        expect(urls[1]!.hash).toBe("")
      }),
      { numRuns: 300 }
    )
  })

  it("condition field names outside [A-Za-z0-9_] are refused before any request", async () => {
    const { layer, urls } = recording()
    await fc.assert(
      fc.asyncProperty(
        fc.string({ minLength: 1, maxLength: 12 }).filter((f) => !/^[A-Za-z0-9_]+$/.test(f)),
        async (field) => {
          const error = await Effect.runPromise(
            Effect.flatMap(
              ErpClient.ErpClient,
              (client) =>
                Effect.flip(
                  client.list("partner/list", Schema.Unknown, { offset: 0, count: 10, where: { [field]: 1 } })
                )
            )
              .pipe(
                Effect.provide(layer)
              )
          )
          expect(error._tag).toBe("InvalidRequest")
        }
      ),
      { numRuns: 300 }
    )
    expect(urls).toHaveLength(0)
  })
})
