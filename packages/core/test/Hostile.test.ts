import { describe, expect, it } from "@effect/vitest"
import { Envelope, Page, Partner } from "@erp-client/core"
import fc from "fast-check"
import { Result } from "../src/internal/edition.js"
import { decodeUnknown, failureOf } from "./kit.js"

const decodePartner = decodeUnknown(Partner.Partner)
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
const settles = (body: string) => {
  const errors: Array<{ readonly _tag: string; readonly message: string }> = []
  const one = Envelope.decodeBody("partner/get", body, decodePartner)
  const oneFailed = failureOf(one)
  if (oneFailed !== undefined) errors.push(oneFailed)
  const many = decodeList(body)
  const manyFailed = failureOf(many)
  if (manyFailed !== undefined) errors.push(manyFailed)
  for (const error of errors) {
    expect(["DecodeError", "Unauthorized", "NotFound", "ApiError"]).toContain(error._tag)
    expect(error.message.length).toBeGreaterThan(0)
  }
}

const partnerLike = fc.record({
  id: fc.oneof(fc.integer(), fc.double(), fc.string(), fc.constant(null), fc.bigInt().map(String)),
  company_name: fc.oneof(fc.string(), fc.fullUnicodeString(), fc.integer(), fc.constant(null)),
  tax_number: fc.oneof(fc.stringMatching(/^\d{1,8}(-\d{1,4}){0,3}$/), fc.string()),
  is_customer: fc.oneof(fc.constantFrom(0, 1, true, false, "0", "1"), fc.anything())
}, { requiredKeys: [] })

const envelopeLike = fc.record({
  result: fc.oneof(
    fc.record({
      code: fc.oneof(fc.constantFrom(0, 1, 2, -1), fc.anything()),
      message: fc.oneof(fc.string(), fc.constant(null), fc.anything())
    }, { requiredKeys: [] }),
    fc.anything()
  ),
  data: fc.oneof(partnerLike, fc.array(partnerLike, { maxLength: 5 }), fc.anything(), fc.constant(null))
}, { requiredKeys: [] })

// Every body a server could send ends in data or a typed error. One suite, run against both editions (TEST_PAIRS in
// scripts/editions.ts).

describe("hostile responses", () => {
  it("arbitrary JSON values", () => {
    fc.assert(fc.property(fc.jsonValue(), (value) => settles(JSON.stringify(value))), { numRuns: 1_000 })
  })

  it("envelope look-alikes with wrong types in every place", () => {
    fc.assert(fc.property(envelopeLike, (value) => settles(JSON.stringify(value))), { numRuns: 2_000 })
  })

  it("truncated and corrupted bodies", () => {
    const valid = JSON.stringify({
      result: { code: 1, message: null },
      data: [{ id: 1, company_name: "A & B", tax_number: "1-2", is_customer: 1, extra: { deep: [1, 2, 3] } }]
    })
    fc.assert(
      fc.property(fc.nat(valid.length), fc.string({ maxLength: 3 }), (cut, junk) => {
        settles(valid.slice(0, cut))
        settles(valid.slice(0, cut) + junk + valid.slice(cut))
      }),
      { numRuns: 1_000 }
    )
  })

  it("arbitrary strings, not JSON at all", () => {
    fc.assert(fc.property(fc.fullUnicodeString({ maxLength: 200 }), settles), { numRuns: 1_000 })
  })

  it("huge numbers and deep nesting", () => {
    settles(`{"result":{"code":1,"message":null},"data":{"id":1e400,"company_name":"x","tax_number":"1"}}`)
    settles(`{"result":{"code":1e400,"message":null},"data":null}`)
    settles(
      `{"result":{"code":1,"message":null},"data":{"id":123456789012345678901234567890,"company_name":"x","tax_number":"1"}}`
    )
    const deep = "[".repeat(100_000) + "]".repeat(100_000)
    settles(deep)
    settles(`{"result":{"code":1,"message":null},"data":[${deep}]}`)
    settles(`{"result":{"code":1,"message":null},"data":{"id":1,"company_name":"x","tax_number":"1","nested":${deep}}}`)
    const huge = failureOf(
      Envelope.decodeBody(
        "partner/get",
        `{"result":{"code":1,"message":null},"data":{"id":1e400,"company_name":"x","tax_number":"1"}}`,
        decodePartner
      )
    )
    expect(huge).toMatchObject({ _tag: "DecodeError", path: "data.id" })
  })
})
