/**
 * When the grace for a shared limiter's store ends, and what each operation does past it: the decisions `admit` of
 * `Outage` takes.
 */
import type { FailurePolicy, Operation, Policy, State } from "../Outage.js"

/**
 * When the requests waiting for the store give up on it and the policy applies: the grace after the outage was
 * noticed, for a store that has answered before; at once otherwise.
 *
 * @example
 * ```ts
 * import * as Outage from "@erp-client/kernel/Outage"
 * import { graceEnds } from "./outage.js"
 *
 * const policy = { onFailure: "fail", graceMillis: 10_000, slotWindowMillis: 1_050 } as const
 * const state = Outage.makeState()
 * Outage.answered(state, policy, 0, 100)
 * Outage.failed(state, 1_000, 2_000, "down")
 * console.log(graceEnds(state, policy)) // => 12000
 * ```
 */
export const graceEnds = (state: State, policy: Policy): number =>
  state.answeredOnce ? state.since + policy.graceMillis : state.since

/**
 * What an operation does past the grace: `fail` (with the store's failure), `local` (this process's memory limiter
 * instead), or `ignore` (nothing: a limit not learned costs a 429 later, never the answer at hand; a slot not handed
 * back is only its busy mark; a pause under `local` is kept locally anyway).
 *
 * @example
 * ```ts
 * import { fallback } from "./outage.js"
 *
 * console.log(fallback("fail", "acquire"), fallback("local", "acquire"), fallback("fail", "learn"))
 * // => fail local ignore
 * ```
 */
export const fallback = (policy: FailurePolicy, operation: Operation): "fail" | "local" | "ignore" => {
  switch (operation) {
    case "learn":
    case "release":
      return "ignore"
    case "pause":
      return policy === "local" ? "ignore" : "fail"
    case "acquire":
    case "inUse":
      return policy
  }
}
