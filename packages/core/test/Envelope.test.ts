import { describe, expect, it } from "@effect/vitest"
import { Envelope, ErpError, ListQuery, Page, Partner } from "@erp-client/core"
import { Either, Option, Schema } from "effect"

const decodePartner = Schema.decodeUnknownEither(Partner.Partner, { onExcessProperty: "preserve" })
const decodeStrict = Schema.decodeUnknownEither(Partner.StrictPartner, { onExcessProperty: "preserve" })

const partner = {
  id: 7,
  company_name: "Müller & Söhne + Co = 100%",
  tax_number: "12345678-2-42",
  is_customer: 1,
  email: "info@example.com",
  address: { city: "Győr", zip: "9021" },
  tags: ["a", "b"],
  fax: null
}

const ok = (data: unknown) => JSON.stringify({ result: { code: 1, message: null }, data })
const err = (message: string | null, code = 0) => JSON.stringify({ result: { code, message }, data: null })

describe("Envelope.decodeBody", () => {
  it("decodes a success envelope and keeps every field of the record", () => {
    const result = Envelope.decodeBody("partner/get", ok(partner), decodePartner)
    expect(Either.isRight(result)).toBe(true)
    const decoded = Either.getOrThrow(result)
    expect(decoded).toEqual(partner)
    // Nothing the server sent is dropped or rewritten: the JSON round-trips.
    expect(JSON.parse(JSON.stringify(decoded))).toEqual(partner)
  })

  it("maps the contract's error messages to typed errors", () => {
    const unauthorized = Envelope.decodeBody("partner/get", err("Unauthorized"), decodePartner)
    expect(Either.getLeft(unauthorized).pipe((e) => e._tag === "Some" && e.value._tag)).toBe("Unauthorized")
    const notFound = Envelope.decodeBody("partner/get", err("Not found"), decodePartner, "id=9")
    const nf = Either.getLeft(notFound)
    expect(nf._tag === "Some" && nf.value).toBeInstanceOf(ErpError.NotFound)
    expect(nf._tag === "Some" && nf.value.message).toBe("partner/get: not found (id=9)")
    const other = Envelope.decodeBody("partner/get", err("Database is down"), decodePartner)
    const api = Either.getLeft(other)
    expect(api._tag === "Some" && api.value).toMatchObject({
      _tag: "ApiError",
      code: 0,
      serverMessage: "Database is down"
    })
    const unknownCode = Envelope.decodeBody("partner/get", err("what", 2), decodePartner)
    expect(Either.getLeft(unknownCode)).toMatchObject({ value: { _tag: "ApiError", code: 2 } })
  })

  it("refuses a body that is not JSON, naming the endpoint", () => {
    const result = Envelope.decodeBody("partner/list", "{\"result\": {\"code\": 1", decodePartner)
    const error = Either.getLeft(result)
    expect(error._tag === "Some" && error.value).toBeInstanceOf(ErpError.DecodeError)
    expect(error._tag === "Some" && error.value.message).toMatch(
      /^partner\/list: cannot decode the body: the body is not valid JSON/
    )
  })

  it("refuses valid JSON that is not the envelope, with the path", () => {
    for (const body of [`{"items":[]}`, `[]`, `null`, `{"result":{"code":"1","message":null},"data":[]}`]) {
      const error = Either.getLeft(Envelope.decodeBody("partner/list", body, decodePartner))
      expect(error._tag).toBe("Some")
      expect(error._tag === "Some" && error.value._tag).toBe("DecodeError")
    }
    const missingResult = Either.getLeft(Envelope.decodeBody("partner/list", `{"data":[]}`, decodePartner))
    expect(missingResult._tag === "Some" && missingResult.value).toMatchObject({ path: "result" })
  })

  it("names the path inside data when a record does not match", () => {
    const bad = { ...partner, tax_number: "12 34" }
    const error = Either.getLeft(Envelope.decodeBody("partner/get", ok(bad), decodeStrict))
    expect(error._tag === "Some" && error.value).toMatchObject({ _tag: "DecodeError", path: "data.tax_number" })
  })
})

