// Per edition: what the Effect 4 edition's shared tests (TEST_PAIRS in scripts/editions.ts) take from its own platform.
/**
 * The shared tests of this package import from here what is named or placed differently in the two editions: the
 * rate limiter of Effect's own with its store in memory, the TestClock and its layer, forking, a fiber's poll, the HTTP client's modules.
 */
import type { Fiber } from "effect"
import { Effect, Layer } from "effect"
import { RateLimiter } from "effect/persistence"
import { TestClock } from "effect/testing"

export { HttpClient, HttpClientResponse } from "effect/http"
export { TestClock } from "effect/testing"
export { RateLimiter }

/** Effect's own rate limiter on its in-memory store: `effect/persistence`'s. */
export const rateLimiterLayer = RateLimiter.layer.pipe(Layer.provide(RateLimiter.layerStoreMemory))

/** The test services (`TestClock` first), for an effect run outside `it.effect`. */
export const testClockLayer = TestClock.layer()

/** Runs `self` in a fiber of its own, supervised by the running one: Effect 4's `Effect.forkChild`. */
export const fork = Effect.forkChild

/** Whether `fiber` is still running, read at once. */
export const isRunning = <A, E>(fiber: Fiber.Fiber<A, E>): boolean => fiber.pollUnsafe() === undefined

/** Lets the other fibers run first: Effect 4's `Effect.yieldNow`. */
export const yieldNow = Effect.yieldNow
