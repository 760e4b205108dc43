import { describe, expect, it } from "@effect/vitest"
import * as BodyCap from "../src/BodyCap.js"
import * as Envelope from "../src/Envelope.js"
import * as ListQuery from "../src/ListQuery.js"
import * as Outage from "../src/Outage.js"
import * as Page from "../src/Page.js"
import * as Partner from "../src/Partner.js"
import * as PlaceQueue from "../src/PlaceQueue.js"
import * as Settings from "../src/Settings.js"

// The decisions the two editions share, on their own: plain data in, a verdict out.

describe("Outage", () => {
  it("one warning per outage, the store tried again at most once a second, one line at its end", () => {
    const state = Outage.makeState()
    expect(Outage.shortCircuit(state, 0)).toBeUndefined()
    expect(Outage.failed(state, 1_000, "not connected")).toBe(true)
    expect(Outage.shortCircuit(state, 1_999)).toBe("not connected")
    expect(Outage.shortCircuit(state, 2_000)).toBeUndefined()
    expect(Outage.failed(state, 2_000, "still not connected")).toBe(false)
    expect(Outage.shortCircuit(state, 2_500)).toBe("still not connected")
    expect(Outage.answered(state, 3_200)).toBe(2_200)
    expect(Outage.answered(state, 3_300)).toBeUndefined()
    expect(Outage.failed(state, 4_000, "again")).toBe(true)
  })

  it("what each operation does meanwhile, by policy", () => {
    const operations = ["acquire", "release", "learn", "pause", "inUse"] as const
    expect(operations.map((op) => Outage.fallback("fail", op))).toEqual(["fail", "fail", "ignore", "fail", "fail"])
    expect(operations.map((op) => Outage.fallback("local", op))).toEqual([
      "local",
      "ignore",
      "ignore",
      "ignore",
      "local"
    ])
  })
})

describe("BodyCap", () => {
  it("refuses a declared length over the cap, reads a framed body whole, counts the rest", () => {
    expect(BodyCap.plan({ "content-length": "17" }, 16)).toBe("too-large")
    expect(BodyCap.plan({ "content-length": "16" }, 16)).toBe("whole")
    expect(BodyCap.plan({ "content-length": "16", "content-encoding": "identity" }, 16)).toBe("whole")
    expect(BodyCap.plan({ "content-length": "16", "content-encoding": "br" }, 16)).toBe("counted")
    expect(BodyCap.plan({ "content-length": "x" }, 16)).toBe("counted")
    const body = BodyCap.counted(5)
    expect(BodyCap.add(body, new TextEncoder().encode("abc"))).toBe(true)
    expect(BodyCap.add(body, new TextEncoder().encode("de"))).toBe(true)
    expect(BodyCap.text(body)).toBe("abcde")
    expect(BodyCap.add(body, new TextEncoder().encode("f"))).toBe(false)
  })
})

describe("Page", () => {
  const decode = (raw: unknown) =>
    typeof raw === "object" && raw !== null && typeof (raw as { id?: unknown }).id === "number"
      ? { ok: true as const, value: (raw as { id: number }).id }
      : { ok: false as const, error: "bad" }

  it("refuses what is not a page, keeps or sets aside each record, pairs the texts", () => {
    expect(Page.decodePage({ data: {}, offset: 0, count: 10, mode: "fail", decodeRecord: decode })).toEqual({
      ok: false,
      refusal: { _tag: "Data", reason: "expected an array of records, got object" }
    })
    expect(Page.decodePage({ data: [{ id: 1 }, { id: 2 }], offset: 5, count: 1, mode: "fail", decodeRecord: decode }))
      .toEqual({
        ok: false,
        refusal: { _tag: "Data", reason: "the page holds 2 records but list_count was 1", offset: 5 }
      })
    expect(Page.decodePage({ data: [{ id: 1 }, {}], offset: 5, count: 10, mode: "fail", decodeRecord: decode }))
      .toEqual({
        ok: false,
        refusal: { _tag: "Record", error: "bad" }
      })
    const texts = [`{"id":1}`, `{"x":1.10}`]
    const page = Page.decodePage({
      data: [{ id: 1 }, { x: 1.1 }],
      offset: 5,
      count: 10,
      mode: "collect",
      json: texts,
      decodeRecord: decode
    })
    expect(page).toMatchObject({
      ok: true,
      value: { records: [1], json: [`{"id":1}`], received: 2, invalid: [{ offset: 6, json: `{"x":1.10}` }] }
    })
    expect(Page.isShort({ received: 2, count: 10 })).toBe(true)
  })

  it("names a record by its id as sent when the parsed number is not it", () => {
    const text = `{"id":9007199254740993}`
    expect(Page.recordIdOf(JSON.parse(text), text)).toBe("9007199254740993")
    expect(Page.recordIdOf(JSON.parse(text), undefined)).toBe(9007199254740992)
  })
})

describe("PlaceQueue", () => {
  it("serves the oldest call first, and by arrival among calls of the same start", () => {
    const queue: Array<PlaceQueue.Waiter> = []
    for (const [priority, seq] of [[20, 0], [30, 1], [5, 2], [20, 3]] as const) {
      PlaceQueue.insert(queue, { priority, seq })
    }
    expect(queue.map((w) => `${w.priority}/${w.seq}`)).toEqual(["5/2", "20/0", "20/3", "30/1"])
    expect(PlaceQueue.remove(queue, queue[1]!)).toBe(true)
    expect(PlaceQueue.remove(queue, { priority: 1, seq: 9 })).toBe(false)
  })
})

describe("Envelope, ListQuery and Settings", () => {
  it("judge codes and messages, paths and queries, and settings as the contract asks", () => {
    expect(
      [[1, null], [0, "Unauthorized"], [0, " not found "], [0, "boom"], [2, null]].map(([code, message]) =>
        Envelope.verdict(code as number, message as string | null)
      )
    ).toEqual(["Data", "Unauthorized", "NotFound", "ApiError", "ApiError"])
    expect(ListQuery.listParams({ offset: 0, count: 5, where: { a: false } }, [["lang", "hu"]])).toEqual({
      ok: true,
      value: [["list_offset", "0"], ["list_count", "5"], ["list_condition[a]", "0"], ["lang", "hu"]]
    })
    expect(ListQuery.checkEndpoint("a/b-c_d").ok).toBe(true)
    for (const bad of ["", "/a", "a/", "a?b", "a/../b", "a b"]) expect(ListQuery.checkEndpoint(bad).ok).toBe(false)
    expect(Settings.checkBaseUrl("http://[::1]:8080/erp")).toEqual({ ok: true, value: "http://[::1]:8080/erp/" })
    expect(Settings.checkBaseUrl("https://erp.example.com/?x=1").ok).toBe(false)
    expect(Settings.checkRedisKeys({ onFailure: "retry" })).toEqual({
      ok: false,
      option: "redis.onFailure",
      message: "must be \"fail\" or \"local\""
    })
    expect(Settings.bareSeconds(" 1.5 ")).toBe(1_500)
  })
})

describe("Partner.customerCell", () => {
  it("yes and no for the contract's 1 and 0 only; any other value as sent, as JSON; nothing when absent", () => {
    expect([1, 0, undefined].map(Partner.customerCell)).toEqual(["yes", "no", ""])
    expect([null, 2, "yes", "no", true, false, "1", "0", 1.5, { a: 1 }].map(Partner.customerCell)).toEqual(
      ["null", "2", "\"yes\"", "\"no\"", "true", "false", "\"1\"", "\"0\"", "1.5", "{\"a\":1}"]
    )
  })
})
