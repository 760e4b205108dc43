/**
 * Decoders compiled once per schema, with a check-only fast path for schemas that do not transform their input.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import * as TypeCheck from "./internal/typeCheck.js"

/**
 * @since 0.1.0
 * @category Models
 */
export type Decoder<A> = (u: unknown) => Either.Either<A, ParseResult.ParseError>

/**
 * Whether decoding with this AST can only check, never change, its input: no transformation, declaration or
 * recursion anywhere in it (those are treated as "may transform", to be safe).
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
export const isCheckOnly = (ast: SchemaAST.AST): boolean => {
  switch (ast._tag) {
    case "Transformation":
    case "Declaration":
    case "Suspend":
      return false
    case "Refinement":
      return isCheckOnly(ast.from)
    case "Union":
      return ast.types.every(isCheckOnly)
    case "TupleType":
      return ast.elements.every((e) => isCheckOnly(e.type)) && ast.rest.every((r) => isCheckOnly(r.type))
    case "TypeLiteral":
      return ast.propertySignatures.every((p) => isCheckOnly(p.type)) &&
        ast.indexSignatures.every((i) => isCheckOnly(i.type))
    default:
      return true
  }
}

const cache = new WeakMap<Schema.Schema.Any, Decoder<any>>()

/**
 * The decoder of a schema, built once and cached. Unknown fields are kept (`onExcessProperty: "preserve"`).
 *
 * When the schema only checks (see `isCheckOnly`: e.g. `Partner`, whose refinements and brands do not change a
 * value), a valid input is returned as it is: same object, same key order, no copy per record, and it is checked by
 * a check compiled from the schema (equal to `Schema.is`, several times faster). Only an invalid input pays for the
 * full decoder, which builds the error.
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
export const make = <A, I>(schema: Schema.Schema<A, I>): Decoder<A> => {
  const cached = cache.get(schema)
  if (cached !== undefined) return cached
  const decode = Schema.decodeUnknownEither(schema, { onExcessProperty: "preserve" })
  let decoder: Decoder<A> = decode
  if (isCheckOnly(schema.ast)) {
    // A compiled check where the schema allows it (see internal/typeCheck.ts), `Schema.is` otherwise.
    const is = TypeCheck.compile(SchemaAST.typeAST(schema.ast)) ?? Schema.is(schema)
    decoder = (u) => is(u) ? Either.right(u as A) : decode(u)
  }
  cache.set(schema, decoder)
  return decoder
}
