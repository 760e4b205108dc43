import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import * as LimitHeaders from "../src/internal/limitHeaders.js"
import * as Learning from "../src/internal/limitLearning.js"
import * as ServerLimit from "../src/ServerLimit.js"

describe("LimitHeaders.parse", () => {
  const now = 1_700_000_000_000
  const max = 60_000
  const reset = (value: string) => LimitHeaders.parse({ "x-ratelimit-reset": value }, now, max).reset

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
    expect(LimitHeaders.describeReset(reset(String(now / 1000 + 3600))!, now)).toBe(
      `X-RateLimit-Reset: ${now / 1000 + 3600} (in 3600 s, not waited for)`
    )
  })

  it("ignores garbage", () => {
    const garbage = LimitHeaders.parse(
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
    expect(LimitHeaders.parseDate("Sunday, 06-Nov-94 08:49:37 GMT")).toBe(Date.UTC(1994, 10, 6, 8, 49, 37))
    expect(LimitHeaders.parseDate("Sun Nov  6 08:49:37 1994")).toBe(Date.parse("Sun Nov  6 08:49:37 1994"))
    // An ISO date an hour ahead: read, and kept from being waited for like any other.
    expect(reset(new Date(now + 3_600_000).toISOString())).toMatchObject({ usable: false })
    // Neither numbers nor dates: garbage, a date without a time (no end of a window), words.
    for (const text of ["soon", "2026-11-26", "5 x", "tomorrow 10:00", "Thursday"]) {
      expect(LimitHeaders.parse({ "x-ratelimit-reset": text }, now, max)).toMatchObject({
        reset: undefined,
        unreadableReset: text
      })
    }
  })
})

describe("LimitHeaders.retryAfter", () => {
  const now = Date.UTC(2026, 10, 23, 12, 0, 0)
  it("reads seconds and HTTP dates, nothing else", () => {
    expect(LimitHeaders.retryAfter({ "retry-after": "5" }, now)).toBe(5_000)
    expect(LimitHeaders.retryAfter({ "retry-after": new Date(now + 7_000).toUTCString() }, now)).toBe(7_000)
    expect(LimitHeaders.retryAfter({ "retry-after": new Date(now - 7_000).toUTCString() }, now)).toBe(0)
    expect(LimitHeaders.retryAfter({ "retry-after": "later" }, now)).toBeUndefined()
    expect(LimitHeaders.retryAfter({}, now)).toBeUndefined()
  })
})

