import type * as ErpRules from "../ErpRules.js"
import type * as SlidingWindow from "../SlidingWindow.js"
import type * as FaultQueue from "./faultQueue.js"
import type * as RequestLog from "./requestLog.js"
import * as Window from "./window.js"

/**
 * What happens to a request to a known endpoint, with the `X-RateLimit-*` headers its response carries.
 *
 * @internal
 */
export type Verdict<D> =
  | { readonly _tag: "Limited"; readonly headers: Record<string, string> }
  | {
    readonly _tag: "Allowed"
    readonly headers: Record<string, string>
    readonly fault: ErpRules.Fault<D> | undefined
  }

/**
 * The rate limit per (API key, endpoint), checked before any fault is taken, so a queued fault waits for a request
 * the window lets through. An outage under way comes first: the service is down, a gateway answers, nothing is
 * counted in the window and no `X-RateLimit-*` header is sent. Every request, rejected ones included, is also counted
 * in an unlimited window, to report whether a client kept to the limit.
 *
 * @internal
 */
export interface Admission<D> {
  readonly decide: (endpoint: string, key: string, nowMillis: number) => Verdict<D>
  /** Empties the windows. */
  readonly reset: () => void
}

/** @internal */
export const make = <D>(
  rateLimit: SlidingWindow.Resolved | false,
  faults: FaultQueue.FaultQueue<D>,
  log: RequestLog.RequestLog
): Admission<D> => {
  const window = rateLimit === false
    ? undefined
    : Window.makeSlidingWindowLog(rateLimit.limit, rateLimit.windowMillis)
  const observed = Window.makeSlidingWindowLog(
    Number.POSITIVE_INFINITY,
    rateLimit === false ? Window.defaults.windowMillis : rateLimit.windowMillis
  )
  return {
    decide: (endpoint, key, nowMillis) => {
      const slot = `${key}\u0000${endpoint}`
      observed.check(slot, nowMillis)
      log.observeWindow(endpoint, observed.count(slot, nowMillis))
      const ongoing = faults.outage(endpoint, nowMillis)
      if (ongoing !== undefined) return { _tag: "Allowed", headers: {}, fault: ongoing }
      if (rateLimit === false || window === undefined) {
        return { _tag: "Allowed", headers: {}, fault: faults.take(endpoint, nowMillis) }
      }
      const peek = window.check(slot, nowMillis, false)
      const headersOf = (decision: SlidingWindow.Decision) =>
        rateLimit.headers
          ? Window.headers(decision, rateLimit.resetUnit, nowMillis, rateLimit.resetSkewMillis, rateLimit.retryAfter)
          : {}
      if (!peek.allowed) return { _tag: "Limited", headers: headersOf(peek) }
      const fault = faults.take(endpoint, nowMillis)
      // The service down: no window, no headers.
      if (fault?._tag === "Outage") return { _tag: "Allowed", headers: {}, fault }
      // A 429 fault is a rejection, and rejected requests are not counted in the window.
      const decision = fault?._tag === "TooManyRequests" ? peek : window.check(slot, nowMillis, true)
      return { _tag: "Allowed", headers: headersOf(decision), fault }
    },
    reset: () => {
      window?.reset()
      observed.reset()
    }
  }
}
