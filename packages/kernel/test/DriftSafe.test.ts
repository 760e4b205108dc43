import { describe, expect, it } from "@effect/vitest"
import * as DriftSafe from "../src/DriftSafe.js"
import type * as PageOrder from "../src/PageOrder.js"
import { drive, safe, settingsOf } from "./drive.js"

// Drift-safe paging's state machine on its own, driven by hand (./drive.ts) over a list that changes before fetches.
// Its behaviour through fibers and streams, and against the sandbox, is tested in packages/streams/test/Drift.test.ts.

type Row = { readonly id: number }
type P = PageOrder.Page<Row>

const page = (offset: number, ids: ReadonlyArray<number>, count = 4): P => {
  const records = ids.map((id) => ({ id }))
  return { offset, count, received: records.length, records, raw: records, invalid: [] }
}

/** A list of ids 1..size; `change(n)` edits it right before the n-th fetch (0-based). */
const changingList = (size: number, change: (n: number, list: Array<number>) => void = () => {}) => {
  const list = Array.from({ length: size }, (_, i) => i + 1)
  let fetches = 0
  const fetch = (offset: number, count: number): P => {
    change(fetches++, list)
    return page(offset, list.slice(offset, offset + count), count)
  }
  return { list, fetch, initial: new Set(list) }
}

const exportOf = (
  source: ReturnType<typeof changingList>,
  options: Omit<DriftSafe.Options, "resume"> & { readonly pageSize: number; readonly concurrency?: number }
) => {
  const settings = settingsOf(options)
  const state = DriftSafe.make<P>(options, settings.start)
  const events: Array<DriftSafe.DriftEvent> = []
  const driven = drive(source.fetch, settings, safe(state, source.fetch, events), { events })
  return { ...driven, ids: driven.emitted.flatMap((p) => p.records.map((r) => r.id)) }
}

describe("DriftSafe", () => {
  it("an overlap must leave each page something new; the default is a tenth of the page", () => {
    expect(DriftSafe.make<P>({ overlap: 4, endpoint: "partner/list" }, 0).validate(4)).toStrictEqual({
      _tag: "Invalid",
      endpoint: "partner/list",
      reason: "drift-safe paging needs 1 <= overlap < page size, got overlap 4 with page size 4"
    })
    expect(DriftSafe.make<P>({}, 0).validate(1)).toMatchObject({ _tag: "Invalid" })
    expect(DriftSafe.make<P>({}, 0).validate(2)).toBeUndefined()
    expect(DriftSafe.make<P>({}, 0).overlap(100)).toBe(10)
    // A resume point's overlap (widened by recoveries) wins.
    expect(DriftSafe.make<P>({ overlap: 3, resume: { overlap: 6 } }, 0).overlap(100)).toBe(6)
  })

  it("a record without an id is a failure naming where it is", () => {
    const state = DriftSafe.make<PageOrder.Page<unknown>>({ endpoint: "partner/list", idField: "code" }, 0)
    const records = [{ code: "A" }, { name: "no code" }]
    expect(state.step({ offset: 0, count: 2, received: 2, records, raw: records, invalid: [] }, 2)).toStrictEqual({
      _tag: "Failed",
      failure: {
        _tag: "MissingId",
        endpoint: "partner/list",
        path: "data[1].code",
        reason: "drift-safe paging needs an id (a string or a number) on every record",
        offset: 1
      }
    })
  })

  it("a shift within the overlap: repeated records dropped, the shift told; a record with another's id, dropped", () => {
    const state = DriftSafe.make<P>({ overlap: 2 }, 0)
    expect(state.step(page(0, [1, 2, 3, 4]), 4)).toMatchObject({ _tag: "Taken", events: [] })
    // One record inserted ahead: the page at 2, meant to share 3 and 4, holds 2, 3 and 4.
    const shifted = state.step(page(2, [2, 3, 4, 5]), 4)
    expect(shifted).toMatchObject({
      _tag: "Taken",
      step: { fresh: 1 },
      events: [{ _tag: "Shifted", offset: 2, by: 1 }]
    })
    if (shifted._tag === "Taken") expect(shifted.step.emit[0]?.records).toStrictEqual([{ id: 5 }])
    // Record 5 again with other content: not emitted, told once.
    const records = [{ id: 4 }, { id: 5, name: "renamed" }, { id: 6 }, { id: 7 }]
    const updated = { offset: 4, count: 4, received: 4, records, raw: records, invalid: [] }
    expect(state.step(updated, 4)).toMatchObject({ events: [{ _tag: "Dropped", offset: 5, id: 5 }] })
    expect(state.step({ ...updated, offset: 6 }, 4)).toMatchObject({ events: [{ _tag: "Shifted", offset: 6, by: 2 }] })
  })

  it("a page that overlaps nothing read: a recovery steps back, walks forward, widens the overlap", () => {
    const state = DriftSafe.make<P>({ overlap: 1 }, 0)
    state.step(page(0, [1, 2, 3, 4]), 4)
    const lost = state.step(page(3, [9, 10, 11, 12]), 4)
    if (lost._tag !== "Lost") throw new Error(lost._tag)
    // Stride 4 - 2 (the overlap doubled): back to 1.
    expect(lost.recovery.next()).toStrictEqual({ _tag: "Fetch", offset: 1, count: 4 })
    lost.recovery.feed(page(1, [4, 7, 8, 9]))
    // Forward from there, sharing two records: the lost page's offset, whose first answer (tried again) overlaps now.
    const done = lost.recovery.next()
    expect(done).toMatchObject({
      _tag: "Done",
      events: [
        { _tag: "Shifted", offset: 1, by: -2 },
        { _tag: "Shifted", offset: 3, by: -1 },
        { _tag: "Recovered", offset: 3, requests: 1, overlap: 2 }
      ]
    })
    if (done._tag === "Done") {
      expect(done.step.emit.flatMap((p) => p.records.map((r) => r.id))).toStrictEqual([7, 8, 9, 10, 11, 12])
    }
    expect(state.overlap(4)).toBe(2)
  })

  it("a recovery that finds nothing within its budget fails, saying where and how many requests it spent", () => {
    const state = DriftSafe.make<P>({ overlap: 1, maxRecoveryRequests: 2, endpoint: "partner/list" }, 0)
    state.step(page(0, [1, 2, 3, 4]), 4)
    const lost = state.step(page(3, [20, 21, 22, 23]), 4)
    if (lost._tag !== "Lost") throw new Error(lost._tag)
    for (let i = 0; i < 2; i++) {
      const next = lost.recovery.next()
      if (next._tag !== "Fetch") throw new Error(next._tag)
      lost.recovery.feed(page(next.offset, [30 + 4 * i, 31 + 4 * i, 32 + 4 * i, 33 + 4 * i]))
    }
    expect(lost.recovery.next()).toStrictEqual({
      _tag: "Fail",
      failure: { _tag: "Drift", endpoint: "partner/list", offset: 3, requests: 2 }
    })
  })

  it("deletes ahead of the export between two pages, within the overlap: nothing skipped, nothing repeated", () => {
    const source = changingList(40, (n, list) => {
      if (n === 3) list.splice(0, 2)
    })
    const { events, failure, ids } = exportOf(source, { pageSize: 10, overlap: 3, concurrency: 1 })
    expect(failure).toBeUndefined()
    expect(ids).toStrictEqual([...source.initial])
    expect(events).toStrictEqual([{ _tag: "Shifted", offset: 21, by: -2 }])
  })
})
