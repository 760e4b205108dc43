/**
 * Durations as numbers of milliseconds (see `ErpRules.DurationInput`): the text forms people write (`"2 seconds"`),
 * read as Effect's `Duration.decode` reads them, so an option means the same here as in either edition.
 */
import type * as ErpRules from "../ErpRules.js"

// Effect's own pattern (`Duration.decode`): a decimal number, white space, a unit.
const DURATION = /^(-?\d+(?:\.\d+)?)\s+(nanos?|micros?|millis?|seconds?|minutes?|hours?|days?|weeks?)$/

const MILLIS_PER: Readonly<Record<string, number>> = {
  nano: 1e-6,
  micro: 1e-3,
  milli: 1,
  second: 1_000,
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
  week: 604_800_000
}

// A duration is never negative: as in Effect, a negative or NaN one is zero; an infinite one stays infinite.
const nonNegative = (n: number): number => Number.isNaN(n) || n <= 0 ? 0 : n

/** @internal */
export const millis = (input: ErpRules.DurationInput): number => {
  if (typeof input === "number") return nonNegative(input)
  const match = DURATION.exec(input)
  if (match === null) {
    throw new RangeError(
      `not a duration: ${
        JSON.stringify(input)
      } (a number of milliseconds, or "N unit" with unit nanos, micros, millis, seconds, minutes, hours, days or weeks)`
    )
  }
  const unit = match[2].endsWith("s") ? match[2].slice(0, -1) : match[2]
  return nonNegative(Number(match[1]) * MILLIS_PER[unit])
}

/**
 * A duration that may be negative (a duration itself is not): a number is milliseconds as given (0 when not finite),
 * a string starting with `-` is the negated duration of the rest, anything else `toMillis` of it.
 *
 * @internal
 */
export const signedMillis = <D>(input: D, toMillis: (input: D) => number): number => {
  if (typeof input === "number") return Number.isFinite(input) ? input : 0
  if (typeof input === "string" && input.trim().startsWith("-")) {
    return -toMillis(input.trim().slice(1).trim() as D)
  }
  return toMillis(input)
}
