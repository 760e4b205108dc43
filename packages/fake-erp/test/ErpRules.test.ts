import { describe, expect, it } from "@effect/vitest"
import { Duration } from "effect"
import * as ErpRules from "../src/ErpRules.js"
import * as Seed from "../src/Seed.js"

// The rules on their own, driven by hand on a clock of the test's (the Effect 3 sandbox's suites test them served).

const T0 = 1_700_000_000_000

/** Carries a plan out on `clock`: each Delay moves the clock on, then its next step is taken. */
const carryOut = (plan: ErpRules.Plan, clock: { now: number }): ErpRules.Reply => {
  while (plan._tag === "Delay") {
    clock.now += plan.millis
    plan = plan.next()
  }
  return plan
}

const serve = <D>(rules: ErpRules.Rules<D>, url: string, clock = { now: T0 }, apiKey = "sandbox-key") => {
  const arrival = rules.arrive({ method: "GET", url, apiKey }, clock.now)
  const reply = carryOut(arrival.plan(), clock)
  arrival.finish(clock.now)
  return reply
}

const body = (reply: ErpRules.Reply): any => {
  if (reply._tag !== "Respond") throw new Error(`expected a response, got ${reply._tag}`)
  return JSON.parse(reply.body ?? "null")
}

describe("ErpRules.millis", () => {
  it("reads durations as Effect's Duration does", () => {
    const inputs: ReadonlyArray<ErpRules.DurationInput> = [
      0,
      250,
      -5,
      Infinity,
      "1 second",
      "2 seconds",
      "1.5 minutes",
      "3 hours",
      "1 day",
      "2 weeks",
      "500 millis",
      "1 milli",
      "2000 micros",
      "3000000 nanos",
      "-5 seconds"
    ]
    for (const input of inputs) expect([input, ErpRules.millis(input)]).toStrictEqual([input, Duration.toMillis(input)])
  })

  it("refuses text it cannot read", () => {
    expect(() => ErpRules.millis("5 fortnights" as ErpRules.DurationInput)).toThrow(RangeError)
    expect(() => ErpRules.millis("soon" as ErpRules.DurationInput)).toThrow(/not a duration/)
  })
})

