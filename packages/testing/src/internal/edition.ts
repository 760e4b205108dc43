// Per edition: the Effect APIs this package uses whose names or shapes differ between Effect 3 and Effect 4.
/**
 * The Effect 3 edition's side of the adapter the shared source imports (docs/editions.md): each name here has a twin
 * of the same type in `packages/effect4-testing/src/internal/edition.ts`, written with Effect 4's API. The shared
 * modules (`ErpTest`, `internal/watch.ts`) import what differs from here and everything else from `effect` itself.
 */
import type * as ErpRateLimiter from "@erp-client/client/ErpRateLimiter"
import * as Chunk from "effect/Chunk"
import type * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as FiberModule from "effect/Fiber"
import * as Layer from "effect/Layer"
import type * as TestClockModule from "effect/TestClock"
import * as TestServices from "effect/TestServices"

export * as HttpClient from "@effect/platform/HttpClient"

/** A duration as users write it (`"5 minutes"`, a number of milliseconds, a `Duration`). */
export type DurationInput = Duration.DurationInput

/** `input` as a `Duration`: Effect 3's `Duration.decode`. */
export const toDuration: (input: DurationInput) => Duration.Duration = Duration.decode

/** A layer of the services `effect` makes, its resources released when the layer is: Effect 3's `Layer.scopedContext`. */
export const scopedContext = Layer.scopedContext

/** What the rate limiter tells about each wait. */
export type WaitObserver = ErpRateLimiter.WaitObserver["Type"]

/** A fiber `fork` started. */
export type Fiber<A, E> = FiberModule.RuntimeFiber<A, E>

/** Runs `self` in a fiber of its own, a child of the current one: Effect 3's `Effect.fork`. */
export const fork = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<Fiber<A, E>, never, R> => Effect.fork(self)

/** Whether `fiber` is still running, read at once. */
export const isRunning = <A, E>(fiber: Fiber<A, E>): boolean => fiber.unsafePoll() === null

/** A defect saying `message` (shown by the exit's text, as a test prints it). */
export const dieMessage = (message: string): Effect.Effect<never> => Effect.dieMessage(message)

/** The clock `it.effect` provides, which moves only when the test moves it. */
export type TestClock = TestClockModule.TestClock

/** Whether `clock` is a `TestClock`. */
export const isTestClock = (clock: Clock.Clock): clock is TestClock =>
  typeof (clock as Partial<TestClock>).adjust === "function" &&
  typeof (clock as Partial<TestClock>).setTime === "function"

/** The time on `clock`, in milliseconds since the epoch, read at once. */
export const nowMillis = (clock: Clock.Clock): number => clock.unsafeCurrentTimeMillis()

/** Sleeps `duration` of real time, whatever clock the test's fibers have. */
export const sleepLive = (_clock: TestClock, duration: Duration.Duration): Effect.Effect<void> =>
  TestServices.provideLive(Effect.sleep(duration))

/** The sleeps on a `TestClock`: the calls run through `run`, and when the sleeps in progress end. */
export interface Sleeps {
  /** `effect`, its sleeps on the test's clock known to `wakes`. */
  readonly run: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** When each sleep in progress ends, in milliseconds since the epoch. */
  readonly wakes: Effect.Effect<ReadonlyArray<number>>
}

/** The sleeps of `clock`: Effect 3's `TestClock` lists them itself. */
export const sleepsOf = (clock: TestClock): Sleeps => ({
  run: (effect) => effect,
  wakes: Effect.map(clock.sleeps, Chunk.toReadonlyArray)
})
