// Per edition: the Effect APIs this package uses whose names or shapes differ between Effect 3 and Effect 4.
/**
 * The Effect 3 edition's side of the adapter the shared source imports (docs/editions.md): each name here has a twin
 * of the same type in `packages/effect4-testing/src/internal/edition.ts`, written with Effect 4's API. The shared
 * modules (`ErpTest`, `internal/watch.ts`) import what differs from here and everything else from `effect` itself.
 */
import type * as ErpRateLimiter from "@erp-client/client/ErpRateLimiter"
import * as Chunk from "effect/Chunk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as FiberModule from "effect/Fiber"
import * as Layer from "effect/Layer"
import type * as TestClockModule from "effect/TestClock"
import * as TestServices from "effect/TestServices"
import type { Contract } from "./editionContract.js"

export * as HttpClient from "@effect/platform/HttpClient"
export type { Sleeps } from "./editionContract.js"

// The types that differ between the editions: the contract (`editionContract.ts`) names its functions' types by these.

/** A duration as users write it (`"5 minutes"`, a number of milliseconds, a `Duration`). */
export type DurationInput = Duration.DurationInput

/** What the rate limiter tells about each wait. */
export type WaitObserver = ErpRateLimiter.WaitObserver["Type"]

/** A fiber `fork` started. */
export type Fiber<A, E> = FiberModule.RuntimeFiber<A, E>

/** The clock `it.effect` provides, which moves only when the test moves it. */
export type TestClock = TestClockModule.TestClock

/** The adapter, with Effect 3's API: what each function does is said once, in `Contract`. */
const edition: Contract = {
  toDuration: Duration.decode,
  scopedContext: Layer.scopedContext,
  fork: Effect.fork,
  isRunning: (fiber) => fiber.unsafePoll() === null,
  dieMessage: (message) => Effect.dieMessage(message),
  isTestClock: (clock): clock is TestClock =>
    typeof (clock as Partial<TestClock>).adjust === "function" &&
    typeof (clock as Partial<TestClock>).setTime === "function",
  nowMillis: (clock) => clock.unsafeCurrentTimeMillis(),
  sleepLive: (_clock, duration) => TestServices.provideLive(Effect.sleep(duration)),
  // Effect 3's `TestClock` lists its sleeps itself.
  sleepsOf: (clock) => ({
    run: (effect) => effect,
    wakes: Effect.map(clock.sleeps, Chunk.toReadonlyArray)
  })
}

export const { dieMessage, fork, isRunning, isTestClock, nowMillis, scopedContext, sleepLive, sleepsOf, toDuration } =
  edition
