import { describe, expect, it } from "@effect/vitest"
import * as Answers from "../../src/internal/answers.js"
import * as Drift from "../../src/internal/drift.js"
import * as Envelope from "../../src/internal/envelope.js"
import * as Exact from "../../src/internal/exactNumber.js"
import * as PartnerStore from "../../src/internal/partnerStore.js"
import * as RequestLog from "../../src/internal/requestLog.js"
import * as Seed from "../../src/Seed.js"

const setup = (count = 20, maxListCount = 500, defaultListCount?: number) => {
  const store = PartnerStore.make(7, count)
  let lists = 0
  const answer = Answers.make({
    store,
    maxListCount,
    defaultListCount,
    messages: Envelope.resolveMessages(undefined),
    beforeList: () => lists++
  })
  const ask = (endpoint: "/partner/list" | "/partner/get", params: Record<string, string>, keyValid = true) =>
    JSON.parse(answer(endpoint, new URLSearchParams(params), keyValid).body)
  return { store, ask, lists: () => lists }
}

const roundTrip = (u: unknown): unknown => JSON.parse(JSON.stringify(u))

describe("internal/answers", () => {
  it("answers a list page in the envelope, clamped to the largest page", () => {
    const { ask } = setup(20, 4)
    expect(ask("/partner/list", { list_offset: "2", list_count: "3" })).toStrictEqual({
      result: { code: 1, message: null },
      data: [2, 3, 4].map((i) => roundTrip(Seed.partnerAt(7, i)))
    })
    expect(ask("/partner/list", { list_offset: "0", list_count: "10" }).data).toHaveLength(4)
  })

  it("serves the default page when list_count is absent, if there is one, and refuses a malformed list_count", () => {
    const { ask } = setup(20, 4, 3)
    expect(ask("/partner/list", { list_offset: "5" }).data.map((p: any) => p.id)).toStrictEqual([6, 7, 8])
    expect(ask("/partner/list", { list_offset: "5", list_count: "x" }).result.code).toBe(0)
    expect(ask("/partner/list", {}).result.message).toMatch(/list_offset/)
    expect(setup(20, 2, 3).ask("/partner/list", { list_offset: "0" }).data).toHaveLength(2)
    expect(setup().ask("/partner/list", { list_offset: "0" }).result.message).toMatch(/list_count/)
  })

  it("runs the drift hook only before list answers it accepted", () => {
    const { ask, lists } = setup()
    ask("/partner/list", { list_offset: "0" })
    ask("/partner/list", { list_offset: "0", list_count: "1" }, false)
    ask("/partner/get", { id: "1" })
    expect(lists()).toBe(0)
    ask("/partner/list", { list_offset: "0", list_count: "1" })
    expect(lists()).toBe(1)
  })

  it("refuses an invalid key before anything else, and gets by id, name or both", () => {
    const { ask } = setup()
    expect(ask("/partner/get", { id: "1" }, false)).toStrictEqual({
      result: { code: 0, message: "Unauthorized" },
      data: null
    })
    const third = Seed.partnerAt(7, 2)
    expect(ask("/partner/get", { id: "3" }).data).toStrictEqual(roundTrip(third))
    expect(ask("/partner/get", { company_name: third.company_name }).data.id).toBe(3)
    expect(ask("/partner/get", { id: "3", company_name: third.company_name }).data.id).toBe(3)
    expect(ask("/partner/get", { id: "4", company_name: third.company_name }).result.message).toBe("Not found")
    expect(ask("/partner/get", {}).result.message).toBe("id or company_name is required")
  })

  it("reads list conditions from the query, in order", () => {
    const params = new URLSearchParams([
      ["list_condition[is_customer]", "1"],
      ["list_offset", "0"],
      ["list_condition[]", "x"],
      ["list_condition[country]", "HU"]
    ])
    expect(Answers.conditionsOf(params)).toStrictEqual([["is_customer", "1"], ["", "x"], ["country", "HU"]])
  })
})

