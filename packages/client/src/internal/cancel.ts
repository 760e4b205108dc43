/**
 * The client's own cancellations: work interrupted because it is no longer wanted (a page fetched ahead past the end
 * of its list), told apart from any other interruption (Ctrl-C, a timeout of the caller's) by who interrupted it.
 *
 * Effect says who interrupted a fiber in the interruption's cause: the id of the interrupting fiber. A cancellation
 * interrupts as one of the ids made here, one per reason (negative, so never a real fiber's), and the code that ends
 * spans and records metrics reads the reason back from the cause it ended with (`reasonOf`). Nothing is set on the
 * fiber beforehand and nothing costs on the way: the cause is read only when an interruption ended it.
 */
import type * as Cause from "effect/Cause"
import type * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import { interruptAs, type Interruptor, interruptorIds, isInterruptedOnly, makeInterruptor } from "./edition.js"

const idsByReason = new Map<string, Interruptor>()
const reasonsById = new Map<number, string>()

/** The fiber id a cancellation for `reason` interrupts as. */
export const interruptor = (reason: string): Interruptor => {
  let id = idsByReason.get(reason)
  if (id === undefined) {
    const number = -1 - idsByReason.size
    id = makeInterruptor(number)
    idsByReason.set(reason, id)
    reasonsById.set(number, reason)
  }
  return id
}

/** Interrupts `fiber` as a cancellation for `reason`, and waits for it to end. */
export const cancel = <A, E>(fiber: Fiber.Fiber<A, E>, reason: string): Effect.Effect<void> =>
  interruptAs(fiber, interruptor(reason))

/**
 * The reason of the cancellation `cause` is, or `undefined` when it is anything else: a failure, or an interruption by
 * anyone else (alone or together with a cancellation: then the other interruption is what happened).
 */
export const reasonOf = (cause: Cause.Cause<unknown>): string | undefined => {
  if (!isInterruptedOnly(cause)) return undefined
  let reason: string | undefined = undefined
  for (const id of interruptorIds(cause)) {
    const found = id === undefined ? undefined : reasonsById.get(id)
    if (found === undefined) return undefined
    reason ??= found
  }
  return reason
}
