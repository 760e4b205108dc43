/**
 * Decoders compiled once per schema, with a check-only fast path for schemas that do not transform their input.
 *
 * @since 0.1.0
 */
import type * as SchemaAST from "effect/SchemaAST"
import * as Edition from "./internal/edition.js"

/**
 * @since 0.1.0
 * @category Models
 */
export type Decoder<A> = (u: unknown) => Edition.Result<A, Edition.SchemaError>

/**
 * Whether decoding with this AST can only check, never change, its input: no transformation (an encoding), declaration
 * or recursion anywhere in it (those are treated as "may transform", to be safe).
 *
 * @example
 * ```ts
 * import { Decoder, Partner } from "@erp-client/core"
 * import { Schema } from "effect"
 *
 * // Partner only checks its input; a date read from a string changes it
 * console.log(Decoder.isCheckOnly(Partner.Partner.ast)) // => true
 * console.log(Decoder.isCheckOnly(Schema.DateFromString.ast)) // => false
 * ```
 *
 * @since 0.1.0
 * @category Decoding
 */
export const isCheckOnly: (ast: SchemaAST.AST) => boolean = Edition.isCheckOnly

const cache = new WeakMap<Edition.DecodableSchema, Decoder<any>>()

/**
 * The decoder of a schema, built once and cached. Fields the schema does not name are kept: the Effect 3 edition keeps
 * every one (`onExcessProperty: "preserve"`), the Effect 4 edition those an index signature holds (the partner
 * schemas have one for them).
 *
 * When the schema only checks (see `isCheckOnly`: e.g. `Partner`, whose checks and brands do not change a value), a
 * valid input is returned as it is: same object, same key order, no copy per record, checked by a check equal to
 * `Schema.is` (Effect 4 compiles `Schema.is`; the Effect 3 edition compiles its own, as Effect 3's interprets the
 * schema for every value). Only an invalid input pays for the full decoder, which builds the error.
 *
 * @example
 * ```ts
 * import { Decoder, Partner } from "@erp-client/core"
 * import { Either } from "effect"
 *
 * // Built once, outside the loop over records; a valid record comes back as it was sent, unknown fields and all
 * const decodePartner = Decoder.make(Partner.Partner)
 * const record = { id: 7, company_name: "Kovács Kft.", tax_number: "12345678-2-42", email: "info@kovacs.hu" }
 * const partner = Either.getOrThrow(decodePartner(record))
 * console.log(Object.keys(partner)) // => [ 'id', 'company_name', 'tax_number', 'email' ]
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const make = <S extends Edition.DecodableSchema>(schema: S): Decoder<S["Type"]> => {
  const cached = cache.get(schema)
  if (cached !== undefined) return cached
  const decode: Decoder<S["Type"]> = Edition.decodeKeepingFields(schema)
  let decoder = decode
  if (isCheckOnly(schema.ast)) {
    const is = Edition.checkOf(schema)
    decoder = (u) => is(u) ? Edition.Result.succeed(u as S["Type"]) : decode(u)
  }
  cache.set(schema, decoder)
  return decoder
}
