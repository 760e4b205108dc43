import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import * as MemoryStore from "../src/MemoryStore.js"
import * as Slots from "../src/Slots.js"

// The limiter's slot arithmetic on its own (its whole algorithm is tested in ErpRateLimiter.test.ts).

describe("slot arithmetic", () => {
  it("property: any limit + 1 tickets in a row put two on one slot, and every limit in a row spread over all", () =>
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 200 }), fc.integer({ min: 1, max: 100_000 }), (limit, first) => {
        const slots = Array.from({ length: limit + 1 }, (_, i) => Slots.slotOf(first + i, limit))
        expect(new Set(slots.slice(0, limit)).size).toBe(limit)
        expect(slots[limit]).toBe(slots[0])
      })
    ))

  it("property: a slot is busy a window and a margin after its start, and after its end if later", () =>
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1e12 }),
        fc.option(fc.integer({ min: 0, max: 120_000 }), { nil: undefined }),
        fc.integer({ min: 1, max: 60_000 }),
        fc.integer({ min: 0, max: 5_000 }),
        (startedMillis, took, windowMillis, margin) => {
          const windows = { windowMillis, slotWindowMillis: windowMillis + margin }
          const endedMillis = took === undefined ? undefined : startedMillis + took
          const busy = Slots.busyFrom({ startedMillis, endedMillis }, windows)
          expect(busy).toBeGreaterThanOrEqual(startedMillis + windows.slotWindowMillis)
          if (endedMillis !== undefined) expect(busy).toBe(endedMillis + windows.slotWindowMillis)
          expect(Slots.waitFor(busy, busy)).toBe(0)
          expect(Slots.waitFor(busy, startedMillis)).toBe(busy - startedMillis)
        }
      )
    ))

  it("property: in flight, a slot is held until any end within the request's timeout frees it, and lapses after", () =>
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1e12 }),
        fc.integer({ min: 1, max: 120_000 }),
        fc.integer({ min: 1, max: 60_000 }),
        fc.integer({ min: 0, max: 5_000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (startedMillis, timeoutMillis, windowMillis, margin, share) => {
          const windows = { windowMillis, slotWindowMillis: windowMillis + margin }
          const held = Slots.inFlightFrom({ startedMillis, timeoutMillis }, windows)
          // Whenever within its timeout it ends (and so reached the server), the mark held it at least that long
          const endedMillis = startedMillis + Math.floor(share * timeoutMillis)
          expect(held).toBeGreaterThanOrEqual(Slots.busyFrom({ startedMillis, endedMillis }, windows))
          // ...and never longer than its timeout, the window and the margin
          expect(held).toBe(startedMillis + timeoutMillis + windows.slotWindowMillis)
        }
      )
    ))
})

// A slot's marks in memory, on pure times (ms): taken in flight, settled when the request ends, lapsed when it never does.
describe("a slot's in-flight mark", () => {
  const windows = { windowMillis: 30_000, slotWindowMillis: 30_600 }
  const slot = "erp:k:partner/list:slot:0"

  it("a request in flight longer than the window keeps its slot; after it ends, the slot frees a window later", () => {
    const state = MemoryStore.makeState()
    const held = Slots.inFlightFrom({ startedMillis: 0, timeoutMillis: 60_000 }, windows)
    expect(MemoryStore.claimHold(state, slot, held, 0)).toBe(0)
    // 45 s later (more than the window and the margin) it is still in flight: nobody else takes the slot
    expect(MemoryStore.claimHold(state, slot, held + 45_000, 45_000)).toBe(held)
    // It ends at 50 s: busy a window and the margin after that, then free
    MemoryStore.settleHold(
      state,
      slot,
      held,
      Slots.busyFrom({ startedMillis: 0, endedMillis: 50_000 }, windows),
      50_000
    )
    expect(MemoryStore.holdOf(state, slot)).toBe(80_600)
    expect(MemoryStore.claimHold(state, slot, 200_000, 80_599)).toBe(80_600)
    expect(MemoryStore.claimHold(state, slot, 200_000, 80_600)).toBe(0)
  })

  it("a request that ends at once frees its slot the window and the margin after its start", () => {
    const state = MemoryStore.makeState()
    const held = Slots.inFlightFrom({ startedMillis: 1_000 }, windows)
    expect(held).toBe(1_000 + 30_000 + 30_600)
    MemoryStore.claimHold(state, slot, held, 1_000)
    MemoryStore.settleHold(state, slot, held, Slots.busyFrom({ startedMillis: 1_000, endedMillis: 1_000 }, windows))
    expect(MemoryStore.holdOf(state, slot)).toBe(31_600)
  })

  it("a holder that never ends (a crashed process) keeps the slot until its timeout and a window, then it lapses", () => {
    const state = MemoryStore.makeState()
    const held = Slots.inFlightFrom({ startedMillis: 0, timeoutMillis: 10_000 }, windows)
    MemoryStore.claimHold(state, slot, held, 0)
    expect(MemoryStore.claimHold(state, slot, 99_999, 40_599)).toBe(40_600)
    expect(MemoryStore.claimHold(state, slot, 99_999, 40_600)).toBe(0)
    expect(MemoryStore.holdOf(state, slot)).toBe(99_999)
  })

  it("a late end never frees a slot another request took since (its mark lapsed first)", () => {
    const state = MemoryStore.makeState()
    const first = Slots.inFlightFrom({ startedMillis: 0, timeoutMillis: 10_000 }, windows)
    MemoryStore.claimHold(state, slot, first, 0)
    const second = Slots.inFlightFrom({ startedMillis: first, timeoutMillis: 10_000 }, windows)
    expect(MemoryStore.claimHold(state, slot, second, first)).toBe(0)
    // The first says it ended: the second's mark stands (only a later end could lengthen it)
    MemoryStore.settleHold(state, slot, first, Slots.busyFrom({ startedMillis: 0, endedMillis: 10_000 }, windows))
    expect(MemoryStore.holdOf(state, slot)).toBe(second)
  })
})

