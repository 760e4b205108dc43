import * as Duration from "effect/Duration"

/**
 * An Effect `DurationInput` in milliseconds: how the rules of `@erp-client/fake-erp` read the sandbox's options and
 * faults, which are written with Effect's durations.
 *
 * @internal
 */
export const toMillis = (input: Duration.DurationInput): number => Duration.toMillis(input)
