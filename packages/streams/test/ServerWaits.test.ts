import { HttpClient, HttpClientResponse } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { ErpClient } from "@erp-client/client"
import { Fault, Sandbox } from "@erp-client/sandbox"
import { Partners, Resource } from "@erp-client/streams"
import { ErpTest } from "@erp-client/testing"
import { Chunk, Clock, Effect, Either, Fiber, Logger, Stream, TestClock } from "effect"

// What the server says about waiting, believed and learned: a limit lower than the client's (said by
// X-RateLimit-Limit, or only by 429s), resets written as dates, Retry-After on a 429, a bounded call that meets a 429,
// HTTP 401/403 from a gateway, an error's own message in a 5xx, and a batch of lookups some of which keep failing. In
// memory, on the TestClock.

const collect = <A, E, R>(stream: Stream.Stream<A, E, R>) =>
  Effect.map(ErpTest.advancing(Stream.runCollect(stream), { step: "100 millis" }), Chunk.toReadonlyArray)

const listRequests = Effect.map(
  Effect.flatMap(Sandbox.Sandbox, (sandbox) => sandbox.requests),
  (log) => log.filter((entry) => entry.endpoint === "/partner/list")
)

// The log lines a program wrote, for what it said.
const captureLogs = () => {
  const lines: Array<string> = []
  const logger = Logger.make(({ message }) => {
    lines.push((Array.isArray(message) ? message : [message]).map(String).join(" "))
  })
  return { lines, layer: Logger.replace(Logger.defaultLogger, logger) }
}

describe("a server whose limit is lower than the client's", () => {
  // 31 pages of 10 at the server's 10 per second, the client told 100 per second.
  const cases = [
    { name: "reset in seconds from now", rateLimit: { resetUnit: "seconds" } },
    { name: "reset as an ISO date", rateLimit: { resetUnit: "iso" } },
    { name: "reset as an HTTP date", rateLimit: { resetUnit: "http-date" } },
    { name: "reset in the past", rateLimit: { resetUnit: "seconds", resetSkew: "-1 hour" } }
  ] as const
  for (const { name, rateLimit } of cases) {
    it.effect(`${name}: keeps the server's X-RateLimit-Limit from its first answer, no 429`, () =>
      Effect.gen(function*() {
        const got = yield* collect(Partners.stream({ pageSize: 10, concurrency: 4 }))
        expect(got).toHaveLength(305)
        const log = yield* listRequests
        expect(log.filter((entry) => entry.status === 429)).toHaveLength(0)
        // 32 requests at 10 a second: three seconds and a little, as the server allows.
        expect(log.at(-1)!.timeMillis - log[0]!.timeMillis).toBeLessThan(4_500)
      }).pipe(Effect.provide(ErpTest.layer({
        sandbox: {
          partners: 305,
          // A TestClock starts at 1970: the dates are read as dates whatever the epoch.
          rateLimit: { limit: 10, window: "1 second", ...rateLimit }
        },
        rateLimiter: { limit: 100, window: "1 second" }
      }))))
  }

  it.effect("that says nothing of its limit: a few 429s, then about the server's pace", () =>
    Effect.gen(function*() {
      const got = yield* collect(Partners.stream({ pageSize: 10, concurrency: 4 }))
      expect(got).toHaveLength(1005)
      const log = yield* listRequests
      const refused = log.filter((entry) => entry.status === 429)
      // The 4 in flight when the server first refused, the probe's, and one now and then as the limit climbs back. The
      // same export took 42 to 229 x 429 before the client learned limits.
      expect(refused.length).toBeGreaterThan(0)
      expect(refused.length).toBeLessThanOrEqual(12)
      // 102 requests at the server's 10 a second: ten seconds, and at most half as long again.
      expect(log.at(-1)!.timeMillis - log[0]!.timeMillis).toBeLessThanOrEqual(15_000)
    }).pipe(Effect.provide(ErpTest.layer({
      sandbox: { partners: 1005, rateLimit: { limit: 10, window: "1 second", headers: false } },
      rateLimiter: { limit: 100, window: "1 second" }
    }))))
})

