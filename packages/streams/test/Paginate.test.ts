import { describe, expect, it } from "@effect/vitest"
import type { Page } from "@erp-client/core"
import { Paginate } from "@erp-client/streams"
import { Duration, Effect, Exit, Fiber, Stream } from "effect"
import fc from "fast-check"
import { fork, TestClock } from "./kit.js"

// Paging any offset-paged source, on the TestClock: records in order and once at any concurrency and page size; the
// end taken only from a page that brings nothing; servers that clamp, filter after the cut, change their page size or
// ignore list_offset; resume points. One suite, run against both editions (TEST_PAIRS in scripts/editions.ts).

/** A source of `total` records whose pages answer after uneven delays, recording each request. */
const source = (total: number) => {
  const requested: Array<number> = []
  const fetch = (offset: number, count: number): Effect.Effect<Page.Page<number>> =>
    Effect.sync(() => requested.push(offset)).pipe(
      Effect.andThen(Effect.sleep(Duration.millis(((offset / count) * 37) % 50 + 1))),
      Effect.as(Array.from({ length: Math.max(0, Math.min(count, total - offset)) }, (_, i) => offset + i)),
      Effect.map((records) => ({ offset, count, received: records.length, records, raw: records, invalid: [] }))
    )
  return { requested, fetch }
}

const run = <A, E>(stream: Stream.Stream<A, E>) =>
  Effect.gen(function*() {
    const fiber = yield* fork(Stream.runCollect(stream))
    yield* TestClock.adjust("1 minute")
    return Array.from(yield* Fiber.join(fiber))
  })

describe("Paginate.pages", () => {
  it.effect("emits records in offset order, each once, whatever order the pages finish in", () =>
    Effect.gen(function*() {
      for (const concurrency of [1, 2, 3, 8]) {
        const { fetch } = source(103)
        const records = yield* run(Paginate.records(Paginate.pages(fetch, { pageSize: 10, concurrency })))
        expect(records).toEqual(Array.from({ length: 103 }, (_, i) => i))
      }
    }))

  it.effect("sends offsets 0, n, 2n, … and ends at the first short page, even an empty one", () =>
    Effect.gen(function*() {
      const { fetch, requested } = source(30)
      const pages = yield* run(Paginate.pages(fetch, { pageSize: 10, concurrency: 1 }))
      expect(pages.map((p) => p.offset)).toEqual([0, 10, 20, 30])
      expect(requested).toEqual([0, 10, 20, 30])
      expect(pages.map((p) => p.next?.offset)).toEqual([10, 20, 30, undefined])
    }))

  it.effect("requests no page past a short page it has seen", () =>
    Effect.gen(function*() {
      const { fetch, requested } = source(35)
      const records = yield* run(Paginate.records(Paginate.pages(fetch, { pageSize: 5, concurrency: 4 })))
      expect(records).toHaveLength(35)
      // Pages up to offset 35 (the empty one) are needed; past it, only those in flight when it answered.
      expect(requested.filter((o) => o > 35).length).toBeLessThanOrEqual(4 - 1)
      expect(new Set(requested).size).toBe(requested.length)
    }))

  it.effect("starts from a given offset", () =>
    Effect.gen(function*() {
      const { fetch, requested } = source(50)
      const records = yield* run(Paginate.records(Paginate.pages(fetch, { pageSize: 10, startOffset: 30 })))
      expect(records).toEqual(Array.from({ length: 20 }, (_, i) => 30 + i))
      expect(Math.min(...requested)).toBe(30)
    }))
})

/** A source of `total` records whose server serves at most `max` a page, whatever is asked; records every request. */
const clamping = (total: number, max: number) => {
  const requests: Array<{ offset: number; count: number }> = []
  const fetch = (offset: number, count: number): Effect.Effect<Page.Page<number>> =>
    Effect.sync(() => {
      requests.push({ offset, count })
      const records = Array.from({ length: Math.max(0, Math.min(count, max, total - offset)) }, (_, i) => offset + i)
      return { offset, count, received: records.length, records, raw: records, invalid: [] }
    })
  return { requests, fetch }
}

