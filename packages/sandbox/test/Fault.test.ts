import { HttpClient, HttpClientRequest } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import type { Duration } from "effect"
import { Effect, Either, Fiber, TestClock } from "effect"
import type { Sandbox } from "../src/index.js"
import { Fault } from "../src/index.js"
import { call, eventually, json, send, TIMEOUT, transports, withSandboxOver } from "./helpers.js"

const page = { list_offset: "0", list_count: "5" }

/** The server still answers normally after a fault. */
const stillServes = (sandbox: Sandbox.Service) =>
  Effect.gen(function*() {
    const reply = yield* call(sandbox.baseUrl, "/partner/list", page)
    expect(reply.status).toBe(200)
    expect(json(reply).data).toHaveLength(5)
  })

describe.each(transports)("Fault (%s)", (transport) => {
  const withSandbox = withSandboxOver(transport)

  it.live(
    "Status: a 5xx with a small body that is not the envelope, once",
    () =>
      withSandbox({}, (sandbox) =>
        Effect.gen(function*() {
          yield* sandbox.inject(Fault.Fault.Status({ status: 503 }))
          const reply = yield* call(sandbox.baseUrl, "/partner/list", page)
          expect(reply.status).toBe(503)
          expect(reply.text).toContain("503")
          expect(reply.text).not.toContain("result")
          yield* stillServes(sandbox)
          const stats = yield* sandbox.stats
          expect(stats.faultsServed).toBe(1)
          expect((yield* sandbox.requests)[0].fault).toBe("Status")
        })),
    TIMEOUT
  )

  it.live(
    "TooManyRequests: a 429 whatever the window says, not counted in it",
    () =>
      withSandbox({ rateLimit: { limit: 3 } }, (sandbox) =>
        Effect.gen(function*() {
          yield* sandbox.inject(Fault.Fault.TooManyRequests({ resetAfter: "5 seconds", resetUnit: "seconds" }))
          const limited = yield* call(sandbox.baseUrl, "/partner/list", page)
          expect(limited.status).toBe(429)
          expect(json(limited)).toStrictEqual({ result: { code: 0, message: "Too Many Requests" }, data: null })
          expect(limited.headers.get("x-ratelimit-limit")).toBe("3")
          expect(limited.headers.get("x-ratelimit-remaining")).toBe("0")
          expect(limited.headers.get("x-ratelimit-reset")).toBe("5")
          const next = yield* call(sandbox.baseUrl, "/partner/list", page)
          expect(next.headers.get("x-ratelimit-remaining")).toBe("2")

          yield* sandbox.inject(Fault.Fault.TooManyRequests({ headers: false }))
          const bare = yield* call(sandbox.baseUrl, "/partner/list", page)
          expect(bare.status).toBe(429)
          expect(bare.headers.get("x-ratelimit-reset")).toBeNull()
          expect((yield* sandbox.stats).tooManyRequests).toBe(2)
        })),
    TIMEOUT
  )

  it.live(
    "DropBeforeResponse: the connection closes without a response; the server keeps serving",
    () =>
      withSandbox({}, (sandbox) =>
        Effect.gen(function*() {
          yield* sandbox.inject(Fault.Fault.DropBeforeResponse())
          const result = yield* Effect.either(send(sandbox.baseUrl, "/partner/list", page))
          expect(Either.isLeft(result)).toBe(true)
          yield* stillServes(sandbox)
          yield* eventually(sandbox.stats, (stats) => stats.inFlight === 0)
          expect((yield* sandbox.requests)[0]).toMatchObject({ status: 0, fault: "DropBeforeResponse" })
        })),
    TIMEOUT
  )

  it.live(
    "DropMidBody: status and headers, part of the body, then the connection closes",
    () =>
      withSandbox({}, (sandbox) =>
        Effect.gen(function*() {
          yield* sandbox.inject(Fault.Fault.DropMidBody({ fraction: 0.3 }))
          // The cut comes after the status, the headers and part of the body: a client has the response, then fails
          // reading its body.
          const response = yield* HttpClient.execute(
            HttpClientRequest.get(`${sandbox.baseUrl}/partner/list?list_offset=0&list_count=50`).pipe(
              HttpClientRequest.setHeader("X-API-KEY", sandbox.apiKey)
            )
          )
          expect(response.status).toBe(200)
          expect(Number(response.headers["content-length"])).toBeGreaterThan(1000)
          expect(response.headers["x-ratelimit-remaining"]).toBe("99")
          const body = yield* Effect.either(response.text)
          expect(Either.isLeft(body) && body.left._tag).toBe("ResponseError")
          yield* stillServes(sandbox)
          yield* eventually(sandbox.stats, (stats) => stats.inFlight === 0)
          expect((yield* sandbox.requests)[0]).toMatchObject({ status: 200, fault: "DropMidBody" })
        })),
    TIMEOUT
  )

  it.live(
    "MalformedJson, NotEnvelope and UnknownCode: 200 answers a client must not take for data",
    () =>
      withSandbox({}, (sandbox) =>
        Effect.gen(function*() {
          yield* sandbox.inject(Fault.Fault.MalformedJson())
          const malformed = yield* call(sandbox.baseUrl, "/partner/list", page)
          expect(malformed.status).toBe(200)
          expect(() => JSON.parse(malformed.text)).toThrow()
          expect(malformed.text.startsWith("{\"result\":{\"code\":1")).toBe(true)

          yield* sandbox.inject(Fault.Fault.NotEnvelope({}))
          expect(json(yield* call(sandbox.baseUrl, "/partner/list", page))).toStrictEqual({ items: [] })

          yield* sandbox.inject(Fault.Fault.UnknownCode({ message: "Maintenance" }))
          expect(json(yield* call(sandbox.baseUrl, "/partner/get", { id: "1" }))).toStrictEqual({
            result: { code: 2, message: "Maintenance" },
            data: null
          })
          yield* stillServes(sandbox)
        })),
    TIMEOUT
  )

  it.live("Unauthorized: refuses even a valid key", () =>
    withSandbox({}, (sandbox) =>
      Effect.gen(function*() {
        yield* sandbox.inject(Fault.Fault.Unauthorized())
        const reply = yield* call(sandbox.baseUrl, "/partner/get", { id: "1" })
        expect(reply.status).toBe(200)
        expect(json(reply)).toStrictEqual({ result: { code: 0, message: "Unauthorized" }, data: null })
        yield* stillServes(sandbox)
      })), TIMEOUT)

  it.live("Delay: the normal answer, later", () =>
    withSandbox({}, (sandbox) =>
      Effect.gen(function*() {
        yield* sandbox.inject(Fault.Fault.Delay({ duration: "300 millis" }))
        const started = performance.now()
        const reply = yield* call(sandbox.baseUrl, "/partner/get", { id: "2" })
        expect(performance.now() - started).toBeGreaterThanOrEqual(250)
        expect(json(reply).data.id).toBe(2)
      })), TIMEOUT)

  it.live(
    "Hang: no answer until the client gives up; the handler ends then and the server keeps serving",
    () =>
      withSandbox({}, (sandbox) =>
        Effect.gen(function*() {
          yield* sandbox.inject(Fault.Fault.Hang())
          const result = yield* send(sandbox.baseUrl, "/partner/list", page).pipe(
            Effect.timeout("300 millis"),
            Effect.either
          )
          expect(Either.isLeft(result)).toBe(true)
          yield* eventually(sandbox.stats, (stats) => stats.inFlight === 0)
          yield* stillServes(sandbox)
          const stats = yield* sandbox.stats
          expect(stats.maxInFlight).toBe(1)
          expect((yield* sandbox.requests)[0]).toMatchObject({ status: 0, fault: "Hang" })
        })),
    TIMEOUT
  )

  it.live("Hang: closing the sandbox cuts a hung request instead of waiting for it", () =>
    Effect.gen(function*() {
      const started = performance.now()
      const pending = yield* withSandbox({}, (sandbox) =>
        Effect.gen(function*() {
          yield* sandbox.inject(Fault.Fault.Hang())
          const pending = yield* Effect.forkDaemon(
            send(sandbox.baseUrl, "/partner/list", { list_offset: "0", list_count: "1" }).pipe(
              Effect.timeout("8 seconds")
            )
          )
          yield* eventually(sandbox.stats, (stats) => stats.inFlight === 1)
          return pending
        }))
      const outcome = yield* Effect.either(Fiber.join(pending))
      expect(Either.isLeft(outcome) && outcome.left._tag).toBe("RequestError")
      expect(performance.now() - started).toBeLessThan(5000)
    }), TIMEOUT)

  it.live(
    "inject: `times` and `endpoint` choose the requests; faults come after the rate limit",
    () =>
      withSandbox({ rateLimit: { limit: 2 } }, (sandbox) =>
        Effect.gen(function*() {
          yield* sandbox.inject(Fault.Fault.Status({ status: 500 }), { times: 2, endpoint: "partner/get" })
          expect((yield* call(sandbox.baseUrl, "/partner/list", page)).status).toBe(200)
          expect((yield* call(sandbox.baseUrl, "/partner/get", { id: "1" })).status).toBe(500)
          expect((yield* call(sandbox.baseUrl, "/partner/get", { id: "1" })).status).toBe(500)
          // The window is full now: the 429 wins and the queued fault waits.
          yield* sandbox.inject(Fault.Fault.Status({ status: 502 }))
          expect((yield* call(sandbox.baseUrl, "/partner/get", { id: "1" })).status).toBe(429)
          expect((yield* call(sandbox.baseUrl, "/partner/list", page)).status).toBe(502)
          yield* sandbox.inject(Fault.Fault.Status({ status: 504 }))
          yield* sandbox.clearFaults
          yield* sandbox.resetRateLimits
          expect((yield* call(sandbox.baseUrl, "/partner/list", page)).status).toBe(200)
        })),
    TIMEOUT
  )

  it.live("randomFaults: a seeded share of requests, the same sequence on every run", () =>
    Effect.gen(function*() {
      const run = withSandbox({
        rateLimit: false,
        randomFaults: {
          rate: 0.3,
          seed: 11,
          faults: [Fault.Fault.Status({ status: 500 }), Fault.Fault.UnknownCode({})]
        }
      }, (sandbox) =>
        Effect.gen(function*() {
          const outcomes: Array<string> = []
          for (let i = 0; i < 60; i++) {
            const reply = yield* call(sandbox.baseUrl, "/partner/get", { id: "1" })
            outcomes.push(reply.status === 500 ? "500" : String(json(reply).result.code))
          }
          return outcomes
        }))
      const first = yield* run
      const second = yield* run
      expect(second).toStrictEqual(first)
      const faulted = first.filter((o) => o !== "1").length
      expect(faulted).toBeGreaterThan(5)
      expect(faulted).toBeLessThan(35)
      expect(first).toContain("500")
      expect(first).toContain("2")
    }), TIMEOUT)

  it.live(
    "latency: base plus seeded jitter before every answer",
    () =>
      withSandbox({ latency: { base: "100 millis", jitter: "50 millis" } }, (sandbox) =>
        Effect.gen(function*() {
          const started = performance.now()
          yield* call(sandbox.baseUrl, "/partner/get", { id: "1" })
          yield* call(sandbox.baseUrl, "/partner/get", { id: "2" })
          expect(performance.now() - started).toBeGreaterThanOrEqual(180)
        })),
    TIMEOUT
  )

  it.live(
    "Status with retryAfter: the Retry-After header as given",
    () =>
      withSandbox({}, (sandbox) =>
        Effect.gen(function*() {
          yield* sandbox.inject(Fault.Fault.Status({ status: 503, retryAfter: "120" }))
          yield* sandbox.inject(Fault.Fault.Status({ status: 502, retryAfter: "Wed, 21 Oct 2015 07:28:00 GMT" }))
          const first = yield* call(sandbox.baseUrl, "/partner/list", page)
          expect([first.status, first.headers.get("retry-after")]).toStrictEqual([503, "120"])
          const second = yield* call(sandbox.baseUrl, "/partner/list", page)
          expect([second.status, second.headers.get("retry-after")]).toStrictEqual([
            502,
            "Wed, 21 Oct 2015 07:28:00 GMT"
          ])
          yield* sandbox.inject(Fault.Fault.Status({ status: 500 }))
          expect((yield* call(sandbox.baseUrl, "/partner/list", page)).headers.get("retry-after")).toBeNull()
        })),
    TIMEOUT
  )

  it.live(
    "MalformedJson and DropMidBody N in a row: `times` truncated 200s, then the whole answer",
    () =>
      withSandbox({}, (sandbox) =>
        Effect.gen(function*() {
          yield* sandbox.inject(Fault.Fault.MalformedJson(), { times: 3 })
          for (let i = 0; i < 3; i++) {
            const reply = yield* call(sandbox.baseUrl, "/partner/list", page)
            expect(reply.status).toBe(200)
            expect(() => JSON.parse(reply.text)).toThrow()
          }
          yield* stillServes(sandbox)

          yield* sandbox.inject(Fault.Fault.DropMidBody({}), { times: 2 })
          for (let i = 0; i < 2; i++) {
            expect(Either.isLeft(yield* Effect.either(send(sandbox.baseUrl, "/partner/list", page)))).toBe(true)
          }
          yield* stillServes(sandbox)
          yield* eventually(sandbox.stats, (stats) => stats.inFlight === 0)
          expect((yield* sandbox.requests).map((entry) => entry.fault ?? "-")).toStrictEqual([
            "MalformedJson",
            "MalformedJson",
            "MalformedJson",
            "-",
            "DropMidBody",
            "DropMidBody",
            "-"
          ])
        })),
    TIMEOUT
  )

  it.live(
    "inject `after`: the fault waits for that many matching requests",
    () =>
      withSandbox({}, (sandbox) =>
        Effect.gen(function*() {
          yield* sandbox.inject(Fault.Fault.MalformedJson(), { after: 2, times: 2, endpoint: "/partner/list" })
          const statuses: Array<string> = []
          for (let i = 0; i < 6; i++) {
            yield* call(sandbox.baseUrl, "/partner/get", { id: "1" })
            const reply = yield* call(sandbox.baseUrl, "/partner/list", page)
            statuses.push(Either.isRight(Either.try(() => JSON.parse(reply.text))) ? "ok" : "cut")
          }
          expect(statuses).toStrictEqual(["ok", "ok", "cut", "cut", "ok", "ok"])
        })),
    TIMEOUT
  )
})