/** The most requests any `windowMillis` holds, by their arrival. */
const mostIn = (times: ReadonlyArray<number>, windowMillis: number): number => {
  let most = 0
  let first = 0
  for (let last = 0; last < times.length; last++) {
    while (times[last]! - times[first]! >= windowMillis) first++
    most = Math.max(most, last - first + 1)
  }
  return most
}

describe("a server allowing 20 per 3 s, the client at its defaults (100 per 30 s)", () => {
  // 400 partners in pages of 10: 41 pages and more, three of the server's windows (about 6 s). Before the limiter
  // learned the window as well as the limit, the client kept 20 per its own 30 s: a minute.
  const layer = (rateLimit: Sandbox.InMemoryOptions["rateLimit"], rateLimiter = {}) =>
    ErpTest.layer({
      sandbox: { partners: 400, rateLimit },
      rateLimiter: { limit: 100, window: "30 seconds", ...rateLimiter }
    })
  const today = Date.UTC(2026, 10, 28, 12, 0, 0, 250)
  const units = ["epoch-seconds", "epoch-millis", "seconds", "iso", "http-date"] as const
  for (const concurrency of [4, 16]) {
    for (const resetUnit of units) {
      it.effect(`reset in ${resetUnit}, ${concurrency} in flight: learns its window from the reset, no 429`, () =>
        Effect.gen(function*() {
          yield* TestClock.setTime(today)
          const got = yield* collect(Partners.stream({ pageSize: 10, concurrency }))
          expect(got).toHaveLength(400)
          const log = yield* listRequests
          expect(log.filter((entry) => entry.status === 429)).toHaveLength(0)
          // Three windows, each at most a second long for a reset in whole seconds.
          expect(log.at(-1)!.timeMillis - log[0]!.timeMillis).toBeLessThanOrEqual(
            resetUnit === "epoch-millis" ? 7_000 : 9_000
          )
        }).pipe(Effect.provide(layer({ limit: 20, window: "3 seconds", resetUnit }))))
    }
    it.effect(`no rate-limit header at all, ${concurrency} in flight: a few 429s, within 15 s`, () =>
      Effect.gen(function*() {
        const got = yield* collect(Partners.stream({ pageSize: 10, concurrency }))
        expect(got).toHaveLength(400)
        const log = yield* listRequests
        expect(log.filter((entry) => entry.status === 429).length).toBeLessThanOrEqual(concurrency + 8)
        expect(log.at(-1)!.timeMillis - log[0]!.timeMillis).toBeLessThanOrEqual(15_000)
      }).pipe(Effect.provide(layer({ limit: 20, window: "3 seconds", headers: false }))))
  }

  for (const resetUnit of ["epoch-seconds", "epoch-millis"] as const) {
    it.effect(`the client told 100 per 3 s, the reset in ${resetUnit}: at most 1.3 times what 20 per 3 s allows`, () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(today)
        const got = yield* collect(Partners.stream({ pageSize: 10, concurrency: 4 }))
        expect(got).toHaveLength(400)
        const log = yield* listRequests
        expect(log.filter((entry) => entry.status === 429)).toHaveLength(0)
        const times = log.map((entry) => entry.timeMillis)
        expect(mostIn(times, 3_000)).toBeLessThanOrEqual(20)
        // The soonest these requests could have been served at 20 per 3 s: a burst of 20 each window.
        const floor = (Math.ceil(times.length / 20) - 1) * 3_000
        expect(times.at(-1)! - times[0]!).toBeLessThanOrEqual(1.3 * floor)
      }).pipe(Effect.provide(layer({ limit: 20, window: "3 seconds", resetUnit }, { window: "3 seconds" }))))
  }
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

