// Per edition: what the Effect 4 edition's shared tests (TEST_PAIRS in scripts/editions.ts) take from its own Effect.
/**
 * The shared tests of this package read results through here: Effect 3's `Either`, Effect 4's `Result`.
 */
import { Result, Schema } from "effect"

/** The success of `result`, or the failure thrown. */
export const getOrThrow: <A, E>(result: Result.Result<A, E>) => A = Result.getOrThrow

/** Whether `result` is a success. */
export const isSuccess: <A, E>(result: Result.Result<A, E>) => boolean = Result.isSuccess

/** The failure of `result`, `undefined` for a success. */
export const failureOf = <A, E>(result: Result.Result<A, E>): E | undefined =>
  Result.isFailure(result) ? result.failure : undefined

/** A decoder of `schema` answering a result. */
export const decodeUnknown = <S extends Schema.Decoder<unknown>>(schema: S) => Schema.decodeUnknownResult(schema)
