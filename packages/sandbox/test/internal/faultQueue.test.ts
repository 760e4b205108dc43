import { describe, expect, it } from "@effect/vitest"
import { Fault } from "../../src/index.js"
import * as FaultQueue from "../../src/internal/faultQueue.js"

const tags = (queue: FaultQueue.FaultQueue, endpoint: string, n: number) =>
  Array.from({ length: n }, () => queue.take(endpoint, 0)?._tag ?? "-")

describe("internal/faultQueue", () => {
  it("serves injected faults in order, each `times` times, to their endpoint only", () => {
    const queue = FaultQueue.make(undefined, 1)
    queue.push(Fault.Fault.Hang(), { endpoint: "partner/get", times: 2 })
    queue.push(Fault.Fault.MalformedJson())
    queue.push(Fault.Fault.Status({ status: 500 }), { times: 0 })
    expect(tags(queue, "/partner/list", 2)).toStrictEqual(["MalformedJson", "-"])
    expect(tags(queue, "/partner/get", 3)).toStrictEqual(["Hang", "Hang", "-"])
  })

  it("keeps a fault with times Infinity until cleared", () => {
    const queue = FaultQueue.make(undefined, 1)
    queue.push(Fault.Fault.Unauthorized(), { times: Infinity })
    expect(tags(queue, "/partner/get", 50).every((tag) => tag === "Unauthorized")).toBe(true)
    queue.clear()
    expect(queue.take("/partner/get", 0)).toBeUndefined()
  })

  it("random faults: a seeded share, after the injected ones", () => {
    const random = { rate: 0.5, seed: 3, faults: [Fault.Fault.Hang(), Fault.Fault.DropBeforeResponse()] }
    const first = FaultQueue.make(random, 1)
    first.push(Fault.Fault.MalformedJson())
    const seen = tags(first, "/partner/list", 201)
    expect(seen[0]).toBe("MalformedJson")
    const again = tags(FaultQueue.make(random, 1), "/partner/list", 200)
    expect(again).toStrictEqual(seen.slice(1))
    const faulted = again.filter((tag) => tag !== "-").length
    expect(faulted).toBeGreaterThan(70)
    expect(faulted).toBeLessThan(130)
    expect(new Set(again)).toStrictEqual(new Set(["-", "Hang", "DropBeforeResponse"]))
    expect(tags(FaultQueue.make({ ...random, rate: 0 }, 1), "/partner/list", 50)).not.toContain("Hang")
  })
})
