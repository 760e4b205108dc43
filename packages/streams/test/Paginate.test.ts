import { describe, expect, it } from "@effect/vitest"
import type { Page } from "@erp-client/core"
import { Paginate } from "@erp-client/streams"
import { Chunk, Duration, Effect, Exit, FastCheck as fc, Fiber, Stream, TestClock } from "effect"

/** A source of `total` records whose pages answer after uneven delays, recording each request. */
const source = (total: number) => {
  const requested: Array<number> = []
  const fetch = (offset: number, count: number): Effect.Effect<Page.Page<number>> =>
    Effect.sync(() => requested.push(offset)).pipe(
      Effect.zipRight(Effect.sleep(Duration.millis(((offset / count) * 37) % 50 + 1))),
      Effect.as(Array.from({ length: Math.max(0, Math.min(count, total - offset)) }, (_, i) => offset + i)),
      Effect.map((records) => ({ offset, count, received: records.length, records, raw: records, invalid: [] }))
    )
  return { requested, fetch }
}

const run = <A, E>(stream: Stream.Stream<A, E>) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(Stream.runCollect(stream))
    yield* TestClock.adjust("1 minute")
    return Chunk.toReadonlyArray(yield* Fiber.join(fiber))
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
          expect(pages[0]!.next).toEqual({ offset: 50, pageSize: 50, served: 50 })
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
      expect(requests).toEqual([{ offset: 0, count: 100 }, { offset: 30, count: 30 }])
      // The short page was the end, not the server's largest page: nothing to tell.
      expect(sizes).toEqual([])
    }))

  it.effect("a short page after a full one ends the list at once: the server has shown it serves that many", () =>
    Effect.gen(function*() {
      const { fetch, requests } = clamping(130, 500)
      yield* run(Paginate.pages(fetch, { pageSize: 100, concurrency: 1 }))
      expect(requests.map((r) => r.offset)).toEqual([0, 100])
    }))

  it.effect("a response too large halves the page and asks the same offset again", () =>
    Effect.gen(function*() {
      const inner = clamping(95, 1000)
      const fetch = (offset: number, count: number) =>
        count > 20
          ? Effect.sync(() => inner.requests.push({ offset, count })).pipe(
            Effect.zipRight(Effect.fail({ _tag: "ResponseTooLarge" as const }))
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
          expect(Chunk.toReadonlyArray(records)).toEqual(Array.from({ length: total }, (_, i) => i))
          const served = Math.min(pageSize === "auto" ? maxPageSize : pageSize, max)
          // The pages of the list, at most one to confirm its end, and what was in flight past it.
          expect(requests.length).toBeLessThanOrEqual(Math.ceil(total / served) + 1 + (concurrency - 1))
        }
      ),
      { numRuns: 300 }
    ))

  it("property: stopped after any page and resumed from its `next`: every record once, nothing learned again", () =>
    fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 300 }),
        fc.integer({ min: 1, max: 40 }),
        pageSizeArb,
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 20 }),
        async (total, max, pageSize, concurrency, stopAfter) => {
          const { fetch, requests } = clamping(total, max)
          const first = Chunk.toReadonlyArray(
            await Effect.runPromise(
              Stream.runCollect(
                Stream.take(Paginate.pages(fetch, { pageSize, maxPageSize: 50, concurrency }), stopAfter)
              )
            )
          )
          const next = first.at(-1)?.next
          requests.length = 0
          const rest = next === undefined ? [] : Chunk.toReadonlyArray(
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
