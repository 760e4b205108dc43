import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import * as ListCursor from "../src/ListCursor.js"

// Going on with a list by position, between reads that the list changes under: the reader on its own, fed pages by
// hand. Through `erp mcp`'s cursors against the sandbox: packages/cli/test/mcpTools.test.ts.

const page = (ids: ReadonlyArray<number>) => ({ raw: ids.map((id) => ({ id })) })
const texts = (read: ListCursor.Read) => read.records.map((record) => JSON.parse(record.text).id as number)

/** One read of `list` going on from `after`, in pages as the tool asks for them: until enough is read, or the end. */
const readFrom = (list: ReadonlyArray<number>, after: ListCursor.Position | undefined, limit: number) => {
  const start = ListCursor.startOf(after)
  const reader = ListCursor.makeReader({ limit, idField: "id", start, after })
  const size = ListCursor.firstPage(after, limit)
  for (let offset = start; offset < list.length && !reader.done(); offset += size) {
    reader.feed(page(list.slice(offset, offset + size)))
  }
  return reader.finish()
}

describe("ListCursor", () => {
  it("a list that does not change: every record once, in order, read after read", () => {
    const list = Array.from({ length: 25 }, (_, i) => i + 1)
    const seen: Array<number> = []
    let after: ListCursor.Position | undefined
    for (let reads = 0; reads < 10; reads++) {
      const read = readFrom(list, after, 4)!
      seen.push(...texts(read))
      expect(read.shift).toBe(0)
      if (!read.more) break
      after = read.next()
    }
    expect(seen).toEqual(list)
  })

  it("inserts and deletes before the position are corrected, and said (shift)", () => {
    const first = readFrom([1, 2, 3, 4, 5, 6, 7, 8], undefined, 3)!
    const after = first.next()
    expect(after).toMatchObject({ offset: 3 })
    // Two inserted before it: the last record returned (3) is two places later.
    const moved = readFrom([10, 11, 1, 2, 3, 4, 5, 6, 7, 8], after, 3)!
    expect(texts(moved)).toEqual([4, 5, 6])
    expect(moved.shift).toBe(2)
  })

  it("a small limit: more records inserted before the position than a page holds are still looked past", () => {
    const after = readFrom([1, 2, 3, 4], undefined, 1)!.next()
    const read = readFrom([10, 11, 12, 1, 2, 3, 4], after, 1)!
    expect(texts(read)).toEqual([2])
    expect(read.shift).toBe(3)
  })

  it("the last record returned deleted: the list goes on after the last of the others still there", () => {
    const after = readFrom([1, 2, 3, 4, 5, 6], undefined, 3)!.next()
    const read = readFrom([1, 2, 4, 5, 6], after, 3)!
    expect(texts(read)).toEqual([4, 5, 6])
    expect(read.shift).toBeUndefined()
  })

  it("none of the last records to be found (all deleted, or more than the margin before them): lost, not skipped", () => {
    const after = readFrom(Array.from({ length: 200 }, (_, i) => i + 1), undefined, 150)!.next()
    // The last ten returned (141…150) are gone.
    const without = Array.from({ length: 200 }, (_, i) => i + 1).filter((id) => id < 141 || id > 150)
    expect(readFrom(without, after, 10)).toBeUndefined()
  })

  it("property: under up to three inserts and three deletes between reads, no record is repeated, none that stayed is skipped, order is kept, and a read is lost only when the last records returned are all gone", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 12 }),
        fc.array(
          fc.record({
            deletes: fc.array(fc.nat(), { maxLength: 3 }),
            inserts: fc.array(fc.nat(), { maxLength: 3 })
          }),
          { maxLength: 40 }
        ),
        (limit, edits) => {
          let list = Array.from({ length: 60 }, (_, i) => i + 1)
          let nextId = 1_000
          const deleted = new Set<number>()
          const inserted = new Set<number>()
          const seen: Array<number> = []
          let after: ListCursor.Position | undefined
          let lost = false
          let ended = false
          for (let round = 0; round < 1_000; round++) {
            const read = readFrom(list, after, limit)
            if (read === undefined) {
              // Lost only as the rule says: every one of the last records returned is gone (a few edits a round cannot
              // move them past the margin). The caller starts again; what was returned so far is checked below.
              expect(seen.slice(-ListCursor.KEYS).every((id) => !list.includes(id))).toBe(true)
              lost = true
              break
            }
            seen.push(...texts(read))
            if (!read.more) {
              ended = true
              break
            }
            after = read.next()
            // Edits for the first rounds only, so that the list, growing by inserts, is read to its end.
            const edit = edits[round]
            if (edit === undefined) continue
            for (const at of edit.deletes) {
              if (list.length === 0) break
              const [gone] = list.splice(at % list.length, 1)
              deleted.add(gone!)
            }
            for (const at of edit.inserts) {
              const id = nextId++
              inserted.add(id)
              list = [...list.slice(0, at % (list.length + 1)), id, ...list.slice(at % (list.length + 1))]
            }
          }
          expect(lost || ended).toBe(true)
          // Nothing twice.
          expect(new Set(seen).size).toBe(seen.length)
          // Every record there from the start to the end, once, in its order (up to where a lost read stopped).
          const stayed = Array.from({ length: 60 }, (_, i) => i + 1).filter((id) => !deleted.has(id))
          const returned = seen.filter((id) => !inserted.has(id) && !deleted.has(id))
          expect(returned).toEqual(lost ? stayed.slice(0, returned.length) : stayed)
        }
      ),
      { numRuns: 2_000 }
    )
  })
})
