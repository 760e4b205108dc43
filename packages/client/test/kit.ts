// Per edition: what the Effect 3 edition's shared tests (TEST_PAIRS in scripts/editions.ts) take from its own platform.
/**
 * The shared tests of this package import from here what is named or placed differently in the two editions: the
 * rate limiter of Effect's own with its store in memory, the TestClock and its layer, forking, a fiber's poll, the HTTP client's modules.
 */
import { RateLimiter } from "@effect/experimental"
import type { Fiber } from "effect"
import { Effect, Layer, TestContext } from "effect"

export { HttpClient, HttpClientResponse } from "@effect/platform"
export { TestClock } from "effect"
export { RateLimiter }

/** Effect's own rate limiter on its in-memory store: `@effect/experimental`'s. */
export const rateLimiterLayer = RateLimiter.layer.pipe(Layer.provide(RateLimiter.layerStoreMemory))

/** The test services (`TestClock` first), for an effect run outside `it.effect`. */
export const testClockLayer = TestContext.TestContext

/** Runs `self` in a fiber of its own, supervised by the running one: Effect 3's `Effect.fork`. */
export const fork = Effect.fork

/** Whether `fiber` is still running, read at once. */
export const isRunning = <A, E>(fiber: Fiber.RuntimeFiber<A, E>): boolean => fiber.unsafePoll() === null

/** Lets the other fibers run first: Effect 3's `Effect.yieldNow()`. */
export const yieldNow = Effect.yieldNow()
