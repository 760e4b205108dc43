import type * as ErpRules from "../ErpRules.js"

/**
 * One request while the ERP handles it: the handler fills in the status as it answers, `finish` the duration.
 *
 * @internal
 */
export interface Draft {
  readonly method: string
  readonly endpoint: string
  readonly query: ReadonlyArray<readonly [string, string]>
  status: number
  readonly keyValid: boolean
  readonly timeMillis: number
  durationMillis: number | undefined
  fault: ErpRules.FaultTag | undefined
  /** For a list page the ERP computed: the records it held, and the hidden ones dropped from its cut. */
  records: number | undefined
  hidden: number | undefined
}

/**
 * The request log and the counters behind `ErpRules.Stats`. Each call is one synchronous step, so each is atomic.
 *
 * @internal
 */
export interface RequestLog {
  /** Counts and logs a request that has just arrived; it is in flight until `finish`. */
  readonly begin: (request: {
    readonly method: string
    readonly endpoint: string
    readonly query: ReadonlyArray<readonly [string, string]>
    readonly keyValid: boolean
    readonly timeMillis: number
  }) => Draft
  readonly faultServed: (draft: Draft, tag: ErpRules.FaultTag) => void
  /** The request ended at `nowMillis`, answered with `draft.status` (0 when no status line was sent). */
  readonly finish: (draft: Draft, nowMillis: number) => void
  /** One API key has started `count` requests to `endpoint` within the window now. */
  readonly observeWindow: (endpoint: string, count: number) => void
  readonly countChanges: (inserted: number, deleted: number) => void
  readonly stats: () => ErpRules.Stats
  readonly entries: () => ReadonlyArray<ErpRules.RequestLogEntry>
  /** Clears the counters and the log; requests in flight stay counted as in flight. */
  readonly reset: () => void
}

const snapshot = (draft: Draft): ErpRules.RequestLogEntry => ({
  method: draft.method,
  endpoint: draft.endpoint,
  query: draft.query,
  status: draft.status,
  keyValid: draft.keyValid,
  timeMillis: draft.timeMillis,
  ...(draft.durationMillis === undefined ? {} : { durationMillis: draft.durationMillis }),
  ...(draft.fault === undefined ? {} : { fault: draft.fault }),
  ...(draft.records === undefined ? {} : { records: draft.records }),
  ...(draft.hidden === undefined ? {} : { hidden: draft.hidden })
})

const bump = (counts: Record<string, number>, name: string, by = 1): void => {
  counts[name] = (counts[name] ?? 0) + by
}

/**
 * A log keeping the newest `maxEntries` requests (0: none) and counting every request.
 *
 * @internal
 */
export const make = (maxEntries: number): RequestLog => {
  const counters = () => ({
    requests: 0,
    byEndpoint: {} as Record<string, number>,
    byStatus: {} as Record<string, number>,
    tooManyRequests: 0,
    faultsServed: 0,
    faultsByKind: {} as Record<string, number>,
    refusedKeys: 0,
    maxObservedInWindow: {} as Record<string, number>,
    inserted: 0,
    deleted: 0
  })
  let counts = counters()
  let log: Array<Draft> = []
  let inFlight = 0
  let maxInFlight = 0

  return {
    begin: (request) => {
      const draft: Draft = {
        ...request,
        status: 0,
        durationMillis: undefined,
        fault: undefined,
        records: undefined,
        hidden: undefined
      }
      counts.requests += 1
      bump(counts.byEndpoint, request.endpoint)
      if (!request.keyValid) counts.refusedKeys += 1
      if (maxEntries > 0) {
        log.push(draft)
        // Trim in batches so a long run does not pay for a shift on every request.
        if (log.length > maxEntries * 1.25) log = log.slice(log.length - maxEntries)
      }
      inFlight += 1
      if (inFlight > maxInFlight) maxInFlight = inFlight
      return draft
    },
    faultServed: (draft, tag) => {
      draft.fault = tag
      counts.faultsServed += 1
      bump(counts.faultsByKind, tag)
    },
    finish: (draft, nowMillis) => {
      draft.durationMillis = nowMillis - draft.timeMillis
      bump(counts.byStatus, String(draft.status))
      if (draft.status === 429) counts.tooManyRequests += 1
      inFlight -= 1
    },
    observeWindow: (endpoint, count) => {
      if (count > (counts.maxObservedInWindow[endpoint] ?? 0)) counts.maxObservedInWindow[endpoint] = count
    },
    countChanges: (inserted, deleted) => {
      counts.inserted += inserted
      counts.deleted += deleted
    },
    stats: () => ({
      requests: counts.requests,
      byEndpoint: { ...counts.byEndpoint },
      byStatus: { ...counts.byStatus },
      tooManyRequests: counts.tooManyRequests,
      faultsServed: counts.faultsServed,
      faultsByKind: { ...counts.faultsByKind },
      refusedKeys: counts.refusedKeys,
      inFlight,
      maxInFlight,
      maxObservedInWindow: { ...counts.maxObservedInWindow },
      inserted: counts.inserted,
      deleted: counts.deleted
    }),
    entries: () => log.map(snapshot),
    reset: () => {
      counts = counters()
      log = []
      maxInFlight = inFlight
    }
  }
}
