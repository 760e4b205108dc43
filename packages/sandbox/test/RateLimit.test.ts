import { describe, expect, it } from "@effect/vitest"
import type { Duration } from "effect"
import { Effect, TestClock } from "effect"
import { Fault, RateLimit } from "../src/index.js"
import { call, json, TIMEOUT, transports, withSandboxOver } from "./helpers.js"

describe("RateLimit", () => {
  it("allows a request iff fewer than limit were allowed within (t - window, t]", () => {
    const log = RateLimit.makeSlidingWindowLog(3, 1000)
    expect(log.check("k", 0).remaining).toBe(2)
    expect(log.check("k", 100).remaining).toBe(1)
    expect(log.check("k", 200)).toStrictEqual({ allowed: true, limit: 3, remaining: 0, resetAtMillis: 1000 })
    expect(log.check("k", 999)).toStrictEqual({ allowed: false, limit: 3, remaining: 0, resetAtMillis: 1000 })
    // The request at 0 leaves the window exactly at 1000.
    expect(log.check("k", 1000).allowed).toBe(true)
    expect(log.check("k", 1050).allowed).toBe(false)
    expect(log.check("k", 1100).allowed).toBe(true)
  })

  it("does not count rejected requests, nor uncommitted checks", () => {
    const log = RateLimit.makeSlidingWindowLog(2, 1000)
    log.check("k", 0)
    log.check("k", 10)
    for (let t = 20; t < 1000; t += 10) expect(log.check("k", t).allowed).toBe(false)
    expect(log.check("k", 1000).allowed).toBe(true)
    expect(log.check("x", 0, false).remaining).toBe(1)
    expect(log.count("x", 0)).toBe(0)
  })

  it("keeps one window per key", () => {
    const log = RateLimit.makeSlidingWindowLog(1, 1000)
    expect(log.check("a", 0).allowed).toBe(true)
    expect(log.check("b", 0).allowed).toBe(true)
    expect(log.check("a", 1).allowed).toBe(false)
    log.reset()
    expect(log.check("a", 2).allowed).toBe(true)
  })

  it("formats the reset in each unit", () => {
    expect(RateLimit.resetValue("epoch-seconds", 1_700_000_000_001, 0)).toBe(1_700_000_001)
    expect(RateLimit.resetValue("epoch-millis", 1_700_000_000_001, 0)).toBe(1_700_000_000_001)
    expect(RateLimit.resetValue("seconds", 10_500, 9_000)).toBe(2)
    expect(RateLimit.resetValue("seconds", 10_000, 12_000)).toBe(0)
  })

  it("signedMillis: a duration that may be negative", () => {
    expect(RateLimit.signedMillis(-5000)).toBe(-5000)
    expect(RateLimit.signedMillis("-5 seconds")).toBe(-5000)
    expect(RateLimit.signedMillis("-1 hours")).toBe(-3_600_000)
    expect(RateLimit.signedMillis("2 seconds")).toBe(2000)
    expect(RateLimit.resolve({ resetSkew: "-1 minute" }).resetSkewMillis).toBe(-60_000)
    expect(RateLimit.headers({ allowed: true, limit: 5, remaining: 1, resetAtMillis: 10_000 }, "seconds", 0, -4000))
      .toStrictEqual({ "x-ratelimit-limit": "5", "x-ratelimit-remaining": "1", "x-ratelimit-reset": "6" })
    expect(RateLimit.headers({ allowed: true, limit: 5, remaining: 1, resetAtMillis: 10_000 }, "seconds", 0, -20_000))
      .toMatchObject({ "x-ratelimit-reset": "0" })
  })

  it("resolves defaults: the contract's 100 per 30 seconds", () => {
    expect(RateLimit.resolve(undefined)).toStrictEqual(RateLimit.defaults)
    expect(RateLimit.defaults.resetSkewMillis).toBe(0)
    expect(RateLimit.resolve({ limit: 5, window: "1 second", resetUnit: "seconds", headers: false })).toStrictEqual({
      limit: 5,
      windowMillis: 1000,
      resetUnit: "seconds",
      headers: false,
      resetSkewMillis: 0,
      retryAfter: false
    })
  })

  it("writes the reset in every unit, dates included, and Retry-After on a refusal when asked", () => {
    const now = Date.UTC(2026, 10, 26, 10, 0, 0, 250)
    const refused = { allowed: false, limit: 10, remaining: 0, resetAtMillis: now + 4_500 }
    expect(RateLimit.resetValue("iso", refused.resetAtMillis, now)).toBe("2026-11-26T10:00:05Z")
    expect(RateLimit.resetValue("http-date", refused.resetAtMillis, now)).toBe("Thu, 26 Nov 2026 10:00:05 GMT")
    expect(RateLimit.headers(refused, "seconds", now, 0, true)).toEqual({
      "x-ratelimit-limit": "10",
      "x-ratelimit-remaining": "0",
      "x-ratelimit-reset": "5",
      "retry-after": "5"
    })
    expect(RateLimit.headers(refused, "seconds", now)).not.toHaveProperty("retry-after")
    expect(RateLimit.headers({ ...refused, allowed: true, remaining: 3 }, "seconds", now, 0, true)).not
      .toHaveProperty("retry-after")
  })
})

