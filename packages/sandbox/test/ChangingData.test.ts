import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Seed } from "../src/index.js"
import { call, json, TIMEOUT, transports, withSandboxOver } from "./helpers.js"

describe.each(transports)("Sandbox: data that changes (%s)", (transport) => {
  const withSandbox = withSandboxOver(transport)

  const listIds = (baseUrl: string, offset: number, count: number, where: Record<string, string> = {}) =>
    Effect.map(
      call(baseUrl, "/partner/list", { list_offset: String(offset), list_count: String(count), ...where }),
      (reply) => (json(reply).data as Array<{ id: number }>).map((record) => record.id)
    )

  it.live(
    "a page asked again after a change is served from the list as it is now, never from before the change",
    () =>
      withSandbox({ partners: 10, seed: 3, rateLimit: false }, (sandbox) =>
        Effect.gen(function*() {
          // The same page twice: the second may come from the sandbox's cache of page bodies.
          expect(yield* listIds(sandbox.baseUrl, 0, 4)).toStrictEqual([1, 2, 3, 4])
          expect(yield* listIds(sandbox.baseUrl, 0, 4)).toStrictEqual([1, 2, 3, 4])
          yield* sandbox.insertPartners(1, 0)
          expect(yield* listIds(sandbox.baseUrl, 0, 4)).toStrictEqual([11, 1, 2, 3])
          yield* sandbox.deletePartners([1])
          expect(yield* listIds(sandbox.baseUrl, 0, 4)).toStrictEqual([11, 2, 3, 4])
          expect(yield* listIds(sandbox.baseUrl, 0, 4, { "list_condition[id]": "2" })).toStrictEqual([2])
        })),
    TIMEOUT
  )

  it.live(
    "inserts land at their position with fresh ids, deletes close the gap, lookups follow",
    () =>
      withSandbox({ partners: 10, seed: 3, rateLimit: false }, (sandbox) =>
        Effect.gen(function*() {
          const added = yield* sandbox.insertPartners(2, 3)
          expect(added).toStrictEqual([11, 12])
          expect(yield* listIds(sandbox.baseUrl, 0, 6)).toStrictEqual([1, 2, 3, 11, 12, 4])
          expect(yield* sandbox.deletePartners([2, 12, 99])).toBe(2)
          expect(yield* sandbox.partnerIds).toStrictEqual([1, 3, 11, 4, 5, 6, 7, 8, 9, 10])
          expect(yield* sandbox.size).toBe(10)
          expect(yield* listIds(sandbox.baseUrl, 8, 5)).toStrictEqual([9, 10])

          const gone = json(yield* call(sandbox.baseUrl, "/partner/get", { id: "2" }))
          expect(gone.result).toStrictEqual({ code: 0, message: "Not found" })
          const goneByName = json(
            yield* call(sandbox.baseUrl, "/partner/get", { company_name: Seed.partnerAt(3, 1).company_name })
          )
          expect(goneByName.result.message).toBe("Not found")
          const fresh = json(yield* call(sandbox.baseUrl, "/partner/get", { id: "11" }))
          expect(fresh.data.id).toBe(11)
          expect(fresh.data.company_name).toMatch(/\(new\)$/)
          const byName = json(yield* call(sandbox.baseUrl, "/partner/get", { company_name: fresh.data.company_name }))
          expect(byName.data).toStrictEqual(fresh.data)
          expect(json(yield* call(sandbox.baseUrl, "/partner/get", { id: "12" })).result.message).toBe("Not found")

          const stats = yield* sandbox.stats
          expect([stats.inserted, stats.deleted]).toStrictEqual([2, 2])
        })),
    TIMEOUT
  )

  it.live(
    "a filtered list follows inserts and deletes",
    () =>
      withSandbox({ partners: 200, seed: 5, rateLimit: false }, (sandbox) =>
        Effect.gen(function*() {
          const customers = { "list_condition[is_customer]": "1" }
          const before = yield* listIds(sandbox.baseUrl, 0, 500, customers)
          yield* sandbox.deletePartners(before.slice(0, 3))
          const after = yield* listIds(sandbox.baseUrl, 0, 500, customers)
          expect(after).toStrictEqual(before.slice(3))
        })),
    TIMEOUT
  )

  it.live(
    "drift changes the list before each list answer, at seeded positions",
    () =>
      Effect.gen(function*() {
        const run = withSandbox(
          { partners: 100, seed: 2, rateLimit: false, drift: { inserts: 2, deletes: 1, seed: 8 } },
          (sandbox) =>
            Effect.gen(function*() {
              const first = yield* listIds(sandbox.baseUrl, 0, 500)
              yield* listIds(sandbox.baseUrl, 0, 1)
              yield* call(sandbox.baseUrl, "/partner/get", { id: "1" })
              const stats = yield* sandbox.stats
              expect([stats.inserted, stats.deleted]).toStrictEqual([4, 2])
              expect(yield* sandbox.size).toBe(102)
              expect(first).toHaveLength(101)
              return yield* sandbox.partnerIds
            })
        )
        // Seeded: the same changes at the same places on every run.
        expect(yield* run).toStrictEqual(yield* run)
      }),
    TIMEOUT
  )

  it.live(
    "a rename is served by list and get from then on (the page cache too); the new name is found, the old one not",
    () =>
      withSandbox({ partners: 10, seed: 3, rateLimit: false }, (sandbox) =>
        Effect.gen(function*() {
          const names = (offset: number) =>
            Effect.map(
              call(sandbox.baseUrl, "/partner/list", { list_offset: String(offset), list_count: "4" }),
              (reply) => (json(reply).data as Array<{ company_name: string }>).map((record) => record.company_name)
            )
          const before = yield* names(0)
          expect(yield* sandbox.renamePartners([2, 99])).toBe(1)
          const after = yield* names(0)
          expect(after).toStrictEqual([before[0], `${before[1]} (renamed)`, before[2], before[3]])
          const byId = json(yield* call(sandbox.baseUrl, "/partner/get", { id: "2" }))
          expect(byId.data.company_name).toBe(`${before[1]} (renamed)`)
          const byName = json(yield* call(sandbox.baseUrl, "/partner/get", { company_name: `${before[1]} (renamed)` }))
          expect(byName.data.id).toBe(2)
          const oldName = json(yield* call(sandbox.baseUrl, "/partner/get", { company_name: before[1]! }))
          expect(oldName.result.message).toBe("Not found")
          // Renamed, then deleted: gone by either name.
          yield* sandbox.deletePartners([2])
          const gone = json(yield* call(sandbox.baseUrl, "/partner/get", { company_name: `${before[1]} (renamed)` }))
          expect(gone.result.message).toBe("Not found")

          if (transport === "socket") {
            // Between runs, over HTTP: POST /_sandbox/partners inserts, deletes and renames, and says what it did.
            const answer = yield* Effect.promise(() =>
              fetch(`${sandbox.baseUrl}/_sandbox/partners?insert=2&at=0&delete=3,404&rename=4`, { method: "POST" })
                .then((response) => response.json())
            )
            expect(answer).toStrictEqual({ inserted: [11, 12], deleted: 1, renamed: 1 })
            expect(yield* sandbox.partnerIds).toStrictEqual([11, 12, 1, 4, 5, 6, 7, 8, 9, 10])
            expect((yield* names(3))[0]).toMatch(/ \(renamed\)$/)
          }
        })),
    TIMEOUT
  )
})
