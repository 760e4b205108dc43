// Per edition: what the Effect 3 edition's shared tests (TEST_PAIRS in scripts/editions.ts) take from its own Effect.
/**
 * The shared tests of this package read results through here: Effect 3's `Either`, Effect 4's `Result`.
 */
import { Either, Schema, SchemaAST } from "effect"

/** The success of `result`, or the failure thrown. */
export const getOrThrow: <A, E>(result: Either.Either<A, E>) => A = Either.getOrThrow

/** Whether `result` is a success. */
export const isSuccess: <A, E>(result: Either.Either<A, E>) => boolean = Either.isRight

/** The failure of `result`, `undefined` for a success. */
export const failureOf = <A, E>(result: Either.Either<A, E>): E | undefined =>
  Either.isLeft(result) ? result.left : undefined

/** A decoder of `schema` answering a result. */
export const decodeUnknown = <A, I>(schema: Schema.Schema<A, I>) => Schema.decodeUnknownEither(schema)

/** The fields of a struct of `fields`, in order, each with whether it is optional. */
export const structFields = (
  fields: Schema.Struct.Fields
): Array<{ readonly name: string; readonly optional: boolean }> =>
  (SchemaAST.typeAST(Schema.Struct(fields).ast) as SchemaAST.TypeLiteral).propertySignatures.map((property) => ({
    name: String(property.name),
    optional: property.isOptional
  }))
