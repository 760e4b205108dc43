import { describe, expect, it } from "@effect/vitest"
import * as ErpRules from "../../src/ErpRules.js"
import * as Admission from "../../src/internal/admission.js"
import * as FaultQueue from "../../src/internal/faultQueue.js"
import * as RequestLog from "../../src/internal/requestLog.js"
import * as SlidingWindow from "../../src/SlidingWindow.js"

const setup = (rateLimit: SlidingWindow.Resolved | false) => {
  const faults = FaultQueue.make<ErpRules.DurationInput>(undefined, 1, ErpRules.millis)
  const log = RequestLog.make(0)
  return { faults, log, admission: Admission.make(rateLimit, faults, log) }
}

const limit2 = SlidingWindow.resolve({ limit: 2, window: "1 second", resetUnit: "epoch-millis" })

describe("internal/admission", () => {
  it("lets `limit` requests per key and endpoint through, then limits with the headers of the window", () => {
    const { admission } = setup(limit2)
    expect(admission.decide("/partner/list", "k", 0)).toStrictEqual({
      _tag: "Allowed",
      headers: { "x-ratelimit-limit": "2", "x-ratelimit-remaining": "1", "x-ratelimit-reset": "1000" },
      fault: undefined
    })
    expect(admission.decide("/partner/list", "k", 100)._tag).toBe("Allowed")
    expect(admission.decide("/partner/list", "k", 200)).toStrictEqual({
      _tag: "Limited",
      headers: { "x-ratelimit-limit": "2", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "1000" }
    })
    expect(admission.decide("/partner/get", "k", 200)._tag).toBe("Allowed")
    expect(admission.decide("/partner/list", "other", 200)._tag).toBe("Allowed")
    admission.reset()
    expect(admission.decide("/partner/list", "k", 300)._tag).toBe("Allowed")
  })

  it("takes a queued fault only for a request the window lets through; a 429 fault is not counted", () => {
    const { admission, faults } = setup(limit2)
    faults.push({ _tag: "TooManyRequests" })
    faults.push({ _tag: "Hang" })
    const first = admission.decide("/partner/list", "k", 0)
    expect(first._tag === "Allowed" && first.fault?._tag).toBe("TooManyRequests")
    expect(first.headers["x-ratelimit-remaining"]).toBe("1")
    admission.decide("/partner/list", "k", 0)
    admission.decide("/partner/list", "k", 0)
    expect(admission.decide("/partner/list", "k", 0)._tag).toBe("Limited")
    // The Hang fault went to the second request; nothing is left for later ones.
    expect(faults.take("/partner/list", 0)).toBeUndefined()
  })

  it("without a rate limit: no headers, every request allowed, and still reports the most seen in a window", () => {
    const { admission, faults, log } = setup(false)
    faults.push({ _tag: "MalformedJson" })
    expect(admission.decide("/partner/get", "k", 0)).toStrictEqual({
      _tag: "Allowed",
      headers: {},
      fault: { _tag: "MalformedJson" }
    })
    for (let t = 1; t < 10; t++) admission.decide("/partner/get", "k", t)
    // The window is the contract's 30 seconds: all ten are in it; a minute later, one.
    admission.decide("/partner/get", "k", 60_000)
    expect(log.stats().maxObservedInWindow).toStrictEqual({ "/partner/get": 10 })
  })

  it("counts rejected requests in the observed window too", () => {
    const { admission, log } = setup(limit2)
    for (let i = 0; i < 5; i++) admission.decide("/partner/list", "k", i)
    expect(log.stats().maxObservedInWindow).toStrictEqual({ "/partner/list": 5 })
  })

  it("an outage under way comes before the window: no headers, nothing counted, never Limited", () => {
    const { admission, faults } = setup(limit2)
    admission.decide("/partner/list", "k", 0)
    faults.push({ _tag: "Outage", duration: "1 second" })
    for (let t = 1; t < 6; t++) {
      expect(admission.decide("/partner/list", "k", t)).toStrictEqual({
        _tag: "Allowed",
        headers: {},
        fault: { _tag: "Outage", duration: "1 second" }
      })
    }
    // Over at 1001: the window held only the request at 0.
    const after = admission.decide("/partner/list", "k", 1001)
    expect(after).toMatchObject({ _tag: "Allowed", fault: undefined })
    expect(after.headers["x-ratelimit-remaining"]).toBe("1")
  })

  it("resetSkew shifts the reset of every decision's headers", () => {
    const { admission } = setup(
      SlidingWindow.resolve({ limit: 1, window: "1 second", resetUnit: "epoch-millis", resetSkew: -400 })
    )
    expect(admission.decide("/partner/list", "k", 0).headers["x-ratelimit-reset"]).toBe("600")
    expect(admission.decide("/partner/list", "k", 10)).toStrictEqual({
      _tag: "Limited",
      headers: { "x-ratelimit-limit": "1", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "600" }
    })
  })
})
