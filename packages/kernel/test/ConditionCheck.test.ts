import { describe, expect, it } from "@effect/vitest"
import * as ErpRules from "@erp-client/fake-erp/ErpRules"
import { FastCheck as fc } from "effect"
import * as ConditionCheck from "../src/ConditionCheck.js"
import * as ErrorText from "../src/ErrorText.js"
import * as Check from "../src/internal/conditionCheck.js"
import * as ListQuery from "../src/ListQuery.js"

// A record's value against a condition's value as sent: a server that ignored the condition is caught by a record that
// clearly differs (or lacks the field); any value a server that applies it may serve passes.

const { checkPage } = ConditionCheck
const { checkRecord, satisfies } = Check

describe("satisfies", () => {
  it("numbers numerically, whichever form either side is written in", () => {
    expect(satisfies("1", 1)).toBe(true)
    expect(satisfies("1.0", 1)).toBe(true)
    expect(satisfies("1e0", 1)).toBe(true)
    expect(satisfies(" 1 ", 1)).toBe(true)
    expect(satisfies("-0", 0)).toBe(true)
    expect(satisfies("1", 0)).toBe(false)
    expect(satisfies("2", 1)).toBe(false)
    expect(satisfies("0.1", 0.1)).toBe(true)
    expect(satisfies("0.10", 0.1, () => "0.1")).toBe(true)
    // A number against text that is not one: as text
    expect(satisfies("yes", 1)).toBe(false)
    expect(satisfies("0x1", 1)).toBe(false)
  })

  it("numbers beyond a double by the digits the server wrote, when its text is at hand", () => {
    const served = Number("12345678901234567890")
    expect(satisfies("12345678901234567890", served, () => "12345678901234567890")).toBe(true)
    expect(satisfies("12345678901234567891", served, () => "12345678901234567890")).toBe(false)
    expect(satisfies("9007199254740993", 9007199254740992, () => "9007199254740992")).toBe(false)
    // A value the double names plainly (15 digits or fewer) is settled by it: the text is not read
    expect(satisfies("1.10", 1.1, () => "1.1000000000000000001")).toBe(true)
    // Without the text, only what the double tells: equal as doubles is not a clear difference
    expect(satisfies("12345678901234567891", served)).toBe(true)
  })

  it("a number the double settles never reads the record's text", () => {
    let read = 0
    const token = () => {
      read++
      return "1"
    }
    expect(satisfies("1", 1, token)).toBe(true)
    expect(satisfies("2", 1, token)).toBe(false)
    expect(satisfies("1.5", 1.5, token)).toBe(true)
    expect(read).toBe(0)
  })

  it("booleans as the contract sends them, 1 and 0, or as words", () => {
    expect(satisfies("1", true)).toBe(true)
    expect(satisfies("0", false)).toBe(true)
    expect(satisfies("true", true)).toBe(true)
    expect(satisfies("FALSE", false)).toBe(true)
    expect(satisfies("", false)).toBe(true)
    expect(satisfies("2", true)).toBe(true)
    expect(satisfies("1", false)).toBe(false)
    expect(satisfies("0", true)).toBe(false)
    expect(satisfies("yes", false)).toBe(false)
  })

  it("null as empty, zero, false or null", () => {
    for (const asked of ["", "0", "0.0", "false", "null", "NULL"]) expect(satisfies(asked, null), asked).toBe(true)
    for (const asked of ["1", "x", "true"]) expect(satisfies(asked, null), asked).toBe(false)
  })

  it("strings exactly, or loosely as a collation or LIKE would match; the same number in another form", () => {
    expect(satisfies("Kovács Kft.", "Kovács Kft.")).toBe(true)
    expect(satisfies("kovacs kft.", "Kovács Kft.")).toBe(true)
    expect(satisfies("Kovács", "  KOVÁCS Kft. ")).toBe(true)
    expect(satisfies("1", "001")).toBe(true)
    expect(satisfies("1", "1.0")).toBe(true)
    expect(satisfies("Acme", "Globex Kft.")).toBe(false)
    expect(satisfies("12345678901234567891", "12345678901234567890")).toBe(false)
    expect(satisfies("1", "0")).toBe(false)
    expect(satisfies("1", "yes")).toBe(false)
  })

  it("an array when one of its elements does; an object is not judged", () => {
    expect(satisfies("b", ["a", "b"])).toBe(true)
    expect(satisfies("c", ["a", "b"])).toBe(false)
    expect(satisfies("1", { a: 2 })).toBe(true)
    expect(satisfies("1", undefined)).toBe(false)
  })

  it("property: any value equals itself as the contract sends it (a double by its shortest text, exactly)", () => {
    fc.assert(fc.property(fc.oneof(fc.double({ noNaN: true }), fc.integer(), fc.boolean(), fc.string()), (value) => {
      const asked = ListQuery.conditionValue(value)
      expect(satisfies(asked, value, () => typeof value === "number" ? JSON.stringify(value) : undefined)).toBe(true)
    }))
  })

  it("property: integers that differ differ, beyond a double too, when the text is at hand", () => {
    const big = fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n })
    fc.assert(fc.property(big, big, (a, b) => {
      fc.pre(a !== b)
      expect(satisfies(String(a), Number(b), () => String(b))).toBe(false)
      expect(satisfies(String(a), Number(a), () => String(a))).toBe(true)
    }))
  })

  it("property: words of one length differ unless equal; case and accents aside they are equal", () => {
    const word = (length: number) =>
      fc.string({ unit: fc.constantFrom("a", "b", "c", "d"), minLength: length, maxLength: length })
    fc.assert(fc.property(fc.integer({ min: 1, max: 8 }).chain((n) => fc.tuple(word(n), word(n))), ([a, b]) => {
      expect(satisfies(a, b)).toBe(a === b)
      expect(satisfies(a, a.toUpperCase())).toBe(true)
      expect(satisfies(a, a.replace(/a/g, "á"))).toBe(true)
    }))
  })
})

