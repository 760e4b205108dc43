import { HttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { ErpClient, ErpRateLimiter } from "@erp-client/client"
import { Sandbox } from "@erp-client/sandbox"
import { Duration, Effect, Fiber, Redacted, TestClock } from "effect"
import { maxInAnyWindow } from "./windows.js"

// Requests that reach the server late: each is held up between the limiter and the server (a slow connection, a busy
// event loop, a queue for a socket) for its own delay, some of them longer than the window. The server counts a
// request when it arrives, so the truth is the sandbox's log of arrivals, on the TestClock.

const L = 5
const W = 1_000

// Seeded (a linear congruential generator), so a failure repeats: about a third of the requests arrive one to three
// windows late, the rest at once or within a few milliseconds.
const delaysOf = (count: number, seed: number): Array<number> => {
  let state = seed
  return Array.from({ length: count }, () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31
    const draw = state / 2 ** 31
    return draw < 0.35 ? W + Math.floor(draw * 6 * W) : Math.floor(draw * 10)
  })
}

/** `count` lookups through the client at `concurrency`, each arriving late by its delay; the server's arrivals. */
const arrivalsOf = (
  delays: ReadonlyArray<number>,
  concurrency: number,
  limiter = ErpRateLimiter.layer({ limit: L, window: W })
) =>
  Effect.gen(function*() {
    const { httpClient, sandbox } = yield* Sandbox.makeHttpClient({
      partners: 50,
      rateLimit: { limit: L, window: Duration.millis(W), resetUnit: "seconds" }
    })
    let sent = 0
    const client = yield* ErpClient.make({
      baseUrl: sandbox.baseUrl,
      apiKey: Redacted.make(sandbox.apiKey),
      timeout: "10 seconds",
      transformClient: HttpClient.mapRequestEffect((request) =>
        Effect.as(Effect.sleep(Duration.millis(delays[sent++ % delays.length]!)), request)
      )
    }).pipe(Effect.provide(limiter), Effect.provideService(HttpClient.HttpClient, httpClient))
    const fiber = yield* Effect.fork(
      Effect.forEach(
        delays,
        (_, i) => client.httpClient.get("partner/get", { urlParams: { id: 1 + (i % 50) } }),
        { concurrency }
      )
    )
    yield* TestClock.adjust(Duration.hours(1))
    yield* Fiber.join(fiber)
    const log = yield* sandbox.requests
    return { times: log.map((entry) => entry.timeMillis), statuses: log.map((entry) => entry.status) }
  }).pipe(Effect.scoped)

describe("requests that reach the server late", () => {
  for (const seed of [1, 6, 8, 42]) {
    it.effect(`never bring more than the limit into any window as the server counts arrivals (seed ${seed})`, () =>
      Effect.gen(function*() {
        const delays = delaysOf(60, seed)
        expect(delays.filter((d) => d > W).length).toBeGreaterThan(10)
        const { statuses, times } = yield* arrivalsOf(delays, 8)
        expect(maxInAnyWindow(times, W)).toBeLessThanOrEqual(L)
        // Not one 429, so not one request sent again
        expect(statuses.filter((status) => status !== 200)).toEqual([])
        expect(times).toHaveLength(60)
      }))
  }
})
