// Per edition: the Effect APIs this package uses whose names or shapes differ between Effect 3 and Effect 4.
/**
 * The Effect 4 edition's side of the adapter the shared source imports (docs/editions.md): each name here has a twin
 * of the same type in `packages/client/src/internal/edition.ts`, written with Effect 3's API. The shared modules,
 * copied here from the Effect 3 package by `scripts/editions.ts`, import what differs from here and everything else
 * from `effect` itself.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as ResultModule from "effect/Result"
import type * as Schema from "effect/Schema"

export * as HttpClientRequest from "effect/http/HttpClientRequest"

/** A success or a failure: Effect 3's `Either`, Effect 4's `Result` (success first in both). */
export type Result<A, E> = ResultModule.Result<A, E>

/** What the shared source does with a `Result`, under Effect 4's names. */
export const Result = {
  succeed: <A>(value: A): Result<A, never> => ResultModule.succeed(value),
  fail: <E>(error: E): Result<never, E> => ResultModule.fail(error),
  map: <A, E, B>(self: Result<A, E>, f: (a: A) => B): Result<B, E> => ResultModule.map(self, f),
  mapError: <A, E, E2>(self: Result<A, E>, f: (e: E) => E2): Result<A, E2> => ResultModule.mapError(self, f),
  flatMap: <A, E, B, E2>(self: Result<A, E>, f: (a: A) => Result<B, E2>): Result<B, E | E2> =>
    ResultModule.flatMap(self, f),
  match: <A, E, B, C>(
    self: Result<A, E>,
    cases: { readonly onFailure: (error: E) => B; readonly onSuccess: (value: A) => C }
  ): B | C => ResultModule.match(self, cases),
  /** The result as an effect that succeeds or fails with it. */
  toEffect: <A, E>(self: Result<A, E>): Effect.Effect<A, E> => Effect.fromResult(self)
} as const

/** A schema that decodes to `A`, from whatever it is encoded as and needing nothing. */
export type Decoder<A> = Schema.Decoder<A>

/** A deferred made outside any fiber, completed by `completeDeferred`. */
export const makeDeferred = <A, E = never>(): Deferred.Deferred<A, E> => Deferred.makeUnsafe<A, E>()

/** Completes `self` with `exit` at once, outside any fiber. */
export const completeDeferred = <A, E>(self: Deferred.Deferred<A, E>, exit: Exit.Exit<A, E>): void => {
  Deferred.doneUnsafe(self, exit)
}
