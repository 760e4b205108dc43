import { describe, expect, it } from "@effect/vitest"
import * as ServerLimit from "../src/ServerLimit.js"

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
    expect(garbage).toEqual({ limit: 100, remaining: undefined, reset: undefined, unreadableReset: "soon" })
  })

  it("reads a reset written as an ISO 8601 date-time or an HTTP date", () => {
    const at = now + 12_000
    const iso = new Date(at).toISOString()
    expect(reset(iso)).toEqual({ raw: iso, at, usable: true })
    // Without a zone a header's time is UTC, not the machine's local time; a space for the T, an offset, no fraction.
    expect(reset(iso.replace("Z", ""))).toMatchObject({ at })
    expect(reset(iso.replace("T", " "))).toMatchObject({ at })
    expect(reset(new Date(at + 3_600_000).toISOString().replace("Z", "+01:00"))).toMatchObject({ at })
    expect(reset(new Date(at).toUTCString())).toMatchObject({ at, usable: true })
    // RFC 850 and asctime, the obsolete forms RFC 9110 still asks recipients to read.
    expect(ServerLimit.parseDate("Sunday, 06-Nov-94 08:49:37 GMT")).toBe(Date.UTC(1994, 10, 6, 8, 49, 37))
    expect(ServerLimit.parseDate("Sun Nov  6 08:49:37 1994")).toBe(Date.parse("Sun Nov  6 08:49:37 1994"))
    // An ISO date an hour ahead: read, and kept from being waited for like any other.
    expect(reset(new Date(now + 3_600_000).toISOString())).toMatchObject({ usable: false })
    // Neither numbers nor dates: garbage, a date without a time (no end of a window), words.
    for (const text of ["soon", "2026-11-26", "5 x", "tomorrow 10:00", "Thursday"]) {
      expect(ServerLimit.parse({ "x-ratelimit-reset": text }, now, max)).toMatchObject({
        reset: undefined,
        unreadableReset: text
      })
    }
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

describe("ServerLimit.learn", () => {
  const now = 1_700_000_000_000
  const window = 1_000
  const heard = (serverLimit: number | undefined, tooManyRequests = false, startedMillis = now - 10) => ({
    serverLimit,
    tooManyRequests,
    startedMillis
  })

  it("takes a lower X-RateLimit-Limit as the limit, and forgets it when the server says ours again", () => {
    const learned = ServerLimit.learn(100, undefined, heard(10), now, window)
    expect(learned).toEqual({ limit: 10, sinceMillis: now, ttlMillis: ServerLimit.headerLimitTtlMillis })
    // Every answer repeats it: nothing to change, until half its time has gone.
    expect(ServerLimit.learn(100, learned!, heard(10), now + 5, window)).toBeUndefined()
    const half = now + ServerLimit.headerLimitTtlMillis / 2
    expect(ServerLimit.learn(100, learned!, heard(10), half, window)).toEqual({ ...learned, sinceMillis: half })
    expect(ServerLimit.learn(100, learned!, heard(100), now + 5, window)).toBeNull()
    expect(ServerLimit.learn(100, undefined, heard(100), now, window)).toBeUndefined()
    expect(ServerLimit.learn(100, undefined, heard(500), now, window)).toBeUndefined()
    // Not a limit: 0, a fraction, negative.
    for (const limit of [0, 2.5, -3]) {
      expect(ServerLimit.learn(100, undefined, heard(limit), now, window)).toBeUndefined()
    }
  })

  it("notes a first 429 that does not say the limit, then halves at each repeat, once per limit, down to 1", () => {
    // The first is noted, the limit kept: one may be a passing storm.
    const noted = ServerLimit.learn(100, undefined, heard(undefined, true), now, window)
    expect(noted).toEqual({ limit: 100, sinceMillis: now, ttlMillis: 10 * window })
    // Another to a request that started before it: the same burst, not a repeat.
    expect(ServerLimit.learn(100, noted!, heard(undefined, true, now - 1), now + 5, window)).toBeUndefined()
    const first = ServerLimit.learn(100, noted!, heard(undefined, true, now + 1), now + 10, window)
    expect(first).toEqual({ limit: 50, sinceMillis: now + 10, ttlMillis: ServerLimit.guessedLimitWindows * window })
    expect(ServerLimit.learn(100, first!, heard(undefined, true, now + 9), now + 15, window)).toBeUndefined()
    expect(ServerLimit.learn(100, first!, heard(undefined, true, now + 12), now + 500, window)).toMatchObject({
      limit: 25
    })
    expect(
      ServerLimit.learn(
        100,
        { limit: 1, sinceMillis: now, ttlMillis: 1 },
        heard(undefined, true, now + 1),
        now + 2,
        window
      )
    ).toBeUndefined()
    // A 429 that says the limit is the limit; one that says ours is another client on the key: the pause handles it.
    expect(ServerLimit.learn(100, undefined, heard(10, true), now, window)).toMatchObject({ limit: 10 })
    expect(ServerLimit.learn(100, undefined, heard(100, true), now, window)).toBeUndefined()
    // An answer that is not a 429 and says no limit tells nothing.
    expect(ServerLimit.learn(100, first!, heard(undefined), now + 5, window)).toBeUndefined()
  })

  it("property: a server limit of L settles to L from any start; 429s alone reach any L in a few halvings", () => {
    for (const serverLimit of [1, 3, 10, 37, 99]) {
      expect(ServerLimit.learn(100, undefined, heard(serverLimit), now, window)?.limit).toBe(serverLimit)
      let learned: ServerLimit.Learned | undefined
      let halvings = 0
      let at = now
      while ((learned?.limit ?? 100) > serverLimit) {
        at += window
        learned = ServerLimit.learn(100, learned, heard(undefined, true, at - 1), at, window) ?? learned
        halvings++
      }
      // The first 429 is only noted.
      expect(halvings).toBeLessThanOrEqual(1 + Math.ceil(Math.log2(100 / serverLimit)))
    }
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
