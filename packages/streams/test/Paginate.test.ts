import { describe, expect, it } from "@effect/vitest"
import type { Page } from "@erp-client/core"
import { Paginate } from "@erp-client/streams"
import { Chunk, Duration, Effect, Fiber, Stream, TestClock } from "effect"

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
      // Pages up to offset 35 (the short one) are needed; past it, only those started before it answered.
      expect(requested.filter((o) => o > 35).length).toBeLessThanOrEqual(2 * 4)
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
