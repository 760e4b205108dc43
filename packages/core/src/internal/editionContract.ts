/**
 * The contract of this package's adapter (docs/editions.md): each function `src/internal/edition.ts` gives the shared
 * source, with its signature and what it does, written once. Each edition's adapter implements it with its own
 * Effect's API (`const edition: Contract = { ... }`); the types that differ between the editions (what a `Result`, a
 * schema error or a record schema is) are the adapter's own, named here from it.
 */
import type * as Schema from "effect/Schema"
import type * as SchemaAST from "effect/SchemaAST"
import type {
  DecodableSchema,
  LiteralsSchema,
  RecordKey,
  RecordSchema,
  Result,
  SchemaError,
  SchemaMember,
  StructWithRestSchema
} from "./edition.js"

/** What the shared source does with a `Result`, under Effect 4's names. */
export interface ResultContract {
  readonly succeed: <A>(value: A) => Result<A, never>
  readonly fail: <E>(error: E) => Result<never, E>
  readonly mapError: <A, E, E2>(self: Result<A, E>, f: (e: E) => E2) => Result<A, E2>
  readonly flatMap: <A, E, B, E2>(self: Result<A, E>, f: (a: A) => Result<B, E2>) => Result<B, E | E2>
  readonly match: <A, E, B, C>(
    self: Result<A, E>,
    cases: { readonly onFailure: (error: E) => B; readonly onSuccess: (value: A) => C }
  ) => B | C
}

/** The functions of the adapter, by name. */
export interface Contract {
  /** What the shared source does with a `Result`, under Effect 4's names. */
  readonly Result: ResultContract
  /** The decoder of `schema`, fields it does not name dropped. */
  readonly decodeUnknownResult: <S extends DecodableSchema>(schema: S) => (u: unknown) => Result<S["Type"], SchemaError>
  /**
   * The decoder of `schema`, every field it does not name kept: Effect 4 keeps the fields an index signature holds
   * (`Schema.StructWithRest`, as the partner schemas have); Effect 3 is told to keep them all.
   */
  readonly decodeKeepingFields: <S extends DecodableSchema>(schema: S) => (u: unknown) => Result<S["Type"], SchemaError>
  /** The first issue of `error`: where in the value (a path of keys and indexes) and what was wrong there. */
  readonly firstIssue: (
    error: SchemaError
  ) => { readonly path: ReadonlyArray<PropertyKey>; readonly message: string }
  /**
   * Whether decoding with this AST can only check, never change, its input: no transformation, declaration or
   * recursion anywhere in it (those are treated as "may transform", to be safe).
   */
  readonly isCheckOnly: (ast: SchemaAST.AST) => boolean
  /** A check equal to `Schema.is(schema)`, for a check-only schema. */
  readonly checkOf: (schema: DecodableSchema) => (u: unknown) => boolean
  /** The union of `members` (two or more): Effect 3's `Schema.Union(a, b)`, Effect 4's `Schema.Union([a, b])`. */
  readonly Union: <const Members extends readonly [SchemaMember, SchemaMember, ...Array<SchemaMember>]>(
    ...members: Members
  ) => Schema.Union<Members>
  /** One of these literals: Effect 3's `Schema.Literal(0, 1)`, Effect 4's `Schema.Literals([0, 1])`. */
  readonly Literals: <const L extends readonly [SchemaAST.LiteralValue, ...Array<SchemaAST.LiteralValue>]>(
    ...literals: L
  ) => LiteralsSchema<L>
  /** A record of `value`s by `key`: Effect 3's `Schema.Record({ key, value })`, Effect 4's `Schema.Record(key, value)`. */
  readonly Record: <K extends RecordKey, V extends SchemaMember>(key: K, value: V) => RecordSchema<K, V>
  /**
   * A struct of `fields` that holds every other key as `rest` says, named `identifier`: Effect 3's
   * `Schema.Struct(fields, rest)`, Effect 4's `Schema.StructWithRest(Schema.Struct(fields), [rest])`.
   */
  readonly StructWithRest: <Fields extends Schema.Struct.Fields, K extends RecordKey, V extends SchemaMember>(
    fields: Fields,
    rest: RecordSchema<K, V>,
    identifier: string
  ) => StructWithRestSchema<Fields, K, V>
}