describe("checkRecord", () => {
  it("a field the record does not carry fails, with had undefined", () => {
    expect(checkRecord({ nonexistent_field: 1 }, { id: 1, company_name: "Acme" })).toEqual({
      field: "nonexistent_field",
      asked: "1",
      had: undefined
    })
    // Inherited properties are not the record's
    expect(checkRecord({ constructor: "x" }, { id: 1 })?.had).toBeUndefined()
  })

  it("the first condition not satisfied, its value quoted as the server wrote it", () => {
    const text = `{"id":7,"company_name":"Acme GmbH","credit_limit":12345678901234567890}`
    const record = JSON.parse(text)
    expect(checkRecord({ id: 7, company_name: "Kovács" }, record, text)).toEqual({
      field: "company_name",
      asked: "Kovács",
      had: "\"Acme GmbH\""
    })
    expect(checkRecord({ credit_limit: "12345678901234567891" }, record, text)).toEqual({
      field: "credit_limit",
      asked: "12345678901234567891",
      had: "12345678901234567890"
    })
    expect(checkRecord({ credit_limit: "12345678901234567890" }, record, text)).toBeUndefined()
  })

  it("a value too long to quote is cut", () => {
    const had = checkRecord({ note: "x" }, { note: "y".repeat(1000) })?.had
    expect(had?.length).toBe(Check.HAD_MAX)
    expect(had?.endsWith("…")).toBe(true)
  })

  it("a record that is not an object is not judged", () => {
    expect(checkRecord({ a: 1 }, 5)).toBeUndefined()
    expect(checkRecord({ a: 1 }, null)).toBeUndefined()
    expect(checkRecord({ a: 1 }, [1])).toBeUndefined()
  })

  // The fake ERP (what the sandbox and the test kits serve) serves the record for its own values as conditions.
  const served = (record: Readonly<Record<string, unknown>>, where: Readonly<Record<string, string>>) => {
    const erp = ErpRules.make({ partners: 0, rateLimit: false, resources: [{ list: "row/list", records: [record] }] })
    const query = new URLSearchParams({ list_offset: "0", list_count: "10" })
    for (const [field, value] of Object.entries(where)) query.set(`list_condition[${field}]`, value)
    const arrival = erp.arrive({ method: "GET", url: `/row/list?${query}`, apiKey: erp.controls.apiKey }, 0)
    let plan = arrival.plan()
    while (plan._tag === "Delay") plan = plan.next()
    arrival.finish(0)
    if (plan._tag !== "Respond" || plan.body === undefined) throw new Error(`expected an answer, got ${plan._tag}`)
    return (JSON.parse(plan.body) as { data: ReadonlyArray<unknown> }).data
  }

  it("property: every record a server applying the condition serves passes (the fake ERP's exact-text matching)", () => {
    const value = fc.oneof(
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.boolean(),
      fc.string(),
      fc.constant(null)
    )
    fc.assert(fc.property(fc.dictionary(fc.stringMatching(/^[a-z_]{1,6}$/), value, { minKeys: 1 }), (record) => {
      const text = JSON.stringify(record)
      const parsed = JSON.parse(text) as Record<string, unknown>
      // The condition is each field's value as the sandbox matches it (true is 1, false 0, a number its text).
      const where = Object.fromEntries(
        Object.entries(parsed).map(([field, v]) => [field, typeof v === "boolean" ? (v ? "1" : "0") : String(v)])
      )
      expect(served(parsed, where)).toHaveLength(1)
      expect(checkRecord(where, parsed, text)).toBeUndefined()
    }))
  })
})

