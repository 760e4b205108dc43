/**
 * The contract of this package's adapter (docs/editions.md): each function `src/internal/edition.ts` gives the shared
 * source (`ErpTest`, `internal/watch.ts`), with its signature and what it does, written once. Each edition's adapter
 * implements it with its own Effect's API (`const edition: Contract = { ... }`); the types that differ between the
 * editions (what a `Fiber` or a `TestClock` is) are the adapter's own, named here from it.
 */
import type * as Clock from "effect/Clock"
import type * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type { DurationInput, Fiber, TestClock } from "./edition.js"

/** The sleeps on a `TestClock`: the calls run through `run`, and when the sleeps in progress end. */
export interface Sleeps {
  /** `effect`, its sleeps on the test's clock known to `wakes`. */
  readonly run: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** When each sleep in progress ends, in milliseconds since the epoch. */
  readonly wakes: Effect.Effect<ReadonlyArray<number>>
}

/** The functions of the adapter, by name. */
export interface Contract {
  /** `input` as a `Duration`. */
  readonly toDuration: (input: DurationInput) => Duration.Duration
  /** A layer of the services `effect` makes, its resources released when the layer is. */
  readonly scopedContext: <A, E, R>(
    effect: Effect.Effect<Context.Context<A>, E, R>
  ) => Layer.Layer<A, E, Exclude<R, Scope.Scope>>
  /** Runs `self` in a fiber of its own, a child of the current one. */
  readonly fork: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<Fiber<A, E>, never, R>
  /** Whether `fiber` is still running, read at once. */
  readonly isRunning: <A, E>(fiber: Fiber<A, E>) => boolean
  /** A defect saying `message` (shown by the exit's text, as a test prints it). */
  readonly dieMessage: (message: string) => Effect.Effect<never>
  /** Whether `clock` is a `TestClock` (the clock `it.effect` provides). */
  readonly isTestClock: (clock: Clock.Clock) => clock is TestClock
  /** The time on `clock`, in milliseconds since the epoch, read at once. */
  readonly nowMillis: (clock: Clock.Clock) => number
  /** Sleeps `duration` of real time, whatever clock the test's fibers have. */
  readonly sleepLive: (clock: TestClock, duration: Duration.Duration) => Effect.Effect<void>
  /** The sleeps of `clock`. */
  readonly sleepsOf: (clock: TestClock) => Sleeps
}