describe("Retry-After on a 429", () => {
  it.effect("an hour asked for: fails at once saying the wait, instead of knocking for the whole budget", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      yield* sandbox.inject(Fault.Fault.TooManyRequests({ retryAfter: "3600" }), { times: Infinity })
      const error = yield* Effect.flip(Partners.get(5))
      expect(error).toMatchObject({ _tag: "RateLimited", retryAfter: "3600", attempts: 1, tooManyRequests: 1 })
      expect(error.message).toMatch(
        /^partner\/get: rate limited: the server asked to wait 3600 s \(Retry-After: 3600\), past the rate-limit budget of 300 s: not waited for$/
      )
      expect((yield* sandbox.stats).requests).toBe(1)
    }).pipe(Effect.provide(ErpTest.layer())))

  it.effect("within the budget: waited for, once, as asked (seconds or an HTTP date)", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      yield* sandbox.inject(Fault.Fault.TooManyRequests({ headers: false, retryAfter: "20" }), { times: 1 })
      yield* sandbox.inject(Fault.Fault.TooManyRequests({ retryAfter: { after: "40 seconds", format: "http-date" } }), {
        times: 1
      })
      const fiber = yield* Effect.fork(Partners.get(5))
      yield* TestClock.adjust("19 seconds")
      expect((yield* sandbox.requests).length).toBe(1)
      yield* TestClock.adjust("2 seconds")
      expect((yield* sandbox.requests).length).toBe(2)
      yield* TestClock.adjust("38 seconds")
      expect((yield* sandbox.requests).length).toBe(2)
      yield* TestClock.adjust("2 seconds")
      expect(yield* Fiber.join(fiber)).toMatchObject({ id: 5 })
      expect((yield* sandbox.requests).map((entry) => entry.status)).toEqual([429, 429, 200])
    }).pipe(Effect.provide(ErpTest.layer())))

  it.effect("the window's own 429s with Retry-After: an export keeps the limit and loses nothing", () =>
    Effect.gen(function*() {
      const got = yield* collect(Partners.stream({ pageSize: 10, concurrency: 8 }))
      expect(got).toHaveLength(200)
      expect(new Set(got.map((partner) => partner.id)).size).toBe(200)
    }).pipe(Effect.provide(ErpTest.layer({
      sandbox: { partners: 200, rateLimit: { limit: 5, window: "1 second", retryAfter: true, headers: true } },
      rateLimiter: { limit: 50, window: "1 second" }
    }))))
})

describe("a reset that cannot be read", () => {
  it.effect("is said once and treated as unknown", () => {
    const logs = captureLogs()
    return Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      for (let i = 0; i < 3; i++) {
        yield* sandbox.inject(Fault.Fault.TooManyRequests({}), { times: 1 })
      }
      const fiber = yield* Effect.fork(Effect.all([Partners.get(5), Partners.get(6)]))
      yield* TestClock.adjust("2 minutes")
      yield* Fiber.join(fiber)
      const said = logs.lines.filter((line) => line.includes("is neither a number nor a date"))
      expect(said).toEqual([
        "GET partner/get: X-RateLimit-Reset \"soon\" is neither a number nor a date; the server's reset is taken as unknown"
      ])
    }).pipe(
      Effect.provide(ErpTest.layer({
        sandbox: { rateLimit: { limit: 100, window: "30 seconds", resetUnit: "seconds" } },
        client: {
          // A server that writes its reset as a word.
          transformClient: HttpClient.transformResponse((response) =>
            Effect.flatMap(response, (response) =>
              Effect.map(response.text, (text) =>
                HttpClientResponse.fromWeb(
                  response.request,
                  new Response(text, {
                    status: response.status,
                    headers: { ...response.headers, "x-ratelimit-reset": "soon" }
                  })
                )))
          )
        }
      })),
      Effect.provide(logs.layer)
    )
  })
})

