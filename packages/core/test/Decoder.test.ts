import { describe, expect, it } from "@effect/vitest"
import { Decoder, Partner } from "@erp-client/core"
import { Either, Schema } from "effect"

describe("Decoder", () => {
  const record = { z: 1, id: 3, company_name: "A", tax_number: "1-2", is_customer: 1, nested: { b: 1 } }

  it("returns a valid input of a check-only schema as it is", () => {
    expect(Decoder.isCheckOnly(Partner.Partner.ast)).toBe(true)
    const decoded = Either.getOrThrow(Decoder.make(Partner.Partner)(record))
    expect(decoded).toBe(record)
    expect(Object.keys(decoded)).toEqual(Object.keys(record))
  })

  it("still gives the full error for an invalid input", () => {
    const result = Decoder.make(Partner.Partner)({ ...record, tax_number: { digits: "x" } })
    expect(Either.isLeft(result)).toBe(true)
  })

  it("runs transformations: a schema that changes its input is never short-cut", () => {
    const Shout = Schema.transform(Schema.String, Schema.String, { decode: (s) => `${s}!`, encode: (s) => s })
    const Row = Schema.Struct({ name: Shout, when: Schema.DateFromString })
    expect(Decoder.isCheckOnly(Row.ast)).toBe(false)
    const row = Either.getOrThrow(Decoder.make(Row)({ name: "a", when: "2024-01-02T00:00:00Z" }))
    expect(row.name).toBe("a!")
    expect(row.when).toBeInstanceOf(Date)
    // Even when the input already looks like the output type.
    expect(Either.getOrThrow(Decoder.make(Schema.Struct({ name: Shout }))({ name: "b" })).name).toBe("b!")
  })

  it("is built once per schema", () => {
    expect(Decoder.make(Partner.Partner)).toBe(Decoder.make(Partner.Partner))
  })
})
