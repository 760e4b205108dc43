import { describe, expect, it } from "@effect/vitest"
import * as SlidingWindow from "@erp-client/fake-erp/SlidingWindow"
import { FastCheck as fc } from "effect"
import * as CallState from "../src/CallState.js"
import { logWait } from "../src/internal/logWait.js"
import * as MemoryStore from "../src/MemoryStore.js"
import * as Policy from "../src/RetryPolicy.js"
import * as ServerLimit from "../src/ServerLimit.js"
import * as Settings from "../src/Settings.js"
import * as Slots from "../src/Slots.js"

// The limiter's decisions together, driven by hand against the fake ERP's sliding-window server, a millisecond at a
// time: the memory store's one-step admission (its slots and the learned limit's log), what each answer teaches
// (`ServerLimit.learn`) and the pause a 429 brings (`RetryPolicy.decide`), as each edition wires them. Requests are
// answered at once; the clock is the loop's.

interface Server {
  readonly limit: number
  readonly windowMillis: number
  /** The unit of `X-RateLimit-Reset`, or none: no `X-RateLimit-*` header at all. */
  readonly unit: SlidingWindow.ResetUnit | "none"
}

interface Run {
  readonly millis: number
  readonly refused: number
  readonly starts: ReadonlyArray<number>
  /** Every limit learned, with when it was set. */
  readonly learned: ReadonlyArray<{ readonly at: number; readonly learned: ServerLimit.Learned | null }>
  /** Each start, and the learned limit it was admitted under (`undefined` when there was none). */
  readonly admitted: ReadonlyArray<{ readonly at: number; readonly learned: ServerLimit.Learned | undefined }>
}

const start = 1_700_000_000_000
const key = "erp:k:partner/list"

const simulate = (server: Server, configured: ServerLimit.Configured, requests: number): Run => {
  const log = SlidingWindow.makeSlidingWindowLog(server.limit, server.windowMillis)
  const state = MemoryStore.makeState()
  const margin = Settings.defaultMarginMillis(configured.windowMillis)
  const limits = { ...configured, slotWindowMillis: configured.windowMillis + margin }
  const policy: Policy.Policy = {
    idempotent: true,
    retries: 8,
    retryBudgetMillis: 60_000,
    retryBaseDelayMillis: 200,
    maxRetryDelayMillis: 10_000,
    rateLimitBudgetMillis: 3_600_000,
    windowMillis: configured.windowMillis,
    limit: configured.limit
  }
  const starts: Array<number> = []
  const learnedLog: Array<{ at: number; learned: ServerLimit.Learned | null }> = []
  const admitted: Array<{ at: number; learned: ServerLimit.Learned | undefined }> = []
  let done = 0
  let refused = 0
  let busy = 0
  let now = start
  while (done < requests) {
    if (now - start > 24 * 3_600_000) throw new Error("no end in a day")
    const taken = MemoryStore.acquireNow(state, key, limits, now)
    if (taken === undefined) {
      now = nextTry(state, limits, now)
      continue
    }
    starts.push(now)
    admitted.push({ at: now, learned: taken.learned })
    const decision = log.check(key, now)
    const headers = server.unit === "none" ? {} : SlidingWindow.headers(decision, server.unit, now)
    const call = CallState.make(now)
    const outcome = CallState.answered(
      call,
      { status: decision.allowed ? 200 : 429, headers, text: "" },
      true,
      now,
      2 * configured.windowMillis
    )
    const heard = CallState.heard(outcome, now, taken.learned?.from === "refusals")
    if (heard !== undefined) {
      const first = taken.learned === undefined && heard.tooManyRequests && heard.serverLimit === undefined
      const counted = first
        ? [...state.holds].filter(([k, until]) => until > now && Slots.slotIndexOf(key, k) !== undefined).length
        : undefined
      const next = ServerLimit.learn(
        configured,
        taken.learned,
        counted === undefined ? heard : { ...heard, counted },
        now
      )
      if (next !== undefined) {
        if (taken.learned === undefined && next !== null) {
          MemoryStore.seedLogged(state, key, configured.windowMillis, now)
        }
        if (MemoryStore.setLearned(state, key, taken.learned, next, now)) learnedLog.push({ at: now, learned: next })
      }
    }
    MemoryStore.settleHold(
      state,
      taken.slot,
      taken.heldUntil,
      Slots.busyFrom({ startedMillis: now, endedMillis: now }, limits),
      now,
      configured.windowMillis
    )
    if (taken.entry !== undefined) {
      const windows = Slots.logWindows(taken.learned!, configured.windowMillis)
      MemoryStore.settleLogged(
        state,
        key,
        taken.entry,
        Slots.logEndedAt({ startedMillis: now, endedMillis: now }, windows)
      )
    }
    if (decision.allowed) {
      done++
      busy = 0
      continue
    }
    refused++
    const learned = MemoryStore.learnedOf(state, key, now)
    const verdict = Policy.decide(
      learned === undefined || learned.refusedMillis !== undefined
        ? policy
        : { ...policy, limit: learned.limit, windowMillis: learned.windowMillis },
      { startMillis: now, failures: 0, busy: busy++, refusingSinceMillis: learned?.refusedMillis },
      outcome,
      now,
      0.75
    )
    if (verdict._tag === "Pause") MemoryStore.extendHold(state, key, verdict.untilMillis, now)
  }
  return { millis: now - start, refused, starts, learned: learnedLog, admitted }
}

