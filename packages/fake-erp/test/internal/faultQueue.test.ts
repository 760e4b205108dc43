import { describe, expect, it } from "@effect/vitest"
import * as ErpRules from "../../src/ErpRules.js"
import * as FaultQueue from "../../src/internal/faultQueue.js"

type Random = ErpRules.Options["randomFaults"]

const make = (random: Random, seed: number) => FaultQueue.make(random, seed, ErpRules.millis)

const tags = (queue: FaultQueue.FaultQueue<ErpRules.DurationInput>, endpoint: string, n: number) =>
  Array.from({ length: n }, () => queue.take(endpoint, 0)?._tag ?? "-")

describe("internal/faultQueue", () => {
  it("serves injected faults in order, each `times` times, to their endpoint only", () => {
    const queue = make(undefined, 1)
    queue.push({ _tag: "Hang" }, { endpoint: "partner/get", times: 2 })
    queue.push({ _tag: "MalformedJson" })
    queue.push({ _tag: "Status", status: 500 }, { times: 0 })
    expect(tags(queue, "/partner/list", 2)).toStrictEqual(["MalformedJson", "-"])
    expect(tags(queue, "/partner/get", 3)).toStrictEqual(["Hang", "Hang", "-"])
  })

  it("keeps a fault with times Infinity until cleared", () => {
    const queue = make(undefined, 1)
    queue.push({ _tag: "Unauthorized" }, { times: Infinity })
    expect(tags(queue, "/partner/get", 50).every((tag) => tag === "Unauthorized")).toBe(true)
    queue.clear()
    expect(queue.take("/partner/get", 0)).toBeUndefined()
  })

  it("random faults: a seeded share, after the injected ones", () => {
    const random: NonNullable<Random> = {
      rate: 0.5,
      seed: 3,
      faults: [{ _tag: "Hang" }, { _tag: "DropBeforeResponse" }]
    }
    const first = make(random, 1)
    first.push({ _tag: "MalformedJson" })
    const seen = tags(first, "/partner/list", 201)
    expect(seen[0]).toBe("MalformedJson")
    const again = tags(make(random, 1), "/partner/list", 200)
    expect(again).toStrictEqual(seen.slice(1))
    const faulted = again.filter((tag) => tag !== "-").length
    expect(faulted).toBeGreaterThan(70)
    expect(faulted).toBeLessThan(130)
    expect(new Set(again)).toStrictEqual(new Set(["-", "Hang", "DropBeforeResponse"]))
    expect(tags(make({ ...random, rate: 0 }, 1), "/partner/list", 50)).not.toContain("Hang")
  })

  it("`after`: a fault waits for that many matching requests, whatever they get", () => {
    const queue = make(undefined, 1)
    queue.push({ _tag: "Hang" }, { after: 2 })
    queue.push({ _tag: "MalformedJson" }, { endpoint: "/partner/get", after: 1 })
    expect(tags(queue, "/partner/list", 1)).toStrictEqual(["-"])
    // The second request to /partner/get: Hang's second pass, MalformedJson's first; then MalformedJson is due.
    expect(tags(queue, "/partner/get", 3)).toStrictEqual(["-", "Hang", "MalformedJson"])
  })

  it("Outage: from the first request that meets it, every matching request until its time is up; times counts outages", () => {
    const queue = make(undefined, 1)
    queue.push({ _tag: "MalformedJson" })
    queue.push({ _tag: "Outage", duration: "1 second" }, { endpoint: "/partner/list", times: 2 })
    const at = (endpoint: string, nowMillis: number) => queue.take(endpoint, nowMillis)?._tag ?? "-"
    expect(queue.outage("/partner/list", 0)).toBeUndefined()
    expect(at("/partner/list", 0)).toBe("MalformedJson")
    expect(at("/partner/list", 100)).toBe("Outage")
    expect(queue.outage("/partner/list", 1099)?._tag).toBe("Outage")
    expect(queue.outage("/partner/get", 500)).toBeUndefined()
    expect(at("/partner/get", 500)).toBe("-")
    expect(at("/partner/list", 1099)).toBe("Outage")
    // Over at 1100; the second starts at the next request to the endpoint.
    expect(queue.outage("/partner/list", 1100)).toBeUndefined()
    expect(at("/partner/list", 5000)).toBe("Outage")
    expect(at("/partner/list", 5999)).toBe("Outage")
    expect(at("/partner/list", 6000)).toBe("-")
    expect(at("/partner/list", 6001)).toBe("-")
  })

  it("an outage under way comes before faults queued ahead of it; clear ends it", () => {
    const queue = make(undefined, 1)
    queue.push({ _tag: "Hang" }, { endpoint: "/partner/get" })
    queue.push({ _tag: "Outage", duration: "10 seconds" })
    expect(queue.take("/partner/list", 0)?._tag).toBe("Outage")
    expect(queue.take("/partner/get", 1)?._tag).toBe("Outage")
    queue.clear()
    expect(queue.take("/partner/get", 2)).toBeUndefined()
  })

  it("a random outage lasts its duration too", () => {
    const queue = make({ rate: 1, faults: [{ _tag: "Outage", duration: "1 second" }] }, 1)
    expect(queue.take("/partner/list", 0)?._tag).toBe("Outage")
    expect(queue.outage("/partner/get", 999)?._tag).toBe("Outage")
    expect(queue.outage("/partner/get", 1000)).toBeUndefined()
  })
})
