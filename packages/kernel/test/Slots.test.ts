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