const pageSizeArb = fc.oneof(fc.constant("auto" as const), fc.integer({ min: 1, max: 80 }))

describe("the server's largest page, unknown", () => {
  it.effect("a server that serves fewer than asked: every record once, the size learned, nothing ended early", () =>
    Effect.gen(function*() {
      // 300 records, 50 a page at most: asked for 100 (and "auto", 1000), every record comes out once, in order.
      for (const pageSize of [100, "auto"] as const) {
        for (const concurrency of [1, 4, 8]) {
          const { fetch, requests } = clamping(300, 50)
          const sizes: Array<Paginate.PageSizeChange> = []
          const pages = yield* run(Paginate.pages(fetch, {
            pageSize,
            concurrency,
            onPageSize: (change) => Effect.sync(() => sizes.push(change))
          }))
          expect(pages.flatMap((p) => p.records)).toEqual(Array.from({ length: 300 }, (_, i) => i))
          expect(sizes).toEqual([{ size: 50, previous: pageSize === "auto" ? 1000 : 100, reason: "served" }])
          // Six pages of 50 and the empty one that ends the list; past it, only what was in flight.
          expect(requests.length).toBeLessThanOrEqual(7 + concurrency - 1)
          expect(pages.at(-1)!.next).toBeUndefined()
          // The first short page is not settled yet (clamped, filtered or the last); the second settles it.
          expect(pages[0]!.next).toMatchObject({ offset: 50, pageSize: pageSize === "auto" ? 1000 : 100, suspect: 50 })
          expect(pages[1]!.next).toMatchObject({ offset: 100, pageSize: 50, served: 50 })
          expect(pages[2]!.next).toEqual({ offset: 150, pageSize: 50, served: 50 })
        }
      }
    }))

  it.effect("a list that fits in the first page costs one request more, and only one", () =>
    Effect.gen(function*() {
      const { fetch, requests } = clamping(30, 500)
      const sizes: Array<Paginate.PageSizeChange> = []
      const records = yield* run(Paginate.records(Paginate.pages(fetch, {
        pageSize: 100,
        concurrency: 8,
        onPageSize: (change) => Effect.sync(() => sizes.push(change))
      })))
      expect(records).toHaveLength(30)
      expect(requests).toEqual([{ offset: 0, count: 100 }, { offset: 30, count: 100 }])
      // The short page was the end, not the server's largest page: nothing to tell.
      expect(sizes).toEqual([])
    }))

  it.effect("a short page after full ones is settled by one more request: the served size may drop mid-list", () =>
    Effect.gen(function*() {
      const { fetch, requests } = clamping(130, 500)
      yield* run(Paginate.pages(fetch, { pageSize: 100, concurrency: 1 }))
      expect(requests.map((r) => r.offset)).toEqual([0, 100, 130])
    }))

  it.effect("a response too large halves the page and asks the same offset again", () =>
    Effect.gen(function*() {
      const inner = clamping(95, 1000)
      const fetch = (offset: number, count: number) =>
        count > 20
          ? Effect.sync(() => inner.requests.push({ offset, count })).pipe(
            Effect.andThen(Effect.fail({ _tag: "ResponseTooLarge" as const }))
          )
          : inner.fetch(offset, count)
      const sizes: Array<Paginate.PageSizeChange> = []
      const records = yield* run(Paginate.records(Paginate.pages(fetch, {
        pageSize: 100,
        concurrency: 4,
        onPageSize: (change) => Effect.sync(() => sizes.push(change))
      })))
      expect(records).toEqual(Array.from({ length: 95 }, (_, i) => i))
      expect(sizes.map((s) => [s.size, s.reason])).toEqual([[50, "too-large"], [25, "too-large"], [12, "too-large"]])
      expect(inner.requests.filter((r) => r.count > 12).map((r) => r.offset)).toEqual([0, 0, 0])
    }))

  it.effect("a failure a smaller page cannot help, or a page of one record too large, is the stream's failure", () =>
    Effect.gen(function*() {
      const fetch = (_offset: number, _count: number) => Effect.fail({ _tag: "ResponseTooLarge" as const })
      const exit = yield* Effect.exit(Stream.runDrain(Paginate.pages(fetch, { pageSize: 4 })))
      expect(exit).toStrictEqual(Exit.fail({ _tag: "ResponseTooLarge" }))
    }))

  it.effect("bad options are refused before any request", () =>
    Effect.gen(function*() {
      const { fetch, requests } = clamping(10, 10)
      for (const options of [{ pageSize: 0 }, { pageSize: 1.5 }, { concurrency: 0 }, { startOffset: -1 }]) {
        const error = yield* Effect.flip(Stream.runDrain(Paginate.pages(fetch, options)))
        expect(error).toMatchObject({ _tag: "InvalidRequest" })
      }
      expect(requests).toHaveLength(0)
    }))

  it("property: any list length, server limit, page size and concurrency: every record once, in order, few requests", () =>
    fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 400 }),
        fc.integer({ min: 1, max: 60 }),
        pageSizeArb,
        fc.integer({ min: 1, max: 100 }),
        fc.integer({ min: 1, max: 8 }),
        async (total, max, pageSize, maxPageSize, concurrency) => {
          const { fetch, requests } = clamping(total, max)
          const records = await Effect.runPromise(
            Stream.runCollect(Paginate.records(Paginate.pages(fetch, { pageSize, maxPageSize, concurrency })))
          )
          expect(Array.from(records)).toEqual(Array.from({ length: total }, (_, i) => i))
          const served = Math.min(pageSize === "auto" ? maxPageSize : pageSize, max)
          // The pages of the list, at most one to confirm its end, and what was in flight past it.
          expect(requests.length).toBeLessThanOrEqual(Math.ceil(total / served) + 1 + (concurrency - 1))
        }
      ),
      { numRuns: 300 }
    ))

  it("property: stopped after any page and resumed from its `next` (through JSON): every record once, nothing learned again", () =>
    fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 300 }),
        fc.integer({ min: 1, max: 40 }),
        pageSizeArb,
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 20 }),
        async (total, max, pageSize, concurrency, stopAfter) => {
          const { fetch, requests } = clamping(total, max)
          const first = Array.from(
            await Effect.runPromise(
              Stream.runCollect(
                Stream.take(Paginate.pages(fetch, { pageSize, maxPageSize: 50, concurrency }), stopAfter)
              )
            )
          )
          // A resume point is kept as JSON between runs.
          const last = first.at(-1)?.next
          const next: Paginate.ResumePoint | undefined = last === undefined
            ? undefined
            : JSON.parse(JSON.stringify(last))
          requests.length = 0
          const rest = next === undefined ? [] : Array.from(
            await Effect.runPromise(Stream.runCollect(Paginate.pages(fetch, { resume: next, concurrency })))
          )
          const records = [...first, ...rest].flatMap((p) => p.records)
          expect(records).toEqual(Array.from({ length: total }, (_, i) => i))
          // The resumed run starts where it was told, with the size it had learned.
          if (next !== undefined) expect(requests[0]).toEqual({ offset: next.offset, count: next.pageSize })
        }
      ),
      { numRuns: 300 }
    ))
})

