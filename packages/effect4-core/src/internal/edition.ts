// Per edition: the Effect APIs this package uses whose names or shapes differ between Effect 3 and Effect 4.
/**
 * The Effect 4 edition's side of the adapter the shared source imports (docs/editions.md): each name here has a twin
 * of the same type in `packages/core/src/internal/edition.ts`, written with Effect 3's API. The shared modules, copied
 * here from the Effect 3 package by `scripts/editions.ts`, import what differs from here and everything else from
 * `effect` itself.
 */
import * as ResultModule from "effect/Result"
import * as Schema from "effect/Schema"
import type * as SchemaAST from "effect/SchemaAST"
import * as SchemaIssue from "effect/SchemaIssue"
import type { Contract } from "./editionContract.js"

// The types that differ between the editions: the contract (`editionContract.ts`) names its functions' types by these.

/** A success or a failure: Effect 3's `Either`, Effect 4's `Result` (success first in both). */
export type Result<A, E> = ResultModule.Result<A, E>

/** What decoding fails with: Effect 3's `ParseError`, Effect 4's `SchemaError`. */
export type SchemaError = Schema.SchemaError

/** Any schema. */
export type AnySchema = Schema.Top

/** A schema that needs nothing to decode. */
export type DecodableSchema = Schema.Decoder<unknown>

/** A schema as a member of a union or a record's value: Effect 4's `Schema.Top`. */
export type SchemaMember = Schema.Top

/** A record's key schema: Effect 4's `Schema.Record.Key`. */
export type RecordKey = Schema.Record.Key

/** A schema of one of these literals: Effect 4's `Schema.Literals`. */
export type LiteralsSchema<L extends readonly [SchemaAST.LiteralValue, ...Array<SchemaAST.LiteralValue>]> =
  Schema.Literals<L>

/** A record's schema: Effect 4's `Schema.$Record`. */
export type RecordSchema<K extends RecordKey, V extends SchemaMember> = Schema.$Record<K, V>

/** A struct with a record of the other keys: Effect 4's `Schema.StructWithRest`. */
export type StructWithRestSchema<Fields extends Schema.Struct.Fields, K extends RecordKey, V extends SchemaMember> =
  Schema.StructWithRest<Schema.Struct<Fields>, readonly [Schema.$Record<K, V>]>

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

const isCheckOnly: Contract["isCheckOnly"] = (ast) => {
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

/** The adapter, with Effect 4's API: what each function does is said once, in `Contract`. */
const edition: Contract = {
  Result: {
    succeed: (value) => ResultModule.succeed(value),
    fail: (error) => ResultModule.fail(error),
    mapError: (self, f) => ResultModule.mapError(self, f),
    flatMap: (self, f) => ResultModule.flatMap(self, f),
    match: (self, cases) => ResultModule.match(self, cases)
  },
  decodeUnknownResult: (schema) => Schema.decodeUnknownResult(schema),
  decodeKeepingFields: (schema) => Schema.decodeUnknownResult(schema),
  firstIssue: (error) => {
    const first = formatIssues(error.issue).issues[0]
    if (first === undefined) return { path: [], message: error.message }
    const path = (first.path ?? []).map((segment) => typeof segment === "object" ? segment.key : segment)
    return { path, message: first.message }
  },
  isCheckOnly,
  // Effect 4 compiles `Schema.is` itself.
  checkOf: (schema) => Schema.is(schema),
  // Effect 4 takes arrays, two arguments and a struct with rest.
  Union: (...members) => Schema.Union(members),
  Literals: (...literals) => Schema.Literals(literals),
  Record: (key, value) => Schema.Record(key, value),
  StructWithRest: (fields, rest, identifier) =>
    Schema.StructWithRest(Schema.Struct(fields), [rest]).annotate({ identifier })
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
  Schema.Number.check(
    Schema.makeFilter((n: number) => Number.isSafeInteger(n) ? undefined : message(n)),
    Schema.isGreaterThan(0)
  )

/** A string matching `pattern`, `message` the failure's. */
export const Matching = (pattern: RegExp, message: string) =>
  Schema.String.check(Schema.isPattern(pattern, { message }))
