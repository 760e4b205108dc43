import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import type { Sandbox } from "../src/index.js"
import { Fault } from "../src/index.js"
import { call, eventually, json, send, TIMEOUT, withSandbox } from "./helpers.js"

const page = { list_offset: "0", list_count: "5" }

/** The server still answers normally after a fault. */
const stillServes = (sandbox: Sandbox.Service) =>
  Effect.gen(function*() {
    const reply = yield* call(sandbox.baseUrl, "/partner/list", page)
    expect(reply.status).toBe(200)
    expect(json(reply).data).toHaveLength(5)
  })

describe("Fault", () => {
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
          // The cut comes after the partial body is flushed, so fetch sees the headers and then fails on the body.
          const response = yield* Effect.promise(() =>
            fetch(`${sandbox.baseUrl}/partner/list?list_offset=0&list_count=50`, {
              headers: { "X-API-KEY": sandbox.apiKey }
            })
          )
          expect(response.status).toBe(200)
          expect(Number(response.headers.get("content-length"))).toBeGreaterThan(1000)
          expect(response.headers.get("x-ratelimit-remaining")).toBe("99")
          const body = yield* Effect.either(Effect.tryPromise(() => response.text()))
          expect(Either.isLeft(body)).toBe(true)
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
          const result = yield* Effect.either(
            send(sandbox.baseUrl, "/partner/list", page, { signal: AbortSignal.timeout(300) })
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
      let pending: Promise<unknown> | undefined
      const started = performance.now()
      yield* withSandbox({}, (sandbox) =>
        Effect.gen(function*() {
          yield* sandbox.inject(Fault.Fault.Hang())
          pending = fetch(`${sandbox.baseUrl}/partner/list?list_offset=0&list_count=1`, {
            headers: { "X-API-KEY": sandbox.apiKey },
            signal: AbortSignal.timeout(8000)
          })
          yield* eventually(sandbox.stats, (stats) => stats.inFlight === 1)
        }))
      const outcome = yield* Effect.either(Effect.tryPromise(() => pending!))
      expect(Either.isLeft(outcome)).toBe(true)
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
})
