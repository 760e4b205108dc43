import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
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

  it("property: a slot is busy a window and a margin after its start, and a window after its end if later", () =>
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
          if (endedMillis !== undefined) expect(busy).toBeGreaterThanOrEqual(endedMillis + windowMillis)
          expect(Slots.waitFor(busy, busy)).toBe(0)
          expect(Slots.waitFor(busy, startedMillis)).toBe(busy - startedMillis)
        }
      )
    ))
})
