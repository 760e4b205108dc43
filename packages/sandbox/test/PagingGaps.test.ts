import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Fault, Seed } from "../src/index.js"
import type { Reply } from "./helpers.js"
import { call, json, roundTrip, TIMEOUT, transports, withSandboxOver } from "./helpers.js"

// Servers that page otherwise than our defaults where the contract is silent (docs/erp-api-v2.md, "Paging rules" and
// "Gaps in the endpoint list"): records dropped after the cut, an offset ignored, a largest page that changes.

const ids = (reply: Reply): Array<number> => (json(reply).data as Array<{ id: number }>).map((record) => record.id)

const listPage = (baseUrl: string, offset: number, count: number, where: Record<string, string> = {}) =>
  call(baseUrl, "/partner/list", { list_offset: String(offset), list_count: String(count), ...where })

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i)

describe.each(transports)("Sandbox: records hidden after the cut (%s)", (transport) => {
  const withSandbox = withSandboxOver(transport)

  it.live(
    "one hidden position: 99 of 100 on the first page; the next page at offset + list_count is right, at offset + " +
      "received it repeats a record",
    () =>
      withSandbox(
        { partners: 250, rateLimit: false, maxListCount: 100, hidden: { positions: [5] } },
        (sandbox) =>
          Effect.gen(function*() {
            const first = ids(yield* listPage(sandbox.baseUrl, 0, 100))
            expect(first).toStrictEqual(range(1, 100).filter((id) => id !== 6))
            expect(ids(yield* listPage(sandbox.baseUrl, 100, 100))).toStrictEqual(range(101, 200))
            expect(ids(yield* listPage(sandbox.baseUrl, 99, 100))[0]).toBe(100)
            expect(ids(yield* listPage(sandbox.baseUrl, 200, 100))).toStrictEqual(range(201, 250))

            // The request log says what each page held and what its cut dropped.
            const log = yield* sandbox.requests
            expect(log.map((entry) => [entry.records, entry.hidden])).toStrictEqual([[99, 1], [100, 0], [100, 0], [
              50,
              0
            ]])

            // Hidden from get too, by id and by name.
            const byId = json(yield* call(sandbox.baseUrl, "/partner/get", { id: "6" }))
            expect(byId).toStrictEqual({ result: { code: 0, message: "Not found" }, data: null })
            const name = Seed.partnerAt(sandbox.seed, 5).company_name
            expect(json(yield* call(sandbox.baseUrl, "/partner/get", { company_name: name })).result.message)
              .toBe("Not found")
            expect(json(yield* call(sandbox.baseUrl, "/partner/get", { id: "7" })).data.id).toBe(7)

            // Positions count it; what the server serves leaves it out.
            expect(sandbox.hiddenAt(5)).toBe(true)
            expect(sandbox.hiddenAt(4)).toBe(false)
            expect(yield* sandbox.size).toBe(250)
            expect((yield* sandbox.partnerIds)[5]).toBe(6)
            const visible = yield* sandbox.visiblePartners
            expect(visible.map((p) => p.id)).toStrictEqual(range(1, 250).filter((id) => id !== 6))
          })
      ),
    TIMEOUT
  )

  it.live(
    "a seeded share: short pages while more follow; paging by list_count serves every visible partner once, by " +
      "records received it repeats some",
    () =>
      withSandbox(
        { partners: 600, seed: 4, rateLimit: false, hidden: { rate: 0.1, seed: 9 } },
        (sandbox) =>
          Effect.gen(function*() {
            const served: Array<unknown> = []
            const sizes: Array<number> = []
            for (let offset = 0;; offset += 50) {
              const page = json(yield* listPage(sandbox.baseUrl, offset, 50)).data as Array<unknown>
              if (page.length === 0) break
              sizes.push(page.length)
              served.push(...page)
            }
            const visible = yield* sandbox.visiblePartners
            expect(served).toStrictEqual(visible.map(roundTrip))
            const hidden = range(0, 599).filter((index) => sandbox.hiddenAt(index))
            expect(hidden.length).toBeGreaterThan(35)
            expect(hidden.length).toBeLessThan(85)
            expect(visible).toHaveLength(600 - hidden.length)
            // Short pages, and yet more followed each of them.
            expect(sizes.slice(0, -1).some((size) => size < 50)).toBe(true)
            expect(sizes).toHaveLength(12)
            // Seeded: the same partners are hidden for the same options, others for another seed.
            expect(hidden.every((index) => Seed.hiddenAt(4, index, { rate: 0.1, seed: 9 }))).toBe(true)
            expect(range(0, 599).filter((index) => Seed.hiddenAt(4, index, { rate: 0.1, seed: 10 }))).not.toStrictEqual(
              hidden
            )

            // A client that advances by what it received asks overlapping cuts: it sees some partners twice.
            const byReceived: Array<number> = []
            for (let offset = 0;;) {
              const page = ids(yield* listPage(sandbox.baseUrl, offset, 50))
              if (page.length === 0) break
              byReceived.push(...page)
              offset += page.length
            }
            expect(new Set(byReceived).size).toBe(visible.length)
            expect(byReceived.length).toBeGreaterThan(visible.length)
          })
      ),
    TIMEOUT
  )

  it.live(
    "with list_condition: the filtered list is cut with its hidden partners, then they are dropped",
    () =>
      withSandbox(
        { partners: 400, seed: 2, rateLimit: false, hidden: { rate: 0.2 } },
        (sandbox) =>
          Effect.gen(function*() {
            const customers = { "list_condition[is_customer]": "1" }
            // Every customer in list order, hidden ones included: the positions the server cuts at.
            const all = range(0, 399).filter((index) => sandbox.partnerAt(index).is_customer === 1)
            const first = ids(yield* listPage(sandbox.baseUrl, 0, 40, customers))
            expect(first).toStrictEqual(all.slice(0, 40).filter((index) => !sandbox.hiddenAt(index)).map((i) => i + 1))
            expect(first.length).toBeLessThan(40)
            expect((yield* sandbox.requests)[0]).toMatchObject({ records: first.length, hidden: 40 - first.length })

            const served: Array<number> = []
            for (let offset = 0;; offset += 40) {
              const page = ids(yield* listPage(sandbox.baseUrl, offset, 40, customers))
              if (page.length === 0) break
              served.push(...page)
            }
            const visibleCustomers = (yield* sandbox.visiblePartners).filter((p) => p.is_customer === 1)
            expect(served).toStrictEqual(visibleCustomers.map((p) => p.id))
            expect(served.length).toBeLessThan(all.length)
          })
      ),
    TIMEOUT
  )
})