describe.each(transports)("Sandbox: the rate limit over HTTP (%s)", (transport) => {
  const withSandbox = withSandboxOver(transport)

  it.live(
    "counts down X-RateLimit-Remaining and answers 429 past the limit, per key and endpoint",
    () =>
      withSandbox(
        { apiKeys: ["a", "b"], rateLimit: { limit: 5, window: "30 seconds" } },
        (sandbox) =>
          Effect.gen(function*() {
            const params = { list_offset: "0", list_count: "1" }
            const before = Date.now()
            for (let i = 0; i < 5; i++) {
              const reply = yield* call(sandbox.baseUrl, "/partner/list", params, { key: "a" })
              expect(reply.status).toBe(200)
              expect(reply.headers.get("x-ratelimit-limit")).toBe("5")
              expect(reply.headers.get("x-ratelimit-remaining")).toBe(String(4 - i))
              const reset = Number(reply.headers.get("x-ratelimit-reset"))
              // Epoch seconds, rounded up, of the first request plus the window.
              expect(reset).toBeGreaterThanOrEqual(Math.ceil((before + 30_000) / 1000))
              expect(reset).toBeLessThanOrEqual(Math.ceil((Date.now() + 30_000) / 1000))
            }
            const limited = yield* call(sandbox.baseUrl, "/partner/list", params, { key: "a" })
            expect(limited.status).toBe(429)
            expect(json(limited)).toStrictEqual({ result: { code: 0, message: "Too Many Requests" }, data: null })
            expect(limited.headers.get("x-ratelimit-remaining")).toBe("0")
            expect(limited.headers.get("x-ratelimit-reset")).not.toBeNull()
            // Another endpoint, another key, and an invalid key each have their own window.
            expect((yield* call(sandbox.baseUrl, "/partner/get", { id: "1" }, { key: "a" })).status).toBe(200)
            expect((yield* call(sandbox.baseUrl, "/partner/list", params, { key: "b" })).status).toBe(200)
            for (let i = 0; i < 5; i++) {
              const reply = yield* call(sandbox.baseUrl, "/partner/list", params, { key: "bad" })
              expect(json(reply).result.message).toBe("Unauthorized")
            }
            expect((yield* call(sandbox.baseUrl, "/partner/list", params, { key: "bad" })).status).toBe(429)
            const stats = yield* sandbox.stats
            expect(stats.tooManyRequests).toBe(2)
            expect(stats.maxObservedInWindow["/partner/list"]).toBe(6)
          })
      ),
    TIMEOUT
  )

  it.effect(
    "is a strict sliding window, driven by the Effect Clock",
    () =>
      withSandbox({ rateLimit: { limit: 3, window: "1 second" } }, (sandbox) =>
        Effect.gen(function*() {
          const params = { list_offset: "0", list_count: "1" }
          const status = Effect.map(call(sandbox.baseUrl, "/partner/list", params), (r) => r.status)
          expect(yield* status).toBe(200) // t = 0
          yield* TestClock.adjust("400 millis")
          expect(yield* status).toBe(200) // t = 400
          expect(yield* status).toBe(200) // t = 400
          const limited = yield* call(sandbox.baseUrl, "/partner/list", params)
          expect(limited.status).toBe(429)
          expect(limited.headers.get("x-ratelimit-reset")).toBe("1") // epoch seconds of 0 + 1000 ms
          yield* TestClock.adjust("599 millis")
          expect(yield* status).toBe(429) // t = 999: the request at 0 is still in (t - 1000, t]
          yield* TestClock.adjust("1 millis")
          const freed = yield* call(sandbox.baseUrl, "/partner/list", params) // t = 1000
          expect(freed.status).toBe(200)
          expect(freed.headers.get("x-ratelimit-remaining")).toBe("0")
          expect(freed.headers.get("x-ratelimit-reset")).toBe("2") // the oldest is now at 400: leaves at 1400
          expect(yield* status).toBe(429)
          yield* TestClock.adjust("400 millis")
          expect(yield* status).toBe(200) // t = 1400: both requests at 400 left
          expect(yield* status).toBe(200)
          expect(yield* status).toBe(429)
        })),
    TIMEOUT
  )

  it.effect("writes X-RateLimit-Reset in the configured unit", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(1_700_000_000_250)
      const reset = (resetUnit: "epoch-seconds" | "epoch-millis" | "seconds") =>
        withSandbox({ rateLimit: { limit: 2, window: "30 seconds", resetUnit } }, (sandbox) =>
          Effect.map(
            call(sandbox.baseUrl, "/partner/get", { id: "1" }),
            (reply) => reply.headers.get("x-ratelimit-reset")
          ))
      expect(yield* reset("epoch-seconds")).toBe("1700000031")
      expect(yield* reset("epoch-millis")).toBe("1700000030250")
      expect(yield* reset("seconds")).toBe("30")
    }), TIMEOUT)

  it.live("can leave out the headers, or the limit altogether", () =>
    Effect.gen(function*() {
      yield* withSandbox({ rateLimit: { limit: 1, headers: false } }, (sandbox) =>
        Effect.gen(function*() {
          const first = yield* call(sandbox.baseUrl, "/partner/get", { id: "1" })
          expect(first.headers.get("x-ratelimit-remaining")).toBeNull()
          const second = yield* call(sandbox.baseUrl, "/partner/get", { id: "1" })
          expect(second.status).toBe(429)
          expect(second.headers.get("x-ratelimit-reset")).toBeNull()
        }))
      yield* withSandbox({ rateLimit: false }, (sandbox) =>
        Effect.gen(function*() {
          for (let i = 0; i < 150; i++) {
            const reply = yield* call(sandbox.baseUrl, "/partner/get", { id: "1" })
            expect(reply.status).toBe(200)
            expect(reply.headers.get("x-ratelimit-limit")).toBeNull()
          }
          expect((yield* sandbox.stats).maxObservedInWindow["/partner/get"]).toBe(150)
        }))
    }), TIMEOUT)

  it.effect(
    "resetSkew shifts X-RateLimit-Reset on answers, the window's 429s and the TooManyRequests fault alike",
    () =>
      Effect.gen(function*() {
        const now = 1_700_000_000_000
        yield* TestClock.setTime(now)
        const resets = (resetSkew: Duration.DurationInput) =>
          withSandbox({ rateLimit: { limit: 1, window: "30 seconds", resetSkew } }, (sandbox) =>
            Effect.gen(function*() {
              const params = { id: "1" }
              const allowed = yield* call(sandbox.baseUrl, "/partner/get", params)
              const limited = yield* call(sandbox.baseUrl, "/partner/get", params)
              yield* sandbox.inject(Fault.Fault.TooManyRequests({ resetAfter: "2 seconds" }))
              const faulted = yield* call(sandbox.baseUrl, "/partner/list", { list_offset: "0", list_count: "1" })
              expect([allowed.status, limited.status, faulted.status]).toStrictEqual([200, 429, 429])
              // The window itself is not moved: the request after it is let through on time.
              yield* TestClock.adjust("30 seconds")
              const freed = yield* call(sandbox.baseUrl, "/partner/get", params)
              expect(freed.status).toBe(200)
              return [allowed, limited, faulted].map((reply) => Number(reply.headers.get("x-ratelimit-reset")))
            }))
        const epoch = (millis: number) => Math.ceil(millis / 1000)
        // A slow clock: an hour behind, the reset is long past when it is sent.
        expect(yield* resets("-1 hour")).toStrictEqual([
          epoch(now + 30_000 - 3_600_000),
          epoch(now + 30_000 - 3_600_000),
          epoch(now + 2_000 - 3_600_000)
        ])
      }),
    TIMEOUT
  )

  it.effect("an absurd reset: an hour too late", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(1_700_000_000_000)
      yield* withSandbox(
        { rateLimit: { limit: 1, window: "30 seconds", resetUnit: "seconds", resetSkew: "1 hour" } },
        (sandbox) =>
          Effect.gen(function*() {
            const allowed = yield* call(sandbox.baseUrl, "/partner/get", { id: "1" })
            const limited = yield* call(sandbox.baseUrl, "/partner/get", { id: "1" })
            expect(allowed.headers.get("x-ratelimit-reset")).toBe("3630")
            expect([limited.status, limited.headers.get("x-ratelimit-reset")]).toStrictEqual([429, "3630"])
          })
      )
    }), TIMEOUT)
})