describe("ErpRules.make", () => {
  it("answers an unknown endpoint 404 at once, and logs what was sent", () => {
    const rules = ErpRules.make({ partners: 5, latency: { base: 100 } })
    const arrival = rules.arrive({ method: "DELETE", url: "/partner/list", apiKey: "sandbox-key" }, T0)
    expect(arrival.endpoint).toBeUndefined()
    const plan = arrival.plan()
    expect(plan).toMatchObject({ _tag: "Respond", status: 404 })
    expect(body(plan as ErpRules.Reply)).toStrictEqual({ result: { code: 0, message: "Unknown endpoint" }, data: null })
    expect(rules.controls.stats()).toMatchObject({ requests: 1, inFlight: 1, byStatus: {} })
    expect(rules.controls.requests()[0]).toMatchObject({ endpoint: "/partner/list", status: 404 })
    arrival.finish(T0 + 3)
    expect(rules.controls.stats()).toMatchObject({ inFlight: 0, byStatus: { "404": 1 } })
    expect(rules.controls.requests()[0].durationMillis).toBe(3)
  })

  it("waits the latency first, then answers; a Delay fault waits, then computes the answer of that time", () => {
    const rules = ErpRules.make({ partners: 5, latency: { base: "40 millis" }, rateLimit: false })
    const clock = { now: T0 }
    rules.controls.inject({ _tag: "Delay", duration: "2 seconds" })
    const url = "/partner/list?list_offset=0&list_count=10"
    const arrival = rules.arrive({ method: "GET", url, apiKey: "sandbox-key" }, T0)
    const first = arrival.plan()
    expect(first).toMatchObject({ _tag: "Delay", millis: 40 })
    // Nothing is sent before the waits are over.
    expect(rules.controls.requests()[0]).toMatchObject({ status: 0, fault: "Delay" })
    const second = (first as Extract<ErpRules.Plan, { _tag: "Delay" }>).next()
    expect(second).toMatchObject({ _tag: "Delay", millis: 2000 })
    // A partner inserted during the delay is in the answer: it is computed when the delay is over.
    rules.controls.insertPartners(1, 0)
    const reply = carryOut((second as Extract<ErpRules.Plan, { _tag: "Delay" }>).next(), clock)
    expect(body(reply).data).toHaveLength(6)
    expect(rules.controls.requests()[0]).toMatchObject({ status: 200, records: 6 })
  })

  it("serves the window's 429 with its headers, and every fault as a reply for the edition to carry out", () => {
    const rules = ErpRules.make({ partners: 5, rateLimit: { limit: 1, window: "1 second", resetUnit: "epoch-millis" } })
    expect(serve(rules, "/partner/get?id=1")).toMatchObject({ _tag: "Respond", status: 200 })
    expect(serve(rules, "/partner/get?id=1")).toMatchObject({
      _tag: "Respond",
      status: 429,
      headers: { "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(T0 + 1000) }
    })
    const later = { now: T0 + 1000 }
    rules.controls.inject({ _tag: "DropBeforeResponse" })
    expect(serve(rules, "/partner/get?id=1", later)).toStrictEqual({ _tag: "Drop" })
    rules.controls.resetRateLimits()
    rules.controls.inject({ _tag: "Hang" })
    expect(serve(rules, "/partner/get?id=1", later)).toStrictEqual({ _tag: "Hang" })
    expect(rules.controls.stats().byStatus).toStrictEqual({ "200": 1, "429": 1, "0": 2 })
  })

  it("takes an edition's own durations through its reader", () => {
    type Ms = { readonly ms: number }
    const rules = ErpRules.make<Ms>(
      {
        partners: 3,
        latency: { base: { ms: 5 } },
        rateLimit: { limit: 1, window: { ms: 60_000 }, resetSkew: { ms: 0 } },
        inject: [{ fault: { _tag: "Outage", duration: { ms: 1_000 } } }]
      },
      (input) => input.ms
    )
    expect(rules.controls.rateLimit).toMatchObject({ limit: 1, windowMillis: 60_000 })
    const clock = { now: T0 }
    expect(serve(rules, "/partner/get?id=1", clock)).toMatchObject({ status: 503 })
    expect(clock.now).toBe(T0 + 5)
    expect(serve(rules, "/partner/get?id=1", { now: T0 + 999 })).toMatchObject({ status: 503 })
    expect(serve(rules, "/partner/get?id=1", { now: T0 + 1005 })).toMatchObject({ status: 200 })
  })

  it("controls: the seeded data as served, undefined where nothing is", () => {
    const rules = ErpRules.make({ partners: 10, seed: 42, oddRecords: { rate: 0.3 } })
    const kinds = Array.from({ length: 10 }, (_, index) => rules.controls.oddKindAt(index))
    expect(kinds).toStrictEqual(Array.from({ length: 10 }, (_, index) => Seed.oddKindAt(42, index, { rate: 0.3 })))
    expect(kinds).toContain(undefined)
    expect(rules.controls.partnerAt(0)).toStrictEqual(Seed.servedPartnerAt(42, 0, { rate: 0.3 }))
    expect(rules.controls.visiblePartners()).toHaveLength(10)
    expect(Seed.indexOfName(42, 10, "nobody")).toBeUndefined()
  })
})

describe("ErpRules.make, a declared resource (Options.resources)", () => {
  const products = Array.from({ length: 25 }, (_, index) => ({
    id: index + 1,
    sku: `SKU-${String(index + 1).padStart(4, "0")}`,
    name: `Product ${index + 1}`,
    active: index % 3 === 0 ? 0 : 1
  }))
  const declared = (records: ErpRules.ResourceOptions["records"] = products): ErpRules.ResourceOptions => ({
    list: "product/list",
    get: "/product/get",
    lookups: ["sku"],
    records
  })

  it("pages its records by list_offset and list_count, clamped by maxListCount, to the end", () => {
    const rules = ErpRules.make({ partners: 3, maxListCount: 10, resources: [declared()], rateLimit: false })
    const ids = (url: string) => body(serve(rules, url)).data.map((record: { id: number }) => record.id)
    expect(ids("/product/list?list_offset=0&list_count=7")).toStrictEqual([1, 2, 3, 4, 5, 6, 7])
    expect(ids("/product/list?list_offset=7&list_count=50")).toStrictEqual(Array.from({ length: 10 }, (_, i) => i + 8))
    expect(ids("/product/list?list_offset=20&list_count=10")).toStrictEqual([21, 22, 23, 24, 25])
    expect(ids("/product/list?list_offset=25&list_count=10")).toStrictEqual([])
    expect(body(serve(rules, "/product/list?list_offset=0&list_count=7")).data[0]).toStrictEqual(products[0])
    expect(body(serve(rules, "/product/list?list_count=7")).result).toStrictEqual({
      code: 0,
      message: "list_offset is required and must be a non-negative integer"
    })
    expect(rules.controls.requests()[1]).toMatchObject({ endpoint: "/product/list", status: 200, records: 10 })
    expect(rules.controls.recordsOf("product/list")).toStrictEqual(products)
    expect(() => rules.controls.recordsOf("service/list")).toThrow(RangeError)
  })

  it("filters by list_condition before the page is cut, as for partners", () => {
    const rules = ErpRules.make({ resources: [declared()], rateLimit: false })
    const inactive = products.filter((product) => product.active === 0)
    const page = (offset: number) =>
      body(serve(rules, `/product/list?list_offset=${offset}&list_count=5&list_condition[active]=0`)).data
    expect([...page(0), ...page(5)]).toStrictEqual(inactive)
    expect(page(5)).toHaveLength(inactive.length - 5)
    expect(body(serve(rules, "/product/list?list_offset=0&list_count=5&list_condition[colour]=red")).data)
      .toStrictEqual([])
  })

  it("gets one by its id field or a lookup; Not found for none, an error envelope for no selector", () => {
    const rules = ErpRules.make({ resources: [declared()], rateLimit: false, messages: { notFound: "Not Found" } })
    expect(body(serve(rules, "/product/get?id=12"))).toStrictEqual({
      result: { code: 1, message: null },
      data: products[11]
    })
    expect(body(serve(rules, "/product/get?sku=SKU-0003")).data).toStrictEqual(products[2])
    expect(body(serve(rules, "/product/get?id=3&sku=SKU-0003")).data).toStrictEqual(products[2])
    expect(body(serve(rules, "/product/get?id=4&sku=SKU-0003"))).toStrictEqual({
      result: { code: 0, message: "Not Found" },
      data: null
    })
    expect(body(serve(rules, "/product/get?id=999")).result).toStrictEqual({ code: 0, message: "Not Found" })
    expect(body(serve(rules, "/product/get?name=x")).result).toStrictEqual({
      code: 0,
      message: "id or sku is required"
    })
    expect(serve(rules, "/product/delete?id=1")).toMatchObject({ status: 404 })
  })

  it("makes its records from a seed function on demand: a pure function of (seed, index)", () => {
    const made: ErpRules.ResourceOptions["records"] = {
      count: 1_000_000,
      record: (index, seed) => ({ id: index + 1, price: (seed * 7 + index) % 100 })
    }
    const rules = ErpRules.make({ seed: 3, resources: [declared(made)], rateLimit: false })
    expect(body(serve(rules, "/product/list?list_offset=999998&list_count=5")).data).toStrictEqual([
      { id: 999_999, price: (21 + 999_998) % 100 },
      { id: 1_000_000, price: (21 + 999_999) % 100 }
    ])
    expect(body(serve(rules, "/product/get?id=17")).data).toStrictEqual({ id: 17, price: 37 })
    expect(body(serve(rules, "/product/get?id=1000000")).data).toStrictEqual({ id: 1_000_000, price: 20 })
    // Records numbered otherwise are found all the same; one whose id is not where its number says is found too.
    const shuffled = ErpRules.make({
      resources: [declared([{ id: 3, sku: "c" }, { id: 1, sku: "a" }, { id: 2, sku: "b" }])],
      rateLimit: false
    })
    expect(["1", "2", "3"].map((id) => body(serve(shuffled, `/product/get?id=${id}`)).data.sku)).toStrictEqual([
      "a",
      "b",
      "c"
    ])
  })

  it("a page without conditions makes only its own records: large records (Seed.largeRecordAt) served at any offset", () => {
    let made = 0
    const large: ErpRules.ResourceOptions["records"] = {
      count: 1_000,
      record: (index) => {
        made++
        return Seed.largeRecordAt(index, 200_000)
      }
    }
    const rules = ErpRules.make({ resources: [declared(large)], rateLimit: false })
    const page = body(serve(rules, "/product/list?list_offset=990&list_count=2")).data
    expect(page.map((record: { id: number }) => record.id)).toStrictEqual([991, 992])
    expect(made).toBe(2)
    // About the size asked for, with what makes a record costly to read
    for (const bytes of [100_000, 2_000_000, 8_000_000]) {
      const record = Seed.largeRecordAt(7, bytes)
      expect(Math.abs(JSON.stringify(record).length - bytes) / bytes, String(bytes)).toBeLessThan(0.02)
      expect(Object.keys(record)).toStrictEqual(["id", "name", "kind", "wide", "deep", "text", "lines"])
      expect(Object.keys(record.wide as object)).toHaveLength(600)
    }
    expect(Seed.largeRecordAt(7, 100_000)).toStrictEqual(Seed.largeRecordAt(7, 100_000))
  })

  it("keeps to the rate limit, the key and the faults as partners do", () => {
    const rules = ErpRules.make({ resources: [declared()], rateLimit: { limit: 2, window: "1 second" } })
    rules.controls.inject({ _tag: "Status", status: 502 }, { endpoint: "product/list" })
    expect(serve(rules, "/partner/list?list_offset=0&list_count=1")).toMatchObject({ status: 200 })
    expect(serve(rules, "/product/list?list_offset=0&list_count=1")).toMatchObject({ status: 502 })
    expect(serve(rules, "/product/list?list_offset=0&list_count=1")).toMatchObject({ status: 200 })
    expect(serve(rules, "/product/list?list_offset=0&list_count=1")).toMatchObject({ status: 429 })
    expect(body(serve(rules, "/product/get?id=1", { now: T0 }, "wrong")).result.message).toBe("Unauthorized")
    expect(rules.controls.stats().byEndpoint).toStrictEqual({
      "/partner/list": 1,
      "/product/list": 3,
      "/product/get": 1
    })
  })

  it("refuses a declaration of an endpoint already served", () => {
    expect(() => ErpRules.make({ resources: [{ list: "partner/list", records: [] }] })).toThrow(
      "the ERP already serves /partner/list"
    )
    expect(() => ErpRules.make({ resources: [declared(), { list: "/product/list", records: [] }] })).toThrow(TypeError)
  })
})

describe("ErpRules.describeStats", () => {
  it("says requests by endpoint and status, refused keys, 429s, faults by kind and the busiest window", () => {
    const erp = ErpRules.make({
      partners: 5,
      rateLimit: { limit: 2, window: 1_000 },
      inject: [{ fault: { _tag: "Status", status: 503 }, times: 2, endpoint: "/partner/list" }]
    })
    const request = (url: string, apiKey = "sandbox-key") => {
      const arrival = erp.arrive({ method: "GET", url, apiKey }, 0)
      arrival.plan()
      arrival.finish(0)
    }
    request("/partner/list?list_offset=0&list_count=5")
    request("/partner/list?list_offset=0&list_count=5")
    request("/partner/get?id=1")
    request("/partner/get?id=2", "stolen")
    const stats = erp.controls.stats()
    expect(stats).toMatchObject({ refusedKeys: 1, faultsServed: 2, faultsByKind: { Status: 2 } })
    expect(ErpRules.describeStats(stats, { limit: 2, windowMillis: 1_000 })).toEqual([
      "4 requests: /partner/get 2, /partner/list 2",
      "by status: 200 2, 503 2",
      "1 with a refused key, 0 answered 429, 2 faults served (Status 2)",
      "at most 2 requests of one key in any 1 s window: /partner/list 2, /partner/get 1 (limit 2)"
    ])
    expect(ErpRules.describeStats(ErpRules.make({}).controls.stats(), false)).toEqual([
      "0 requests",
      "0 with a refused key, 0 answered 429, no fault served"
    ])
  })
})
