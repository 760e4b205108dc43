/**
 * The checks of `erp sandbox`'s flags that `@effect/cli` cannot make: ranges, shares, flags that need or exclude one
 * another. The first that fails is the one said.
 */
import * as Effect from "effect/Effect"
import { UsageError } from "../errors.js"
import type { Flags } from "./flags.js"
import { parseStep } from "./pages.js"

/** What the checks read out of text flags. */
export interface Checked {
  /** `--hidden-position`, as list positions. */
  readonly hiddenPositions: ReadonlyArray<number>
  /** `--max-list-count-from`, as steps. */
  readonly schedule: ReadonlyArray<{ readonly fromRequest: number; readonly max: number }>
}

/** Each integer flag with its bounds. */
const ranges = (flags: Flags): ReadonlyArray<readonly [string, number, number, number]> => [
  ["port", flags.listen.port, 0, 65_535],
  ["partners", flags.data.partners, 0, 100_000_000],
  ["seed", flags.data.seed, 0, 4_294_967_295],
  ["limit", flags.rateLimit.limit, 1, 1_000_000],
  ["window", flags.rateLimit.window, 1, 86_400],
  ["max-list-count", flags.pages.maxListCount, 1, 1_000_000],
  ["latency", flags.latency.latency, 0, 600_000],
  ["jitter", flags.latency.jitter, 0, 600_000],
  ["inserts", flags.drift.inserts, 0, 10_000],
  ["deletes", flags.drift.deletes, 0, 10_000],
  ["reset-skew", flags.rateLimit.resetSkew, -31_536_000, 31_536_000],
  ["inject-times", flags.faults.injectTimes, 1, 1_000_000],
  ["inject-after", flags.faults.injectAfter, 0, 1_000_000],
  ["outage-after", flags.outage.outageAfter, 0, 1_000_000],
  ["outage-status", flags.outage.outageStatus, 100, 599],
  ["large-records", flags.large.largeRecords, 0, 1_000_000],
  ["large-record-bytes", flags.large.largeRecordBytes, 1, 1_000_000_000]
]

/** Checks the flags; a `UsageError` says the first that is wrong. */
export const check = (flags: Flags): Effect.Effect<Checked, UsageError> =>
  Effect.gen(function*() {
    const { answers, failing, faults, odd, outage, pages } = flags
    const badPosition = pages.hiddenPosition.find((text) => !/^\d{1,9}$/.test(text))
    if (badPosition !== undefined) {
      return yield* new UsageError({ reason: `--hidden-position takes a list position from 0, got ${badPosition}` })
    }
    const hiddenPositions = pages.hiddenPosition.map(Number)
    if (!(odd.oddRate >= 0 && odd.oddRate <= 1)) {
      return yield* new UsageError({ reason: `--odd-rate must be from 0 to 1, got ${odd.oddRate}` })
    }
    if (odd.oddKind.length > 0 && odd.oddRate === 0) {
      return yield* new UsageError({ reason: "--odd-kind needs --odd-rate" })
    }
    if (answers.defaultListCount._tag === "Some" && !(answers.defaultListCount.value >= 1)) {
      return yield* new UsageError({ reason: `--default-list-count must be 1 or more` })
    }
    if (!(faults.faultRate >= 0 && faults.faultRate <= 1)) {
      return yield* new UsageError({ reason: `--fault-rate must be from 0 to 1, got ${faults.faultRate}` })
    }
    if (faults.faultRate > 0 && faults.fault.length === 0) {
      return yield* new UsageError({ reason: "--fault-rate needs at least one --fault" })
    }
    if (!(pages.hiddenRate >= 0 && pages.hiddenRate <= 1)) {
      return yield* new UsageError({ reason: `--hidden-rate must be from 0 to 1, got ${pages.hiddenRate}` })
    }
    if (pages.hiddenRate > 0 && pages.hiddenPosition.length > 0) {
      return yield* new UsageError({ reason: "--hidden-rate and --hidden-position do not go together" })
    }
    const schedule = pages.maxListCountFrom.map(parseStep)
    const badStep = schedule.findIndex((step) => step === undefined)
    if (badStep >= 0) {
      return yield* new UsageError({
        reason: `--max-list-count-from takes N:MAX (N and MAX from 1), got ${pages.maxListCountFrom[badStep]}`
      })
    }
    if (outage.outage._tag === "Some" && !(outage.outage.value > 0 && outage.outage.value <= 86_400)) {
      return yield* new UsageError({ reason: `--outage must be from 0 to 86400 seconds, got ${outage.outage.value}` })
    }
    if (outage.retryAfter._tag === "Some" && !(outage.retryAfter.value >= 0 && outage.retryAfter.value <= 86_400)) {
      return yield* new UsageError({ reason: `--retry-after must be from 0 to 86400, got ${outage.retryAfter.value}` })
    }
    if (failing.failingEvery._tag === "Some" && failing.failingEvery.value < 1) {
      return yield* new UsageError({ reason: `--failing-every must be 1 or more, got ${failing.failingEvery.value}` })
    }
    if (!(failing.failingStatus >= 400 && failing.failingStatus <= 599)) {
      return yield* new UsageError({
        reason: `--failing-status must be from 400 to 599, got ${failing.failingStatus}`
      })
    }
    if (outage.retryAfterDate && outage.retryAfter._tag === "None") {
      return yield* new UsageError({ reason: "--retry-after-date needs --retry-after" })
    }
    for (const [name, value, min, max] of ranges(flags)) {
      if (value < min || value > max) {
        return yield* new UsageError({ reason: `--${name} must be from ${min} to ${max}, got ${value}` })
      }
    }
    return { hiddenPositions, schedule: schedule.filter((step) => step !== undefined) }
  })
