/**
 * Lookups that spare the rate limit (README.md, "Lookups"). Every lookup (`Resource.get`, `Partners.get`,
 * `Partners.getByCompanyName`, `getMany`) meets the identical ones in flight: they share one request, always.
 * This module adds the opt-in cache: with `Lookups.layer({ timeToLive, capacity })` provided, an answer is kept for its
 * time to live and an identical lookup meanwhile sends nothing; `invalidate` forgets one.
 *
 * @since 0.1.0
 */
import { ErpClient } from "@erp-client/client/ErpClient"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { DurationInput } from "./internal/edition.js"
import * as Internal from "./internal/lookups.js"
import * as Resource from "./Resource.js"

/**
 * The cache's settings.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Options {
  /**
   * How long an answer is kept, counted from when its lookup was sent (default 1 minute). A failed lookup is never
   * kept.
   */
  readonly timeToLive?: DurationInput | undefined
  /** How many answers are kept at most; past it, the least recently used go first (default 10,000). */
  readonly capacity?: number | undefined
}

/**
 * The cache of lookups, when one was asked for. Without it, lookups share only what is in flight.
 *
 * @since 0.1.0
 * @category Services
 */
export const Lookups = Internal.Lookups

/**
 * @since 0.1.0
 * @category Services
 */
export type Lookups = Internal.Lookups

/**
 * A cache of lookups: answers kept for `timeToLive`, at most `capacity` of them. Provide it beside `ErpClient`
 * (it is read by every lookup in its scope).
 *
 * @example
 * ```ts
 * import { Lookups, Partners } from "@erp-client/streams"
 * import { Effect } from "effect"
 *
 * // The second lookup of 7 sends nothing: it is answered from the cache.
 * const program = Effect.zip(Partners.get(7), Partners.get(7)).pipe(
 *   Effect.provide(Lookups.layer({ timeToLive: "5 minutes", capacity: 1_000 }))
 * )
 * ```
 *
 * @since 0.1.0
 * @category Layers
 */
export const layer = (options: Options = {}): Layer.Layer<Lookups> =>
  Layer.sync(Lookups, () =>
    Internal.makeMeeting({
      keep: true,
      timeToLiveMillis: Duration.toMillis(options.timeToLive ?? Duration.minutes(1)),
      capacity: options.capacity ?? 10_000
    }))

/**
 * Forgets the cached answer for one value of a resource's selector (say, a partner that was just changed), so the
 * next lookup of it asks the server. Without a `Lookups.layer`, there is nothing to forget.
 *
 * @example
 * ```ts
 * import { Lookups, Partners } from "@erp-client/streams"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function*() {
 *   const before = yield* Partners.get(7)
 *   // … partner 7 is changed …
 *   yield* Lookups.invalidate(Partners.resource, Partners.byId, 7)
 *   const after = yield* Partners.get(7) // asks the server again, not the cache
 *   return [before.company_name, after.company_name]
 * }).pipe(Effect.provide(Lookups.layer({ timeToLive: "5 minutes" })))
 * ```
 *
 * @since 0.1.0
 * @category Combinators
 */
export const invalidate = <A, S>(
  resource: Resource.Resource<A, S>,
  selector: Resource.Selector,
  value: string | number
): Effect.Effect<void, never, ErpClient> =>
  Effect.flatMap(Effect.serviceOption(Lookups), (found) => {
    const endpoint = resource.get
    if (found._tag === "None" || endpoint === undefined) return Effect.void
    const query = Resource.query(selector, value)
    return Effect.flatMap(ErpClient, (client) =>
      Internal.invalidate(
        found.value,
        Internal.make({
          client,
          endpoint,
          schema: resource.schema,
          param: selector.param,
          value,
          selector: query.selector
        })
      ))
  })

/**
 * Lookups asked for, sent, shared with one in flight, and answered from the cache (`erp.client.lookups`,
 * `erp.client.lookups.sent`, `.shared`, `.cached`).
 *
 * @since 0.1.0
 * @category Metrics
 */
export const metrics = {
  lookups: Internal.lookups,
  sent: Internal.sent,
  shared: Internal.shared,
  cached: Internal.cached
} as const