/**
 * When the request that `acquireNow` just turned away could go at the earliest: once the pause, its slot's spacing and
 * busy mark, and the learned limit's log all allow (each only eases with time, until the next answer).
 */
const nextTry = (state: MemoryStore.State, limits: { readonly limit: number }, now: number): number => {
  const slot = Slots.slotKey(key, Slots.slotOf(MemoryStore.nextCount(state, Slots.ticketKey(key), now), limits.limit))
  const learned = MemoryStore.learnedOf(state, key, now)
  const entries = state.logs.get(key)?.entries
  return Math.max(
    now + 1,
    MemoryStore.holdOf(state, key),
    MemoryStore.holdOf(state, slot),
    state.counters.get(slot)?.expiresAt ?? 0,
    learned === undefined || entries === undefined ? 0 : now + logWait([...entries.values()], learned, now)
  )
}

/** The most starts any interval of `windowMillis` holds. */
const mostIn = (starts: ReadonlyArray<number>, windowMillis: number): number => {
  let most = 0
  let first = 0
  for (let last = 0; last < starts.length; last++) {
    while (starts[last]! - starts[first]! >= windowMillis) first++
    most = Math.max(most, last - first + 1)
  }
  return most
}

/** When the last of `requests` could start at best: at most `limit` in any `windowMillis` of each of `limits`. */
const floorMillis = (limits: ReadonlyArray<ServerLimit.Configured>, requests: number): number => {
  const starts: Array<number> = []
  for (let n = 0; n < requests; n++) {
    starts.push(Math.max(0, ...limits.map((l) => (n >= l.limit ? starts[n - l.limit]! + l.windowMillis : 0))))
  }
  return starts.at(-1)!
}

