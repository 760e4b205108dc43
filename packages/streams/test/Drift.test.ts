import { describe, expect, it } from "@effect/vitest"
import type { Page } from "@erp-client/core"
import { Paginate } from "@erp-client/streams"
import { Effect, Exit, Stream } from "effect"
import fc from "fast-check"
import { audit } from "./audit.js"

// Drift-safe paging against an in-memory list that changes before every fetch, as a table does under a long export.
// One suite, run against both editions (TEST_PAIRS in scripts/editions.ts); DriftSandbox.test.ts runs an export
// through the client while the sandbox's partners change.

interface Row {
  readonly id: number
}

type Change = { readonly insert: number } | { readonly delete: number }

/**
 * A list of ids 1..size; `changes(pageNumber)` are applied right before each page of the list answers (positions in
 * [0, 1)). The far page paging asks when a page repeats the one before it (to tell a list that moved from a server
 * that ignores the offset) is not a page of the export: the list does not change for it, though it counts as a
 * fetch. The server serves at most `max` records a page, whatever is asked.
 */
const changingList = (size: number, changes: (page: number) => ReadonlyArray<Change>, max = Infinity) => {
  const list = Array.from({ length: size }, (_, i) => i + 1)
  let nextId = size + 1
  let fetches = 0
  let pages = 0
  const asked: Array<{ readonly offset: number; readonly count: number; readonly received: number }> = []
  const fetch = (offset: number, count: number) =>
    Effect.sync((): Page.Page<Row> => {
      fetches++
      for (const change of offset >= 10_000 ? [] : changes(pages++)) {
        if ("insert" in change) list.splice(Math.floor(change.insert * (list.length + 1)), 0, nextId++)
        else if (list.length > 0) list.splice(Math.floor(change.delete * list.length), 1)
      }
      const records = list.slice(offset, offset + Math.min(count, max)).map((id) => ({ id }))
      asked.push({ offset, count, received: records.length })
      return { offset, count, received: records.length, records, raw: records, invalid: [] }
    })
  return { list, fetch, fetches: () => fetches, asked, initial: new Set(list) }
}

const run = <E>(stream: Stream.Stream<Page.Page<Row>, E>) =>
  Effect.map(Effect.exit(Stream.runCollect(stream)), (exit) => ({
    exit,
    ids: Exit.isSuccess(exit) ? Array.from(exit.value).flatMap((page) => page.records.map((r) => r.id)) : []
  }))

describe("plain paging under change", () => {
  it.effect("deletes ahead of the export skip records, inserts ahead of it repeat them", () =>
    Effect.gen(function*() {
      // One delete at the front before the third fetch: the rest of the list moves left by one under the export.
      const deleting = changingList(100, (n) => n === 2 ? [{ delete: 0 }] : [])
      const skipped = yield* run(Paginate.pages(deleting.fetch, { pageSize: 10, concurrency: 1 }))
      expect(audit(skipped.ids, deleting.initial, deleting.list)).toMatchObject({ duplicates: 0, skipped: 1 })

      const inserting = changingList(100, (n) => n === 2 ? [{ insert: 0 }] : [])
      const repeated = yield* run(Paginate.pages(inserting.fetch, { pageSize: 10, concurrency: 1 }))
      expect(audit(repeated.ids, inserting.initial, inserting.list)).toMatchObject({ duplicates: 1, skipped: 0 })
    }))
})

