import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import * as Pager from "../src/Pager.js"
import { drive, pageOf, plain, settingsOf } from "./drive.js"

// The engine on its own, driven by hand (./drive.ts): plain data in, pages, cancellations and failures out. Its
// behaviour through fibers and streams is tested in packages/streams/test (Paginate, Misbehaving, Drift).

type Row = { readonly n: number }
const rows = (length: number): ReadonlyArray<Row> => Array.from({ length }, (_, n) => ({ n }))
const ids = (pages: ReadonlyArray<Pager.Page<Row>>) => pages.flatMap((page) => page.records.map((r) => r.n))

describe("Pager.settings", () => {
  it("defaults, a resume point's plan, and options that are not what they must be", () => {
    expect(settingsOf({})).toStrictEqual({
      endpoint: "list",
      plan: { size: Pager.DEFAULT_MAX_PAGE_SIZE, served: 0, suspect: undefined, quiet: 0 },
      start: 0,
      tail: undefined,
      concurrency: 4
    })
    const resume = { offset: 120, pageSize: 30, served: 30, suspect: 7, tail: [1, 2] }
    expect(settingsOf({ resume, startOffset: 5, pageSize: 100 })).toMatchObject({
      plan: { size: 30, served: 30, suspect: 7, quiet: 0 },
      start: 120,
      tail: [1, 2]
    })
    for (
      const [options, reason] of [
        [{ pageSize: 0 }, `the page size must be an integer >= 1 or "auto"`],
        [{ maxPageSize: 1.5 }, "maxPageSize must be an integer >= 1"],
        [{ concurrency: 0 }, "concurrency must be an integer >= 1"],
        [{ startOffset: -1 }, "the start offset must be an integer >= 0"],
        [{ resume: { offset: 0, pageSize: 0, served: 0 } }, "the resume point holds no valid page size"]
      ] as const
    ) {
      expect(Pager.settings({ ...options, endpoint: "partner/list" })).toStrictEqual({
        ok: false,
        failure: { _tag: "Invalid", endpoint: "partner/list", reason }
      })
    }
  })
})

describe("Pager.make", () => {
  it("property: any list, server limit, page size and concurrency: every record once, in order, to the end", () =>
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 400 }),
        fc.option(fc.integer({ min: 1, max: 60 }), { nil: undefined }),
        fc.integer({ min: 1, max: 80 }),
        fc.integer({ min: 1, max: 6 }),
        (length, max, pageSize, concurrency) => {
          const list = rows(length)
          const fetch = (offset: number, count: number) => pageOf(list, offset, count, max)
          const { emitted, failure } = drive(fetch, settingsOf({ pageSize, concurrency }), plain())
          expect(failure).toBeUndefined()
          expect(ids(emitted)).toStrictEqual(list.map((r) => r.n))
          // Only the last page says there is nothing to resume.
          expect(emitted.map((page) => page.next === undefined)).toStrictEqual(
            emitted.map((_, i) => i === emitted.length - 1)
          )
        }
      ),
      { numRuns: 500 }
    ))

  it("property: stopped after any page and resumed from its next, every record once", () =>
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 300 }),
        fc.option(fc.integer({ min: 1, max: 40 }), { nil: undefined }),
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 1, max: 20 }),
        (length, max, pageSize, stopAfter) => {
          const list = rows(length)
          const fetch = (offset: number, count: number) => pageOf(list, offset, count, max)
          const first = drive(fetch, settingsOf({ pageSize, concurrency: 2 }), plain(), { take: stopAfter })
          const next = first.emitted[first.emitted.length - 1]?.next
          const rest = next === undefined
            ? []
            : drive(fetch, settingsOf({ resume: JSON.parse(JSON.stringify(next)), concurrency: 3 }), plain()).emitted
          expect([...ids(first.emitted), ...ids(rest)]).toStrictEqual(list.map((r) => r.n))
        }
      ),
      { numRuns: 300 }
    ))

  it("pages in flight double with each full page; those past the end are cancelled as list-ended", () => {
    const list = rows(750)
    const asked: Array<number> = []
    const fetch = (offset: number, count: number) => {
      asked.push(offset)
      return pageOf(list, offset, count)
    }
    const { cancelled, emitted } = drive(fetch, settingsOf({ pageSize: 100, concurrency: 4 }), plain())
    expect(ids(emitted)).toStrictEqual(list.map((r) => r.n))
    // 0; then 100 and 200; then four in flight. The short page at 700 moves the grid to 750 (the pages past it are no
    // longer wanted), where an empty page ends the list.
    expect(asked).toStrictEqual([0, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 750])
    expect(cancelled.map((c) => [c.reason, c.handles.map((page) => page.offset)])).toStrictEqual([
      ["paging-moved", [800, 900, 1000]],
      ["list-ended", []]
    ])
  })

  it("a response too large halves the page and pages again from the same offset", () => {
    const list = rows(1000)
    const pager = Pager.make<Pager.Page<Row>, string>(
      settingsOf({ pageSize: 100, concurrency: 4 }),
      Pager.plainMode
    )
    const judgeNext = () => {
      for (const ask of pager.launch()) pager.started(ask, `fiber@${ask.offset}`)
      const head = pager.take()
      const page = pageOf(list, head.offset, head.count)
      const context = pager.context()
      return pager.judge(Pager.plainStep(page, context.tail, context.previous), undefined)
    }
    judgeNext()
    judgeNext()
    // Two full pages: four in flight, 200 the oldest.
    const launched = pager.launch()
    expect(launched.map((ask) => ask.offset)).toStrictEqual([300, 400, 500])
    for (const ask of launched) pager.started(ask, `fiber@${ask.offset}`)
    const head = pager.take()
    expect(head).toStrictEqual({ offset: 200, count: 100, handle: "fiber@200" })
    expect(pager.tooLarge(head.offset)).toStrictEqual({
      change: { size: 50, previous: 100, reason: "too-large" },
      cancel: { reason: "paging-moved", handles: ["fiber@300", "fiber@400", "fiber@500"] }
    })
    expect(pager.launch()).toStrictEqual([{ offset: 200, count: 50 }])
    expect(pager.plan.size).toBe(50)
  })

  it("a response too large at a page of one record: nothing to halve", () => {
    const pager = Pager.make<Pager.Page<Row>, number>(settingsOf({ pageSize: 1 }), Pager.plainMode)
    for (const ask of pager.launch()) pager.started(ask, ask.offset)
    expect(pager.tooLarge(pager.take().offset)).toBeUndefined()
  })

  it("a server that ignores list_offset is a Loop, not an endless list", () => {
    const list = rows(25)
    const { emitted, failure } = drive(
      (offset, count): Pager.Page<Row> => ({ ...pageOf(list, 0, count), offset }),
      settingsOf({ pageSize: 10, concurrency: 1, endpoint: "partner/list" }),
      plain<Pager.Page<Row>>()
    )
    expect(ids(emitted)).toStrictEqual(list.slice(0, 10).map((r) => r.n))
    expect(failure).toMatchObject({ _tag: "Loop", endpoint: "partner/list", offset: 10 })
  })

  it("stop hands every page in flight, once", () => {
    const pager = Pager.make<Pager.Page<Row>, number>(settingsOf({ pageSize: 10 }), Pager.plainMode)
    for (const ask of pager.launch()) pager.started(ask, ask.offset)
    expect(pager.stop("stream-ended")).toStrictEqual({ reason: "stream-ended", handles: [0] })
    expect(pager.stop("stream-failed")).toStrictEqual({ reason: "stream-failed", handles: [] })
  })
})