describe("messages that say what happened", () => {
  it.effect("HTTP 401 and 403 from a gateway are the key's refusal (Unauthorized)", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      for (const status of [401, 403]) {
        yield* sandbox.inject(Fault.Fault.Status({ status }), { times: 1 })
        const error = yield* Effect.flip(Partners.get(5))
        expect(error).toMatchObject({ _tag: "Unauthorized", status })
        expect(error.message).toBe(`partner/get: the API key was refused (HTTP ${status})`)
      }
    }).pipe(Effect.provide(ErpTest.layer())))

  it.effect("a 500 whose body is the envelope keeps the server's message", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.fork(Effect.flip(Partners.get(20)))
      yield* TestClock.adjust("2 minutes")
      const error = yield* Fiber.join(fiber)
      expect(error).toMatchObject({ _tag: "HttpStatusError", status: 500, serverMessage: "database unavailable" })
      expect(error.message).toContain("unexpected HTTP status 500 (the server said: database unavailable)")
    }).pipe(Effect.provide(ErpTest.layer({
      sandbox: { failingIds: { ids: [20], message: "database unavailable" } }
    }))))

  it.effect("a call bounded by withMaxWait that meets a 429 says what it sent and got, and does not promise a retry", () => {
    const logs = captureLogs()
    return Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      yield* sandbox.inject(Fault.Fault.TooManyRequests({ resetAfter: "30 seconds" }), { times: 1 })
      const error = yield* Effect.flip(Partners.get(5).pipe(ErpClient.withMaxWait("1 second")))
      expect(error).toMatchObject({ _tag: "RateLimited", maxWaitMillis: 1000, attempts: 1, tooManyRequests: 1 })
      expect(error.message).toMatch(
        /^partner\/get: rate limited: the call may wait 1000 ms for the limit and would have waited \d+ ms; 1 request was sent, answered 429; the server said: limit 100, remaining 0, X-RateLimit-Reset: 30/
      )
      expect(logs.lines.filter((line) => line.includes("trying again"))).toEqual([])
      // The pause holds for every other call: the next one, bounded too, sends nothing.
      const next = yield* Effect.flip(Partners.get(6).pipe(ErpClient.withMaxWait("1 second")))
      expect(next.message).toMatch(/nothing was sent$/)
      expect((yield* sandbox.stats).requests).toBe(1)
    }).pipe(Effect.provide(ErpTest.layer()), Effect.provide(logs.layer))
  })
})

describe("a batch of lookups, some of which keep failing", () => {
  it.effect("failing ids are retried side by side: the batch takes about one retry budget more, not one each", () =>
    Effect.gen(function*() {
      const ids = Array.from({ length: 200 }, (_, i) => i + 1)
      const started = yield* Clock.currentTimeMillis
      const fiber = yield* Effect.fork(
        Resource.getMany(Partners.resource, Partners.byId, ids, { concurrency: 4 }).pipe(Stream.runCollect)
      )
      // Move the clock a second at a time until the batch ends, and count.
      let seconds = 0
      while ((yield* Fiber.poll(fiber))._tag === "None" && seconds < 3600) {
        yield* TestClock.adjust("1 second")
        seconds++
      }
      const results = Chunk.toReadonlyArray(yield* Fiber.join(fiber))
      // Every line answered, in order; the 10 failing ids (every 20th) failed after their retries.
      expect(results.map((result) => result.value)).toEqual(ids)
      const failed = results.filter((result) => Either.isLeft(result.result)).map((result) => result.value)
      expect(failed).toEqual(ids.filter((id) => id % 20 === 0))
      for (const result of results) {
        if (Either.isLeft(result.result)) expect(result.result.left).toMatchObject({ _tag: "HttpStatusError" })
      }
      // The retry budget is 60 s: 200 lookups at 100 per 30 s take about 60 s of the limit anyway; one budget after
      // another would take 10 x 60 s.
      expect((yield* Clock.currentTimeMillis) - started).toBeLessThanOrEqual(150_000)
      const sandbox = yield* Sandbox.Sandbox
      expect((yield* sandbox.stats).maxInFlight).toBeLessThanOrEqual(4)
    }).pipe(Effect.provide(ErpTest.layer({
      sandbox: { partners: 300, failingIds: { every: 20 } },
      client: { retryBudget: "60 seconds", retryBaseDelay: "1 second" }
    }))))
})