describe("ServerLimit.learn", () => {
  const now = 1_700_000_000_000
  const configured = { limit: 100, windowMillis: 30_000 }
  const heard = (
    serverLimit: number | undefined,
    options: {
      readonly tooManyRequests?: boolean
      readonly startedMillis?: number
      readonly reset?: number
      readonly remaining?: number
    } = {}
  ): ServerLimit.Heard => ({
    serverLimit,
    tooManyRequests: options.tooManyRequests ?? false,
    startedMillis: options.startedMillis ?? now - 10,
    ...(options.remaining === undefined ? {} : { remaining: options.remaining }),
    ...(options.reset === undefined ? {} : { reset: { at: options.reset, raw: String(options.reset) } })
  })

  it("takes X-RateLimit-Limit with the window its reset tells, and forgets it when the limiter's own keeps it", () => {
    // 20 per 3 s: the reset, in epoch ms, 3 s after the start of a request the server counted alone.
    const learned = ServerLimit.learn(configured, undefined, heard(20, { reset: now + 2_990, remaining: 19 }), now)
    expect(learned).toEqual({
      limit: 20,
      windowMillis: 3_000,
      sinceMillis: now,
      ttlMillis: Learning.headerLimitTtlMillis,
      from: "header",
      sampleMillis: 3_000,
      freshMillis: 3_000,
      lowerMillis: 2_989
    })
    // Every answer repeats it: nothing to change, until half its time has gone.
    expect(ServerLimit.learn(configured, learned!, heard(20, { reset: now + 1_000, remaining: 3 }), now + 5))
      .toBeUndefined()
    const half = now + Learning.headerLimitTtlMillis / 2
    expect(ServerLimit.learn(configured, learned!, heard(20), half)).toEqual({ ...learned, sinceMillis: half })
    // In whole seconds, rounded up: a request counted alone tells the window to within a second of rounding, and
    // another, whose reset came sooner after its start, tells it closer.
    const second = (at: number) => ({ at, raw: String(at / 1000) })
    const rounded = ServerLimit.learn(configured, undefined, {
      ...heard(20, { remaining: 19 }),
      reset: second(now + 4_000)
    }, now)
    expect(rounded).toMatchObject({ windowMillis: 4_010, freshMillis: 4_010, lowerMillis: 3_000 })
    const closer = ServerLimit.learn(
      configured,
      rounded!,
      { ...heard(20, { remaining: 19, startedMillis: now + 900 }), reset: second(now + 4_000) },
      now + 905
    )
    expect(closer).toMatchObject({ windowMillis: 3_100, freshMillis: 3_100 })
    // A reset further from its answer than the window read (less its rounding): the window is longer than that.
    expect(
      ServerLimit.learn(
        configured,
        closer!,
        { ...heard(20, { remaining: 10, startedMillis: now + 990 }), reset: second(now + 6_000) },
        now + 1_000
      )
    ).toMatchObject({ windowMillis: 5_010, lowerMillis: 4_000 })
    // A 429 to a request admitted under it: longer too, taken as the longest seen until a reset tells more.
    expect(
      ServerLimit.learn(configured, learned!, heard(20, { tooManyRequests: true, startedMillis: now + 1 }), now + 5)
    ).toMatchObject({ windowMillis: 3_001, lowerMillis: 3_001 })
    // 100 per 3 s, or 300 per a minute: the limiter's 100 per 30 s keeps it already.
    expect(ServerLimit.learn(configured, learned!, heard(100, { reset: now + 2_990 }), now + 5)).toBeNull()
    expect(ServerLimit.learn(configured, undefined, heard(300, { reset: now + 59_990 }), now)).toBeUndefined()
    // 100 per a minute is not: the limiter could start 200 in one.
    expect(ServerLimit.learn(configured, undefined, heard(100, { reset: now + 59_990 }), now)).toMatchObject({
      limit: 100,
      windowMillis: 60_000
    })
    // Without a usable reset the window is taken as the limiter's.
    expect(ServerLimit.learn(configured, undefined, heard(10), now)).toMatchObject({ limit: 10, windowMillis: 30_000 })
    // Not a limit: 0, a fraction, negative.
    for (const limit of [0, 2.5, -3]) {
      expect(ServerLimit.learn(configured, undefined, heard(limit), now)).toBeUndefined()
    }
  })

  it("a reset in whole seconds: the limiter's own window when the rounding allows it, else the longer reading", () => {
    // Epoch seconds, rounded up to the next second: 3.69 s after the start for a 3 s window.
    const answer = {
      ...heard(20, { startedMillis: now + 310 }),
      reset: { at: now + 4_000, raw: String(now / 1000 + 4) }
    }
    const sameWindow = { limit: 100, windowMillis: 3_000 }
    expect(ServerLimit.learn(sameWindow, undefined, answer, now + 320)).toMatchObject({
      limit: 20,
      windowMillis: 3_000
    })
    expect(ServerLimit.learn(configured, undefined, answer, now + 320)).toMatchObject({
      limit: 20,
      windowMillis: 3_690
    })
    // In epoch milliseconds there is no rounding to allow for.
    const exact = { ...answer, reset: { at: now + 3_690, raw: String(now + 3_690) } }
    expect(ServerLimit.learn(sameWindow, undefined, exact, now + 320)).toMatchObject({ windowMillis: 3_380 })
  })

  it("property: from answers of a sliding-window server, the window read is never shorter than the server's", () =>
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 99 }),
        fc.integer({ min: 200, max: 120_000 }),
        fc.array(fc.record({ start: fc.integer({ min: 0, max: 600_000 }), counted: fc.integer({ min: 0, max: 98 }) }), {
          minLength: 1,
          maxLength: 20
        }),
        fc.constantFrom(...(["epoch-millis", "epoch-seconds", "seconds"] as const)),
        (serverLimit, serverWindow, answers, unit) => {
          let learned: ServerLimit.Learned | undefined
          for (const { counted, start } of answers.sort((a, b) => a.start - b.start)) {
            const at = now + start
            // The oldest request the server counts arrived `counted` steps before this one: its reset is a window after.
            const alone = Math.min(counted, serverLimit - 1)
            const oldest = at - alone * 7
            const exact = oldest + serverWindow
            const [resetAt, raw] = unit === "epoch-millis"
              ? [exact, String(exact)]
              : unit === "epoch-seconds"
              ? [Math.ceil(exact / 1000) * 1000, String(Math.ceil(exact / 1000))]
              : [at + Math.ceil((exact - at) / 1000) * 1000, String(Math.ceil((exact - at) / 1000))]
            const next = ServerLimit.learn(
              configured,
              learned,
              {
                serverLimit,
                tooManyRequests: false,
                startedMillis: at - 3,
                remaining: serverLimit - 1 - alone,
                reset: { at: resetAt, raw }
              },
              at
            )
            if (next !== undefined) learned = next ?? undefined
          }
          if (learned === undefined) {
            // Forgotten or never kept: only when the limiter's own keeps the server's limit.
            expect(Learning.implied({ limit: serverLimit, windowMillis: serverWindow }, configured)).toBe(true)
          } else if (answers.some((answer) => answer.counted === 0)) {
            // A request counted alone tells the whole window, to within the reset's rounding: never shorter than the
            // server's (unless it is the limiter's own, which that rounding allowed).
            if (learned.windowMillis === configured.windowMillis) {
              expect(serverWindow).toBeLessThanOrEqual(configured.windowMillis + 1_000 + 600)
            } else {
              expect(learned.windowMillis).toBeGreaterThanOrEqual(serverWindow)
              expect(learned.windowMillis).toBeLessThanOrEqual(serverWindow + (unit === "epoch-millis" ? 3 : 1_003))
            }
          }
        }
      )
    ))

  it("a 429 that does not say the limit: a probe, one request at a time, until the server accepts again", () => {
    const first = ServerLimit.learn(configured, undefined, {
      ...heard(undefined, { tooManyRequests: true }),
      counted: 24
    }, now)
    expect(first).toEqual({
      limit: 1,
      windowMillis: 300,
      sinceMillis: now,
      ttlMillis: Learning.guessedLimitWindows * 30_000,
      from: "refusals",
      refusedMillis: now - 10,
      ceiling: 24
    })
    // Refused again while probing, or accepted for a request sent before the probe: nothing new.
    expect(
      ServerLimit.learn(
        configured,
        first!,
        heard(undefined, { tooManyRequests: true, startedMillis: now + 500 }),
        now + 510
      )
    )
      .toBeUndefined()
    expect(ServerLimit.learn(configured, first!, heard(undefined, { startedMillis: now - 5 }), now + 20))
      .toBeUndefined()
    // Accepted 3.2 s after the refused request: 12 (half the 24 it refused more of) per 3.2 s.
    const settled = ServerLimit.learn(configured, first!, heard(undefined, { startedMillis: now + 3_190 }), now + 3_200)
    expect(settled).toEqual({
      limit: 12,
      windowMillis: 3_200,
      sinceMillis: now + 3_200,
      ttlMillis: Learning.guessedLimitWindows * 30_000,
      from: "refusals",
      ceiling: 24
    })
    // Refused again under it: halved, once for the requests admitted under the same limit.
    const at = now + 3_200
    const halved = ServerLimit.learn(
      configured,
      settled!,
      heard(undefined, { tooManyRequests: true, startedMillis: at + 1 }),
      at + 10
    )
    expect(halved).toMatchObject({ limit: 6, windowMillis: 3_200, sinceMillis: at + 10, ceiling: 12 })
    expect(
      ServerLimit.learn(
        configured,
        halved!,
        heard(undefined, { tooManyRequests: true, startedMillis: at + 5 }),
        at + 20
      )
    )
      .toBeUndefined()
    // A window accepted: it climbs, by halves back toward where it was refused, then by growing steps.
    expect(ServerLimit.learn(configured, halved!, heard(undefined, { startedMillis: at + 1_000 }), at + 1_001))
      .toBeUndefined()
    const climbed = ServerLimit.learn(configured, halved!, heard(undefined, { startedMillis: at + 3_210 }), at + 3_300)
    expect(climbed).toMatchObject({ limit: 9, sinceMillis: at + 3_300 })
    // At 1, a refusal doubles the window instead.
    const one = { ...halved!, limit: 1 }
    expect(
      ServerLimit.learn(configured, one, heard(undefined, { tooManyRequests: true, startedMillis: at + 11 }), at + 20)
    )
      .toMatchObject({ limit: 1, windowMillis: 6_400 })
    // A 429 that says the limit is the limit.
    expect(ServerLimit.learn(configured, first!, heard(10, { tooManyRequests: true }), now)).toMatchObject({
      limit: 10,
      from: "header"
    })
  })

  it("property: climbing after 429s reaches the limiter's own limit, and then forgets", () =>
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 99 }), fc.integer({ min: 1, max: 100 }), (limit, ceiling) => {
        let learned: ServerLimit.Learned | null = {
          limit,
          windowMillis: 3_000,
          sinceMillis: now,
          ttlMillis: 1e9,
          from: "refusals",
          ceiling
        }
        let at = now
        let windows = 0
        while (learned !== null) {
          at += 3_000
          windows++
          const next = ServerLimit.learn(configured, learned, heard(undefined, { startedMillis: at }), at)
          if (next !== undefined) learned = next
        }
        expect(learned).toBeNull()
        // By halves up to the ceiling (waiting a few windows just under it), then steps that double: a few dozen
        // windows at most from anywhere.
        expect(windows).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(101)) + 2 + Learning.climbPatience)
      })
    ))
})

describe("ServerLimit.pausesOnEmpty", () => {
  const now = 1_700_000_000_000
  const limit = (remaining: number, serverLimit?: number) =>
    LimitHeaders.parse(
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