describe.each(transports)("Sandbox: list_offset ignored (%s)", (transport) => {
  const withSandbox = withSandboxOver(transport)

  it.live(
    "serves every page from offset 0, and logs the offset as sent",
    () =>
      withSandbox({ partners: 30, rateLimit: false, ignoreOffset: true }, (sandbox) =>
        Effect.gen(function*() {
          for (const offset of [0, 10, 20, 500]) {
            expect(ids(yield* listPage(sandbox.baseUrl, offset, 10))).toStrictEqual(range(1, 10))
          }
          const offsets = (yield* sandbox.requests).map((entry) => new Map(entry.query).get("list_offset"))
          expect(offsets).toStrictEqual(["0", "10", "20", "500"])
          // Paging parameters are still required.
          const refused = json(yield* call(sandbox.baseUrl, "/partner/list", { list_count: "10" }))
          expect(refused.result.code).toBe(0)
        })),
    TIMEOUT
  )
})

describe.each(transports)("Sandbox: the largest page changes mid-list (%s)", (transport) => {
  const withSandbox = withSandboxOver(transport)

  it.live(
    "100 a page, then 50 from the 4th list page on; refused requests and faults that replace the page do not count",
    () =>
      withSandbox({
        partners: 1000,
        rateLimit: false,
        maxListCount: 100,
        maxListCountSchedule: [{ fromRequest: 4, max: 50 }]
      }, (sandbox) =>
        Effect.gen(function*() {
          // Not pages: a refused key, a missing list_count, a 503 in place of the answer.
          yield* call(sandbox.baseUrl, "/partner/list", { list_offset: "0", list_count: "100" }, { key: "wrong" })
          yield* call(sandbox.baseUrl, "/partner/list", { list_offset: "0" })
          yield* sandbox.inject(Fault.Fault.Status({ status: 503 }))
          expect((yield* listPage(sandbox.baseUrl, 0, 100)).status).toBe(503)

          const sizes: Array<number> = []
          let offset = 0
          for (let page = 0; page < 6; page++) {
            const served = ids(yield* listPage(sandbox.baseUrl, offset, 100))
            expect(served[0]).toBe(offset + 1)
            sizes.push(served.length)
            offset += served.length
          }
          expect(sizes).toStrictEqual([100, 100, 100, 50, 50, 50])
          // A smaller page asked is served as asked.
          expect(ids(yield* listPage(sandbox.baseUrl, 0, 20))).toHaveLength(20)
          expect(sandbox.maxListCount).toBe(100)
        })),
    TIMEOUT
  )

  it.live("the latest step reached wins, and a step may raise the largest page", () =>
    withSandbox({
      partners: 1000,
      rateLimit: false,
      maxListCount: 10,
      maxListCountSchedule: [{ fromRequest: 3, max: 200 }, { fromRequest: 2, max: 5 }]
    }, (sandbox) =>
      Effect.gen(function*() {
        const sizes: Array<number> = []
        for (let page = 0; page < 4; page++) sizes.push(ids(yield* listPage(sandbox.baseUrl, 0, 500)).length)
        expect(sizes).toStrictEqual([10, 5, 200, 200])
      })), TIMEOUT)
})
