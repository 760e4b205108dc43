import { describe, expect, it } from "@effect/vitest"
import { Partner } from "@erp-client/effect4-core"
import { type Paginate, Partners, Resource } from "@erp-client/effect4-streams"
import { Effect, Result, Schema, Stream } from "effect"
import { clientOn, listed, sandbox } from "./sandbox.js"

// The streams against the Effect 3 edition's sandbox on a loopback socket, through undici: an export of thousands, a
// server that clamps and sends records that stray, the server's strict sliding window, lookups, and an export while
// the sandbox's partners change under it.

const ids = (records: ReadonlyArray<{ readonly id: unknown }>) => records.map((record) => Number(record.id))

describe("Partners against the sandbox", () => {
  it.live("exports a few thousand partners exactly: every record once, in order, every field kept", () =>
    Effect.gen(function*() {
      const erp = yield* sandbox({
        partners: 3_000,
        rateLimit: false,
        latency: { base: "2 millis", jitter: "15 millis" }
      })
      const partners = yield* Stream.runCollect(Partners.stream({ pageSize: 100, concurrency: 8 })).pipe(
        Effect.provide(clientOn(erp))
      )
      expect(partners).toHaveLength(3_000)
      expect(partners).toEqual(yield* Effect.promise(() => erp.visiblePartners()))
      const calls = yield* listed(erp)
      // 30 full pages and the empty one that ends the list, plus pages in flight past the end: at most 8 - 1.
      expect(calls.length).toBeGreaterThanOrEqual(31)
      expect(calls.length).toBeLessThanOrEqual(31 + 8 - 1)
      for (const call of calls) {
        const [offset, count] = call.split("+").map(Number)
        expect([offset! % 100, count]).toEqual([0, 100])
      }
    }))

  it.live("a server that serves at most 30 a page and records that stray from the contract: every one, as sent", () =>
    Effect.gen(function*() {
      const erp = yield* sandbox({ partners: 320, maxListCount: 30, oddRecords: { rate: 0.2 }, rateLimit: false })
      const sent = yield* Effect.promise(() => erp.visiblePartners())
      for (const concurrency of [1, 4, 8]) {
        for (const safe of [undefined, true] as const) {
          const partners = yield* Stream.runCollect(Partners.stream({ concurrency, safe })).pipe(
            Effect.provide(clientOn(erp))
          )
          expect(partners).toEqual(sent)
        }
      }
      expect(sent.filter((p) => !Schema.is(Partner.StrictPartner)(p)).length).toBeGreaterThan(20)
    }))

  it.live("keeps to the server's strict sliding window: no 429 while paging past the limit", () =>
    Effect.gen(function*() {
      const erp = yield* sandbox({
        partners: 250,
        rateLimit: { limit: 10, window: "1 second", resetUnit: "epoch-millis" }
      })
      const partners = yield* Stream.runCollect(Partners.stream({ pageSize: 10, concurrency: 8 })).pipe(
        Effect.provide(clientOn(erp, { limiter: { limit: 10, window: "1 second" } }))
      )
      expect(partners).toEqual(yield* Effect.promise(() => erp.visiblePartners()))
      const stats = yield* Effect.promise(() => erp.stats())
      expect(stats.tooManyRequests).toBe(0)
      expect(stats.byEndpoint["/partner/list"]).toBeGreaterThan(25)
      expect(stats.maxObservedInWindow["/partner/list"]).toBeLessThanOrEqual(10)
    }))

  it.live("a server that ignores list_offset: PagingLoop, nothing emitted twice", () =>
    Effect.gen(function*() {
      const erp = yield* sandbox({ partners: 500, ignoreOffset: true, rateLimit: false })
      for (const safe of [undefined, true] as const) {
        const emitted: Array<number> = []
        const error = yield* Effect.flip(
          Stream.runForEach(Partners.stream({ pageSize: 50, concurrency: 4, safe }), (p) =>
            Effect.sync(() => emitted.push(p.id))).pipe(Effect.provide(clientOn(erp)))
        )
        expect(error._tag).toBe("PagingLoop")
        expect(new Set(emitted).size).toBe(emitted.length)
      }
    }))

  it.live("lookups by id and by company name, awkward names included, and getMany in order", () =>
    Effect.gen(function*() {
      const erp = yield* sandbox({ partners: 120, rateLimit: false })
      const sent = yield* Effect.promise(() => erp.visiblePartners())
      const names = sent.map((p) => p.company_name).filter((name): name is string => typeof name === "string")
      expect(names.some((n) => /[&+=%#]/.test(n))).toBe(true)
      yield* Effect.gen(function*() {
        expect(yield* Partners.get(42)).toEqual(sent[41])
        const found = yield* Effect.forEach(names.slice(0, 40), (name) => Partners.getByCompanyName(name), {
          concurrency: 8
        })
        expect(found.map((p) => p.company_name)).toEqual(names.slice(0, 40))
        const many = yield* Stream.runCollect(Partners.getMany([3, 999_999, 3, 120], { concurrency: 2 }))
        expect(many.map(({ result }) => Result.isSuccess(result) ? result.success.id : result.failure._tag)).toEqual([
          3,
          "NotFound",
          3,
          120
        ])
        const notFound = yield* Effect.flip(Resource.get(Partners.resource, Partners.byId, 999_999))
        expect(notFound).toMatchObject({ _tag: "NotFound", endpoint: "partner/get", selector: "id=999999" })
      }).pipe(Effect.provide(clientOn(erp)))
    }))
})

/** Duplicates among `emitted`, and records present from start to end that never came out. */
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

describe("an export while the sandbox's partners change", () => {
  // Partners inserted and deleted at seeded random positions before every list answer.
  for (
    const [level, drift] of [
      ["light", { inserts: 1, deletes: 1 }],
      ["heavy", { inserts: 6, deletes: 6 }],
      ["severe", { inserts: 10, deletes: 25 }]
    ] as const
  ) {
    it.live(
      `${level} change (${drift.inserts} insert, ${drift.deletes} delete per list request)`,
      () =>
        Effect.gen(function*() {
          const exportOnce = (options: { readonly concurrency: number; readonly safe: boolean }) =>
            Effect.gen(function*() {
              const erp = yield* sandbox({ partners: 3_000, rateLimit: false, drift: { ...drift, seed: 11 } })
              const initial = new Set(ids(yield* Effect.promise(() => erp.visiblePartners())))
              const events: Array<Paginate.DriftEvent> = []
              const emitted = yield* Stream.runCollect(Partners.stream({
                pageSize: 50,
                concurrency: options.concurrency,
                safe: options.safe ? { overlap: 5, onDrift: (e) => Effect.sync(() => events.push(e)) } : undefined
              })).pipe(Effect.provide(clientOn(erp)))
              const final = ids(yield* Effect.promise(() => erp.visiblePartners()))
              return {
                ...audit(ids(emitted), initial, final),
                recoveries: events.filter((e) => e._tag === "Recovered").length,
                shifts: events.filter((e) => e._tag === "Shifted").length
              }
            }).pipe(Effect.scoped)
          const plain = yield* exportOnce({ concurrency: 1, safe: false })
          expect(plain.skipped).toBeGreaterThan(0)
          for (const concurrency of [1, 4]) {
            const safe = yield* exportOnce({ concurrency, safe: true })
            expect(safe, `safe, concurrency ${concurrency}`).toMatchObject({ duplicates: 0, skipped: 0, inOrder: true })
            expect(safe.shifts).toBeGreaterThan(0)
            if (level === "severe") expect(safe.recoveries).toBeGreaterThan(0)
          }
        }),
      60_000
    )
  }
})
