import { describe, expect, it } from "@effect/vitest"
import { Decoder, Partner } from "@erp-client/effect4-core"
import { Arbitrary, Effect, Result, Schema, SchemaGetter } from "effect"

describe("Decoder", () => {
  const record = { z: 1, id: 3, company_name: "A", tax_number: "1-2", is_customer: 1, nested: { b: 1 } }

  it("returns a valid input of a check-only schema as it is: same object, same key order", () => {
    expect(Decoder.isCheckOnly(Partner.Partner.ast)).toBe(true)
    expect(Decoder.isCheckOnly(Partner.StrictPartner.ast)).toBe(true)
    const decoded = Result.getOrThrow(Decoder.make(Partner.Partner)(record))
    expect(decoded).toBe(record)
    expect(Object.keys(decoded)).toEqual(Object.keys(record))
  })

  it("still gives the full error for an invalid input", () => {
    const result = Decoder.make(Partner.Partner)({ ...record, tax_number: { digits: "x" } })
    expect(Result.isFailure(result) && result.failure._tag).toBe("SchemaError")
  })

  it("runs transformations: a schema that changes its input is never short-cut", () => {
    const Shout = Schema.String.pipe(
      Schema.decodeTo(Schema.String, {
        decode: SchemaGetter.transform((s: string) => `${s}!`),
        encode: SchemaGetter.transform((s: string) => s)
      })
    )
    const Row = Schema.Struct({ name: Shout, when: Schema.DateFromString })
    expect(Decoder.isCheckOnly(Row.ast)).toBe(false)
    const row = Result.getOrThrow(Decoder.make(Row)({ name: "a", when: "2024-01-02T00:00:00Z" }))
    expect(row.name).toBe("a!")
    expect(row.when).toBeInstanceOf(Date)
    expect(Result.getOrThrow(Decoder.make(Schema.Struct({ name: Shout }))({ name: "b" })).name).toBe("b!")
  })

  it.effect("property: the fast path answers as the full decoder does, for the partner schemas", () =>
    Effect.gen(function*() {
      const Value = Schema.Union([
        Schema.Number,
        Schema.String,
        Schema.Boolean,
        Schema.Null,
        Schema.Literals([0, 1, "0", "1", "", "12-3", "HU123", 1.5, 42])
      ])
      const PartnerLike = Schema.Struct({
        id: Schema.optional(Value),
        company_name: Schema.optional(Value),
        tax_number: Schema.optional(Value),
        is_customer: Schema.optional(Value),
        extra: Schema.optional(Value)
      })
      for (const schema of [Partner.Partner, Partner.StrictPartner]) {
        const fast = Decoder.make(schema)
        const full = Schema.decodeUnknownResult(schema)
        const result = yield* Arbitrary.checkEffect(
          Arbitrary.schema(PartnerLike),
          (u) => Result.isSuccess(fast(u)) === Result.isSuccess(full(u)),
          { runs: 1_000 }
        )
        expect(Arbitrary.formatCheckFailure(result)).toBeUndefined()
      }
    }))

  it("is built once per schema", () => {
    expect(Decoder.make(Partner.Partner)).toBe(Decoder.make(Partner.Partner))
  })
})
