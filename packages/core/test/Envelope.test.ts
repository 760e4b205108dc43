import { describe, expect, it } from "@effect/vitest"
import { Decoder, Envelope, ErpError, ListQuery, Page, Partner } from "@erp-client/core"
import { Option, Schema } from "effect"
import { decodeUnknown, failureOf as failureOrUndefined, getOrThrow, isSuccess } from "./kit.js"

// One suite, run against both editions (TEST_PAIRS in scripts/editions.ts).

const decodePartner = Decoder.make(Partner.Partner)
const decodeStrict = Decoder.make(Partner.StrictPartner)

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

/** The failure of `result`; a success fails the test. */
const failureOf = <A, E>(result: Parameters<typeof failureOrUndefined<A, E>>[0]): E => {
  const failure = failureOrUndefined(result)
  if (failure === undefined) throw new Error(`expected a failure, got ${JSON.stringify(getOrThrow(result))}`)
  return failure
}

const isFailure = <A, E>(result: Parameters<typeof isSuccess<A, E>>[0]): boolean => !isSuccess(result)

describe("Envelope.decodeBody", () => {
  it("decodes a success envelope and keeps every field of the record, in order", () => {
    const decoded = getOrThrow(Envelope.decodeBody("partner/get", ok(partner), decodePartner))
    expect(decoded).toEqual(partner)
    expect(Object.keys(decoded)).toEqual(Object.keys(partner))
    expect(JSON.parse(JSON.stringify(decoded))).toEqual(partner)
  })

  it("maps the contract's error messages to typed errors, with the same messages as the Effect 3 edition", () => {
    expect(failureOf(Envelope.decodeBody("partner/get", err("Unauthorized"), decodePartner))._tag).toBe("Unauthorized")
    const notFound = failureOf(Envelope.decodeBody("partner/get", err(" not FOUND "), decodePartner, "id=9"))
    expect(notFound).toBeInstanceOf(ErpError.NotFound)
    expect(notFound.message).toBe("partner/get: not found (id=9)")
    expect(failureOf(Envelope.decodeBody("partner/get", err("Database is down"), decodePartner))).toMatchObject({
      _tag: "ApiError",
      code: 0,
      serverMessage: "Database is down",
      message: "partner/get: the server reported an error (code 0): Database is down"
    })
    expect(failureOf(Envelope.decodeBody("partner/get", err("what", 2), decodePartner))).toMatchObject({
      _tag: "ApiError",
      code: 2
    })
  })

  it("refuses a body that is not JSON, naming the endpoint", () => {
    const error = failureOf(Envelope.decodeBody("partner/list", "{\"result\": {\"code\": 1", decodePartner))
    expect(error).toBeInstanceOf(ErpError.DecodeError)
    expect(error.message).toMatch(/^partner\/list: cannot decode the body: the body is not valid JSON/)
  })

  it("refuses valid JSON that is not the envelope, with the path", () => {
    for (const body of [`{"items":[]}`, `[]`, `null`, `{"result":{"code":"1","message":null},"data":[]}`]) {
      expect(failureOf(Envelope.decodeBody("partner/list", body, decodePartner))._tag).toBe("DecodeError")
    }
    expect(failureOf(Envelope.decodeBody("partner/list", `{"data":[]}`, decodePartner))).toMatchObject({
      path: "result"
    })
  })

  it("names the path inside data when a record does not match", () => {
    const error = failureOf(Envelope.decodeBody("partner/get", ok({ ...partner, tax_number: "12 34" }), decodeStrict))
    expect(error).toMatchObject({ _tag: "DecodeError", path: "data.tax_number" })
    expect(error.message).toContain("a tax number is groups of digits joined by hyphens")
  })
})