// A learned limit's log, on pure times: the server counts a request when it arrives, anywhere between its start and its
// end, so an entry counts from the start until a learned window (and the margin) after the end; a holder that never
// says it ended, until a window after its timeout and the margin.
describe("a learned limit's log, while its requests are in flight", () => {
  const key = "erp:k:partner/list"
  const windows = { limit: 1, windowMillis: 1_000, marginMillis: 50, keepMillis: 60_000 }

  it("property: an entry counts from its admission until a window and the margin after its end, however long in flight", () =>
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 100_000 }),
        fc.integer({ min: 0, max: 20_000 }),
        fc.integer({ min: 1, max: 20_000 }),
        (start, draw, timeout) => {
          // A request ends by its timeout
          const took = Math.min(draw, timeout)
          const state = MemoryStore.makeState()
          const taken = MemoryStore.admitLogged(state, key, windows, start, timeout)
          if (!("entry" in taken)) throw new Error("an empty log has room")
          // In flight: no other place, however late (up to the timeout, a window and the margin)
          for (const at of [start, start + took, start + timeout + windows.windowMillis + windows.marginMillis - 1]) {
            expect(MemoryStore.admitLogged(state, key, windows, at, timeout)).toHaveProperty("waitMillis")
          }
          const ended = start + took
          MemoryStore.settleLogged(
            state,
            key,
            taken.entry,
            Slots.logEndedAt({ startedMillis: start, endedMillis: ended }, windows)
          )
          const free = ended + windows.marginMillis + windows.windowMillis
          expect(MemoryStore.admitLogged(state, key, windows, Math.max(start, free - 1), timeout)).toHaveProperty(
            "waitMillis"
          )
          expect(MemoryStore.admitLogged(state, key, windows, free, timeout)).toHaveProperty("entry")
        }
      )
    ))

  it("a request in flight five windows keeps its place; its end frees it a window and the margin later", () => {
    const state = MemoryStore.makeState()
    const taken = MemoryStore.admitLogged(state, key, windows, 0, 10_000)
    // Before, the entry counted from its start and the margin: free again at 1,050 while the request was in flight.
    expect(MemoryStore.admitLogged(state, key, windows, 1_050, 10_000)).toEqual({ waitMillis: 10_000 })
    expect(MemoryStore.countLogged(state, key, windows.windowMillis, 4_999)).toBe(1)
    if ("entry" in taken) {
      MemoryStore.settleLogged(
        state,
        key,
        taken.entry,
        Slots.logEndedAt({ startedMillis: 0, endedMillis: 5_000 }, windows)
      )
    }
    expect(MemoryStore.admitLogged(state, key, windows, 6_049, 10_000)).toEqual({ waitMillis: 1 })
    expect(MemoryStore.admitLogged(state, key, windows, 6_050, 10_000)).toHaveProperty("entry")
  })

  it("a holder that never ends counts for its timeout, the margin and a window, then lapses", () => {
    const state = MemoryStore.makeState()
    MemoryStore.admitLogged(state, key, windows, 0, 10_000)
    expect(MemoryStore.admitLogged(state, key, windows, 11_049, 10_000)).toEqual({ waitMillis: 1 })
    expect(MemoryStore.admitLogged(state, key, windows, 11_050, 10_000)).toHaveProperty("entry")
  })

  it("a late start counts from then: admitted at 0, started at 3 s, in flight until its timeout after that", () => {
    const state = MemoryStore.makeState()
    const taken = MemoryStore.admitLogged(state, key, windows, 0, 10_000)
    if (!("entry" in taken)) throw new Error("an empty log has room")
    MemoryStore.endLogged(
      state,
      key,
      taken.entry,
      Slots.logInFlightAt({ startedMillis: 3_000, timeoutMillis: 10_000 }, windows)
    )
    expect(MemoryStore.admitLogged(state, key, windows, 14_049, 10_000)).toEqual({ waitMillis: 1 })
    // An earlier time never shortens it: only the end does
    MemoryStore.endLogged(state, key, taken.entry, 100)
    expect(MemoryStore.countLogged(state, key, windows.windowMillis, 14_000)).toBe(1)
  })

  it("the one-step admission puts its entry in flight too, for the request's timeout", () => {
    const state = MemoryStore.makeState()
    MemoryStore.setLearned(state, key, undefined, {
      limit: 1,
      windowMillis: 1_000,
      sinceMillis: 0,
      ttlMillis: 3_600_000,
      from: "header"
    }, 0)
    const limits = { limit: 10, windowMillis: 30_000, slotWindowMillis: 30_600, timeoutMillis: 8_000 }
    const taken = MemoryStore.acquireNow(state, key, limits, 0)
    expect(taken?.entry).toBeDefined()
    // The learned margin is 50 ms (2% of 1 s, at least 50): counted until 8,000 + 50 + 1,000
    expect(MemoryStore.acquireNow(state, key, limits, 9_049)).toBeUndefined()
    MemoryStore.settleLogged(
      state,
      key,
      taken!.entry!,
      Slots.logEndedAt(
        { startedMillis: 0, endedMillis: 2_000 },
        Slots.logWindows({ limit: 1, windowMillis: 1_000 }, 30_000)
      )
    )
    expect(MemoryStore.acquireNow(state, key, limits, 3_049)).toBeUndefined()
    expect(MemoryStore.acquireNow(state, key, limits, 3_050)?.entry).toBeDefined()
  })

  it("a log started from a slot in flight counts it until its end is told by the slot's settle, else for its timeout", () => {
    const configured = { windowMillis: 30_000, slotWindowMillis: 30_600 }
    const state = MemoryStore.makeState()
    const slot = Slots.slotKey(key, 0)
    const other = Slots.slotKey(key, 1)
    const held = Slots.inFlightFrom({ startedMillis: 0, timeoutMillis: 10_000 }, configured)
    const dead = Slots.inFlightFrom({ startedMillis: 0, timeoutMillis: 10_000 }, configured)
    MemoryStore.claimHold(state, slot, held, 0)
    MemoryStore.claimHold(state, other, dead, 0)
    MemoryStore.seedLogged(state, key, configured.windowMillis, 100)
    // Both counted in a learned window of 1 s while in flight, long past the window (before: only until 1,700)
    expect(MemoryStore.countLogged(state, key, 1_000, 5_000)).toBe(2)
    // The first ends at 5 s: its entry counts a learned window after its end and the margin (600 ms, the limiter's)
    MemoryStore.settleHold(
      state,
      slot,
      held,
      Slots.busyFrom({ startedMillis: 0, endedMillis: 5_000 }, configured),
      5_000,
      30_000
    )
    expect(MemoryStore.countLogged(state, key, 1_000, 6_599)).toBe(2)
    expect(MemoryStore.countLogged(state, key, 1_000, 6_600)).toBe(1)
    // The other never ends: counted until its timeout, the margin and a learned window
    expect(MemoryStore.countLogged(state, key, 1_000, 11_599)).toBe(1)
    expect(MemoryStore.countLogged(state, key, 1_000, 11_600)).toBe(0)
  })
})
