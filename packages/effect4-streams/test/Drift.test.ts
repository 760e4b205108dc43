import { describe, expect, it } from "@effect/vitest"
import type { Page } from "@erp-client/effect4-core"
import { Paginate } from "@erp-client/effect4-streams"
import { Arbitrary, Effect, Exit, Schema, Stream } from "effect"

// Drift-safe paging against an in-memory list that changes before every fetch, as a table does under a long export.

interface Row {
  readonly id: number
}

type Change = { readonly insert: number } | { readonly delete: number }

/**
 * A list of ids 1..size; `changes(pageNumber)` are applied right before each page of the list answers (positions in
 * [0, 1)). The far page paging asks when a page repeats the one before it (offset 10,000 and on) is not a page of the
 * export: the list does not change for it. The server serves at most `max` records a page, whatever is asked.
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
    ids: Exit.isSuccess(exit) ? exit.value.flatMap((page) => page.records.map((r) => r.id)) : []
  }))

/** Duplicates among `emitted`, records present from start to end that never came out, and whether those kept order. */
const audit = (emitted: ReadonlyArray<number>, initial: ReadonlySet<number>, final: ReadonlyArray<number>) => {
  const once = new Set(emitted)
  const survivors = final.filter((id) => initial.has(id))
  const position = new Map(survivors.map((id, i) => [id, i]))
  const seen = emitted.filter((id) => position.has(id)).map((id) => position.get(id)!)
  return {
    duplicates: emitted.length - once.size,
    skipped: survivors.filter((id) => !once.has(id)).length,
    inOrder: seen.every((p, i) => i === 0 || seen[i - 1]! < p)
  }
}

const clean = { duplicates: 0, skipped: 0, inOrder: true }

