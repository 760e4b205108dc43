import { describe, expect, it } from "@effect/vitest"
import * as ServerLimit from "../src/internal/serverLimit.js"

describe("ServerLimit.parse", () => {
  const now = 1_700_000_000_000
  const max = 60_000

  it("accepts epoch seconds, epoch milliseconds and seconds from now", () => {
    expect(ServerLimit.parse({ "x-ratelimit-reset": String(now / 1000 + 12) }, now, max).resetAt).toBe(
      now + 12_000
    )
    expect(ServerLimit.parse({ "x-ratelimit-reset": String(now + 1_500) }, now, max).resetAt).toBe(
      now + 1_500
    )
    expect(ServerLimit.parse({ "x-ratelimit-reset": "7" }, now, max).resetAt).toBe(now + 7_000)
  })

  it("caps each wait, never goes back in time, and ignores garbage", () => {
    expect(ServerLimit.parse({ "x-ratelimit-reset": String(now / 1000 + 3600) }, now, max).resetAt).toBe(
      now + max
    )
    expect(ServerLimit.parse({ "x-ratelimit-reset": String(now / 1000 - 5) }, now, max).resetAt).toBe(now)
    const garbage = ServerLimit.parse(
      { "x-ratelimit-reset": "soon", "x-ratelimit-remaining": "", "x-ratelimit-limit": "100" },
      now,
      max
    )
    expect(garbage).toEqual({ limit: 100, remaining: undefined, resetAt: undefined })
  })
})
