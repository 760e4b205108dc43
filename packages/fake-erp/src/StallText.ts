/**
 * The line the editions' test kits write when `ErpClient` calls stand still on a `TestClock` nobody advances: which
 * calls, what they wait for (the client's rate limit, a pause the server asked for, a request the in-memory ERP holds
 * unanswered, a retry after its last answer) and how far to move the clock. Each kit watches its calls on its own
 * Effect (`@erp-client/testing`'s and `@erp-client/effect4-testing`'s `internal/watch.ts`) and words a stall here.
 *
 * @since 0.1.0
 */

/**
 * What stands still, in words: the calls in flight, and the likely reason they wait.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Stall {
  /** Each call in flight, as `METHOD endpoint`. */
  readonly calls: ReadonlyArray<string>
  /** Real time it has stood still. */
  readonly stalledMillis: number
  /** The TestClock's time. */
  readonly nowMillis: number
  /** The limiter's last wait, if it still lies ahead. */
  readonly wait: { readonly reason: "client-limit" | "server-pause"; readonly untilMillis: number } | undefined
  /** Requests the in-memory ERP holds unanswered. */
  readonly sandboxInFlight: number
  /** The in-memory ERP's last answer: status (0: none) and fault. */
  readonly lastAnswer: { readonly status: number; readonly fault?: string | undefined } | undefined
  /** The next time a fiber sleeping on the TestClock wakes up, if known. */
  readonly nextWakeMillis: number | undefined
}

const seconds = (millis: number): string => {
  const s = millis / 1000
  return `${Number.isInteger(s) ? s : s.toFixed(s < 10 ? 3 : 1).replace(/\.?0+$/, "")} s`
}

// An amount to advance that covers `millis`, in the unit a reader types: whole seconds (at least one).
const adjustBy = (millis: number): string => {
  const s = Math.max(1, Math.ceil(millis / 1000))
  return s === 1 ? "1 second" : `${s} seconds`
}

/**
 * The one line a test kit (`kit`, its package's name) writes for a stall: no line breaks, the calls, the reason, and
 * what moves the clock: `ErpTest.advancing` first, since it alone moves past waits that follow this one (a paged
 * export's; on Effect 4 one `TestClock.adjust` does not wait for them), then the `TestClock.adjust` that moves past this
 * wait (whole seconds, at least one).
 *
 * @example
 * ```ts
 * import { StallText } from "@erp-client/fake-erp"
 *
 * const line = StallText.describeStall({
 *   calls: ["GET partner/get"],
 *   stalledMillis: 1000,
 *   nowMillis: 30_000,
 *   wait: { reason: "client-limit", untilMillis: 60_600 },
 *   sandboxInFlight: 0,
 *   lastAnswer: { status: 200 },
 *   nextWakeMillis: 60_600
 * }, "@erp-client/effect4-testing")
 * console.log(line.slice(line.indexOf("it waits"), line.indexOf(". Only")))
 * // => it waits for the client's rate limit until 30.6 s ahead on the TestClock
 * console.log(line.includes(`TestClock.adjust("31 seconds")`), line.includes("\n")) // => true false
 * ```
 *
 * @since 0.1.0
 * @category Texts
 */
export const describeStall = (stall: Stall, kit: string): string => {
  const calls = stall.calls.length === 1
    ? `an ErpClient call (${stall.calls[0]}) has`
    : `${stall.calls.length} ErpClient calls (${[...new Set(stall.calls)].join(", ")}) have`
  const ahead = (until: number) => `${seconds(until - stall.nowMillis)} ahead on the TestClock`
  const reason = stall.wait !== undefined
    ? `it waits for ${
      stall.wait.reason === "client-limit" ? "the client's rate limit" : "a pause the server asked for (a 429)"
    } until ${ahead(stall.wait.untilMillis)}`
    : stall.sandboxInFlight > 0
    ? `the sandbox holds ${stall.sandboxInFlight === 1 ? "a request" : `${stall.sandboxInFlight} requests`} ` +
      `unanswered (a Hang fault, or latency or a Delay fault on the TestClock), until the client's timeout`
    : stall.lastAnswer !== undefined && stall.lastAnswer.status !== 200
    ? `it waits to retry after the sandbox's last answer, ${stall.lastAnswer.status || "no answer"}${
      stall.lastAnswer.fault === undefined ? "" : ` (${stall.lastAnswer.fault})`
    }`
    : "it waits on the TestClock"
  const next = stall.wait?.untilMillis ?? stall.nextWakeMillis
  const wake = stall.wait !== undefined || next === undefined || next <= stall.nowMillis
    ? ""
    : `; the next wake-up is ${ahead(next)}`
  return `${kit}: ${calls} waited ${seconds(stall.stalledMillis)} of real time on a TestClock ` +
    `nobody advances: ${reason}${wake}. Only the test moves a TestClock: run the call with ErpTest.advancing, ` +
    `which moves it through every wait until the call ends; for this one wait alone, fork the call, ` +
    `TestClock.adjust("${adjustBy(next === undefined ? 0 : next - stall.nowMillis)}") (or more), then Fiber.join ` +
    `it (see the ${kit} README, "Time").`
}
