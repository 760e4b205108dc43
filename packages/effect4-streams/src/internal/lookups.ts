// Per edition: on Effect 4's Cache, which does what the Effect 3 edition's map of answers does by hand.
/**
 * Lookups that spare the rate limit (README.md, "Lookups"): identical lookups in flight share one request, and with a
 * `Lookups.layer` an answer is kept for its time to live. A lookup is identical to another when it asks the same
 * client, the same endpoint and schema, for the same value, with the same bound on waiting for the limit: the client
 * is part of the key, so two clients in one process (two servers, two keys) never share an answer.
 *
 * On Effect 4's `Cache`, where the Effect 3 edition (`packages/streams/src/internal/lookups.ts`) keeps a map of answers
 * by hand. Effect 3's `Cache` did not serve there: it ran its lookup in the cache's context (the request's span lost
 * its caller for a parent) and interrupting the first caller interrupted everyone waiting with it. Effect 4's does what
 * that map does: the lookup runs on a fiber of its own forked from the first caller's (its span's parent, its log
 * annotations, its bound on waiting and places in flight come with it), which outlives that caller while others wait
 * and is interrupted (and forgotten) when the last of them is; identical lookups meanwhile wait for it; answers are
 * kept by a time to live that depends on the answer (a failure: 0, never kept) and, past the capacity, the least
 * recently used go first. What stays here: the time to live counted from when the lookup was sent (as in the Effect 3
 * edition, not from its answer), and when to count a lookup shared or cached; the key and the metrics are the same in
 * both editions (`lookupKey.ts`).
 *
 * Measured on Node 24 (`test/bench/lookups.ts`: 100,000 and 200,000 lookups of distinct values, 64 side by side, each
 * "request" answered after one turn of the scheduler; CPU per lookup, medians): the request alone 1.0 us, through this
 * `Cache` 7.7 us, through the Effect 3 edition's map ported to Effect 4 5.7 to 6.2 us, through `Effect.request` with a
 * resolver of one request each 4.3 to 4.7 us. A `client.get` itself costs about 110 us on a fake HttpClient (more on a
 * socket), so the `Cache` costs some 1.5 to 2 us a lookup more than the hand-written map, about 2% of a lookup sent, and
 * saves the whole of one shared. `Effect.request` is now cheap (Effect 3's cost 0.6 to 1 ms a lookup), but shares
 * nothing by itself: two identical lookups, in one batch or one in flight while the other comes, send two requests;
 * `RequestResolver.withCache` shares them, but keeps failures and has no time to live.
 */
import type { CallError } from "@erp-client/effect4-client/ErpClient"
import * as ErpClient from "@erp-client/effect4-client/ErpClient"
import * as Cache from "effect/Cache"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as MutableHashMap from "effect/MutableHashMap"
import { cached, type Lookup, lookups, type MeetingOptions, request, shared, withMaxWait } from "./lookupKey.js"

export { cached, type Lookup, type LookupOptions, lookups, make, sent, shared } from "./lookupKey.js"

/** Where lookups meet: the lookups on their way and, for a `Lookups.layer`, the answers kept. */
export interface Meeting extends MeetingOptions {
  readonly cache: Cache.Cache<Lookup<any>, unknown, CallError>
}

// The request, sent once for everyone waiting (the cache runs it on a fiber of its own), counted, and timed for its
// time to live.
const send = (lookup: Lookup<any>): Effect.Effect<unknown, CallError> =>
  Clock.clockWith((clock) => {
    const sentAtMillis = clock.currentTimeMillisUnsafe()
    return request(lookup).pipe(
      Effect.onExit(() =>
        Effect.sync(() => {
          lookup.elapsedMillis = clock.currentTimeMillisUnsafe() - sentAtMillis
        })
      )
    )
  })

/**
 * An empty meeting place. The cache is made with an empty context: it adds its own context to every lookup's (under
 * the caller's), and a context of whoever happened to build it (a bound on waiting, a batch's places in flight) must
 * never reach another caller's request.
 */
export const makeMeeting = (options: MeetingOptions): Meeting => ({
  ...options,
  cache: Effect.runSync(Cache.makeWith<Lookup<any>, unknown, CallError>(send, {
    capacity: options.capacity,
    // A failed answer is never kept: the next identical lookup asks again. A kept one lives its time to live from
    // when it was sent (none left: not kept).
    timeToLive: (exit, lookup) =>
      exit._tag === "Failure" || !options.keep
        ? Duration.zero
        : Duration.millis(Math.max(0, options.timeToLiveMillis - lookup.elapsedMillis))
  }))
})

/** The cache of `Lookups.layer`, when one was provided. */
export class Lookups extends Context.Service<Lookups, Meeting>()("@erp-client/effect4-streams/Lookups") {}

// The lookups no cache was asked for meet here while in flight; an entry leaves when its answer is in. Made when first
// needed: importing the module does nothing.
let inFlight: Meeting | undefined = undefined
const inFlightMeeting = (): Meeting => inFlight ??= makeMeeting({ keep: false, timeToLiveMillis: 0, capacity: 65_536 })

/**
 * Forgets the entries of `lookup`, answered or on their way, whatever the bound on waiting they were asked under (the
 * next identical lookup asks the server).
 */
export const invalidate = (meeting: Meeting, lookup: Lookup<any>): Effect.Effect<void> =>
  Effect.suspend(() => {
    const forget: Array<Lookup<any>> = []
    for (const [key] of meeting.cache.map) if (key.query === lookup.query) forget.push(key)
    return Effect.forEach(forget, (key) => Cache.invalidate(meeting.cache, key), { discard: true })
  })

/**
 * Runs a lookup where identical ones meet: answered from a kept answer, or by one on its way, or sent. A failed
 * answer is shared by those waiting for it and kept by nobody. Counted in the step that asks the cache, by what the
 * cache holds for it then.
 */
export const run = <A>(lookup: Lookup<A>): Effect.Effect<A, CallError> =>
  Effect.withFiber((fiber) => {
    const provided = Context.getOption(fiber.context, Lookups)
    const meeting = provided._tag === "Some" ? provided.value : inFlightMeeting()
    const maxWaitMillis = fiber.getRef(ErpClient.currentMaxWait)
    const key = withMaxWait(lookup, maxWaitMillis)
    const found = MutableHashMap.get(meeting.cache.map, key)
    lookups.updateUnsafe(1, fiber.context)
    if (found._tag === "Some") {
      const entry = found.value
      if (entry.fiber.pollUnsafe() === undefined) shared.updateUnsafe(1, fiber.context)
      else if (
        entry.expiresAt === undefined || fiber.getRef(Clock.Clock).currentTimeMillisUnsafe() < entry.expiresAt
      ) cached.updateUnsafe(1, fiber.context)
    }
    return Cache.get(meeting.cache, key) as Effect.Effect<A, CallError>
  })
