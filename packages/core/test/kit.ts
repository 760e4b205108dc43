// Per edition: what the Effect 3 edition's shared tests (TEST_PAIRS in scripts/editions.ts) take from its own Effect.
/**
 * The shared tests of this package read results through here: Effect 3's `Either`, Effect 4's `Result`.
 */
import { Either, Schema } from "effect"

/** The success of `result`, or the failure thrown. */
export const getOrThrow: <A, E>(result: Either.Either<A, E>) => A = Either.getOrThrow

/** Whether `result` is a success. */
export const isSuccess: <A, E>(result: Either.Either<A, E>) => boolean = Either.isRight

/** The failure of `result`, `undefined` for a success. */
export const failureOf = <A, E>(result: Either.Either<A, E>): E | undefined =>
  Either.isLeft(result) ? result.left : undefined

/** A decoder of `schema` answering a result. */
export const decodeUnknown = <A, I>(schema: Schema.Schema<A, I>) => Schema.decodeUnknownEither(schema)