/**
 * A server of `total` records (each `{ id, n }`) that cuts positions `[offset, offset + min(count, max))` and then
 * drops the `hidden` positions from the page, as a server that filters by permission after cutting does. `max` may
 * change with the request number. `ignoreOffset` serves every page from 0.
 */
const misbehaving = (options: {
  readonly total: number
  readonly hidden?: ReadonlySet<number>
  readonly max?: (request: number) => number
  readonly ignoreOffset?: boolean
}) => {
  const requests: Array<{ offset: number; count: number; received: number }> = []
  const fetch = (offset: number, count: number): Effect.Effect<Page.Page<{ readonly id: number }>> =>
    Effect.sync(() => {
      const from = options.ignoreOffset === true ? 0 : offset
      const end = Math.min(options.total, from + Math.min(count, options.max?.(requests.length) ?? Infinity))
      const records: Array<{ readonly id: number }> = []
      for (let position = from; position < end; position++) {
        if (options.hidden?.has(position) !== true) records.push({ id: position })
      }
      requests.push({ offset, count, received: records.length })
      return { offset, count, received: records.length, records, raw: records, invalid: [] }
    })
  const visible = Array.from({ length: options.total }, (_, i) => i).filter((i) => options.hidden?.has(i) !== true)
  return { requests, fetch, visible }
}

