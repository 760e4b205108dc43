/**
 * Decoders compiled once per schema, with a check-only fast path for schemas that do not transform their input.
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as SchemaAST from "effect/SchemaAST"

/**
 * @since 0.1.0
 * @category Models
 */
export type Decoder<A> = (u: unknown) => Result.Result<A, Schema.SchemaError>

/**
 * Whether decoding with this AST can only check, never change, its input: no transformation (an encoding), declaration
 * or recursion anywhere in it (those are treated as "may transform", to be safe).
 *
 * @example
 * ```ts
 * import { Decoder, Partner } from "@erp-client/effect4-core"
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
export const isCheckOnly = (ast: SchemaAST.AST): boolean => {
  if (ast.encoding !== undefined) return false
  switch (ast._tag) {
    case "Declaration":
    case "Suspend":
      return false
    case "Union":
      return ast.types.every(isCheckOnly)
    case "Arrays":
      return ast.elements.every(isCheckOnly) && ast.rest.every(isCheckOnly)
    case "Objects":
      return ast.propertySignatures.every((p) => isCheckOnly(p.type)) &&
        ast.indexSignatures.every((i) => isCheckOnly(i.type))
    default:
      return true
  }
}

const cache = new WeakMap<Schema.Top, Decoder<any>>()

/**
 * The decoder of a schema, built once and cached. Every field the schema does not own is kept: the partner schemas
 * have an index signature for them (`Schema.StructWithRest`).
 *
 * When the schema only checks (see `isCheckOnly`: e.g. `Partner`, whose checks and brands do not change a value), a
 * valid input is returned as it is: same object, same key order (Effect 4's decoding builds a new object and does not
 * promise the order), no copy per record, checked by `Schema.is` (which Effect 4 compiles). Only an invalid input pays
 * for the full decoder, which builds the error. (The Effect 3 edition compiles its own check: Effect 3's `Schema.is`
 * interpreted the schema for every value.)
 *
 * @example
 * ```ts
 * import { Decoder, Partner } from "@erp-client/effect4-core"
 * import { Result } from "effect"
 *
 * // Built once, outside the loop over records; a valid record comes back as it was sent, unknown fields and all
 * const decodePartner = Decoder.make(Partner.Partner)
 * const record = { id: 7, company_name: "Kovács Kft.", tax_number: "12345678-2-42", email: "info@kovacs.hu" }
 * const partner = Result.getOrThrow(decodePartner(record))
 * console.log(Object.keys(partner)) // => [ 'id', 'company_name', 'tax_number', 'email' ]
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const make = <S extends Schema.Decoder<unknown>>(schema: S): Decoder<S["Type"]> => {
  const cached = cache.get(schema)
  if (cached !== undefined) return cached
  const decode: Decoder<S["Type"]> = Schema.decodeUnknownResult(schema)
  let decoder = decode
  if (isCheckOnly(schema.ast)) {
    const is = Schema.is(schema)
    decoder = (u) => is(u) ? Result.succeed(u as S["Type"]) : decode(u)
  }
  cache.set(schema, decoder)
  return decoder
}