describe("plain paging under change", () => {
  it.effect("deletes ahead of the export skip records, inserts ahead of it repeat them", () =>
    Effect.gen(function*() {
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
      expect(audit(ids, source.initial, source.list)).toStrictEqual(clean)
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
      expect(audit(ids, source.initial, source.list)).toStrictEqual(clean)
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
      expect(audit(ids, source.initial, source.list)).toStrictEqual(clean)
      const recovered = events.filter((event) => event._tag === "Recovered")
      expect(recovered).toHaveLength(1)
      expect(recovered[0]).toMatchObject({ offset: 24 })
      expect((recovered[0] as { requests: number }).requests).toBeGreaterThanOrEqual(3)
    }))

  it.effect("a list that moves faster than the recovery budget fails with PagingDrift, having emitted nothing twice", () =>
    Effect.gen(function*() {
      const source = changingList(2000, (n) => n >= 1 ? Array.from({ length: 50 }, () => ({ delete: 0 })) : [])
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
      expect(exit._tag === "Failure" && Exit.findErrorOption(exit)).toMatchObject({
        _tag: "Some",
        value: { _tag: "PagingDrift", requests: 4, endpoint: "partner/list" }
      })
      expect(new Set(emitted).size).toBe(emitted.length)
    }))

  it.effect("resumes at its last page with the ids it emitted: nothing repeated, nothing skipped", () =>
    Effect.gen(function*() {
      const source = changingList(100, (n) => n === 4 ? [{ delete: 0.05 }] : [])
      const firstRun = yield* Paginate.safePages(source.fetch, { pageSize: 10, overlap: 2, concurrency: 1 }).pipe(
        Stream.take(3),
        Stream.runCollect
      )
      const last = firstRun[firstRun.length - 1]!
      const before = firstRun.flatMap((page) => page.records.map((r) => r.id))
      expect(last.next).toStrictEqual({ offset: last.offset, pageSize: 10, served: 10, overlap: 2 })
      const { ids } = yield* run(
        Paginate.safePages(source.fetch, { concurrency: 1, resume: last.next, resumeAfter: before })
      )
      expect(audit([...before, ...ids], source.initial, source.list)).toStrictEqual(clean)
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
      const missing = yield* Effect.flip(Stream.runDrain(Paginate.safePages(noId, { pageSize: 10 })))
      expect(missing).toMatchObject({ _tag: "DecodeError", path: "data[0].id" })
      const source = changingList(10, () => [])
      const badOverlap = yield* Effect.flip(
        Stream.runDrain(Paginate.safePages(source.fetch, { pageSize: 10, overlap: 10 }))
      )
      expect(badOverlap).toMatchObject({ _tag: "InvalidRequest" })
      expect(source.fetches()).toBe(0)
    }))

  it.effect("a list that shrinks past a recovery's walk: an empty page there is not the end, nothing is skipped", () =>
    Effect.gen(function*() {
      const walked = changingList(
        4,
        (n) =>
          [[], [{ insert: 0 }, { delete: 0 }, { delete: 0 }], [{ insert: 0 }], [{ delete: 0 }, { delete: 0 }, {
            delete: 0
          }]][n] ?? []
      )
      const first = yield* run(Paginate.safePages(walked.fetch, { pageSize: 2, overlap: 1, concurrency: 1 }))
      expect(Exit.isSuccess(first.exit)).toBe(true)
      expect(audit(first.ids, walked.initial, walked.list)).toStrictEqual(clean)
      const clamped = changingList(
        6,
        (n) => [[], [{ delete: 0 }], [], [{ delete: 0 }, { delete: 0 }, { delete: 0 }, { delete: 0 }]][n] ?? [],
        3
      )
      const second = yield* run(Paginate.safePages(clamped.fetch, { pageSize: 4, concurrency: 1 }))
      expect(Exit.isSuccess(second.exit)).toBe(true)
      expect(audit(second.ids, clamped.initial, clamped.list)).toStrictEqual(clean)
    }))

  it.effect("a recovery at the end of a list of one record: the empty page right after it ends the export", () =>
    Effect.gen(function*() {
      const source = changingList(1, (n) => [[], [{ insert: 0 }], [{ delete: 0 }]][n] ?? [])
      const options = { pageSize: 2, overlap: 1, concurrency: 1, maxRecoveryRequests: 64 }
      const before = yield* Paginate.safePages(source.fetch, options).pipe(Stream.take(2), Stream.runCollect)
      const emitted = before.flatMap((page) => page.records.map((r) => r.id))
      const after = yield* run(
        Paginate.safePages(source.fetch, { ...options, resume: before[1]?.next, resumeAfter: emitted })
      )
      expect(Exit.isSuccess(after.exit)).toBe(true)
      expect(audit([...emitted, ...after.ids], source.initial, source.list)).toStrictEqual(clean)
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

  const position = Schema.Number.check(Schema.isBetween({ minimum: 0, maximum: 0.999 }))
  const Change = Schema.Union([Schema.Struct({ insert: position }), Schema.Struct({ delete: position })])
  const between = (minimum: number, maximum: number) => Schema.Int.check(Schema.isBetween({ minimum, maximum }))

  // A list of up to 300, pages of 2 to 25 overlapping by 1 to a page less, and up to 6 changes before each fetch.
  const underChange = Arbitrary.map(
    Arbitrary.schema(Schema.Struct({
      size: between(0, 300),
      pageSize: between(2, 25),
      overlapWanted: between(1, 24),
      plan: Schema.Array(Schema.Array(Change).check(Schema.isMaxLength(6))).check(Schema.isMaxLength(80))
    })),
    ({ overlapWanted, pageSize, plan, size }) => ({
      pageSize,
      overlap: Math.min(overlapWanted, pageSize - 1),
      plan: plan as ReadonlyArray<ReadonlyArray<Change>>,
      size
    })
  )

  // A drift-safe export of `source`: each id at most once, in order, and every survivor when it ends (else PagingDrift).
  const atMostOnceEverySurvivor = (
    source: ReturnType<typeof changingList>,
    options: Paginate.PagingOptions & Paginate.SafeOptions
  ) =>
    Effect.gen(function*() {
      const emitted: Array<number> = []
      const exit = yield* Paginate.safePages(source.fetch, { ...options, maxRecoveryRequests: 64 }).pipe(
        Stream.runForEach((page) => Effect.sync(() => emitted.push(...page.records.map((r) => r.id)))),
        Effect.exit
      )
      const found = audit(emitted, source.initial, source.list)
      expect(found.duplicates).toBe(0)
      expect(found.inOrder).toBe(true)
      if (Exit.isSuccess(exit)) expect(found.skipped).toBe(0)
      else expect(Exit.findErrorOption(exit)).toMatchObject({ _tag: "Some", value: { _tag: "PagingDrift" } })
    })

  it.effect.prop(
    "property: under any inserts and deletes, each id at most once, in order; all survivors when it ends",
    [underChange, between(1, 4)],
    ([run, concurrency]) =>
      atMostOnceEverySurvivor(changingList(run.size, (n) => run.plan[n] ?? []), {
        pageSize: run.pageSize,
        overlap: run.overlap,
        concurrency
      }),
    { arbitrary: { runs: 200 } }
  )

  it.effect.prop(
    "property: a server that serves fewer than asked, under change: at most once, in order, every survivor",
    [underChange, between(2, 30), Schema.Union([Schema.Literal("auto"), between(2, 60)]), between(1, 4)],
    ([run, max, pageSize, concurrency]) =>
      atMostOnceEverySurvivor(changingList(run.size, (n) => run.plan[n] ?? [], max), {
        pageSize,
        maxPageSize: 40,
        concurrency
      }),
    { arbitrary: { runs: 200 } }
  )

  it.effect.prop(
    "property: an export stopped after any page and resumed after it, under change, repeats and skips nothing",
    [underChange, between(1, 30)],
    ([run, stopAfter]) =>
      Effect.gen(function*() {
        const source = changingList(run.size, (n) => run.plan[n] ?? [])
        const options = { pageSize: run.pageSize, overlap: run.overlap, concurrency: 1, maxRecoveryRequests: 64 }
        const before = yield* Paginate.safePages(source.fetch, options).pipe(Stream.take(stopAfter), Stream.runCollect)
        const last = before[before.length - 1]
        const after = last?.next === undefined ? [] : yield* Paginate.safePages(source.fetch, {
          ...options,
          resume: last.next,
          resumeAfter: before.flatMap((page) => page.records.map((r) => r.id))
        }).pipe(Stream.runCollect)
        const emitted = [...before, ...after].flatMap((page) => page.records.map((r) => r.id))
        expect(audit(emitted, source.initial, source.list)).toStrictEqual(clean)
      }),
    { arbitrary: { runs: 200 } }
  )
})
