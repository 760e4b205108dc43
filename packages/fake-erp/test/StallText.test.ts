import { describe, expect, it } from "@effect/vitest"
import * as StallText from "../src/StallText.js"

const KIT = "@erp-client/effect4-testing"

const stall = (overrides: Partial<StallText.Stall>): StallText.Stall => ({
  calls: ["GET partner/get"],
  stalledMillis: 1000,
  nowMillis: 10_000,
  wait: undefined,
  sandboxInFlight: 0,
  lastAnswer: undefined,
  nextWakeMillis: undefined,
  ...overrides
})

describe("StallText.describeStall", () => {
  it("names the call, the limiter's wait, ErpTest.advancing and the adjust that moves past this wait, in one line", () => {
    const line = StallText.describeStall(
      stall({ wait: { reason: "client-limit", untilMillis: 40_600 }, nextWakeMillis: 12_000 }),
      KIT
    )
    expect(line).toBe(
      "@erp-client/effect4-testing: an ErpClient call (GET partner/get) has waited 1 s of real time on a TestClock " +
        "nobody advances: it waits for the client's rate limit until 30.6 s ahead on the TestClock. Only the test " +
        "moves a TestClock: run the call with ErpTest.advancing, which moves it through every wait until the call " +
        "ends; for this one wait alone, fork the call, TestClock.adjust(\"31 seconds\") (or more), then Fiber.join " +
        "it (see the @erp-client/effect4-testing README, \"Time\")."
    )
  })

  it("a server's pause; several calls, each kind named once", () => {
    const line = StallText.describeStall(
      stall({
        calls: ["GET partner/get", "GET partner/list", "GET partner/get"],
        stalledMillis: 1200,
        wait: { reason: "server-pause", untilMillis: 30_000 }
      }),
      "@erp-client/testing"
    )
    expect(line).toContain("3 ErpClient calls (GET partner/get, GET partner/list) have waited 1.2 s")
    expect(line).toContain("a pause the server asked for (a 429) until 20 s ahead on the TestClock")
    expect(line).toContain("TestClock.adjust(\"20 seconds\")")
    expect(line).toContain("see the @erp-client/testing README")
  })

  it("a request held unanswered, until the client's timeout: the next wake-up says how far", () => {
    const line = StallText.describeStall(stall({ sandboxInFlight: 2, nextWakeMillis: 19_999 }), KIT)
    expect(line).toContain(
      "the sandbox holds 2 requests unanswered (a Hang fault, or latency or a Delay fault on the TestClock), until " +
        "the client's timeout; the next wake-up is 9.999 s ahead on the TestClock"
    )
    expect(line).toContain("TestClock.adjust(\"10 seconds\")")
  })

  it("a retry after the last answer (its fault, or no answer); at least one second to adjust", () => {
    expect(
      StallText.describeStall(stall({ lastAnswer: { status: 503, fault: "Outage" }, nextWakeMillis: 10_020 }), KIT)
    ).toContain(
      "it waits to retry after the sandbox's last answer, 503 (Outage); the next wake-up is 0.02 s ahead on the " +
        "TestClock. Only the test moves a TestClock: run the call with ErpTest.advancing"
    )
    expect(StallText.describeStall(stall({ lastAnswer: { status: 0, fault: "DropBeforeResponse" } }), KIT)).toContain(
      "after the sandbox's last answer, no answer (DropBeforeResponse). Only"
    )
  })

  it("nothing known: it waits on the TestClock; a wake-up in the past is not named", () => {
    const line = StallText.describeStall(stall({ lastAnswer: { status: 200 }, nextWakeMillis: 9_000 }), KIT)
    expect(line).toContain("nobody advances: it waits on the TestClock. Only the test")
    expect(line).toContain("TestClock.adjust(\"1 second\")")
  })
})
