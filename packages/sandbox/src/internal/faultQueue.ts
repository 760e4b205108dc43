import type * as Fault from "../Fault.js"
import type * as Sandbox from "../Sandbox.js"
import * as Seed from "../Seed.js"

/**
 * The faults waiting for requests: injected ones first, in the order injected, then the seeded random ones.
 *
 * @internal
 */
export interface FaultQueue {
  readonly push: (fault: Fault.Fault, options?: Sandbox.InjectOptions) => void
  readonly clear: () => void
  /** The fault for the next request to `endpoint`, if any; takes one of its `times`. */
  readonly take: (endpoint: string) => Fault.Fault | undefined
}

interface Queued {
  readonly fault: Fault.Fault
  readonly endpoint: string | undefined
  remaining: number
}

/**
 * @internal
 */
export const make = (randomFaults: Sandbox.Options["randomFaults"], seed: number): FaultQueue => {
  let queue: Array<Queued> = []
  const prng = Seed.mulberry32(randomFaults?.seed ?? seed)
  return {
    push: (fault, options) => {
      const times = options?.times ?? 1
      if (!(times > 0)) return
      const endpoint = options?.endpoint
      queue.push({
        fault,
        endpoint: endpoint === undefined ? undefined : endpoint.startsWith("/") ? endpoint : `/${endpoint}`,
        remaining: times
      })
    },
    clear: () => {
      queue = []
    },
    take: (endpoint) => {
      const index = queue.findIndex((queued) => queued.endpoint === undefined || queued.endpoint === endpoint)
      if (index >= 0) {
        const queued = queue[index]
        queued.remaining -= 1
        if (queued.remaining <= 0) queue.splice(index, 1)
        return queued.fault
      }
      if (randomFaults !== undefined && randomFaults.faults.length > 0 && prng() < randomFaults.rate) {
        return randomFaults.faults[Math.floor(prng() * randomFaults.faults.length)]
      }
      return undefined
    }
  }
}
