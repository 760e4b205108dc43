import { describe, expect, it } from "@effect/vitest"
import { Decoder, Envelope, Page, Partner } from "@erp-client/effect4-core"
import { Arbitrary, Effect, Result, Schema } from "effect"

const decodePartner = Decoder.make(Partner.Partner)
const decodeList = (body: string) =>
  Result.flatMap(
    Result.flatMap(Envelope.parseBody("partner/list", body), (e) => Envelope.toData("partner/list", e)),
    (data) =>
      Page.decodePage({
        endpoint: "partner/list",
        decodeRecord: decodePartner,
        data,
        offset: 0,
        count: 100,
        mode: "collect"
      })
  )

/** Every body ends in data or one of the typed errors: never a throw, never anything else. */
const settles = (body: string): boolean => {
  const errors: Array<{ readonly _tag: string; readonly message: string }> = []
  const one = Envelope.decodeBody("partner/get", body, decodePartner)
  if (Result.isFailure(one)) errors.push(one.failure)
  const many = decodeList(body)
  if (Result.isFailure(many)) errors.push(many.failure)
  for (const error of errors) {
    expect(["DecodeError", "Unauthorized", "NotFound", "ApiError"]).toContain(error._tag)
    expect(error.message.length).toBeGreaterThan(0)
  }
  return true
}

// Envelope look-alikes: the right keys with values of every type in every place.
const Anything = Schema.Union([Schema.Json, Schema.Number, Schema.String, Schema.Boolean, Schema.Null])
const PartnerLike = Schema.Struct({
  id: Schema.optional(Anything),
  company_name: Schema.optional(Anything),
  tax_number: Schema.optional(Anything),
  is_customer: Schema.optional(Anything)
})
const EnvelopeLike = Schema.Struct({
  result: Schema.optional(
    Schema.Union([Schema.Struct({ code: Schema.optional(Anything), message: Schema.optional(Anything) }), Anything])
  ),
  data: Schema.optional(Schema.Union([PartnerLike, Schema.Array(PartnerLike), Anything]))
})

const check = <A>(schema: Schema.Codec<A>, property: (value: A) => boolean, runs: number) =>
  Effect.map(
    Arbitrary.checkEffect(Arbitrary.schema(schema), property, { runs }),
    (result) => expect(Arbitrary.formatCheckFailure(result)).toBeUndefined()
  )

describe("hostile responses", () => {
  it.effect("arbitrary JSON values", () => check(Schema.Json, (value) => settles(JSON.stringify(value)), 500))

  it.effect("envelope look-alikes with wrong types in every place", () =>
    check(EnvelopeLike, (value) => settles(JSON.stringify(value)), 1_000))

  it.effect("arbitrary strings, not JSON at all", () => check(Schema.String, settles, 500))

  it("truncated and corrupted bodies", () => {
    const valid = JSON.stringify({
      result: { code: 1, message: null },
      data: [{ id: 1, company_name: "A & B", tax_number: "1-2", is_customer: 1, extra: { deep: [1, 2, 3] } }]
    })
    for (let cut = 0; cut <= valid.length; cut++) {
      settles(valid.slice(0, cut))
      settles(valid.slice(0, cut) + "}\"[" + valid.slice(cut))
    }
  })

  it("huge numbers and deep nesting", () => {
    settles(`{"result":{"code":1e400,"message":null},"data":null}`)
    settles(
      `{"result":{"code":1,"message":null},"data":{"id":123456789012345678901234567890,"company_name":"x","tax_number":"1"}}`
    )
    const deep = "[".repeat(100_000) + "]".repeat(100_000)
    settles(deep)
    settles(`{"result":{"code":1,"message":null},"data":[${deep}]}`)
    settles(`{"result":{"code":1,"message":null},"data":{"id":1,"company_name":"x","tax_number":"1","nested":${deep}}}`)
    const huge = Envelope.decodeBody(
      "partner/get",
      `{"result":{"code":1,"message":null},"data":{"id":1e400,"company_name":"x","tax_number":"1"}}`,
      decodePartner
    )
    expect(Result.isFailure(huge) && huge.failure).toMatchObject({ _tag: "DecodeError", path: "data.id" })
  })
})