describe("internal/answers: servers that page otherwise", () => {
  const make = (config: Partial<Answers.Config> & { readonly store: PartnerStore.PartnerStore }) =>
    Answers.make({
      maxListCount: 500,
      defaultListCount: undefined,
      messages: Envelope.resolveMessages(undefined),
      beforeList: () => {},
      ...config
    })
  const list = (answer: Answers.Answer, offset: number, count: number) =>
    answer("/partner/list", new URLSearchParams({ list_offset: String(offset), list_count: String(count) }), true)
  const idsOf = (answered: Answers.Answered) => JSON.parse(answered.body).data.map((p: { id: number }) => p.id)

  it("hidden partners: the cut counts them, the page drops them, and the answer says how many", () => {
    const answer = make({ store: PartnerStore.make(7, 20, undefined, { positions: [1, 2, 9] }) })
    const first = list(answer, 0, 5)
    expect(idsOf(first)).toStrictEqual([1, 4, 5])
    expect([first.records, first.hidden]).toStrictEqual([3, 2])
    expect(idsOf(list(answer, 5, 5))).toStrictEqual([6, 7, 8, 9])
    const get = answer("/partner/get", new URLSearchParams({ id: "3" }), true)
    expect(JSON.parse(get.body).result.message).toBe("Not found")
    expect(get.records).toBeUndefined()
  })

  it("ignoreOffset serves from 0", () => {
    const answer = make({ store: PartnerStore.make(7, 20), ignoreOffset: true })
    expect(idsOf(list(answer, 12, 3))).toStrictEqual([1, 2, 3])
  })

  it("ignoreConditions: every condition, or those on a field the list's records do not have, left unapplied", () => {
    const withConditions = (answer: Answers.Answer, conditions: Record<string, string>) =>
      idsOf(answer(
        "/partner/list",
        new URLSearchParams({
          list_offset: "0",
          list_count: "20",
          ...Object.fromEntries(Object.entries(conditions).map(([field, value]) => [`list_condition[${field}]`, value]))
        }),
        true
      ))
    const store = PartnerStore.make(7, 20)
    const all = withConditions(make({ store }), {})
    const customers = withConditions(make({ store }), { is_customer: "1" })
    expect(customers.length).toBeGreaterThan(0)
    expect(customers.length).toBeLessThan(all.length)
    // A server that applies them: a field no record has matches nothing
    expect(withConditions(make({ store }), { nonexistent_field: "1" })).toStrictEqual([])
    const unknown = make({ store, ignoreConditions: "unknown" })
    expect(withConditions(unknown, { nonexistent_field: "1" })).toStrictEqual(all)
    expect(withConditions(unknown, { is_customer: "1", nonexistent_field: "1" })).toStrictEqual(customers)
    const ignoring = make({ store, ignoreConditions: "all" })
    expect(withConditions(ignoring, { is_customer: "1" })).toStrictEqual(all)
  })

  it("largestPage: maxListCount, then the latest schedule step reached", () => {
    const schedule = [{ fromRequest: 4, max: 50 }, { fromRequest: 2, max: 70.9 }, { fromRequest: 9, max: 0 }]
    expect([1, 2, 3, 4, 8, 9].map((page) => Answers.largestPage(100, schedule, page))).toStrictEqual([
      100,
      70,
      70,
      50,
      50,
      1
    ])
    expect(Answers.largestPage(100, undefined, 7)).toBe(100)
  })

  it("counts only the pages it computed for the schedule", () => {
    const answer = make({
      store: PartnerStore.make(7, 50),
      maxListCount: 4,
      maxListCountSchedule: [{ fromRequest: 2, max: 2 }]
    })
    answer("/partner/list", new URLSearchParams({ list_offset: "0" }), true)
    answer("/partner/list", new URLSearchParams({ list_offset: "0", list_count: "9" }), false)
    expect(list(answer, 0, 9).records).toBe(4)
    expect(list(answer, 0, 9).records).toBe(2)
  })

  it("writes exact numbers as their text only on pages that hold them", () => {
    const store = PartnerStore.make(7, 10, { rate: 0.5, kinds: ["decimal-as-written"], seed: 3 })
    expect(store.mayHoldExact).toBe(true)
    expect(PartnerStore.make(7, 10, { rate: 0.5 }).mayHoldExact).toBe(false)
    const answer = make({ store })
    const body = list(answer, 0, 10).body
    const odd = Array.from(
      { length: 10 },
      (_, index) => Seed.oddKindAt(7, index, { rate: 0.5, kinds: ["decimal-as-written"], seed: 3 })
    )
      .filter((kind) => kind !== undefined).length
    expect(odd).toBeGreaterThan(0)
    expect(body.split("\"discount\":-0.0}")).toHaveLength(odd + 1)
  })
})

describe("internal/exactNumber", () => {
  it("writes each ExactNumber as its text, nested or at the top, and leaves strings alone", () => {
    const value = {
      a: new Exact.ExactNumber("1.10"),
      b: [new Exact.ExactNumber("-0.0"), "\"1.10\"", 2],
      c: { d: new Exact.ExactNumber("12345678901234567890") }
    }
    expect(Exact.stringify(value)).toBe(
      "{\"a\":1.10,\"b\":[-0.0,\"\\\"1.10\\\"\",2],\"c\":{\"d\":12345678901234567890}}"
    )
    expect(Exact.stringify(new Exact.ExactNumber("1e2"))).toBe("1e2")
    expect(JSON.stringify(value)).toBe("{\"a\":1.1,\"b\":[0,\"\\\"1.10\\\"\",2],\"c\":{\"d\":12345678901234567000}}")
    expect(Exact.holdsExact(value)).toBe(true)
    expect(Exact.holdsExact(value.c)).toBe(true)
    expect(Exact.holdsExact({ a: 1 })).toBe(false)
  })
})

describe("internal/drift", () => {
  it("inserts and deletes at seeded positions on each round, and counts them", () => {
    const run = () => {
      const store = PartnerStore.make(1, 30)
      const log = RequestLog.make(0)
      const round = Drift.make({ inserts: 2, deletes: 3, seed: 5 }, 1, store, log)
      round()
      round()
      return { ids: store.ids(), stats: log.stats() }
    }
    const first = run()
    expect(first.ids).toHaveLength(30 + 4 - 6)
    expect([first.stats.inserted, first.stats.deleted]).toStrictEqual([4, 6])
    expect(run().ids).toStrictEqual(first.ids)
  })

  it("changes nothing by default, and stops deleting at an empty list", () => {
    const store = PartnerStore.make(1, 2)
    const log = RequestLog.make(0)
    Drift.make(undefined, 1, store, log)()
    expect(store.ids()).toStrictEqual([1, 2])
    Drift.make({ deletes: 5 }, 1, store, log)()
    expect(store.size()).toBe(0)
    expect(log.stats().deleted).toBe(2)
  })
})
