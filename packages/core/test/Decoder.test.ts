import { describe, expect, it } from "@effect/vitest"
import { Decoder, Partner } from "@erp-client/core"
import { Either, FastCheck as fc, Schema, SchemaAST } from "effect"
import * as TypeCheck from "../src/internal/typeCheck.js"

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

  it("property: the compiled check answers as Schema.is does, for the partner schemas and others", () => {
    const Shapes = Schema.Struct({
      n: Schema.optional(Schema.Union(Schema.Int.pipe(Schema.between(1, 9)), Schema.Literal("x", null))),
      s: Schema.NonEmptyString,
      b: Schema.Boolean,
      u: Schema.UndefinedOr(Schema.Number)
    })
    const anything = fc.oneof(
      fc.anything(),
      fc.constantFrom(
        0,
        1,
        -1,
        1.5,
        42,
        2 ** 53,
        Number.NaN,
        "",
        "1",
        "0",
        "12-3",
        "HU123",
        true,
        false,
        null,
        undefined
      )
    )
    const partnerLike = fc.record({
      id: anything,
      company_name: anything,
      tax_number: anything,
      is_customer: anything,
      n: anything,
      s: anything,
      b: anything,
      u: anything,
      extra: anything
    }, { requiredKeys: [] })
    const schemas: ReadonlyArray<Schema.Schema.Any> = [Partner.Partner, Partner.StrictPartner, Shapes]
    for (const schema of schemas) {
      const check = TypeCheck.compile(SchemaAST.typeAST(schema.ast))!
      expect(check).toBeDefined()
      const is = Schema.is(schema)
      fc.assert(
        fc.property(fc.oneof(partnerLike, anything), (u) => {
          expect(check(u)).toBe(is(u))
        }),
        { numRuns: 3000 }
      )
    }
    // Outside the subset it compiles nothing, and the decoder keeps Schema.is.
    expect(TypeCheck.compile(SchemaAST.typeAST(Schema.Array(Schema.Number).ast))).toBeUndefined()
  })

  it("is built once per schema", () => {
    expect(Decoder.make(Partner.Partner)).toBe(Decoder.make(Partner.Partner))
  })
})
