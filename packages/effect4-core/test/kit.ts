// Per edition: what the Effect 4 edition's shared tests (TEST_PAIRS in scripts/editions.ts) take from its own Effect.
/**
 * The shared tests of this package read results through here: Effect 3's `Either`, Effect 4's `Result`.
 */
import { Result, Schema, SchemaAST } from "effect"

/** The success of `result`, or the failure thrown. */
export const getOrThrow: <A, E>(result: Result.Result<A, E>) => A = Result.getOrThrow

/** Whether `result` is a success. */
export const isSuccess: <A, E>(result: Result.Result<A, E>) => boolean = Result.isSuccess

/** The failure of `result`, `undefined` for a success. */
export const failureOf = <A, E>(result: Result.Result<A, E>): E | undefined =>
  Result.isFailure(result) ? result.failure : undefined

/** A decoder of `schema` answering a result. */
export const decodeUnknown = <S extends Schema.Decoder<unknown>>(schema: S) => Schema.decodeUnknownResult(schema)

/** The fields of a struct of `fields`, in order, each with whether it is optional. */
export const structFields = (
  fields: Schema.Struct.Fields
): Array<{ readonly name: string; readonly optional: boolean }> =>
  (Schema.Struct(fields).ast as SchemaAST.Objects).propertySignatures.map((property) => ({
    name: String(property.name),
    optional: SchemaAST.isOptional(property.type)
  }))
