import { describe, expect, it } from "@effect/vitest"
import * as RequestLog from "../../src/internal/requestLog.js"

const arrive = (log: RequestLog.RequestLog, endpoint: string, timeMillis: number) =>
  log.begin({ method: "GET", endpoint, query: [["id", "1"]], keyValid: true, timeMillis })

describe("internal/requestLog", () => {
  it("counts requests by endpoint and status, 429s, faults, and requests in flight", () => {
    const log = RequestLog.make(100)
    const first = arrive(log, "/partner/get", 1000)
    const second = arrive(log, "/partner/list", 1005)
    expect(log.stats()).toMatchObject({ requests: 2, inFlight: 2, maxInFlight: 2 })
    first.status = 200
    log.finish(first, 1030)
    log.faultServed(second, "TooManyRequests")
    second.status = 429
    log.finish(second, 1010)
    const third = arrive(log, "/partner/list", 1100)
    log.finish(third, 1100)
    expect(log.stats()).toStrictEqual({
      requests: 3,
      byEndpoint: { "/partner/get": 1, "/partner/list": 2 },
      byStatus: { "200": 1, "429": 1, "0": 1 },
      tooManyRequests: 1,
      faultsServed: 1,
      faultsByKind: { TooManyRequests: 1 },
      refusedKeys: 0,
      inFlight: 0,
      maxInFlight: 2,
      maxObservedInWindow: {},
      inserted: 0,
      deleted: 0
    })
    expect(log.entries()).toStrictEqual([
      {
        method: "GET",
        endpoint: "/partner/get",
        query: [["id", "1"]],
        status: 200,
        keyValid: true,
        timeMillis: 1000,
        durationMillis: 30
      },
      {
        method: "GET",
        endpoint: "/partner/list",
        query: [["id", "1"]],
        status: 429,
        keyValid: true,
        timeMillis: 1005,
        durationMillis: 5,
        fault: "TooManyRequests"
      },
      {
        method: "GET",
        endpoint: "/partner/list",
        query: [["id", "1"]],
        status: 0,
        keyValid: true,
        timeMillis: 1100,
        durationMillis: 0
      }
    ])
  })

  it("keeps the highest count seen in a window per endpoint, and the changes made", () => {
    const log = RequestLog.make(10)
    log.observeWindow("/partner/list", 3)
    log.observeWindow("/partner/list", 2)
    log.observeWindow("/partner/get", 1)
    log.countChanges(2, 0)
    log.countChanges(0, 1)
    expect(log.stats()).toMatchObject({
      maxObservedInWindow: { "/partner/list": 3, "/partner/get": 1 },
      inserted: 2,
      deleted: 1
    })
  })

  it("keeps the newest entries only, and none with maxEntries 0", () => {
    const log = RequestLog.make(4)
    for (let i = 0; i < 20; i++) log.finish(arrive(log, `/p${i}`, i), i)
    const endpoints = log.entries().map((entry) => entry.endpoint)
    // Trimmed in batches: at least the newest 4, never more than 25% over.
    expect(endpoints.length).toBeGreaterThanOrEqual(4)
    expect(endpoints.length).toBeLessThanOrEqual(5)
    expect(endpoints.slice(-4)).toStrictEqual(["/p16", "/p17", "/p18", "/p19"])
    expect(log.stats().requests).toBe(20)
    const none = RequestLog.make(0)
    none.finish(arrive(none, "/partner/get", 0), 0)
    expect(none.entries()).toStrictEqual([])
    expect(none.stats().requests).toBe(1)
  })

  it("reset clears counters and log but keeps requests in flight counted", () => {
    const log = RequestLog.make(10)
    const pending = arrive(log, "/partner/get", 0)
    log.finish(arrive(log, "/partner/get", 0), 1)
    log.reset()
    expect(log.stats()).toMatchObject({ requests: 0, byEndpoint: {}, byStatus: {}, inFlight: 1, maxInFlight: 1 })
    expect(log.entries()).toStrictEqual([])
    log.finish(pending, 5)
    expect(log.stats()).toMatchObject({ inFlight: 0, maxInFlight: 1, byStatus: { "0": 1 } })
  })
})