describe("Partner", () => {
  it("brands tax numbers as digit groups joined by hyphens", () => {
    const decode = decodeUnknown(Partner.TaxNumber)
    for (const good of ["1", "12345678-2-42", "000-111"]) expect(isSuccess(decode(good))).toBe(true)
    for (const bad of ["", "-1", "1-", "1--2", "12 34", "12a-3", 1234]) expect(isFailure(decode(bad))).toBe(true)
  })

  it("requires the known fields with their types", () => {
    expect(isFailure(decodePartner({ ...partner, id: "7" }))).toBe(true)
    expect(isFailure(decodePartner({ ...partner, id: 1.5 }))).toBe(true)
    expect(isFailure(decodePartner({ ...partner, id: 0 }))).toBe(true)
    expect(isFailure(decodePartner({ ...partner, company_name: undefined }))).toBe(true)
    expect(isFailure(decodePartner({ ...partner, is_customer: "yes" }))).toBe(true)
    const { is_customer: _, ...withoutFlag } = partner
    expect(isSuccess(decodePartner(withoutFlag))).toBe(true)
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
      expect(getOrThrow(decodePartner(record))).toStrictEqual(record)
      expect(isSuccess(decodeStrict(record)), JSON.stringify(fields)).toBe("custom_fields" in fields)
    }
    expect(getOrThrow(decodeStrict(partner))).toStrictEqual(partner)
  })

  it("keeps the fields it does not know through the full decoder too", () => {
    // A schema that transforms is decoded field by field: the index signature keeps the rest.
    const decoded = Schema.decodeUnknownSync(Partner.Partner)(partner)
    expect(decoded).toEqual(partner)
  })

  it("reads a tax number as text, whatever form it came in, and the customer flag in each plausible form", () => {
    const taxNumber = (value: unknown) =>
      Partner.taxNumberOf({ ...partner, tax_number: value } as unknown as Partner.Partner)
    expect(taxNumber("12345678-2-42")).toStrictEqual(Option.some("12345678-2-42"))
    expect(taxNumber(" HU12345678 ")).toStrictEqual(Option.some("HU12345678"))
    expect(taxNumber(12345678242)).toStrictEqual(Option.some("12345678242"))
    for (const none of ["", "  ", null, undefined]) expect(taxNumber(none)).toStrictEqual(Option.none())
    const flags = [[1, true], [0, false], [true, true], [false, false], ["1", true], ["0", false], [
      null,
      false
    ]] as const
    for (const [flag, expected] of flags) {
      expect(Partner.isCustomer(getOrThrow(decodePartner({ ...partner, is_customer: flag })))).toBe(expected)
    }
  })
})

describe("Page.decodePage", () => {
  const records = [partner, { ...partner, id: 8, tax_number: ["bad"] }, { ...partner, id: 9 }]

  it("fails on the first bad record by default, naming its offset and id", () => {
    const error = failureOf(
      Page.decodePage({
        endpoint: "partner/list",
        decodeRecord: decodePartner,
        data: records,
        offset: 200,
        count: 3,
        mode: "fail"
      })
    )
    expect(error).toMatchObject({ _tag: "DecodeError", path: "data[1].tax_number", offset: 201, recordId: 8 })
    expect(error.message).toContain("record at offset 201, id 8")
  })

  it("collects bad records whole and keeps going when asked to", () => {
    const page = getOrThrow(
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
    expect(page.invalid.map((r) => [r.offset, r.raw])).toEqual([[201, records[1]]])
    expect(page.received).toBe(3)
    expect(Page.isShort(page)).toBe(true)
  })

  it("refuses a page that is not an array or is longer than asked for", () => {
    expect(
      isFailure(
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
      isFailure(
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
    const params = ListQuery.toParams("partner/list", {
      offset: 50,
      count: 25,
      where: { is_customer: 1, city: "A&B=C", flag: true }
    })
    expect(getOrThrow(params)).toEqual([
      ["list_offset", "50"],
      ["list_count", "25"],
      ["list_condition[is_customer]", "1"],
      ["list_condition[city]", "A&B=C"],
      ["list_condition[flag]", "1"]
    ])
  })

  it("refuses condition field names outside [A-Za-z0-9_] and bad paging", () => {
    for (const field of ["a]b", "a[b", "a&b", "a=b", "", "é", "a b"]) {
      const result = ListQuery.toParams("partner/list", { offset: 0, count: 10, where: { [field]: 1 } })
      expect(failureOf(result)._tag).toBe("InvalidRequest")
    }
    for (const [offset, count] of [[-1, 10], [0, 0], [0.5, 10]] as const) {
      expect(isFailure(ListQuery.toParams("x", { offset, count }))).toBe(true)
    }
  })
})
