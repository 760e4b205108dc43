import { describe, expect, it } from "@effect/vitest"
import { Partners } from "@erp-client/effect4-streams"
import { ErpTest, Sandbox } from "@erp-client/effect4-testing"
import { Effect, Stream } from "effect"
import { HttpClient, HttpClientResponse } from "effect/http"
import { TestClock } from "effect/testing"

// A server whose limit is stricter than the client's, learned with the window it counts in (the kernel's
// `ServerLimit.learn`, as the Effect 3 edition learns it): its limit and reset, or 429s alone. In memory, on the
// TestClock; the times are the ERP's own arrival log.

const collect = <A, E, R>(stream: Stream.Stream<A, E, R>) =>
  ErpTest.advancing(Stream.runCollect(stream), { step: "100 millis" })

const listRequests = Effect.map(
  Effect.flatMap(Sandbox.Sandbox, (sandbox) => sandbox.requests),
  (log) => log.filter((entry) => entry.endpoint === "/partner/list")
)

describe("a server allowing 20 per 3 s, the client at its defaults (100 per 30 s)", () => {
  // 400 partners in pages of 10: 41 pages and more, three of the server's windows (about 6 s).
  const layer = (rateLimit: Sandbox.InMemoryOptions["rateLimit"], rateLimiter = {}) =>
    ErpTest.layer({
      sandbox: { partners: 400, rateLimit },
      rateLimiter: { limit: 100, window: "30 seconds", ...rateLimiter }
    })
  const today = Date.UTC(2026, 10, 28, 12, 0, 0, 250)
  for (const resetUnit of ["epoch-seconds", "epoch-millis", "seconds", "http-date"] as const) {
    it.effect(`reset in ${resetUnit}: learns its window from the reset, no 429`, () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(today)
        const got = yield* collect(Partners.stream({ pageSize: 10, concurrency: 4 }))
        expect(got).toHaveLength(400)
        const log = yield* listRequests
        expect(log.filter((entry) => entry.status === 429)).toHaveLength(0)
        // Three windows, each at most a second long for a reset in whole seconds.
        expect(log.at(-1)!.timeMillis - log[0]!.timeMillis).toBeLessThanOrEqual(
          resetUnit === "epoch-millis" ? 7_000 : 9_000
        )
      }).pipe(Effect.provide(layer({ limit: 20, window: "3 seconds", resetUnit }))))
  }

  it.effect("no rate-limit header at all: a few 429s, within 15 s", () =>
    Effect.gen(function*() {
      const got = yield* collect(Partners.stream({ pageSize: 10, concurrency: 4 }))
      expect(got).toHaveLength(400)
      const log = yield* listRequests
      expect(log.filter((entry) => entry.status === 429).length).toBeLessThanOrEqual(12)
      expect(log.at(-1)!.timeMillis - log[0]!.timeMillis).toBeLessThanOrEqual(15_000)
    }).pipe(Effect.provide(layer({ limit: 20, window: "3 seconds", headers: false }))))

  it.effect("the client told 100 per 3 s: at most 1.3 times what 20 per 3 s allows", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(today)
      const got = yield* collect(Partners.stream({ pageSize: 10, concurrency: 4 }))
      expect(got).toHaveLength(400)
      const log = yield* listRequests
      expect(log.filter((entry) => entry.status === 429)).toHaveLength(0)
      const floor = (Math.ceil(log.length / 20) - 1) * 3_000
      expect(log.at(-1)!.timeMillis - log[0]!.timeMillis).toBeLessThanOrEqual(1.3 * floor)
    }).pipe(
      Effect.provide(layer({ limit: 20, window: "3 seconds", resetUnit: "epoch-seconds" }, { window: "3 seconds" }))
    ))
})

describe("a learned limit that rises", () => {
  it.effect("one X-RateLimit-Limit: 1, then the server's 100 again: the queued pages go at once, not a window later", () => {
    let answers = 0
    return Effect.gen(function*() {
      const got = yield* collect(Partners.stream({ pageSize: 10, concurrency: 4 }))
      expect(got).toHaveLength(200)
      const log = yield* listRequests
      expect(log.filter((entry) => entry.status === 429)).toHaveLength(0)
      // The next request waits the window the odd answer implied; its answer says 100 again, and the pages queued
      // behind it go at once, not a window apart as they had been planned.
      expect(log[1]!.timeMillis - log[0]!.timeMillis).toBeGreaterThanOrEqual(30_000)
      expect(log.at(-1)!.timeMillis - log[1]!.timeMillis).toBeLessThan(1_000)
    }).pipe(Effect.provide(ErpTest.layer({
      sandbox: { partners: 200 },
      client: {
        // The first answer says the limit is 1 (in the server's 30 s window); every other one says 100.
        transformClient: HttpClient.transformResponse((response) =>
          Effect.flatMap(response, (response) =>
            Effect.map(response.text, (text) =>
              HttpClientResponse.fromWeb(
                response.request,
                new Response(text, {
                  status: response.status,
                  headers: { ...response.headers, ...(answers++ === 0 ? { "x-ratelimit-limit": "1" } : {}) }
                })
              )))
        )
      }
    })))
  })
})