describe("Partner", () => {
  it("brands tax numbers as digit groups joined by hyphens", () => {
    const decode = Schema.decodeUnknownEither(Partner.TaxNumber)
    for (const good of ["1", "12345678-2-42", "000-111"]) expect(Either.isRight(decode(good))).toBe(true)
    for (const bad of ["", "-1", "1-", "1--2", "12 34", "12a-3", 1234]) expect(Either.isLeft(decode(bad))).toBe(true)
  })

  it("requires the known fields with their types", () => {
    expect(Either.isLeft(decodePartner({ ...partner, id: "7" }))).toBe(true)
    expect(Either.isLeft(decodePartner({ ...partner, id: 1.5 }))).toBe(true)
    expect(Either.isLeft(decodePartner({ ...partner, company_name: undefined }))).toBe(true)
    expect(Either.isLeft(decodePartner({ ...partner, is_customer: "yes" }))).toBe(true)
    const { is_customer: _, ...withoutFlag } = partner
    expect(Either.isRight(decodePartner(withoutFlag))).toBe(true)
  })

  it("accepts what real servers send, and keeps it as sent; StrictPartner holds to the contract", () => {
    const odd = [
      { tax_number: "" },
      { tax_number: null },
      { tax_number: undefined },
      { tax_number: "HU12345678" },
      { tax_number: "123 456 78" },
      { tax_number: "12345678/2/42" },
      { tax_number: 12345678242 },
      { company_name: null },
      { company_name: "" },
      { is_customer: null },
      { custom_fields: { segment: "B2B", contacts: [{ role: "billing" }] } }
    ]
    for (const fields of odd) {
      const record: Record<string, unknown> = { ...partner, ...fields }
      if ("tax_number" in fields && fields.tax_number === undefined) delete record.tax_number
      const decoded = decodePartner(record)
      expect(Either.getOrThrow(decoded)).toStrictEqual(record)
      const strict = decodeStrict(record)
      // Only the extra field is within the contract (it shows no other fields, and forbids none).
      expect(Either.isRight(strict), JSON.stringify(fields)).toBe("custom_fields" in fields)
    }
    expect(Either.getOrThrow(decodeStrict(partner))).toStrictEqual(partner)
  })

  it("reads a tax number as text, whatever form it came in", () => {
    const taxNumber = (value: unknown) =>
      Partner.taxNumberOf({ ...partner, tax_number: value } as unknown as Partner.Partner)
    expect(taxNumber("12345678-2-42")).toStrictEqual(Option.some("12345678-2-42"))
    expect(taxNumber(" HU12345678 ")).toStrictEqual(Option.some("HU12345678"))
    expect(taxNumber(12345678242)).toStrictEqual(Option.some("12345678242"))
    for (const none of ["", "  ", null, undefined]) expect(taxNumber(none)).toStrictEqual(Option.none())
  })

  it("reads the customer flag in each plausible form", () => {
    for (
      const [flag, expected] of [[1, true], [0, false], [true, true], [false, false], ["1", true], [
        "0",
        false
      ], [null, false]] as const
    ) {
      const decoded = Either.getOrThrow(decodePartner({ ...partner, is_customer: flag }))
      expect(Partner.isCustomer(decoded)).toBe(expected)
    }
  })
})

describe("Page.decodePage", () => {
  const records = [partner, { ...partner, id: 8, tax_number: ["bad"] }, { ...partner, id: 9 }]

  it("fails on the first bad record by default, naming its offset and id", () => {
    const result = Page.decodePage({
      endpoint: "partner/list",
      decodeRecord: decodePartner,
      data: records,
      offset: 200,
      count: 3,
      mode: "fail"
    })
    const error = Either.getLeft(result)
    expect(error._tag === "Some" && error.value).toMatchObject({
      _tag: "DecodeError",
      path: "data[1].tax_number",
      offset: 201,
      recordId: 8
    })
    expect(error._tag === "Some" && error.value.message).toContain("record at offset 201, id 8")
  })

  it("collects bad records whole and keeps going when asked to", () => {
    const page = Either.getOrThrow(
      Page.decodePage({
        endpoint: "partner/list",
        decodeRecord: decodePartner,
        data: records,
        offset: 200,
        count: 5,
        mode: "collect"
      })
    )
    expect(page.records.map((p) => p.id)).toEqual([7, 9])
    expect(page.raw).toEqual([records[0], records[2]])
    expect(page.raw[0]).toBe(records[0])
    expect(page.invalid).toHaveLength(1)
    expect(page.invalid[0]!.offset).toBe(201)
    expect(page.invalid[0]!.raw).toEqual(records[1])
    expect(page.received).toBe(3)
    expect(Page.isShort(page)).toBe(true)
  })

  it("refuses a page that is not an array or is longer than asked for", () => {
    expect(
      Either.isLeft(
        Page.decodePage({
          endpoint: "partner/list",
          decodeRecord: decodePartner,
          data: { a: 1 },
          offset: 0,
          count: 10,
          mode: "fail"
        })
      )
    ).toBe(true)
    expect(
      Either.isLeft(
        Page.decodePage({
          endpoint: "partner/list",
          decodeRecord: decodePartner,
          data: records,
          offset: 0,
          count: 2,
          mode: "collect"
        })
      )
    ).toBe(true)
  })
})

describe("ListQuery.toParams", () => {
  it("always sends list_offset and list_count, then the conditions", () => {
    const params = Either.getOrThrow(
      ListQuery.toParams("partner/list", { offset: 50, count: 25, where: { is_customer: 1, city: "A&B=C" } })
    )
    expect(params).toEqual([
      ["list_offset", "50"],
      ["list_count", "25"],
      ["list_condition[is_customer]", "1"],
      ["list_condition[city]", "A&B=C"]
    ])
    expect(Either.getOrThrow(ListQuery.toParams("x", { offset: 0, count: 1, where: { flag: true } }))[2]).toEqual([
      "list_condition[flag]",
      "1"
    ])
  })

  it("refuses condition field names outside [A-Za-z0-9_] and bad paging", () => {
    for (const field of ["a]b", "a[b", "a&b", "a=b", "", "é", "a b"]) {
      const result = ListQuery.toParams("partner/list", { offset: 0, count: 10, where: { [field]: 1 } })
      expect(Either.getLeft(result)).toMatchObject({ value: { _tag: "InvalidRequest" } })
    }
    expect(Either.isLeft(ListQuery.toParams("x", { offset: -1, count: 10 }))).toBe(true)
    expect(Either.isLeft(ListQuery.toParams("x", { offset: 0, count: 0 }))).toBe(true)
    expect(Either.isLeft(ListQuery.toParams("x", { offset: 0.5, count: 10 }))).toBe(true)
  })
})
