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
  const size = limit + 1 + (after === undefined ? 0 : after.offset - start)
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

  it("property: under up to three inserts and three deletes between reads, no record is repeated, none that stayed is skipped, and order is kept", () => {
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
          for (let round = 0; round < 200; round++) {
            const read = readFrom(list, after, limit)
            expect(read).toBeDefined()
            seen.push(...texts(read!))
            if (!read!.more) break
            after = read!.next()
            const edit = edits[round % Math.max(1, edits.length)]
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
          // Nothing twice.
          expect(new Set(seen).size).toBe(seen.length)
          // Every record there from the start to the end, once, in its order.
          const stayed = Array.from({ length: 60 }, (_, i) => i + 1).filter((id) => !deleted.has(id))
          expect(seen.filter((id) => !inserted.has(id) && !deleted.has(id))).toEqual(stayed)
        }
      ),
      { numRuns: 300 }
    )
  })
})
