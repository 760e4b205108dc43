import { describe, expect, it } from "@effect/vitest"
import { RateLimit } from "../src/index.js"

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

  it("resolves defaults: the contract's 100 per 30 seconds", () => {
    expect(RateLimit.resolve(undefined)).toStrictEqual(RateLimit.defaults)
    expect(RateLimit.resolve({ limit: 5, window: "1 second", resetUnit: "seconds", headers: false })).toStrictEqual({
      limit: 5,
      windowMillis: 1000,
      resetUnit: "seconds",
      headers: false
    })
  })
})
