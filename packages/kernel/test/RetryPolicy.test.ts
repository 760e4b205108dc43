import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import * as ErrorText from "../src/ErrorText.js"
import * as LimitHeaders from "../src/internal/limitHeaders.js"
import * as Policy from "../src/RetryPolicy.js"

// The decisions of a call after each attempt, on their own: plain data in, a verdict out.

const now = 1_700_000_000_000
const policy: Policy.Policy = {
  idempotent: true,
  retries: 8,
  retryBudgetMillis: 60_000,
  retryBaseDelayMillis: 200,
  maxRetryDelayMillis: 10_000,
  rateLimitBudgetMillis: 300_000,
  windowMillis: 30_000,
  limit: 100
}
const fresh: Policy.History = { startMillis: now, failures: 0, busy: 0 }
const answer = (status: number, headers: Record<string, string> = {}, bodyOk = true): Policy.Outcome => ({
  _tag: "Answer",
  status,
  limit: LimitHeaders.parse(headers, now, 60_000),
  retryAfterMillis: LimitHeaders.retryAfter(headers, now),
  bodyOk
})

describe("Policy.decide", () => {
  it("takes a 2xx with the envelope, and retries a GET whose 2xx body is broken; never a POST", () => {
    expect(Policy.decide(policy, fresh, answer(200), now, 1)).toEqual({ _tag: "Accept" })
    expect(Policy.decide(policy, fresh, answer(200, {}, false), now, 1)).toEqual({ _tag: "Retry", afterMillis: 200 })
    expect(Policy.decide({ ...policy, idempotent: false }, fresh, answer(200, {}, false), now, 1)).toEqual({
      _tag: "GiveUp",
      why: "not-idempotent"
    })
  })

  it("honours Retry-After on a 503, and gives up when it would end past the retry budget", () => {
    expect(Policy.decide(policy, fresh, answer(503, { "retry-after": "5" }), now, 1)).toEqual({
      _tag: "Retry",
      afterMillis: 5_000
    })
    // The server's own wait past the budget: given up at once, saying when it asked to come back.
    expect(Policy.decide(policy, fresh, answer(503, { "retry-after": "61" }), now, 1)).toEqual({
      _tag: "GiveUp",
      why: "retry-budget",
      untilMillis: now + 61_000
    })
    // Our own backoff past the budget: no wait of the server's to tell.
    expect(Policy.decide(policy, { ...fresh, startMillis: now - 59_900 }, answer(503), now, 1)).toEqual({
      _tag: "GiveUp",
      why: "retry-budget"
    })
    expect(Policy.decide(policy, { ...fresh, failures: 8 }, answer(503), now, 1)).toEqual({
      _tag: "GiveUp",
      why: "retries"
    })
    expect(Policy.decide(policy, fresh, answer(404), now, 1)).toEqual({ _tag: "GiveUp", why: "final" })
  })

  it("after a 429 waits for a usable reset; a reset in the past or an hour ahead is unknown: backs off, never hammers", () => {
    expect(Policy.decide(policy, fresh, answer(429, { "x-ratelimit-reset": "3" }), now, 1)).toEqual({
      _tag: "Pause",
      untilMillis: now + 3_000
    })
    // A reset in the past (epoch seconds behind, or a negative number of seconds from now) or an hour ahead: the
    // server's window is unknown, so a whole window (jittered), from the first 429 on: every call meeting one starts
    // over, and a share of the window each sent hundreds of 429s.
    for (const reset of [String(now / 1000 - 60), String(now / 1000 + 3600), "-3590"]) {
      const first = Policy.decide(policy, fresh, answer(429, { "x-ratelimit-reset": reset }), now, 1)
      expect(first).toEqual({ _tag: "Pause", untilMillis: now + 30_000 })
      const jittered = Policy.decide(policy, fresh, answer(429, { "x-ratelimit-reset": reset }), now, 0.5)
      expect(jittered).toEqual({ _tag: "Pause", untilMillis: now + 15_000 })
    }
    // Without any reset: one request's share of the window (300 ms), doubling with each 429, up to a window.
    expect(Policy.decide(policy, fresh, answer(429, {}), now, 1)).toEqual({ _tag: "Pause", untilMillis: now + 300 })
    expect(Policy.decide(policy, { ...fresh, busy: 10 }, answer(429, {}), now, 1)).toEqual({
      _tag: "Pause",
      untilMillis: now + 30_000
    })
    // A POST is tried again after a 429 too: the server refused before acting.
    expect(Policy.decide({ ...policy, idempotent: false }, fresh, answer(429, { "x-ratelimit-reset": "3" }), now, 1))
      .toMatchObject({ _tag: "Pause" })
  })

  it("believes Retry-After on a 429 as on a 503: waited for within the budget, given up at once past it", () => {
    // Seconds or an HTTP date; the later of it and a usable reset.
    expect(Policy.decide(policy, fresh, answer(429, { "retry-after": "20" }), now, 1)).toEqual({
      _tag: "Pause",
      untilMillis: now + 20_000
    })
    expect(
      Policy.decide(policy, fresh, answer(429, { "retry-after": new Date(now + 40_000).toUTCString() }), now, 1)
    ).toEqual({ _tag: "Pause", untilMillis: now + 40_000 })
    expect(
      Policy.decide(policy, fresh, answer(429, { "retry-after": "2", "x-ratelimit-reset": "9" }), now, 1)
    ).toEqual({ _tag: "Pause", untilMillis: now + 9_000 })
    // Retry-After: 0 still leaves one request's share of the window.
    expect(Policy.decide(policy, fresh, answer(429, { "retry-after": "0" }), now, 1)).toEqual({
      _tag: "Pause",
      untilMillis: now + 300
    })
    // An hour: past the five minutes' budget, so the call fails now instead of knocking for five minutes.
    expect(Policy.decide(policy, fresh, answer(429, { "retry-after": "3600" }), now, 1)).toEqual({
      _tag: "GiveUp",
      why: "rate-limit-budget",
      untilMillis: now + 3_600_000,
      asked: true
    })
  })

  it("past the budget after 429s one after another, says whose wait it was: the server's, or the client's pause", () => {
    // Retry-After: 0 after five minutes of 429s: the pause that would go past the budget is the client's own.
    const spent = { startMillis: now - 299_900, failures: 0, busy: 40 }
    const zero = Policy.decide(policy, spent, answer(429, { "retry-after": "0" }), now, 1)
    expect(zero).toEqual({ _tag: "GiveUp", why: "rate-limit-budget", untilMillis: now + 300, asked: false })
    const message = ErrorText.rateLimited({
      endpoint: "partner/get",
      waitedMillis: 290_000,
      budgetMillis: 300_000,
      neededMillis: 300,
      attempts: 41,
      elapsedMillis: 299_900,
      tooManyRequests: 41,
      retryAfter: "0"
    })
    expect(message).toBe(
      "partner/get: rate limited: 41 answers 429 over 299.9 s used up the rate-limit budget of 300 s (the next pause, " +
        "0.3 s, would have ended past it); the server said: Retry-After: 0"
    )
    expect(message).not.toContain("asked to wait")
    // Retry-After: 5 at the end of the budget: the server's, but the 429s before it used the budget.
    const five = Policy.decide(policy, spent, answer(429, { "retry-after": "5" }), now, 1)
    expect(five).toMatchObject({ _tag: "GiveUp", asked: true })
    expect(
      ErrorText.rateLimited({
        endpoint: "partner/get",
        waitedMillis: 290_000,
        budgetMillis: 300_000,
        neededMillis: 5_000,
        askedMillis: 5_000,
        attempts: 41,
        elapsedMillis: 299_900,
        tooManyRequests: 41,
        retryAfter: "5"
      })
    ).toMatch(/^partner\/get: rate limited: 41 answers 429 over 299\.9 s used up the rate-limit budget of 300 s/)
    // An hour asked at the first 429: that wait is what goes past the budget.
    expect(
      ErrorText.rateLimited({
        endpoint: "partner/get",
        waitedMillis: 0,
        budgetMillis: 300_000,
        neededMillis: 3_600_000,
        askedMillis: 3_600_000,
        attempts: 1,
        elapsedMillis: 20,
        tooManyRequests: 1,
        retryAfter: "3600"
      })
    ).toBe(
      "partner/get: rate limited: the server asked to wait 3600 s (Retry-After: 3600), past the rate-limit budget of " +
        "300 s: not waited for"
    )
  })

  it("while the limiter probes a server that refuses without saying its limit, pauses grow with the time refused", () => {
    const probing = { ...fresh, refusingSinceMillis: now - 2_000 }
    // Without the probe, one request's share of the window; with it, at least half the two seconds refused so far.
    expect(Policy.decide(policy, fresh, answer(429), now, 1)).toEqual({ _tag: "Pause", untilMillis: now + 300 })
    expect(Policy.decide(policy, probing, answer(429), now, 1)).toEqual({ _tag: "Pause", untilMillis: now + 1_000 })
    expect(Policy.decide(policy, { ...probing, refusingSinceMillis: now - 90_000 }, answer(429), now, 1)).toEqual({
      _tag: "Pause",
      untilMillis: now + 30_000
    })
  })

  it("property: every wait is bounded, no two 429s in a row closer than one request's share, budgets kept", () =>
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 20 }),
        fc.integer({ min: 0, max: 20 }),
        fc.oneof(
          fc.constant(undefined),
          fc.integer({ min: -100_000, max: 10_000_000 }).map((s) => String(now / 1000 + s)),
          fc.integer({ min: 0, max: 100_000 }).map(String)
        ),
        fc.constantFrom(200, 429, 500, 503, 404),
        fc.boolean(),
        fc.double({ min: 0.5, max: 0.999, noNaN: true }),
        fc.integer({ min: 0, max: 400_000 }),
        (failures, busy, reset, status, bodyOk, jitter, elapsed) => {
          const at = now + elapsed
          const headers: Record<string, string> = reset === undefined ? {} : { "x-ratelimit-reset": reset }
          const outcome: Policy.Outcome = {
            _tag: "Answer",
            status,
            limit: LimitHeaders.parse(headers, at, 60_000),
            retryAfterMillis: undefined,
            bodyOk
          }
          const verdict = Policy.decide(policy, { startMillis: now, failures, busy }, outcome, at, jitter)
          switch (verdict._tag) {
            case "Pause":
              // At least one request's share of the window, and 100 ms
              expect(verdict.untilMillis - at).toBeGreaterThanOrEqual(Math.max(100, policy.windowMillis / policy.limit))
              expect(verdict.untilMillis - at).toBeLessThanOrEqual(60_000)
              expect(verdict.untilMillis - now).toBeLessThanOrEqual(policy.rateLimitBudgetMillis)
              break
            case "Retry":
              expect(verdict.afterMillis).toBeGreaterThan(0)
              expect(failures).toBeLessThan(policy.retries)
              expect(at + verdict.afterMillis - now).toBeLessThanOrEqual(policy.retryBudgetMillis)
              break
          }
        }
      ),
      { numRuns: 2000 }
    ))
})

describe("Policy.decide with caps by status", () => {
  it("retries a status at most its cap, the others as before", () => {
    const capped: Policy.Policy = { ...policy, retriesByStatus: { 502: 2 } }
    const after = (failuresByStatus: Record<number, number>) => ({ ...fresh, failures: 2, failuresByStatus })
    expect(Policy.decide(capped, after({ 502: 1 }), answer(502), now, 1)).toMatchObject({ _tag: "Retry" })
    expect(Policy.decide(capped, after({ 502: 2 }), answer(502), now, 1)).toEqual({ _tag: "GiveUp", why: "retries" })
    // Another status, and a failure without an answer, keep the general cap.
    expect(Policy.decide(capped, after({ 502: 2 }), answer(503), now, 1)).toMatchObject({ _tag: "Retry" })
    expect(Policy.decide(capped, after({ 502: 2 }), { _tag: "NoAnswer", transient: true }, now, 1)).toMatchObject({
      _tag: "Retry"
    })
    // A cap of 0: never retried.
    expect(Policy.decide({ ...policy, retriesByStatus: { 500: 0 } }, fresh, answer(500), now, 1)).toEqual({
      _tag: "GiveUp",
      why: "retries"
    })
  })
})
