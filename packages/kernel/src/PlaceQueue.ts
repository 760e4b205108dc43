/**
 * The order in which calls waiting for a place in flight (`ErpClient.withMaxInFlight`) are served: oldest call first,
 * by its start, and by arrival among calls that started in the same millisecond. A call trying again after a failure
 * goes before the calls that started after it, instead of queueing behind every younger call (as a semaphore's
 * arrival order would have it). Each edition's `internal/inFlight.ts` keeps its waiters in such a queue.
 *
 * @since 0.1.0
 */

/**
 * A waiter's place in the order.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Waiter {
  /** The start of its call (epoch ms): the smaller, the sooner. */
  readonly priority: number
  /** Arrival, for calls that started in the same millisecond. */
  readonly seq: number
}

/** Whether `a` is served before `b`. */
const before = (a: Waiter, b: Waiter): boolean =>
  a.priority < b.priority || (a.priority === b.priority && a.seq < b.seq)

/**
 * Puts `waiter` in its place in `queue` (sorted, first served first; short, so found by a scan from the end).
 *
 * @example
 * ```ts
 * import { PlaceQueue } from "@erp-client/kernel"
 *
 * const queue = [{ priority: 10, seq: 0 }, { priority: 20, seq: 1 }]
 * PlaceQueue.insert(queue, { priority: 5, seq: 2 })
 * console.log(queue.map((w) => w.priority)) // => [ 5, 10, 20 ]
 * ```
 *
 * @since 0.1.0
 * @category Order
 */
export const insert = <W extends Waiter>(queue: Array<W>, waiter: W): void => {
  let at = queue.length
  while (at > 0 && before(waiter, queue[at - 1]!)) at--
  queue.splice(at, 0, waiter)
}

/**
 * Takes `waiter` out of `queue` (it stopped waiting); whether it was there.
 *
 * @example
 * ```ts
 * import { PlaceQueue } from "@erp-client/kernel"
 *
 * const one = { priority: 10, seq: 0 }
 * const queue = [one]
 * console.log(PlaceQueue.remove(queue, one), queue.length) // => true 0
 * ```
 *
 * @since 0.1.0
 * @category Order
 */
export const remove = <W extends Waiter>(queue: Array<W>, waiter: W): boolean => {
  const at = queue.indexOf(waiter)
  if (at === -1) return false
  queue.splice(at, 1)
  return true
}
