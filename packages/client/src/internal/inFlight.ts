/**
 * Places for requests in flight (`ErpClient.withMaxInFlight`), handed out oldest call first
 * (`@erp-client/kernel/PlaceQueue`).
 *
 * Written by hand: Effect's `Semaphore` serves its waiters in the order they came (in both lines; Effect 4's
 * `PartitionedSemaphore` and transactional semaphores take no priority either). A call that failed and tries again
 * would queue behind every younger call already waiting (in a batch, up to `Resource.lookahead` of them), and the
 * answers queued in order behind it would wait with it. Here a waiting attempt is served by its call's start, so a
 * retry goes before the calls that started after it.
 */
import * as PlaceQueue from "@erp-client/kernel/PlaceQueue"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { completeDeferred, makeDeferred } from "./edition.js"

interface Waiter extends PlaceQueue.Waiter {
  readonly granted: Deferred.Deferred<void>
  /** Whether a place was handed to it (it then owns one, even if it is interrupted before it goes on). */
  handed: boolean
}

/** `max` places; `withPlace(priority, effect)` runs `effect` holding one. */
export interface InFlight {
  readonly max: number
  readonly withPlace: <A, E, R>(priority: number, effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

export const make = (max: number): InFlight => {
  const places = Math.max(1, Math.floor(max))
  let free = places
  let seq = 0
  // Sorted, first served first (`PlaceQueue`).
  const waiters: Array<Waiter> = []

  const release = (): void => {
    const next = waiters.shift()
    if (next === undefined) {
      free += 1
      return
    }
    next.handed = true
    completeDeferred(next.granted, Exit.void)
  }

  const take = (
    priority: number,
    restore: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  ): Effect.Effect<void> =>
    Effect.suspend(() => {
      if (free > 0 && waiters.length === 0) {
        free -= 1
        return Effect.void
      }
      const waiter: Waiter = { priority, seq: seq++, granted: makeDeferred<void>(), handed: false }
      PlaceQueue.insert(waiters, waiter)
      return restore(Deferred.await(waiter.granted)).pipe(
        Effect.onInterrupt(() =>
          Effect.sync(() => {
            // Interrupted with a place handed to it: the place goes on to the next; else it leaves the queue.
            if (waiter.handed) release()
            else PlaceQueue.remove(waiters, waiter)
          })
        )
      )
    })

  return {
    max: places,
    withPlace: (priority, effect) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.andThen(take(priority, restore), Effect.ensuring(restore(effect), Effect.sync(release)))
      )
  }
}
