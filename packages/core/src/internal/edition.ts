// Per edition: the Effect APIs this package uses whose names or shapes differ between Effect 3 and Effect 4.
/**
 * The Effect 3 edition's side of the adapter the shared source imports (docs/editions.md): each name here has a twin
 * of the same type in `packages/effect4-core/src/internal/edition.ts`, written with Effect 4's API. The shared modules
 * import what differs from here and everything else from `effect` itself, so that one source compiles against either
 * edition's `effect`.
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import type { Contract } from "./editionContract.js"
import * as TypeCheck from "./typeCheck.js"

// The types that differ between the editions: the contract (`editionContract.ts`) names its functions' types by these.

/** A success or a failure: Effect 3's `Either`, Effect 4's `Result` (success first in both). */
export type Result<A, E> = Either.Either<A, E>

/** What decoding fails with: Effect 3's `ParseError`, Effect 4's `SchemaError`. */
export type SchemaError = ParseResult.ParseError

/** Any schema. */
export type AnySchema = Schema.Schema.Any

/** A schema that needs nothing to decode. */
export type DecodableSchema = Schema.Schema.AnyNoContext

/** A schema as a member of a union or a record's value: Effect 3's `Schema.Schema.All`. */
export type SchemaMember = Schema.Schema.All

/** A record's key schema: Effect 3's `Schema.Schema.All`. */
export type RecordKey = Schema.Schema.All

/** A schema of one of these literals: Effect 3's `Schema.Literal`. */
export type LiteralsSchema<L extends readonly [SchemaAST.LiteralValue, ...Array<SchemaAST.LiteralValue>]> =
  Schema.Literal<L>

/** A record's schema: Effect 3's `Schema.Record$`. */
export type RecordSchema<K extends RecordKey, V extends SchemaMember> = Schema.Record$<K, V>

/** A struct with a record of the other keys: Effect 3's `Schema.TypeLiteral` with an index signature. */
export type StructWithRestSchema<Fields extends Schema.Struct.Fields, K extends RecordKey, V extends SchemaMember> =
  Schema.TypeLiteral<Fields, readonly [Schema.Record$<K, V>]>

const isCheckOnly: Contract["isCheckOnly"] = (ast) => {
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

/** The adapter, with Effect 3's API: what each function does is said once, in `Contract`. */
const edition: Contract = {
  Result: {
    succeed: (value) => Either.right(value),
    fail: (error) => Either.left(error),
    mapError: (self, f) => Either.mapLeft(self, f),
    flatMap: (self, f) => Either.flatMap(self, f),
    match: (self, cases) => Either.match(self, { onLeft: cases.onFailure, onRight: cases.onSuccess })
  },
  // Effect 3's default, `onExcessProperty: "ignore"`.
  decodeUnknownResult: (schema) => Schema.decodeUnknownEither(schema),
  decodeKeepingFields: (schema) => Schema.decodeUnknownEither(schema, { onExcessProperty: "preserve" }),
  firstIssue: (error) => {
    const first = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
    return first === undefined ? { path: [], message: error.message } : first
  },
  isCheckOnly,
  // Compiled from the schema where it allows it (`internal/typeCheck.ts`: Effect 3's `Schema.is` interprets the schema
  // for every value), `Schema.is` otherwise.
  checkOf: (schema) => TypeCheck.compile(SchemaAST.typeAST(schema.ast)) ?? Schema.is(schema),
  // Effect 3 takes members and literals as arguments, a record's key and value as an object, a struct's index
  // signatures after its fields.
  Union: (...members) => Schema.Union(...members),
  Literals: (...literals) => Schema.Literal<typeof literals>(...literals),
  Record: (key, value) => Schema.Record({ key, value }),
  StructWithRest: (fields, rest, identifier) => Schema.Struct(fields, rest).annotations({ identifier })
}

export const {
  checkOf,
  decodeKeepingFields,
  decodeUnknownResult,
  firstIssue,
  Literals,
  Record,
  Result,
  StructWithRest,
  Union
} = edition
export { isCheckOnly }

// Not in the contract: their schemas' types are inferred, each edition's own.

/**
 * A number that is a safe integer (at most 2^53 - 1 away from 0) and positive; `message` says what is wrong with a
 * value that is not a safe integer.
 */
export const PositiveSafeInteger = (message: (actual: unknown) => string) =>
  Schema.Number.pipe(Schema.int({ message: (issue) => message(issue.actual) }), Schema.positive())

/** A string matching `pattern`, `message` the failure's. */
export const Matching = (pattern: RegExp, message: string) =>
  Schema.String.pipe(Schema.pattern(pattern, { message: () => message }))
