import type * as ErpRules from "../ErpRules.js"
import * as Prng from "./prng.js"

/**
 * The faults waiting for requests: injected ones first, in the order injected, then the seeded random ones. An
 * `Outage`, once a request met it, answers every matching request until it ends (in the time the caller passes).
 *
 * @internal
 */
export interface FaultQueue<D> {
  readonly push: (fault: ErpRules.Fault<D>, options?: ErpRules.InjectOptions) => void
  readonly clear: () => void
  /** The outage under way at `nowMillis` for a request to `endpoint`, if any. */
  readonly outage: (endpoint: string, nowMillis: number) => ErpRules.Fault<D> | undefined
  /**
   * The fault for the next request to `endpoint`, if any: an outage under way, else the first queued fault whose
   * `after` requests have passed (taking one of its `times`; an `Outage` starts then), else a random one.
   */
  readonly take: (endpoint: string, nowMillis: number) => ErpRules.Fault<D> | undefined
}

interface Queued<D> {
  readonly fault: ErpRules.Fault<D>
  readonly endpoint: string | undefined
  /** Times left; for an outage, outages left to start. */
  remaining: number
  /** Matching requests still to pass before it is served. */
  skip: number
  /** While an outage is under way: when it ends (epoch milliseconds). */
  until: number | undefined
}

const matches = <D>(queued: Queued<D>, endpoint: string) =>
  queued.endpoint === undefined || queued.endpoint === endpoint

/**
 * The queue; `toMillis` reads the durations of the faults (an `Outage`'s), when they are served.
 *
 * @internal
 */
export const make = <D>(
  randomFaults: ErpRules.Options<D>["randomFaults"],
  seed: number,
  toMillis: (input: D) => number
): FaultQueue<D> => {
  const durationMillis = (fault: ErpRules.Fault<D>): number =>
    fault._tag === "Outage" ? Math.max(0, toMillis(fault.duration)) : 0
  let queue: Array<Queued<D>> = []
  const prng = Prng.mulberry32(randomFaults?.seed ?? seed)

  // Ends the outages whose time is up, dropping those with no outage left to start.
  const expire = (nowMillis: number) => {
    for (const queued of queue) {
      if (queued.until !== undefined && nowMillis >= queued.until) queued.until = undefined
    }
    queue = queue.filter((queued) => queued.until !== undefined || queued.remaining > 0)
  }

  const outage = (endpoint: string, nowMillis: number) => {
    expire(nowMillis)
    return queue.find((queued) => queued.until !== undefined && matches(queued, endpoint))?.fault
  }

  const start = (queued: Queued<D>, nowMillis: number) => {
    queued.remaining -= 1
    if (queued.fault._tag === "Outage") queued.until = nowMillis + durationMillis(queued.fault)
  }

  return {
    push: (fault, options) => {
      const times = options?.times ?? 1
      if (!(times > 0)) return
      const endpoint = options?.endpoint
      queue.push({
        fault,
        endpoint: endpoint === undefined ? undefined : endpoint.startsWith("/") ? endpoint : `/${endpoint}`,
        remaining: times,
        skip: Math.max(0, Math.floor(options?.after ?? 0)),
        until: undefined
      })
    },
    clear: () => {
      queue = []
    },
    outage,
    take: (endpoint, nowMillis) => {
      const ongoing = outage(endpoint, nowMillis)
      if (ongoing !== undefined) return ongoing
      // A fault still waiting lets this request pass; the first that waits no more takes it.
      let chosen: Queued<D> | undefined
      for (const queued of queue) {
        if (!matches(queued, endpoint) || queued.until !== undefined) continue
        if (queued.skip > 0) queued.skip -= 1
        else if (chosen === undefined) chosen = queued
      }
      if (chosen !== undefined) {
        start(chosen, nowMillis)
        expire(nowMillis)
        return chosen.fault
      }
      if (randomFaults !== undefined && randomFaults.faults.length > 0 && prng() < randomFaults.rate) {
        const fault = randomFaults.faults[Math.floor(prng() * randomFaults.faults.length)]
        // A random outage lasts its duration too.
        if (fault._tag === "Outage") {
          const queued: Queued<D> = { fault, endpoint: undefined, remaining: 1, skip: 0, until: undefined }
          queue.push(queued)
          start(queued, nowMillis)
          expire(nowMillis)
        }
        return fault
      }
      return undefined
    }
  }
}