describe("the limiter's learning, against a sliding-window server", () => {
  const configured = { limit: 100, windowMillis: 30_000 }
  const server = { limit: 20, windowMillis: 3_000 }
  // 41 pages of an export of 400 partners in pages of 10.
  const requests = 41

  for (const unit of ["epoch-millis", "epoch-seconds", "seconds", "iso", "http-date"] as const) {
    it(`20 per 3 s, the reset in ${unit}, the client at 100 per 30 s: the server's window, no 429`, () => {
      const run = simulate({ ...server, unit }, configured, requests)
      expect(run.refused).toBe(0)
      expect(run.learned[0]?.learned).toMatchObject({ limit: 20, from: "header" })
      // Three of the server's windows, and at most a second more each for a reset in whole seconds.
      expect(run.millis).toBeLessThanOrEqual(2 * (3_000 + (unit === "epoch-millis" ? 100 : 1_100)))
      expect(mostIn(run.starts, 3_000)).toBeLessThanOrEqual(20)
      expect(mostIn(run.starts, 30_000)).toBeLessThanOrEqual(100)
    })
  }

  it("the same server without any rate-limit header: a few 429s, then the server's pace", () => {
    const run = simulate({ ...server, unit: "none" }, configured, requests)
    expect(run.refused).toBeGreaterThan(0)
    expect(run.refused).toBeLessThanOrEqual(10)
    expect(run.millis).toBeLessThanOrEqual(15_000)
    // The window found is the server's, about: the time it took to accept again.
    const settled = run.learned.find((change) => change.learned?.refusedMillis === undefined)?.learned
    expect(settled?.windowMillis).toBeGreaterThanOrEqual(2_500)
    expect(settled?.windowMillis).toBeLessThanOrEqual(4_500)
  })

  it("property: whatever is learned is kept as learned, and the limiter's own limit always", () =>
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 300, max: 10_000 }),
        fc.integer({ min: 1, max: 200 }),
        fc.integer({ min: 300, max: 60_000 }),
        fc.constantFrom(...(["epoch-millis", "epoch-seconds", "seconds", "none"] as const)),
        fc.integer({ min: 10, max: 120 }),
        (serverLimit, serverWindow, limit, windowMillis, unit, requests) => {
          const run = simulate(
            { limit: serverLimit, windowMillis: serverWindow, unit },
            { limit, windowMillis },
            requests
          )
          // Invariant 1 for the limiter's own limit, whatever was learned.
          expect(mostIn(run.starts, windowMillis)).toBeLessThanOrEqual(limit)
          // And whatever was learned: a request admitted under a learned limit of L in W had fewer than L others
          // start in the W before it, since a limit was first learned (the log keeps all of them, whatever changed).
          let since = 0
          for (const [i, { at, learned }] of run.admitted.entries()) {
            if (learned === undefined) {
              since = i + 1
              continue
            }
            const before = run.admitted.slice(since, i).filter((other) => other.at > at - learned.windowMillis)
            expect(before.length).toBeLessThan(learned.limit)
          }
        }
      ),
      { numRuns: 300 }
    ))

  it("property: a server stricter than the settings costs a few 429s, and a bounded share of the time", () =>
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 40 }),
        fc.integer({ min: 1_000, max: 10_000 }),
        fc.constantFrom(1, 10),
        fc.constantFrom(...(["epoch-millis", "epoch-seconds", "seconds", "none"] as const)),
        fc.integer({ min: 30, max: 150 }),
        (serverLimit, serverWindow, ratio, unit, requests) => {
          // The client told 100 in the server's window, or in one ten times as long.
          const configured = { limit: 100, windowMillis: serverWindow * ratio }
          const run = simulate({ limit: serverLimit, windowMillis: serverWindow, unit }, configured, requests)
          const floor = floorMillis([{ limit: serverLimit, windowMillis: serverWindow }, configured], requests)
          if (unit === "none") {
            expect(run.refused).toBeLessThanOrEqual(8 + Math.ceil(requests / serverLimit))
            // The probe, and the limit at half of what the server first refused more of until it climbs back: a few of
            // its windows over what the server allows.
            expect(run.millis).toBeLessThanOrEqual(3 * floor + 8 * serverWindow)
          } else {
            expect(run.refused).toBe(0)
            // A reset in whole seconds may read the window up to a second long.
            const rounding = unit === "epoch-millis" ? 1.05 : (serverWindow + 1_100) / serverWindow
            expect(run.millis).toBeLessThanOrEqual(rounding * floor + serverWindow)
          }
        }
      ),
      { numRuns: 300 }
    ))
})

describe("the memory store's size", () => {
  it("stays what one window holds, whatever the limit: lapsed slots, holds and counters are swept", () => {
    for (const limit of [1_000, 100_000_000]) {
      const state = MemoryStore.makeState()
      const limits = { limit, windowMillis: 1_000, slotWindowMillis: 1_050 }
      let largest = 0
      // 20,000 requests, one a millisecond: about 1,000 in any window.
      for (let i = 0; i < 20_000; i++) {
        const now = start + i
        const taken = MemoryStore.acquireNow(state, key, limits, now)
        if (taken !== undefined) {
          MemoryStore.settleHold(
            state,
            taken.slot,
            taken.heldUntil,
            Slots.busyFrom({ startedMillis: now, endedMillis: now + 1 }, limits),
            now
          )
        }
        largest = Math.max(largest, MemoryStore.size(state))
      }
      // A slot counter and a busy mark for each request of the last window, twice over at most, and the floor.
      expect(largest).toBeLessThanOrEqual(2 * 2 * 1_100 + MemoryStore.sweepFloor)
    }
  })

  it("a learned limit's log holds what its window counts, and goes with it", () => {
    const state = MemoryStore.makeState()
    const windows = { limit: 5, windowMillis: 1_000, marginMillis: 50, keepMillis: 2_000 }
    MemoryStore.setLearned(state, key, undefined, {
      limit: 5,
      windowMillis: 1_000,
      sinceMillis: start,
      ttlMillis: 60_000,
      from: "header"
    }, start)
    for (let i = 0; i < 10_000; i++) MemoryStore.admitLogged(state, key, windows, start + i * 10)
    // The learned limit, and the requests of the last two seconds kept (five a second).
    expect(MemoryStore.size(state)).toBeLessThanOrEqual(1 + 2 * 5 + 1)
    MemoryStore.setLearned(state, key, MemoryStore.learnedOf(state, key, start), null, start + 100_000)
    expect(MemoryStore.size(state)).toBe(0)
  })
})