const idsOf = (pages: ReadonlyArray<Page.Page<{ readonly id: number }>>) =>
  pages.flatMap((page) => page.records.map((record) => record.id))

describe("servers that stray where the contract is silent", () => {
  it.effect("a stream run twice pages twice, each run with its own engine (drift-safe: its own ids)", () =>
    Effect.gen(function*() {
      const server = misbehaving({ total: 45 })
      for (
        const stream of [
          Paginate.pages(server.fetch, { pageSize: 10 }),
          Paginate.safePages(server.fetch, { pageSize: 10 })
        ]
      ) {
        const [first, second] = [yield* run(stream), yield* run(stream)]
        expect(idsOf(first)).toEqual(server.visible)
        expect(idsOf(second)).toEqual(server.visible)
      }
      expect(server.requests.filter((request) => request.offset === 0)).toHaveLength(4)
    }))

  it.effect("records filtered after the cut: a short page mid-list ends nothing, and nothing comes out twice", () =>
    Effect.gen(function*() {
      for (const safe of [false, true]) {
        for (const concurrency of [1, 4, 8]) {
          // 999 of 1000 served: position 250 is hidden, so the page at 200 comes back with 99 of 100.
          const server = misbehaving({ total: 1000, hidden: new Set([250]) })
          const stream = safe
            ? Paginate.safePages(server.fetch, { pageSize: 100, concurrency })
            : Paginate.pages(server.fetch, { pageSize: 100, concurrency })
          const pages = yield* run(stream)
          expect(idsOf(pages)).toEqual(server.visible)
          expect(pages.at(-1)!.next).toBeUndefined()
        }
      }
    }))

  it.effect("one short page mid-list costs one request more than the pages themselves, at concurrency 1", () =>
    Effect.gen(function*() {
      const server = misbehaving({ total: 1000, hidden: new Set([250]) })
      const records = yield* run(Paginate.records(Paginate.pages(server.fetch, { pageSize: 100, concurrency: 1 })))
      expect(records).toHaveLength(999)
      // Ten pages of the list and the empty one that ends it, and one more: the short page at 200 moves the grid by
      // one (299, 399, ...: the page at 299 repeats the record at 299, which is dropped), so the list's last record
      // comes on a page of its own.
      expect(server.requests.map((r) => r.offset)).toEqual([0, 100, 200, 299, 399, 499, 599, 699, 799, 899, 999, 1000])
      expect(server.requests.length).toBe(10 + 1 + 1)
    }))

  it.effect("the served page size drops mid-list: every record once, short pages followed, not learned", () =>
    Effect.gen(function*() {
      for (const concurrency of [1, 4]) {
        // 100 a page for the first three requests, then 50.
        const server = misbehaving({ total: 1000, max: (n) => n < 3 ? 100 : 50 })
        const sizes: Array<Paginate.PageSizeChange> = []
        const records = yield* run(Paginate.records(Paginate.pages(server.fetch, {
          pageSize: 100,
          concurrency,
          onPageSize: (change) => Effect.sync(() => sizes.push(change))
        })))
        expect(records.map((r) => r.id)).toEqual(server.visible)
        // The server served 100 before: a shorter page is followed where it ends, never learned as the page size
        // (a filtering server's short pages would teach ever smaller ones).
        expect(sizes).toEqual([])
      }
    }))

  it.effect("a server that ignores list_offset: PagingLoop naming the offset, nothing written twice, few requests", () =>
    Effect.gen(function*() {
      for (const safe of [false, true]) {
        // 150 records served at most 100 a page, every page from offset 0.
        for (const pageSize of [100, "auto"] as const) {
          const server = misbehaving({ total: 150, max: () => 100, ignoreOffset: true })
          const emitted: Array<number> = []
          const stream = safe
            ? Paginate.safePages(server.fetch, { pageSize, concurrency: 4 })
            : Paginate.pages(server.fetch, { pageSize, concurrency: 4 })
          const error = yield* Effect.flip(run(stream.pipe(
            Stream.tap((page) => Effect.sync(() => emitted.push(...page.records.map((r) => r.id))))
          )))
          expect(error).toMatchObject({ _tag: "PagingLoop" })
          expect((error as { readonly offset: number }).offset).toBeGreaterThan(0)
          expect(new Set(emitted).size).toBe(emitted.length)
          expect(server.requests.length).toBeLessThanOrEqual(8)
        }
      }
    }))

  it.effect("a server that serves the same records at every offset in another order: PagingLoop, bounded", () =>
    Effect.gen(function*() {
      // Every page holds records 0..99, rotated by the offset: never identical, never new.
      let asked = 0
      const fetch = (offset: number, count: number): Effect.Effect<Page.Page<{ readonly id: number }>> =>
        Effect.sync(() => {
          asked++
          const records = Array.from({ length: Math.min(count, 100) }, (_, i) => ({ id: (i + offset) % 100 }))
          return { offset, count, received: records.length, records, raw: records, invalid: [] }
        })
      for (const safe of [false, true]) {
        asked = 0
        const stream = safe ? Paginate.safePages(fetch, { pageSize: 100 }) : Paginate.pages(fetch, { pageSize: 100 })
        expect(yield* Effect.flip(run(stream))).toMatchObject({ _tag: "PagingLoop" })
        expect(asked).toBeLessThanOrEqual(safe ? 110 : 5)
      }
    }))

  it("property: hidden records, a page size that changes, any page size and concurrency: every record once", () =>
    fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 300 }),
        fc.array(fc.integer({ min: 0, max: 299 }), { maxLength: 60 }),
        fc.array(fc.integer({ min: 4, max: 60 }), { minLength: 1, maxLength: 4 }),
        fc.oneof(fc.constant("auto" as const), fc.integer({ min: 4, max: 80 })),
        fc.integer({ min: 1, max: 8 }),
        fc.boolean(),
        async (total, hiddenWanted, maxes, pageSize, concurrency, safe) => {
          // A page whose every position is hidden looks like the end of the list (an empty page is how a server says
          // so), and a page size may be learned down to a short page's length: hidden records stay apart, at most one
          // in any four positions, and pages hold at least four.
          const hidden: Array<number> = []
          for (const position of [...new Set(hiddenWanted)].sort((a, b) => a - b)) {
            if (hidden.length === 0 || position - hidden[hidden.length - 1]! >= 4) hidden.push(position)
          }
          // The largest page served changes every five requests, through `maxes`.
          const server = misbehaving({
            total,
            hidden: new Set(hidden),
            max: (n) => maxes[Math.floor(n / 5) % maxes.length]!
          })
          const options = { pageSize, maxPageSize: 80, concurrency }
          const stream = safe
            ? Paginate.safePages(server.fetch, options)
            : Paginate.pages(server.fetch, options)
          const pages = await Effect.runPromise(Stream.runCollect(stream))
          expect(idsOf(Array.from(pages))).toEqual(server.visible)
        }
      ),
      { numRuns: 400 }
    ))
})
