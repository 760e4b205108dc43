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
import * as TypeCheck from "./typeCheck.js"

/** A success or a failure: Effect 3's `Either`, Effect 4's `Result` (success first in both). */
export type Result<A, E> = Either.Either<A, E>

/** What the shared source does with a `Result`, under Effect 4's names. */
export const Result = {
  succeed: <A>(value: A): Result<A, never> => Either.right(value),
  fail: <E>(error: E): Result<never, E> => Either.left(error),
  mapError: <A, E, E2>(self: Result<A, E>, f: (e: E) => E2): Result<A, E2> => Either.mapLeft(self, f),
  flatMap: <A, E, B, E2>(self: Result<A, E>, f: (a: A) => Result<B, E2>): Result<B, E | E2> => Either.flatMap(self, f),
  match: <A, E, B, C>(
    self: Result<A, E>,
    cases: { readonly onFailure: (error: E) => B; readonly onSuccess: (value: A) => C }
  ): B | C => Either.match(self, { onLeft: cases.onFailure, onRight: cases.onSuccess })
} as const

/** What decoding fails with: Effect 3's `ParseError`, Effect 4's `SchemaError`. */
export type SchemaError = ParseResult.ParseError

/** Any schema. */
export type AnySchema = Schema.Schema.Any

/** A schema that needs nothing to decode. */
export type DecodableSchema = Schema.Schema.AnyNoContext

/** The decoder of `schema`, fields it does not name dropped (Effect 3's default, `onExcessProperty: "ignore"`). */
export const decodeUnknownResult = <S extends DecodableSchema>(
  schema: S
): (u: unknown) => Result<S["Type"], SchemaError> => Schema.decodeUnknownEither(schema)

/**
 * The decoder of `schema`, every field it does not name kept (`onExcessProperty: "preserve"`; Effect 4 keeps the
 * fields an index signature holds).
 */
export const decodeKeepingFields = <S extends DecodableSchema>(
  schema: S
): (u: unknown) => Result<S["Type"], SchemaError> =>
  Schema.decodeUnknownEither(schema, { onExcessProperty: "preserve" })

/** The first issue of `error`: where in the value (a path of keys and indexes) and what was wrong there. */
export const firstIssue = (
  error: SchemaError
): { readonly path: ReadonlyArray<PropertyKey>; readonly message: string } => {
  const first = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  return first === undefined ? { path: [], message: error.message } : first
}

/**
 * Whether decoding with this AST can only check, never change, its input: no transformation, declaration or
 * recursion anywhere in it (those are treated as "may transform", to be safe).
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

/**
 * A check equal to `Schema.is(schema)`, for a check-only schema: compiled from the schema where it allows it
 * (`internal/typeCheck.ts`: Effect 3's `Schema.is` interprets the schema for every value), `Schema.is` otherwise.
 */
export const checkOf = (schema: DecodableSchema): (u: unknown) => boolean =>
  TypeCheck.compile(SchemaAST.typeAST(schema.ast)) ?? Schema.is(schema)

// The schema constructors whose signatures differ: Effect 3 takes members and literals as arguments, a record's key
// and value as an object, a struct's index signatures after its fields; Effect 4 takes arrays, two arguments and a
// struct with rest.

/** The union of `members` (two or more): Effect 3's `Schema.Union(a, b)`, Effect 4's `Schema.Union([a, b])`. */
export const Union = <
  const Members extends readonly [Schema.Schema.All, Schema.Schema.All, ...Array<Schema.Schema.All>]
>(
  ...members: Members
): Schema.Union<Members> => Schema.Union(...members)

/** One of these literals: Effect 3's `Schema.Literal(0, 1)`, Effect 4's `Schema.Literals([0, 1])`. */
export const Literals = <const Literals extends readonly [SchemaAST.LiteralValue, ...Array<SchemaAST.LiteralValue>]>(
  ...literals: Literals
): Schema.Literal<Literals> => Schema.Literal<Literals>(...literals)

/** A record of `value`s by `key`: Effect 3's `Schema.Record({ key, value })`, Effect 4's `Schema.Record(key, value)`. */
export const Record = <K extends Schema.Schema.All, V extends Schema.Schema.All>(
  key: K,
  value: V
): Schema.Record$<K, V> => Schema.Record({ key, value })

/**
 * A struct of `fields` that holds every other key as `rest` says, named `identifier`: Effect 3's
 * `Schema.Struct(fields, rest)`, Effect 4's `Schema.StructWithRest(Schema.Struct(fields), [rest])`.
 */
export const StructWithRest = <
  Fields extends Schema.Struct.Fields,
  K extends Schema.Schema.All,
  V extends Schema.Schema.All
>(
  fields: Fields,
  rest: Schema.Record$<K, V>,
  identifier: string
): Schema.TypeLiteral<Fields, readonly [Schema.Record$<K, V>]> =>
  Schema.Struct(fields, rest).annotations({ identifier })

/**
 * A number that is a safe integer (at most 2^53 - 1 away from 0) and positive; `message` says what is wrong with a
 * value that is not a safe integer.
 */
export const PositiveSafeInteger = (message: (actual: unknown) => string) =>
  Schema.Number.pipe(Schema.int({ message: (issue) => message(issue.actual) }), Schema.positive())

/** A string matching `pattern`, `message` the failure's. */
export const Matching = (pattern: RegExp, message: string) =>
  Schema.String.pipe(Schema.pattern(pattern, { message: () => message }))