describe("drift-safe paging", () => {
  it.effect("without change: every record once, pages advancing by page size minus overlap", () =>
    Effect.gen(function*() {
      const source = changingList(95, () => [])
      const events: Array<Paginate.DriftEvent> = []
      const { exit, ids } = yield* run(
        Paginate.safePages(source.fetch, {
          pageSize: 10,
          overlap: 2,
          onDrift: (event) => Effect.sync(() => events.push(event))
        })
      )
      expect(Exit.isSuccess(exit)).toBe(true)
      expect(ids).toStrictEqual(source.list)
      expect(events).toStrictEqual([])
      // Offsets 0, 8, ..., 88 (12 pages; plain paging needs 10). The page at 88 is short: one more at 93, sharing the
      // overlap with it, holds only records read (93, 94), and one at 94, sharing just its last record, settles the
      // end (a server whose pages got as short as the overlap would show more there). At most concurrency - 1 pages
      // were in flight past it.
      expect(source.fetches()).toBeLessThanOrEqual(14 + 3)
    }))

  it.effect("deletes ahead within the overlap: no skip, reported as a shift, no extra request", () =>
    Effect.gen(function*() {
      const source = changingList(100, (n) => n === 3 ? [{ delete: 0 }, { delete: 0 }] : [])
      const events: Array<Paginate.DriftEvent> = []
      const { ids } = yield* run(
        Paginate.safePages(source.fetch, {
          pageSize: 10,
          overlap: 3,
          concurrency: 1,
          onDrift: (event) => Effect.sync(() => events.push(event))
        })
      )
      expect(audit(ids, source.initial, source.list)).toStrictEqual({ duplicates: 0, skipped: 0, inOrder: true })
      expect(events).toStrictEqual([Paginate.DriftEvent.Shifted({ offset: 21, by: -2 })])
    }))

  it.effect("inserts ahead: repeated records dropped by id", () =>
    Effect.gen(function*() {
      const source = changingList(100, (n) => n === 3 ? [{ insert: 0 }, { insert: 0 }, { insert: 0 }] : [])
      const events: Array<Paginate.DriftEvent> = []
      const { ids } = yield* run(
        Paginate.safePages(source.fetch, {
          pageSize: 10,
          overlap: 2,
          concurrency: 1,
          onDrift: (event) => Effect.sync(() => events.push(event))
        })
      )
      expect(audit(ids, source.initial, source.list)).toStrictEqual({ duplicates: 0, skipped: 0, inOrder: true })
      expect(events).toStrictEqual([Paginate.DriftEvent.Shifted({ offset: 24, by: 3 })])
    }))

  it.effect("a shift past the overlap: steps back, recovers, skips nothing, and says what it cost", () =>
    Effect.gen(function*() {
      // 25 deletes at the front before the fourth fetch: the page at 24 holds nothing read before.
      const source = changingList(200, (n) => n === 3 ? Array.from({ length: 25 }, () => ({ delete: 0 })) : [])
      const events: Array<Paginate.DriftEvent> = []
      const { exit, ids } = yield* run(
        Paginate.safePages(source.fetch, {
          pageSize: 10,
          overlap: 2,
          concurrency: 2,
          onDrift: (event) => Effect.sync(() => events.push(event))
        })
      )
      expect(Exit.isSuccess(exit)).toBe(true)
      expect(audit(ids, source.initial, source.list)).toStrictEqual({ duplicates: 0, skipped: 0, inOrder: true })
      const recovered = events.filter((event) => event._tag === "Recovered")
      expect(recovered).toHaveLength(1)
      expect(recovered[0]).toMatchObject({ offset: 24 })
      expect((recovered[0] as { requests: number }).requests).toBeGreaterThanOrEqual(3)
    }))

  it.effect("a list that moves faster than the recovery budget fails with PagingDrift, having emitted nothing twice", () =>
    Effect.gen(function*() {
      // After the first page, 50 deletes at the front before every fetch.
      const source = changingList(
        2000,
        (n) => n >= 1 ? Array.from({ length: 50 }, () => ({ delete: 0 })) : []
      )
      const emitted: Array<number> = []
      const exit = yield* Paginate.safePages(source.fetch, {
        pageSize: 10,
        overlap: 2,
        concurrency: 1,
        maxRecoveryRequests: 4,
        endpoint: "partner/list"
      }).pipe(
        Stream.runForEach((page) => Effect.sync(() => emitted.push(...page.records.map((r) => r.id)))),
        Effect.exit
      )
      expect(exit).toStrictEqual(Exit.fail(expect.objectContaining({ _tag: "PagingDrift", requests: 4 })))
      expect(new Set(emitted).size).toBe(emitted.length)
    }))

  it.effect("resumes at its last page with the ids it emitted: nothing repeated, nothing skipped", () =>
    Effect.gen(function*() {
      const source = changingList(100, (n) => n === 4 ? [{ delete: 0.05 }] : [])
      const firstRun = yield* Paginate.safePages(source.fetch, { pageSize: 10, overlap: 2, concurrency: 1 }).pipe(
        Stream.take(3),
        Stream.runCollect,
        Effect.map((pages) => Array.from(pages))
      )
      const last = firstRun[firstRun.length - 1]
      const before = firstRun.flatMap((page) => page.records.map((r) => r.id))
      expect(last.next).toStrictEqual({ offset: last.offset, pageSize: 10, served: 10, overlap: 2 })
      const { ids } = yield* run(
        Paginate.safePages(source.fetch, { concurrency: 1, resume: last.next, resumeAfter: before })
      )
      expect(audit([...before, ...ids], source.initial, source.list)).toStrictEqual({
        duplicates: 0,
        skipped: 0,
        inOrder: true
      })
    }))

  it.effect("records without an id, or an overlap that cannot work, are typed errors", () =>
    Effect.gen(function*() {
      const noId = (offset: number, count: number) =>
        Effect.succeed<Page.Page<unknown>>({
          offset,
          count,
          received: 1,
          records: [{ name: "x" }],
          raw: [{ name: "x" }],
          invalid: []
        })
      const missing = yield* Effect.exit(Stream.runDrain(Paginate.safePages(noId, { pageSize: 10 })))
      expect(missing).toStrictEqual(Exit.fail(expect.objectContaining({ _tag: "DecodeError", path: "data[0].id" })))
      const source = changingList(10, () => [])
      const badOverlap = yield* Effect.exit(
        Stream.runDrain(Paginate.safePages(source.fetch, { pageSize: 10, overlap: 10 }))
      )
      expect(badOverlap).toStrictEqual(Exit.fail(expect.objectContaining({ _tag: "InvalidRequest" })))
      expect(source.fetches()).toBe(0)
    }))

  const change = fc.oneof(
    fc.record({ insert: fc.double({ min: 0, max: 0.999, noNaN: true }) }),
    fc.record({ delete: fc.double({ min: 0, max: 0.999, noNaN: true }) })
  ) as fc.Arbitrary<Change>

  // A list of up to 300, pages of 2 to 25 overlapping by 1 to a page less, and up to 6 changes before each fetch.
  const underChange = fc.record({
    size: fc.integer({ min: 0, max: 300 }),
    pageSize: fc.integer({ min: 2, max: 25 }),
    overlapWanted: fc.integer({ min: 1, max: 24 }),
    plan: fc.array(fc.array(change, { maxLength: 6 }), { maxLength: 80 })
  }).map(({ overlapWanted, pageSize, plan, size }) => ({
    pageSize,
    overlap: Math.min(overlapWanted, pageSize - 1),
    plan,
    size
  }))
  // A drift-safe export of `source`: each id at most once, in order, and every survivor when it ends (else PagingDrift).
  const atMostOnceEverySurvivor = async (
    source: ReturnType<typeof changingList>,
    options: Paginate.PagingOptions & Paginate.SafeOptions
  ) => {
    const emitted: Array<number> = []
    const exit = await Effect.runPromise(
      Paginate.safePages(source.fetch, { ...options, maxRecoveryRequests: 64 }).pipe(
        Stream.runForEach((page) => Effect.sync(() => emitted.push(...page.records.map((r) => r.id)))),
        Effect.exit
      )
    )
    const found = audit(emitted, source.initial, source.list)
    expect(found.duplicates).toBe(0)
    expect(found.inOrder).toBe(true)
    if (Exit.isSuccess(exit)) expect(found.skipped).toBe(0)
    else expect(exit).toStrictEqual(Exit.fail(expect.objectContaining({ _tag: "PagingDrift" })))
  }

  // A fresh list for each run: the generated values hold no state of their own (fast-check may replay them).
  const listFor = (run: { readonly size: number; readonly plan: ReadonlyArray<ReadonlyArray<Change>> }) =>
    changingList(run.size, (n) => run.plan[n] ?? [])

  it.effect("property: under any inserts and deletes, each id at most once, in order; all survivors when it ends", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(
          underChange,
          fc.integer({ min: 1, max: 4 }),
          async (run, concurrency) => {
            const { overlap, pageSize } = run
            await atMostOnceEverySurvivor(listFor(run), { pageSize, overlap, concurrency })
          }
        ),
        { numRuns: 200 }
      )
    ))

  it.effect("property: a server that serves fewer than asked, under change: at most once, in order, every survivor", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(
          underChange,
          fc.integer({ min: 2, max: 30 }),
          fc.oneof(fc.constant("auto" as const), fc.integer({ min: 2, max: 60 })),
          fc.integer({ min: 1, max: 4 }),
          async (run, max, pageSize, concurrency) => {
            const source = changingList(run.size, (n) => run.plan[n] ?? [], max)
            await atMostOnceEverySurvivor(source, { pageSize, maxPageSize: 40, concurrency })
          }
        ),
        { numRuns: 200 }
      )
    ))

  // Found by the resume property below (1 run in about 4,000 to 40,000): the list shrank under a recovery's walk
  // forward, past the page it had just taken, and the empty page that followed was taken for the end of the list.
  it.effect("a list that shrinks past a recovery's walk: an empty page there is not the end, nothing is skipped", () =>
    Effect.gen(function*() {
      // [1, 2, 3, 4]; the page at 1 finds [3, 4] after three changes (nothing read: a recovery), the walk takes [6, 2]
      // at 0 (full), and three deletes leave [4] before it asks at 1: empty, while 4 was never emitted.
      const walked = changingList(
        4,
        (n) =>
          [[], [{ insert: 0 }, { delete: 0 }, { delete: 0 }], [{ insert: 0 }], [{ delete: 0 }, { delete: 0 }, {
            delete: 0
          }]][n] ?? []
      )
      const first = yield* run(Paginate.safePages(walked.fetch, { pageSize: 2, overlap: 1, concurrency: 1 }))
      expect(Exit.isSuccess(first.exit)).toBe(true)
      expect(audit(first.ids, walked.initial, walked.list)).toStrictEqual({ duplicates: 0, skipped: 0, inOrder: true })
      // The same where the server serves at most 3 of the 4 asked: the page the walk took ([2, 3, 4] at 0) is short
      // because it is clamped, not because the list ends there; four deletes leave [6] before the empty page at 1.
      const clamped = changingList(
        6,
        (n) => [[], [{ delete: 0 }], [], [{ delete: 0 }, { delete: 0 }, { delete: 0 }, { delete: 0 }]][n] ?? [],
        3
      )
      const second = yield* run(Paginate.safePages(clamped.fetch, { pageSize: 4, concurrency: 1 }))
      expect(Exit.isSuccess(second.exit)).toBe(true)
      expect(audit(second.ids, clamped.initial, clamped.list)).toStrictEqual({
        duplicates: 0,
        skipped: 0,
        inOrder: true
      })
    }))

  // Found by the resume property once a recovery stepped back after an empty page that did not follow the end of the
  // list: at the end of a list no page of which was longer than its last, the empty page right after that last record
  // was not taken for the end, and the walk stepped back and forth until PagingDrift.
  it.effect("a recovery at the end of a list of one record: the empty page right after it ends the export", () =>
    Effect.gen(function*() {
      // [1]; [2, 1] when the page at 1 answers (it holds 1 again); [1] when the resumed run asks at 1 (empty: a recovery).
      const source = changingList(1, (n) => [[], [{ insert: 0 }], [{ delete: 0 }]][n] ?? [])
      const options = { pageSize: 2, overlap: 1, concurrency: 1, maxRecoveryRequests: 64 }
      const before = yield* Paginate.safePages(source.fetch, options).pipe(
        Stream.take(2),
        Stream.runCollect,
        Effect.map((pages) => Array.from(pages))
      )
      const emitted = before.flatMap((page) => page.records.map((r) => r.id))
      const after = yield* run(
        Paginate.safePages(source.fetch, { ...options, resume: before[1]?.next, resumeAfter: emitted })
      )
      expect(Exit.isSuccess(after.exit)).toBe(true)
      expect(audit([...emitted, ...after.ids], source.initial, source.list)).toStrictEqual({
        duplicates: 0,
        skipped: 0,
        inOrder: true
      })
      expect(source.fetches()).toBeLessThan(10)
    }))

  it.effect("a server that serves fewer than asked and a list that does not change: every record, once", () =>
    Effect.gen(function*() {
      for (const concurrency of [1, 4, 8]) {
        const source = changingList(300, () => [], 50)
        const { exit, ids } = yield* run(Paginate.safePages(source.fetch, { pageSize: 100, concurrency }))
        expect(Exit.isSuccess(exit)).toBe(true)
        expect(ids).toStrictEqual(source.list)
      }
    }))

  it.effect("property: an export stopped after any page and resumed after it, under change, repeats and skips nothing", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(
          underChange,
          fc.integer({ min: 1, max: 30 }),
          async (run, stopAfter) => {
            const { overlap, pageSize } = run
            const source = listFor(run)
            const options = { pageSize, overlap, concurrency: 1, maxRecoveryRequests: 64 }
            const before = await Effect.runPromise(
              Paginate.safePages(source.fetch, options).pipe(
                Stream.take(stopAfter),
                Stream.runCollect,
                Effect.map((pages) => Array.from(pages))
              )
            )
            const last = before[before.length - 1]
            const after = last?.next === undefined ? [] : await Effect.runPromise(
              Paginate.safePages(source.fetch, {
                ...options,
                resume: last.next,
                resumeAfter: before.flatMap((page) => page.records.map((r) => r.id))
              }).pipe(
                Stream.runCollect,
                Effect.map((pages) => Array.from(pages))
              )
            )
            const emitted = [...before, ...after].flatMap((page) => page.records.map((r) => r.id))
            expect(audit(emitted, source.initial, source.list)).toStrictEqual({
              duplicates: 0,
              skipped: 0,
              inOrder: true
            })
          }
        ),
        { numRuns: 200 }
      )
    ))

  it.effect("property: fewer changes between two fetches than the overlap cost no recovery and lose nothing", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 0, max: 300 }),
          fc.integer({ min: 3, max: 25 }),
          fc.integer({ min: 2, max: 24 }),
          fc.array(fc.array(change, { maxLength: 23 }), { maxLength: 80 }),
          async (size, pageSize, overlapWanted, plan) => {
            const overlap = Math.min(overlapWanted, pageSize - 1)
            const most = Math.min(overlap - 1, pageSize - overlap)
            const source = changingList(size, (n) => (plan[n] ?? []).slice(0, most))
            // Each event, with whether the page it looked back from was asked right after a short page: the page
            // that settles whether a short page was the end, sharing all but one of its records with it.
            const events: Array<{ readonly event: Paginate.DriftEvent; readonly settling: boolean }> = []
            const settling = (offset: number) => {
              let at = source.asked.length - 1
              while (at >= 0 && source.asked[at]!.offset !== offset) at--
              return at > 0 && source.asked[at - 1]!.received < source.asked[at - 1]!.count
            }
            const emitted = await Effect.runPromise(
              Paginate.safePages(source.fetch, {
                pageSize,
                overlap,
                concurrency: 1,
                onDrift: (event) => Effect.sync(() => events.push({ event, settling: settling(event.offset) }))
              }).pipe(
                Stream.runCollect,
                Effect.map((pages) => Array.from(pages).flatMap((page) => page.records.map((r) => r.id)))
              )
            )
            expect(audit(emitted, source.initial, source.list)).toStrictEqual({
              duplicates: 0,
              skipped: 0,
              inOrder: true
            })
            // A short page (the end of the list) is settled by one more page that shares all but one of its records
            // with it (fewer than the overlap when the page is short), so that page may look back. Every other page
            // shares the whole overlap: fewer changes than that never cost a look back.
            expect(events.filter(({ event, settling }) => event._tag === "Recovered" && !settling)).toStrictEqual([])
          }
        ),
        { numRuns: 300 }
      )
    ))
})
