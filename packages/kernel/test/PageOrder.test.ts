import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import * as PageOrder from "../src/internal/pageOrder.js"
import type * as Pager from "../src/Pager.js"

// A page's records in server order: valid and invalid ones interleaved by their offsets.

/** A page at `offset` of `records`, the ones at `bad` positions invalid; with exact texts when `exact`. */
const pageOf = (
  offset: number,
  records: ReadonlyArray<{ readonly n: number }>,
  bad: ReadonlySet<number>,
  exact: boolean
): Pager.Page<{ readonly n: number }> => {
  const valid = records.filter((_, i) => !bad.has(i))
  return {
    offset,
    count: records.length + 1,
    received: records.length,
    records: valid,
    raw: valid,
    ...(exact ? { json: valid.map((record) => ` ${JSON.stringify(record)}`) } : {}),
    invalid: records.flatMap((record, i) => bad.has(i) ? [{ offset: offset + i, raw: record }] : [])
  }
}

const pageArb = fc.record({
  offset: fc.integer({ min: 0, max: 1000 }),
  size: fc.integer({ min: 0, max: 12 }),
  bad: fc.array(fc.integer({ min: 0, max: 11 }), { maxLength: 6 }),
  exact: fc.boolean()
}).map(({ bad, exact, offset, size }) =>
  pageOf(offset, Array.from({ length: size }, (_, i) => ({ n: offset + i })), new Set(bad), exact)
)

describe("PageOrder", () => {
  it("property: server order, texts and trimming agree, whatever the invalid records' positions", () =>
    fc.assert(
      fc.property(pageArb, fc.func(fc.boolean()), (page, keepFn) => {
        const inOrder = PageOrder.rawInOrder(page)
        expect(inOrder).toStrictEqual(Array.from({ length: page.received }, (_, i) => ({ n: page.offset + i })))
        for (let i = 0; i < page.received; i++) {
          const text = PageOrder.textAt(page, i)
          // The exact text for a valid record of an exact page, else its JSON.
          expect(text.trim()).toBe(JSON.stringify(inOrder[i]))
        }
        const keep = (position: number) => keepFn(position)
        const kept = PageOrder.keepWhere(page, keep)
        expect(kept.offset).toBe(page.offset)
        expect(kept.received).toBe(page.received)
        expect([...kept.raw, ...kept.invalid.map((record) => record.raw)].length).toBe(
          inOrder.filter((_, i) => keep(i)).length
        )
        expect(kept.records).toStrictEqual(
          inOrder.filter((_, i) => keep(i) && !page.invalid.some((bad) => bad.offset === page.offset + i))
        )
        if (page.json !== undefined) expect(kept.json).toStrictEqual(kept.raw.map((r) => ` ${JSON.stringify(r)}`))
        else expect(kept.json).toBeUndefined()
      }),
      { numRuns: 500 }
    ))

  it("repeatsPage: the same records at a later offset, by text; never an empty page, never an earlier offset", () => {
    const page = pageOf(0, [{ n: 1 }, { n: 2 }], new Set([1]), false)
    const later = pageOf(2, [{ n: 1 }, { n: 2 }], new Set([1]), false)
    expect(PageOrder.repeatsPage(page, later)).toBe(true)
    expect(PageOrder.repeatsPage(page, page)).toBe(false)
    expect(PageOrder.repeatsPage(later, page)).toBe(false)
    expect(PageOrder.repeatsPage(undefined, page)).toBe(false)
    const empty = pageOf(0, [], new Set(), false)
    expect(PageOrder.repeatsPage(empty, { ...empty, offset: 5 })).toBe(false)
    // One field differs: not the same record.
    expect(PageOrder.repeatsPage(page, pageOf(2, [{ n: 1 }, { n: 3 }], new Set([1]), false))).toBe(false)
    // The same records, one of them invalid on one page only: not the same page.
    expect(PageOrder.repeatsPage(page, pageOf(2, [{ n: 1 }, { n: 2 }], new Set(), false))).toBe(false)
  })
})
