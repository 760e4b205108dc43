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

/** A success or a failure: Effect 3's `Either`, Effect 4's `Result` (success first in both). */
export type Result<A, E> = ResultModule.Result<A, E>

/** What the shared source does with a `Result`, under Effect 4's names. */
export const Result = {
  succeed: <A>(value: A): Result<A, never> => ResultModule.succeed(value),
  fail: <E>(error: E): Result<never, E> => ResultModule.fail(error),
  mapError: <A, E, E2>(self: Result<A, E>, f: (e: E) => E2): Result<A, E2> => ResultModule.mapError(self, f),
  flatMap: <A, E, B, E2>(self: Result<A, E>, f: (a: A) => Result<B, E2>): Result<B, E | E2> =>
    ResultModule.flatMap(self, f),
  match: <A, E, B, C>(
    self: Result<A, E>,
    cases: { readonly onFailure: (error: E) => B; readonly onSuccess: (value: A) => C }
  ): B | C => ResultModule.match(self, cases)
} as const

/** What decoding fails with: Effect 3's `ParseError`, Effect 4's `SchemaError`. */
export type SchemaError = Schema.SchemaError

/** Any schema. */
export type AnySchema = Schema.Top

/** A schema that needs nothing to decode. */
export type DecodableSchema = Schema.Decoder<unknown>

/** The decoder of `schema`, fields it does not name dropped. */
export const decodeUnknownResult = <S extends DecodableSchema>(
  schema: S
): (u: unknown) => Result<S["Type"], SchemaError> => Schema.decodeUnknownResult(schema)

/**
 * The decoder of `schema`, every field it does not name kept: Effect 4 keeps the fields an index signature holds
 * (`Schema.StructWithRest`, as the partner schemas have); Effect 3 is told to keep them all.
 */
export const decodeKeepingFields = <S extends DecodableSchema>(
  schema: S
): (u: unknown) => Result<S["Type"], SchemaError> => Schema.decodeUnknownResult(schema)

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

/** The first issue of `error`: where in the value (a path of keys and indexes) and what was wrong there. */
export const firstIssue = (
  error: SchemaError
): { readonly path: ReadonlyArray<PropertyKey>; readonly message: string } => {
  const first = formatIssues(error.issue).issues[0]
  if (first === undefined) return { path: [], message: error.message }
  const path = (first.path ?? []).map((segment) => typeof segment === "object" ? segment.key : segment)
  return { path, message: first.message }
}

/**
 * Whether decoding with this AST can only check, never change, its input: no transformation (an encoding),
 * declaration or recursion anywhere in it (those are treated as "may transform", to be safe).
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

/** A check equal to `Schema.is(schema)`, for a check-only schema: Effect 4 compiles `Schema.is` itself. */
export const checkOf = (schema: DecodableSchema): (u: unknown) => boolean => Schema.is(schema)

// The schema constructors whose signatures differ: Effect 3 takes members and literals as arguments, a record's key
// and value as an object, a struct's index signatures after its fields; Effect 4 takes arrays, two arguments and a
// struct with rest.

/** The union of `members` (two or more): Effect 3's `Schema.Union(a, b)`, Effect 4's `Schema.Union([a, b])`. */
export const Union = <const Members extends readonly [Schema.Top, Schema.Top, ...Array<Schema.Top>]>(
  ...members: Members
): Schema.Union<Members> => Schema.Union(members)

/** One of these literals: Effect 3's `Schema.Literal(0, 1)`, Effect 4's `Schema.Literals([0, 1])`. */
export const Literals = <const Literals extends readonly [SchemaAST.LiteralValue, ...Array<SchemaAST.LiteralValue>]>(
  ...literals: Literals
): Schema.Literals<Literals> => Schema.Literals(literals)

/** A record of `value`s by `key`: Effect 3's `Schema.Record({ key, value })`, Effect 4's `Schema.Record(key, value)`. */
export const Record = <K extends Schema.Record.Key, V extends Schema.Top>(key: K, value: V): Schema.$Record<K, V> =>
  Schema.Record(key, value)

/**
 * A struct of `fields` that holds every other key as `rest` says, named `identifier`: Effect 3's
 * `Schema.Struct(fields, rest)`, Effect 4's `Schema.StructWithRest(Schema.Struct(fields), [rest])`.
 */
export const StructWithRest = <Fields extends Schema.Struct.Fields, K extends Schema.Record.Key, V extends Schema.Top>(
  fields: Fields,
  rest: Schema.$Record<K, V>,
  identifier: string
): Schema.StructWithRest<Schema.Struct<Fields>, readonly [Schema.$Record<K, V>]> =>
  Schema.StructWithRest(Schema.Struct(fields), [rest]).annotate({ identifier })

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
