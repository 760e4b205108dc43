// Per edition: Effect 4's own timeout is the watcher (its TestClock forgets an interrupted sleep).
/**
 * The attempts' timeouts. Effect 4's own `Effect.timeoutOrElse` is the deadline watcher here: the Effect 3 edition
 * watches its attempts' deadlines with one hand-written watcher per client (its `internal/deadlines.ts`) because
 * Effect 3's `TestClock` kept every cancelled sleep and spent a scheduling round on each when a test moved the clock
 * past it, a round per request. Effect 4's `TestClock` forgets a sleep that is interrupted, and its live sleeps are
 * cleared timers, so the library's timeout costs nothing after the attempt ends.
 */
import * as Effect from "effect/Effect"

/**
 * `self`, interruptible, stopped at its deadline and then failing with `onTimeout()`: the deadline is the client's
 * own, so it stops a hung attempt even when its caller cannot be interrupted.
 */
export const within = <A, E, R, E2>(
  self: Effect.Effect<A, E, R>,
  millis: number,
  onTimeout: () => E2
): Effect.Effect<A, E | E2, R> =>
  Effect.timeoutOrElse(Effect.interruptible(self), {
    duration: millis,
    orElse: () => Effect.fail(onTimeout())
  })

/** A client's deadlines, as the Effect 3 edition's `make` gives them: here, Effect's own timeout for each attempt. */
export const make = () => ({ within })
