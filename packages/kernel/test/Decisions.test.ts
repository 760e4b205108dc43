import { describe, expect, it } from "@effect/vitest"
import * as BodyCap from "../src/BodyCap.js"
import * as Envelope from "../src/Envelope.js"
import { fallback, graceEnds } from "../src/internal/outage.js"
import { recordIdOf } from "../src/internal/recordId.js"
import * as ListQuery from "../src/ListQuery.js"
import * as Outage from "../src/Outage.js"
import * as Page from "../src/Page.js"
import * as Partner from "../src/Partner.js"
import * as PlaceQueue from "../src/PlaceQueue.js"
import * as Settings from "../src/Settings.js"

// The decisions the two editions share, on their own: plain data in, a verdict out.

describe("Outage", () => {
  const failPolicy: Outage.Policy = { onFailure: "fail", graceMillis: 10_000, slotWindowMillis: 1_050 }
  const localPolicy: Outage.Policy = { ...failPolicy, onFailure: "local" }
  // A limiter whose store answered at 100 ms (its mark read) and went down at 2,000 ms.
  const down = (policy: Outage.Policy = failPolicy) => {
    const state = Outage.makeState()
    expect(Outage.answered(state, policy, 0, 100)).toBeUndefined()
    expect(Outage.admit(state, policy, "acquire", 100)).toEqual({ _tag: "Mark" })
    expect(Outage.marked(state, "m1")).toBe("first")
    expect(Outage.failed(state, 1_000, 2_000, "not connected")).toBe(true)
    return state
  }

  it("one warning per outage and one line at its end, whatever calls under way before say", () => {
    const state = down()
    // More failures, and an answer to a call begun before the outage was noticed: nothing new.
    expect(Outage.failed(state, 1_500, 2_100, "not connected")).toBe(false)
    expect(Outage.answered(state, failPolicy, 1_900, 2_200)).toBeUndefined()
    expect(state.since).toBe(2_000)
    // An answer to a call begun during it ends it, once.
    expect(Outage.answered(state, failPolicy, 3_000, 3_200)).toBe(1_200)
    expect(Outage.answered(state, failPolicy, 3_100, 3_300)).toBeUndefined()
    // A failure of a call begun before the store came back is stale; a later one starts the next outage.
    expect(Outage.failed(state, 3_100, 3_400, "late")).toBe(false)
    expect(state.since).toBe(0)
    expect(Outage.failed(state, 3_500, 3_600, "again")).toBe(true)
  })

  it("within the grace requests wait, one caller a second tries the store; past it, the policy", () => {
    const state = down()
    expect(Outage.admit(state, failPolicy, "acquire", 2_500)).toEqual({ _tag: "Wait", untilMillis: 2_600 })
    expect(Outage.admit(state, failPolicy, "inUse", 2_950)).toEqual({ _tag: "Wait", untilMillis: 3_000 })
    expect(Outage.admit(state, failPolicy, "acquire", 3_000)).toEqual({ _tag: "Mark" })
    expect(Outage.admit(state, failPolicy, "pause", 3_000)).toEqual({ _tag: "Wait", untilMillis: 3_100 })
    // The probe failed a timeout later: the next one a second after that.
    expect(Outage.failed(state, 3_000, 4_100, "no answer")).toBe(false)
    expect(Outage.admit(state, failPolicy, "acquire", 4_600)).toEqual({ _tag: "Wait", untilMillis: 4_700 })
    expect(Outage.admit(state, failPolicy, "acquire", 5_100)).toEqual({ _tag: "Mark" })
    // A learned limit is never waited for; a slot handed back waits and never probes.
    expect(Outage.admit(state, failPolicy, "learn", 5_200)).toEqual({ _tag: "Ignore" })
    expect(Outage.admit(state, failPolicy, "release", 6_100)).toEqual({ _tag: "Wait", untilMillis: 6_200 })
    expect(state.nextProbe).toBe(6_100)
    // A caller's bound comes first.
    expect(Outage.admit(state, failPolicy, "acquire", 5_500, 5_550)).toEqual({ _tag: "Wait", untilMillis: 5_550 })
    expect(Outage.admit(state, failPolicy, "acquire", 5_550, 5_550)).toEqual({ _tag: "Fail" })
    // The grace ends 10 s after the outage was noticed: then each operation by its policy (a probe a second still).
    expect(graceEnds(state, failPolicy)).toBe(12_000)
    Outage.failed(state, 11_000, 12_000, "no answer")
    expect(
      ["acquire", "inUse", "pause", "learn"].map((op) =>
        Outage.admit(state, failPolicy, op as Outage.Operation, 12_500)
      )
    )
      .toEqual([{ _tag: "Fail" }, { _tag: "Fail" }, { _tag: "Fail" }, { _tag: "Ignore" }])
    expect(Outage.admit(state, failPolicy, "acquire", 13_000)).toEqual({ _tag: "Mark" })
  })

  it("\"local\": the fallback from a slot's window after the outage started, and both for a window after its last", () => {
    const state = down({ ...localPolicy, graceMillis: 0 })
    const policy = { ...localPolicy, graceMillis: 0 }
    // The store may have counted a full window just before it stopped: nothing before 2,000 + 1,050.
    expect(Outage.admit(state, policy, "acquire", 2_500)).toEqual({ _tag: "Wait", untilMillis: 2_600 })
    expect(Outage.admit(state, policy, "acquire", 3_000)).toEqual({ _tag: "Mark" })
    expect(Outage.admit(state, policy, "acquire", 3_020)).toEqual({ _tag: "Wait", untilMillis: 3_050 })
    expect(Outage.admit(state, policy, "acquire", 3_050)).toEqual({ _tag: "Local" })
    expect(Outage.admit(state, policy, "inUse", 3_050)).toEqual({ _tag: "Local" })
    expect(Outage.admit(state, policy, "pause", 3_050)).toEqual({ _tag: "Ignore" })
    Outage.admittedLocally(state, 3_050)
    Outage.admittedLocally(state, 3_900)
    Outage.answered(state, policy, 4_000, 4_100)
    expect([4_100, 4_949, 4_950].map((now) => Outage.alsoLocal(state, policy, now))).toEqual([true, true, false])
  })

  it("a store never reached gets the policy at once, the local fallback too", () => {
    const state = Outage.makeState()
    expect(Outage.failed(state, 0, 1_000, "refused")).toBe(true)
    expect(Outage.admit(state, failPolicy, "acquire", 1_000)).toEqual({ _tag: "Fail" })
    expect(Outage.admit(state, localPolicy, "acquire", 1_000)).toEqual({ _tag: "Local" })
    expect(Outage.admit(state, localPolicy, "acquire", 2_000)).toEqual({ _tag: "Mark" })
  })

  it("back from an outage: held a slot's window after it started until the mark says the data was kept", () => {
    const kept = down()
    expect(Outage.answered(kept, failPolicy, 2_500, 2_600)).toBe(600)
    // The first request reads the mark; the others wait for it, bounded ones past the hold fail at once.
    expect(Outage.admit(kept, failPolicy, "acquire", 2_600)).toEqual({ _tag: "Mark" })
    expect(Outage.admit(kept, failPolicy, "acquire", 2_610)).toEqual({ _tag: "Wait", untilMillis: 2_710 })
    expect(Outage.admit(kept, failPolicy, "acquire", 2_610, 2_900)).toEqual({ _tag: "Beyond", startsAt: 3_050 })
    expect(Outage.admit(kept, failPolicy, "learn", 2_610)).toEqual({ _tag: "Store" })
    expect(Outage.marked(kept, "m1")).toBe("kept")
    expect(Outage.admit(kept, failPolicy, "acquire", 2_620)).toEqual({ _tag: "Store" })

    const lost = down()
    Outage.answered(lost, failPolicy, 2_500, 2_600)
    expect(Outage.admit(lost, failPolicy, "acquire", 2_600)).toEqual({ _tag: "Mark" })
    // A reader that never finishes is replaced a second later.
    expect(Outage.admit(lost, failPolicy, "acquire", 3_600)).toEqual({ _tag: "Mark" })
    expect(Outage.marked(lost, "m2")).toBe("lost")
    expect(Outage.admit(lost, failPolicy, "acquire", 3_000)).toEqual({ _tag: "Wait", untilMillis: 3_050 })
    expect(Outage.admit(lost, failPolicy, "acquire", 3_050)).toEqual({ _tag: "Store" })

    // Never read before the outage: whether it kept its data is unknown, and the hold stays.
    const unknown = Outage.makeState()
    Outage.answered(unknown, failPolicy, 0, 100)
    Outage.failed(unknown, 1_000, 2_000, "down")
    Outage.answered(unknown, failPolicy, 2_500, 2_600)
    expect(Outage.marked(unknown, "m1")).toBe("unknown")
    expect(unknown.heldUntil).toBe(3_050)
  })

  it("a reconnection no call saw failing: the mark read again, requests held until it says", () => {
    const state = down()
    Outage.answered(state, failPolicy, 2_500, 2_600)
    Outage.marked(state, "m1")
    const generation = state.generation
    Outage.reconnected(state, failPolicy, 4_000)
    expect(state.generation).toBe(generation + 1)
    expect(Outage.admit(state, failPolicy, "acquire", 4_100)).toEqual({ _tag: "Mark" })
    expect(Outage.admit(state, failPolicy, "acquire", 4_100)).toEqual({ _tag: "Wait", untilMillis: 4_200 })
    expect(Outage.marked(state, "m2")).toBe("lost")
    expect(Outage.admit(state, failPolicy, "acquire", 4_100)).toEqual({ _tag: "Wait", untilMillis: 4_200 })
    expect(Outage.admit(state, failPolicy, "acquire", 5_050)).toEqual({ _tag: "Store" })
  })

  it("what each operation does past the grace, by policy", () => {
    const operations = ["acquire", "release", "learn", "pause", "inUse"] as const
    expect(operations.map((op) => fallback("fail", op))).toEqual(["fail", "ignore", "ignore", "fail", "fail"])
    expect(operations.map((op) => fallback("local", op))).toEqual([
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
    expect(recordIdOf(JSON.parse(text), text)).toBe("9007199254740993")
    expect(recordIdOf(JSON.parse(text), undefined)).toBe(9007199254740992)
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
