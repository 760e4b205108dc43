import { describe, expect, it } from "@effect/vitest"
import * as ServerLimit from "../src/internal/serverLimit.js"

describe("ServerLimit.parse", () => {
  const now = 1_700_000_000_000
  const max = 60_000
  const reset = (value: string) => ServerLimit.parse({ "x-ratelimit-reset": value }, now, max).reset

  it("accepts epoch seconds, epoch milliseconds and seconds from now", () => {
    expect(reset(String(now / 1000 + 12))).toEqual({ raw: String(now / 1000 + 12), at: now + 12_000, usable: true })
    expect(reset(String(now + 1_500))).toMatchObject({ at: now + 1_500, usable: true })
    expect(reset("7")).toMatchObject({ at: now + 7_000, usable: true })
  })

  it("keeps a reset in the past or beyond the longest wait as the server said it, but not to wait for", () => {
    // A server whose clock is behind, or one an hour ahead: quoted in messages, never waited for (nor hammered).
    expect(reset(String(now / 1000 + 3600))).toEqual({
      raw: String(now / 1000 + 3600),
      at: now + 3_600_000,
      usable: false
    })
    expect(reset(String(now / 1000 - 5))).toMatchObject({ at: now - 5_000, usable: false })
    // Epoch seconds rounded up by the server: a reset within the current second is still usable.
    expect(reset(String(Math.ceil(now / 1000)))).toMatchObject({ usable: true })
    expect(ServerLimit.describeReset(reset(String(now / 1000 + 3600))!, now)).toBe(
      `X-RateLimit-Reset: ${now / 1000 + 3600} (in 3600 s, not waited for)`
    )
  })

  it("ignores garbage", () => {
    const garbage = ServerLimit.parse(
      { "x-ratelimit-reset": "soon", "x-ratelimit-remaining": "", "x-ratelimit-limit": "100" },
      now,
      max
    )
    expect(garbage).toEqual({ limit: 100, remaining: undefined, reset: undefined })
  })
})

describe("ServerLimit.retryAfter", () => {
  const now = Date.UTC(2026, 10, 23, 12, 0, 0)
  it("reads seconds and HTTP dates, nothing else", () => {
    expect(ServerLimit.retryAfter({ "retry-after": "5" }, now)).toBe(5_000)
    expect(ServerLimit.retryAfter({ "retry-after": new Date(now + 7_000).toUTCString() }, now)).toBe(7_000)
    expect(ServerLimit.retryAfter({ "retry-after": new Date(now - 7_000).toUTCString() }, now)).toBe(0)
    expect(ServerLimit.retryAfter({ "retry-after": "later" }, now)).toBeUndefined()
    expect(ServerLimit.retryAfter({}, now)).toBeUndefined()
  })
})

describe("ServerLimit.pausesOnEmpty", () => {
  const now = 1_700_000_000_000
  const limit = (remaining: number, serverLimit?: number) =>
    ServerLimit.parse(
      {
        "x-ratelimit-remaining": String(remaining),
        "x-ratelimit-reset": "5",
        ...(serverLimit === undefined ? {} : { "x-ratelimit-limit": String(serverLimit) })
      },
      now,
      60_000
    )
  it("pauses only when the server counts more than the limiter started, or has a lower limit", () => {
    expect(ServerLimit.pausesOnEmpty(limit(0, 100), { limit: 100, inUse: 100 })).toBe(false)
    expect(ServerLimit.pausesOnEmpty(limit(0, 100), { limit: 100, inUse: 40 })).toBe(true)
    expect(ServerLimit.pausesOnEmpty(limit(0, 50), { limit: 100, inUse: 50 })).toBe(true)
    expect(ServerLimit.pausesOnEmpty(limit(3, 100), { limit: 100, inUse: 0 })).toBe(false)
  })
})
