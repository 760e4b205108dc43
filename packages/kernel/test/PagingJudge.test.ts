import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import * as Judge from "../src/internal/pagingJudge.js"

// Paging's judgement on its own: plain data in, a decision out (no Effect, no fetch).

const rulesArb = fc.record({
  overlap: fc.integer({ min: 0, max: 20 }),
  maxQuiet: fc.integer({ min: 0, max: 10 }),
  firstRecordsUnique: fc.boolean(),
  minSize: fc.integer({ min: 1, max: 2 })
}).map(({ overlap, ...rest }): Judge.Rules => ({ ...rest, overlap: (size) => Math.min(overlap, size - 1) }))

const planArb = fc.record({
  size: fc.integer({ min: 1, max: 200 }),
  served: fc.integer({ min: 0, max: 200 }),
  suspect: fc.option(fc.integer({ min: 1, max: 200 }), { nil: undefined }),
  quiet: fc.integer({ min: 0, max: 12 })
})

const observationArb = (plan: Judge.Plan) =>
  fc.integer({ min: 0, max: plan.size }).chain((received) =>
    fc.record({
      offset: fc.integer({ min: 0, max: 100_000 }),
      count: fc.constant(plan.size),
      received: fc.constant(received),
      fresh: fc.integer({ min: 0, max: received }),
      surplus: fc.integer({ min: 0, max: received }),
      repeatsPrevious: fc.boolean()
    })
  )

describe("Judge.judge", () => {
  it("property: never skips a position, never ends on a page that brought records, loops only when told", () =>
    fc.assert(
      fc.property(
        rulesArb,
        planArb.chain((plan) => fc.tuple(fc.constant(plan), observationArb(plan))),
        (rules, [plan, page]) => {
          const { decision, learned, plan: next } = Judge.judge(plan, page, rules)
          switch (decision._tag) {
            case "Regrid":
              // Right after the records received (minus a drift-safe overlap), never past them, always forward.
              expect(decision.offset).toBeLessThanOrEqual(page.offset + page.received)
              expect(decision.offset).toBeGreaterThan(page.offset)
              break
            case "End":
              expect(page.fresh).toBe(0)
              expect(page.received < page.count || page.received === 0).toBe(true)
              break
            case "Loop":
              expect(page.repeatsPrevious || next.quiet > rules.maxQuiet).toBe(true)
              break
            case "More":
              // The grid goes on: only after a full page.
              expect(page.received).toBe(page.count)
          }
          if (learned !== undefined) {
            // A size is learned only smaller than asked, never below the mode's least, never below what was served.
            expect(learned.size).toBeLessThan(plan.size)
            expect(learned.size).toBeGreaterThanOrEqual(rules.minSize)
            expect(learned.size).toBeGreaterThanOrEqual(plan.served)
            expect(next.size).toBe(learned.size)
          } else {
            expect(next.size).toBe(plan.size)
          }
          expect(next.served).toBe(Math.max(plan.served, page.received))
        }
      ),
      { numRuns: 5000 }
    ))

  it("a short page with new records is settled by the next: the same length again, nothing repeated, is a clamp", () => {
    const rules: Judge.Rules = { overlap: () => 0, maxQuiet: 3, firstRecordsUnique: true, minSize: 1 }
    const first = Judge.judge(Judge.plan(1000), {
      offset: 0,
      count: 1000,
      received: 500,
      fresh: 500,
      surplus: 0,
      repeatsPrevious: false
    }, rules)
    expect(first.decision).toEqual({ _tag: "Regrid", offset: 500 })
    expect(first.learned).toBeUndefined()
    const second = Judge.judge(first.plan, {
      offset: 500,
      count: 1000,
      received: 500,
      fresh: 500,
      surplus: 0,
      repeatsPrevious: false
    }, rules)
    expect(second.learned).toEqual({ size: 500, previous: 1000 })
    expect(second.decision).toEqual({ _tag: "Regrid", offset: 1000 })
    // A page that repeats records from the short one is a filtering server: nothing learned, paging goes on.
    const filtered = Judge.judge(first.plan, {
      offset: 500,
      count: 1000,
      received: 500,
      fresh: 499,
      surplus: 1,
      repeatsPrevious: false
    }, rules)
    expect(filtered.learned).toBeUndefined()
    const empty = Judge.judge(second.plan, {
      offset: 1000,
      count: 500,
      received: 0,
      fresh: 0,
      surplus: 0,
      repeatsPrevious: false
    }, rules)
    expect(empty.decision).toEqual({ _tag: "End" })
  })
})

describe("Judge.repeatedRun", () => {
  it("property: finds the run of already-read records a page starts with, and only that", () =>
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer(), { minLength: 0, maxLength: 30 }),
        fc.integer({ min: 0, max: 30 }),
        fc.uniqueArray(fc.integer({ min: 1_000_000, max: 2_000_000 }), { maxLength: 10 }),
        (before, from, fresh) => {
          const start = Math.min(from, before.length)
          const repeated = before.slice(start)
          expect(Judge.repeatedRun(before, [...repeated, ...fresh])).toBe(repeated.length === 0 ? 0 : repeated.length)
          expect(Judge.repeatedRun(before, fresh)).toBe(0)
        }
      ),
      { numRuns: 2000 }
    ))
})