describe("checkPage", () => {
  it("the first record in the server's order, invalid ones included, with its offset and id", () => {
    const page = {
      offset: 200,
      received: 3,
      raw: [{ id: 201, is_customer: 1 }, { id: 203, is_customer: 0 }],
      invalid: [{ offset: 201, raw: { id: "x", is_customer: 0 } }]
    }
    expect(checkPage({ is_customer: 1 }, page)).toEqual({
      field: "is_customer",
      asked: "1",
      had: "0",
      offset: 201,
      recordId: "x"
    })
  })

  it("an id beyond a double named by its digits", () => {
    const texts = [`{"id":12345678901234567890,"kind":"b"}`]
    const page = { offset: 0, received: 1, raw: texts.map((t) => JSON.parse(t)), json: texts, invalid: [] }
    expect(checkPage({ kind: "a" }, page)?.recordId).toBe("12345678901234567890")
  })

  it("nothing to check without conditions", () => {
    const page = { offset: 0, received: 1, raw: [{ id: 1 }], invalid: [] }
    expect(checkPage(undefined, page)).toBeUndefined()
    expect(checkPage({}, page)).toBeUndefined()
  })

  it("property: the first record whose flag is not 1, or none", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1000 }),
        fc.array(fc.constantFrom(0, 1, "1", true, false)),
        (offset, flags) => {
          const raw = flags.map((is_customer, i) => ({ id: offset + i + 1, is_customer }))
          const first = flags.findIndex((flag) => flag !== 1 && flag !== "1" && flag !== true)
          const mismatch = checkPage({ is_customer: 1 }, { offset, received: raw.length, raw, invalid: [] })
          expect(mismatch?.offset).toBe(first < 0 ? undefined : offset + first)
        }
      )
    )
  })

  it("says what it found in the error's message", () => {
    const page = { offset: 0, received: 1, raw: [{ id: 1 }], invalid: [] }
    const mismatch = checkPage({ nonexistent_field: 1 }, page)!
    expect(ErrorText.conditionIgnored({ endpoint: "partner/list", ...mismatch })).toBe(
      "partner/list: the server ignored the condition nonexistent_field=1: the record at offset 0 (id 1) has no " +
        "field nonexistent_field"
    )
    expect(
      ErrorText.conditionIgnored({
        endpoint: "partner/list",
        field: "company_name",
        asked: "Kovács Kft.",
        had: "\"Acme\"",
        offset: 4
      })
    ).toBe(
      "partner/list: the server ignored the condition company_name=\"Kovács Kft.\": the record at offset 4 has " +
        "company_name \"Acme\""
    )
  })
})
