import { describe, expect, it } from "@effect/vitest"
import { Decoder, Envelope, JsonText, Page, Partner } from "@erp-client/core"
import { Schema } from "effect"
import { decodeUnknown, failureOf, getOrThrow, isSuccess } from "./kit.js"

const BODY = `{"result":{"code":1,"message":null},"data":[
  {"id": 1, "company_name": "A", "credit_limit": 1.10, "ref": 12345678901234567890},
  {"id": 12345678901234567890, "company_name": "Big"},
  {"id": 9007199254740991, "company_name": "Max", "rate": 1e2},
  {"id": 9007199254740993, "company_name": "Past"},
  {"id": 2, "company_name": null, "z": -0.0}
]}`

const pageOf = (body: string, mode: Page.InvalidRecordMode, exact: boolean) => {
  const envelope = getOrThrow(Envelope.parseBody("partner/list", body))
  const data = getOrThrow(Envelope.toData("partner/list", envelope))
  const json = exact ? getOrThrow(JsonText.dataText(body)).elements : undefined
  return Page.decodePage({
    endpoint: "partner/list",
    decodeRecord: Decoder.make(Partner.Partner),
    data,
    offset: 100,
    count: 10,
    mode,
    json
  })
}

describe("PartnerId: exact as a number", () => {
  it("a safe integer passes; an id past 2^53 - 1 is refused, saying why", () => {
    const decode = decodeUnknown(Partner.PartnerId)
    expect(isSuccess(decode(Number.MAX_SAFE_INTEGER))).toBe(true)
    for (const id of [2 ** 53, Number("12345678901234567890"), Number("9007199254740993")]) {
      const decoded = decode(id)
      expect(isSuccess(decoded)).toBe(false)
      expect(failureOf(decoded)?.message).toMatch(/past 2\^53 - 1 \(9007199254740991\)/)
    }
    const fraction = decode(1.5)
    expect(failureOf(fraction)?.message).toMatch(/expected an integer, got 1\.5/)
    expect(Schema.is(Partner.StrictPartner)({ id: 2 ** 53 + 2, company_name: "A", tax_number: "1-2" })).toBe(false)
  })
})

describe("Page.decodePage with the records' texts", () => {
  it("carries each valid record's text index for index, and each invalid one's, naming a big id as sent", () => {
    const page = getOrThrow(pageOf(BODY, "collect", true))
    expect(page.records.map((p) => p.id)).toEqual([1, 9007199254740991, 2])
    expect(page.json).toEqual([
      `{"id":1,"company_name":"A","credit_limit":1.10,"ref":12345678901234567890}`,
      `{"id":9007199254740991,"company_name":"Max","rate":1e2}`,
      `{"id":2,"company_name":null,"z":-0.0}`
    ])
    expect(page.raw.map((r) => JSON.stringify(r))).toEqual(page.json!.map((j) => JSON.stringify(JSON.parse(j))))
    expect(page.invalid.map((r) => [r.offset, r.json, r.error.recordId])).toEqual([
      [101, `{"id":12345678901234567890,"company_name":"Big"}`, "12345678901234567890"],
      [103, `{"id":9007199254740993,"company_name":"Past"}`, "9007199254740993"]
    ])
    expect(page.invalid[0]!.error.message).toBe(
      "partner/list: cannot decode data[1].id (record at offset 101, id 12345678901234567890): an id past 2^53 - 1 " +
        "(9007199254740991) cannot be held exactly as a number, and is not read as one that may name another partner"
    )
  })

  it("without texts, no json; failing at the first invalid record names it", () => {
    const page = getOrThrow(pageOf(BODY, "collect", false))
    expect(page.json).toBeUndefined()
    expect(page.invalid[0]!.json).toBeUndefined()
    const failed = pageOf(BODY, "fail", true)
    expect(failureOf(failed)?.message).toMatch(/data\[1\]\.id \(record at offset 101, id 1234567890/)
  })

  it("texts that do not pair with the records are refused", () => {
    const decoded = Page.decodePage({
      endpoint: "partner/list",
      decodeRecord: Decoder.make(Partner.Partner),
      data: [{ id: 1, company_name: "A" }],
      offset: 0,
      count: 10,
      mode: "fail",
      json: []
    })
    expect(failureOf(decoded)?.reason).toBe("0 record texts were given for 1 records")
  })
})

describe("JsonText", () => {
  it("gives the text as written, and says where a text stops being JSON", () => {
    expect(getOrThrow(JsonText.compact(`{ "a": 1.10, "b": [ 12345678901234567890 ] }`))).toBe(
      `{"a":1.10,"b":[12345678901234567890]}`
    )
    const broken = JsonText.compact(`{"a": 1,}`)
    expect(failureOf(broken)).toMatchObject({ _tag: "JsonTextError", position: 8 })
    expect(JsonText.isPlain(`{"id":7,"credit_limit":1500.50}`)).toBe(false)
    const cells = getOrThrow(JsonText.members(`{"id":7,"credit_limit":1500.50,"fax":null}`))
    expect(cells.map((m) => [m.key, m.cell])).toEqual([["id", "7"], ["credit_limit", "1500.50"], ["fax", null]])
  })
})
