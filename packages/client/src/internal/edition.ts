// Per edition: the Effect APIs this package uses whose names or shapes differ between Effect 3 and Effect 4.
/**
 * The Effect 3 edition's side of the adapter the shared source imports (docs/editions.md): each name here has a twin
 * of the same type in `packages/effect4-client/src/internal/edition.ts`, written with Effect 4's API. The shared
 * modules import what differs from here and everything else from `effect` itself, so that one source compiles against
 * either edition's `effect`.
 */
import * as Deferred from "effect/Deferred"
import type * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import type * as Schema from "effect/Schema"

export * as HttpClientRequest from "@effect/platform/HttpClientRequest"

/** A success or a failure: Effect 3's `Either`, Effect 4's `Result` (success first in both). */
export type Result<A, E> = Either.Either<A, E>

/** What the shared source does with a `Result`, under Effect 4's names. */
export const Result = {
  succeed: <A>(value: A): Result<A, never> => Either.right(value),
  fail: <E>(error: E): Result<never, E> => Either.left(error),
  map: <A, E, B>(self: Result<A, E>, f: (a: A) => B): Result<B, E> => Either.map(self, f),
  mapError: <A, E, E2>(self: Result<A, E>, f: (e: E) => E2): Result<A, E2> => Either.mapLeft(self, f),
  flatMap: <A, E, B, E2>(self: Result<A, E>, f: (a: A) => Result<B, E2>): Result<B, E | E2> => Either.flatMap(self, f),
  match: <A, E, B, C>(
    self: Result<A, E>,
    cases: { readonly onFailure: (error: E) => B; readonly onSuccess: (value: A) => C }
  ): B | C => Either.match(self, { onLeft: cases.onFailure, onRight: cases.onSuccess }),
  /** The result as an effect that succeeds or fails with it (an Effect 3 `Either` is one already). */
  toEffect: <A, E>(self: Result<A, E>): Effect.Effect<A, E> => self
} as const

/** A schema that decodes to `A`, from whatever it is encoded as and needing nothing. */
export type Decoder<A> = Schema.Schema<A, any>

/** A deferred made outside any fiber, completed by `completeDeferred`. */
export const makeDeferred = <A, E = never>(): Deferred.Deferred<A, E> => Deferred.unsafeMake<A, E>(FiberId.none)

/** Completes `self` with `exit` at once, outside any fiber. */
export const completeDeferred = <A, E>(self: Deferred.Deferred<A, E>, exit: Exit.Exit<A, E>): void => {
  Deferred.unsafeDone(self, exit)
}
