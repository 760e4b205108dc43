/**
 * `erp sandbox`'s flags, checked, as the options of the sandbox server.
 */
import type * as SeedModule from "@erp-client/fake-erp/Seed"
import type * as FaultModule from "@erp-client/sandbox/Fault"
import type * as RateLimit from "@erp-client/sandbox/RateLimit"
import type * as Sandbox from "@erp-client/sandbox/Sandbox"
import type { Checked } from "./check.js"
import { faultKinds } from "./faults.js"
import type { Flags } from "./flags.js"

/** The Retry-After the outage and the 5xx and 429 faults send: `--retry-after`, as seconds or as a date. */
const retryAfterOf = (outage: Flags["outage"]): FaultModule.RetryAfter | undefined =>
  outage.retryAfter._tag === "None"
    ? undefined
    : outage.retryAfterDate
    ? { after: `${outage.retryAfter.value} seconds`, format: "http-date" }
    : String(outage.retryAfter.value)

/** The faults queued at start: each `--inject`, then the outage. */
const injected = (
  Fault: typeof FaultModule,
  flags: Flags,
  faults: ReturnType<typeof faultKinds>,
  retryAfter: FaultModule.RetryAfter | undefined
): Array<{ readonly fault: FaultModule.Fault } & Sandbox.InjectOptions> => {
  const { outage } = flags
  const inject: Array<{ readonly fault: FaultModule.Fault } & Sandbox.InjectOptions> = flags.faults.inject.map((
    kind
  ) => ({
    fault: faults[kind],
    times: flags.faults.injectTimes,
    after: flags.faults.injectAfter
  }))
  if (outage.outage._tag === "Some") {
    inject.push({
      fault: Fault.Fault.Outage({
        duration: `${Math.round(outage.outage.value * 1000)} millis`,
        status: outage.outageStatus,
        body: outage.outageBody,
        retryAfter
      }),
      after: outage.outageAfter,
      ...(outage.outageEndpoint._tag === "Some" ? { endpoint: `/${outage.outageEndpoint.value}` } : {})
    })
  }
  return inject
}

/** The rate limit the flags ask for, or none. */
const rateLimitOf = (flags: Flags): Sandbox.Options["rateLimit"] => {
  const { rateLimit } = flags
  return rateLimit.noRateLimit
    ? false
    : {
      limit: rateLimit.limit,
      window: `${rateLimit.window} seconds`,
      resetUnit: rateLimit.resetUnit as RateLimit.ResetUnit,
      resetSkew: rateLimit.resetSkew * 1000,
      ...(rateLimit.noLimitHeaders ? { headers: false } : {}),
      ...(rateLimit.limitRetryAfter ? { retryAfter: true } : {})
    }
}

/**
 * The sandbox's options from the flags (checked by `check`, which read `checked` out of them). `Fault` and `Seed` are
 * the modules, imported when `erp sandbox` runs.
 */
export const sandboxOptions = (
  Fault: typeof FaultModule,
  Seed: typeof SeedModule,
  flags: Flags,
  checked: Checked
): Sandbox.Options => {
  const { answers, data, drift, failing, faults, large, latency, listen, odd, pages } = flags
  const retryAfter = retryAfterOf(flags.outage)
  const kinds = faultKinds(Fault, retryAfter)
  const inject = injected(Fault, flags, kinds, retryAfter)
  return {
    port: listen.port,
    host: listen.host,
    partners: data.partners,
    seed: data.seed,
    ...(flags.access.key.length > 0 ? { apiKeys: flags.access.key } : {}),
    rateLimit: rateLimitOf(flags),
    maxListCount: pages.maxListCount,
    ...(failing.failingEvery._tag === "Some"
      ? { failingIds: { every: failing.failingEvery.value, status: failing.failingStatus } }
      : {}),
    ...(checked.schedule.length > 0 ? { maxListCountSchedule: checked.schedule } : {}),
    ...(pages.ignoreOffset ? { ignoreOffset: true } : {}),
    ...(pages.ignoreConditions._tag === "Some" ? { ignoreConditions: pages.ignoreConditions.value } : {}),
    ...(pages.hiddenRate > 0 ? { hidden: { rate: pages.hiddenRate, seed: data.seed } } : {}),
    ...(checked.hiddenPositions.length > 0 ? { hidden: { positions: checked.hiddenPositions } } : {}),
    ...(inject.length > 0 ? { inject } : {}),
    latency: { base: `${latency.latency} millis`, jitter: `${latency.jitter} millis` },
    ...(faults.faultRate > 0
      ? {
        randomFaults: { rate: faults.faultRate, faults: faults.fault.map((kind) => kinds[kind]), seed: data.seed }
      }
      : {}),
    ...(drift.inserts > 0 || drift.deletes > 0
      ? { drift: { inserts: drift.inserts, deletes: drift.deletes, seed: data.seed } }
      : {}),
    ...(odd.oddRate > 0
      ? { oddRecords: { rate: odd.oddRate, ...(odd.oddKind.length > 0 ? { kinds: odd.oddKind } : {}) } }
      : {}),
    ...(answers.defaultListCount._tag === "Some" ? { defaultListCount: answers.defaultListCount.value } : {}),
    ...(large.largeRecords > 0
      ? {
        resources: [{
          list: "large/list",
          get: "large/get",
          records: {
            count: large.largeRecords,
            record: (index: number) => Seed.largeRecordAt(index, large.largeRecordBytes)
          }
        }]
      }
      : {}),
    tooManyRequestsBody: answers.tooManyRequestsBody,
    messages: { unauthorized: answers.unauthorizedMessage, notFound: answers.notFoundMessage }
  }
}
