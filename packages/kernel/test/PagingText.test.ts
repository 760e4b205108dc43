import { describe, expect, it } from "@effect/vitest"
import * as PagingText from "../src/PagingText.js"
import * as Telemetry from "../src/Telemetry.js"

// The lines and names both editions' streams tell an operator: written once, here.

describe("PagingText", () => {
  it("a page size learned from the server, or halved after a response too large", () => {
    expect(PagingText.pageSize("partner/list", { size: 30, previous: 1000, reason: "served" })).toBe(
      "partner/list: the server serves at most 30 records a page (asked 1000); paging on with 30"
    )
    expect(PagingText.pageSize("invoice/list", { size: 250, previous: 500, reason: "too-large" })).toBe(
      "invoice/list: a page of 500 records was too large to accept; paging on with 250"
    )
  })

  it("a page size is told once per endpoint and process, at debug; a different size learned later is told again", () => {
    const served = { size: 30, previous: 1000, reason: "served" } as const
    expect(PagingText.pageSizeLine("once/list", served)).toEqual({
      level: "Debug",
      text: PagingText.pageSize("once/list", served)
    })
    expect(PagingText.pageSizeLine("once/list", served)).toBeUndefined()
    expect(PagingText.pageSizeLine("once/list", { ...served, previous: 500 })).toBeUndefined()
    expect(PagingText.pageSizeLine("twice/list", served)?.level).toBe("Debug")
    expect(PagingText.pageSizeLine("once/list", { size: 20, previous: 30, reason: "served" })?.text).toBe(
      "once/list: the server serves at most 20 records a page (asked 30); paging on with 20"
    )
  })

  it("a shift at debug, a recovery at info, a dropped record at warning, its id as JSON", () => {
    expect(PagingText.drift("partner/list", { _tag: "Shifted", offset: 90, by: -2 })).toEqual({
      level: "Debug",
      text: "partner/list: the list shifted by -2 at offset 90"
    })
    expect(PagingText.drift("partner/list", { _tag: "Recovered", offset: 450, requests: 3, overlap: 10 })).toEqual({
      level: "Info",
      text:
        "partner/list: the list moved past the overlap at offset 450; recovered with 3 extra requests, overlap now 10"
    })
    const dropped = PagingText.drift("partner/list", {
      _tag: "Dropped",
      offset: 7,
      id: "12",
      idJson: "\"12\"",
      reason: "updated"
    })
    expect(dropped.level).toBe("Warning")
    expect(dropped.text).toBe(
      `partner/list: the record at offset 7 has id "12", already written with other content (updated since it was ` +
        `read); not written again (drift-safe paging tells records apart by id)`
    )
    // An id beyond a double, as the server wrote it (not as JSON.parse rounded it, nor quoted); another record's.
    const exact = PagingText.drift("partner/list", {
      _tag: "Dropped",
      offset: 8,
      id: "12345678901234567890",
      idJson: "12345678901234567890",
      reason: "duplicate"
    })
    expect(exact.text).toContain("has id 12345678901234567890, the id of another, distinct record already written")
  })

  it("the streams' metrics are named erp.client.*, each with a unit, none a client metric's name", () => {
    const names = Object.values(Telemetry.streamMetrics).map((info) => info.name)
    expect(names).toEqual([
      "erp.client.records.streamed",
      "erp.client.paging.drift",
      "erp.client.lookups",
      "erp.client.lookups.sent",
      "erp.client.lookups.shared",
      "erp.client.lookups.cached"
    ])
    for (const info of Object.values(Telemetry.streamMetrics)) expect(info.unit).toMatch(/^\{[a-z]+\}$/)
    const clientNames = new Set<string>(Object.values(Telemetry.metrics).map((info) => info.name))
    expect(names.filter((name) => clientNames.has(name))).toEqual([])
  })
})