describe.each(transports)("Options.inject (%s)", (transport) => {
  const withSandbox = withSandboxOver(transport)

  it.live("queues faults at start, in order, as inject does", () =>
    withSandbox({
      inject: [
        { fault: Fault.Fault.Status({ status: 500 }), after: 1 },
        { fault: Fault.Fault.UnknownCode({}), times: 2, endpoint: "partner/get" }
      ]
    }, (sandbox) =>
      Effect.gen(function*() {
        const outcomes: Array<string> = []
        for (let i = 0; i < 4; i++) {
          const reply = yield* call(sandbox.baseUrl, "/partner/get", { id: "1" })
          outcomes.push(reply.status === 200 ? String(json(reply).result.code) : String(reply.status))
        }
        // First passes (after: 1) but meets the second fault; then the 500; then the second's last time.
        expect(outcomes).toStrictEqual(["2", "500", "2", "1"])
      })), TIMEOUT)
})

describe.each(transports)("Fault.Outage (%s)", (transport) => {
  const withSandbox = withSandboxOver(transport)

  const status = (baseUrl: string, path = "/partner/list") =>
    Effect.map(call(baseUrl, path, path === "/partner/list" ? page : { id: "1" }), (reply) => reply.status)

  it.effect(
    "every request within the duration (Effect clock) gets the status, an HTML page and Retry-After; none counts " +
      "in the window",
    () =>
      withSandbox({ rateLimit: { limit: 3 } }, (sandbox) =>
        Effect.gen(function*() {
          expect(yield* status(sandbox.baseUrl)).toBe(200)
          yield* sandbox.inject(Fault.Fault.Outage({ duration: "10 seconds", retryAfter: "5" }))
          yield* TestClock.adjust("1 second")
          const first = yield* call(sandbox.baseUrl, "/partner/list", page)
          expect(first.status).toBe(503)
          expect(first.headers.get("content-type")).toMatch(/^text\/html/)
          expect(first.text).toBe("<html><body><h1>503 Service Unavailable</h1></body></html>\n")
          expect(first.headers.get("retry-after")).toBe("5")
          // A gateway answers: no rate-limit headers, and never a 429 however many come.
          expect(first.headers.get("x-ratelimit-remaining")).toBeNull()
          for (let i = 0; i < 5; i++) expect(yield* status(sandbox.baseUrl)).toBe(503)
          expect(yield* status(sandbox.baseUrl, "/partner/get")).toBe(503)
          yield* TestClock.adjust("9999 millis")
          expect(yield* status(sandbox.baseUrl)).toBe(503)
          yield* TestClock.adjust("1 millis")
          // Over, and the window counted only the request before it.
          const after = yield* call(sandbox.baseUrl, "/partner/list", page)
          expect(after.status).toBe(200)
          expect(after.headers.get("x-ratelimit-remaining")).toBe("1")
          const log = yield* sandbox.requests
          expect(log.filter((entry) => entry.fault === "Outage")).toHaveLength(8)
          expect(log.filter((entry) => entry.status === 503)).toHaveLength(8)
        })),
    TIMEOUT
  )

  it.effect(
    "the endpoint inject names only; another status and body; Retry-After as an HTTP date from the clock",
    () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(Date.UTC(2030, 0, 2, 3, 4, 5))
        yield* withSandbox({}, (sandbox) =>
          Effect.gen(function*() {
            yield* sandbox.inject(
              Fault.Fault.Outage({
                duration: "1 minute",
                status: 502,
                body: "envelope",
                retryAfter: { after: "30 seconds", format: "http-date" }
              }),
              { endpoint: "/partner/get" }
            )
            expect(yield* status(sandbox.baseUrl)).toBe(200)
            const down = yield* call(sandbox.baseUrl, "/partner/get", { id: "1" })
            expect(down.status).toBe(502)
            expect(json(down)).toStrictEqual({ result: { code: 0, message: "Bad Gateway" }, data: null })
            expect(down.headers.get("retry-after")).toBe("Wed, 02 Jan 2030 03:04:35 GMT")
            expect(yield* status(sandbox.baseUrl)).toBe(200)
            yield* TestClock.adjust("20 seconds")
            const later = yield* call(sandbox.baseUrl, "/partner/get", { id: "1" })
            expect(later.headers.get("retry-after")).toBe("Wed, 02 Jan 2030 03:04:55 GMT")
            yield* TestClock.adjust("40 seconds")
            expect(yield* status(sandbox.baseUrl, "/partner/get")).toBe(200)
          }))
        yield* withSandbox({}, (sandbox) =>
          Effect.gen(function*() {
            yield* sandbox.inject(
              Fault.Fault.Outage({ duration: "5 seconds", body: "empty", retryAfter: { after: "2500 millis" } })
            )
            const down = yield* call(sandbox.baseUrl, "/partner/get", { id: "1" })
            expect([down.status, down.text, down.headers.get("retry-after")]).toStrictEqual([503, "", "3"])
          }))
      }),
    TIMEOUT
  )

  it.effect(
    "`after` and `times`: it starts at the first request past `after`; the next outage at the first request after " +
      "the previous ended",
    () =>
      withSandbox({ rateLimit: false }, (sandbox) =>
        Effect.gen(function*() {
          yield* sandbox.inject(Fault.Fault.Outage({ duration: "2 seconds" }), { after: 1, times: 2 })
          const seen: Array<number> = []
          const at = (step: Duration.DurationInput) =>
            Effect.gen(function*() {
              yield* TestClock.adjust(step)
              seen.push(yield* status(sandbox.baseUrl))
            })
          yield* at("0 millis") // passes (after: 1)
          yield* at("5 seconds") // the first outage starts: t = 5 s
          yield* at("1999 millis") // still in it
          yield* at("1 millis") // over at 7 s; the second starts here
          yield* at("1 second") // in the second
          yield* at("1 second") // over
          yield* at("1 second")
          expect(seen).toStrictEqual([200, 503, 503, 503, 503, 200, 200])
        })),
    TIMEOUT
  )
})
