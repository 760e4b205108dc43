// Per edition: Effect 3's Cache runs lookups in its own context; this map of answers does what Effect 4's Cache does.
/**
 * Lookups that spare the rate limit (README.md, "Lookups"): identical lookups in flight share one request, and with a
 * `Lookups.layer` an answer is kept for its time to live. What makes two lookups identical, and the lookups' metrics,
 * are the same in both editions (`lookupKey.ts`).
 *
 * Written by hand, a map of answers on their way, rather than through Effect's `Request` / `RequestResolver`: every
 * `Effect.request` goes through the batching machinery (a daemon fiber for the block, another per resolver, the fiber
 * refs copied and joined each time), which measured 0.6 to 1 ms of CPU per lookup, as much as the lookup's own
 * request (`client.get`, about 0.9 ms), for a resolver with nothing to batch (one GET per lookup; `pnpm bench cost`).
 * `effect/Cache` does not serve either: it runs its lookup in the cache's context (the lookup's span would lose its
 * parent), and interrupting the first caller interrupts everyone waiting with it.
 */
import type { CallError } from "@erp-client/client/ErpClient"
import * as ErpClient from "@erp-client/client/ErpClient"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as FiberRef from "effect/FiberRef"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import { cached, type Lookup, lookups, type MeetingOptions, request, shared, withMaxWait } from "./lookupKey.js"

export { cached, type Lookup, type LookupOptions, lookups, make, sent, shared } from "./lookupKey.js"

/** A lookup on its way, or answered and kept. */
interface Entry {
  readonly answer: Deferred.Deferred<any, CallError>
  /** When it was sent: a kept answer's age. */
  readonly sentAtMillis: number
  /** The callers waiting for it; when the last one is interrupted, so is the request. */
  waiting: number
  request: Fiber.RuntimeFiber<void> | undefined
  done: boolean
}

/** Where lookups meet: the lookups on their way and, for a `Lookups.layer`, the answers kept. */
export interface Meeting extends MeetingOptions {
  /** By key, least recently used first. */
  readonly entries: Map<string, Entry>
}

/** An empty meeting place. */
export const makeMeeting = (options: MeetingOptions): Meeting => ({ entries: new Map(), ...options })

/** The cache of `Lookups.layer`, when one was provided. */
export class Lookups extends Context.Tag("@erp-client/streams/Lookups")<Lookups, Meeting>() {}

// The lookups no cache was asked for meet here while in flight; an entry leaves when its answer is in.
const inFlight = makeMeeting({ keep: false, timeToLiveMillis: Infinity, capacity: 65_536 })

/** Where a lookup meets identical ones: the cache of a `Lookups.layer` if one is provided, else in flight only. */
export const meeting: Effect.Effect<Meeting> = Effect.map(
  Effect.serviceOption(Lookups),
  Option.getOrElse(() => inFlight)
)

const forget = (meeting: Meeting, key: string, entry: Entry): void => {
  if (meeting.entries.get(key) === entry) meeting.entries.delete(key)
}

/**
 * Forgets the entries of `lookup`, answered or on their way, whatever the bound on waiting they were asked under (the
 * next identical lookup asks the server).
 */
export const invalidate = (meeting: Meeting, lookup: Lookup<any>): Effect.Effect<void> =>
  Effect.sync(() => {
    const prefix = `${lookup.query}\u0000`
    for (const key of [...meeting.entries.keys()]) if (key.startsWith(prefix)) meeting.entries.delete(key)
  })

// The request, sent once for everyone waiting: in a fiber of its own (it outlives an interrupted caller while others
// wait), which inherits the first caller's fiber refs: its span's parent, its log annotations. Forked where the caller
// cannot be interrupted, it is made interruptible again: the client's timeouts interrupt a hung attempt.
const send = <A>(meeting: Meeting, lookup: Lookup<A>, entry: Entry): Effect.Effect<void> =>
  Effect.map(
    Effect.forkDaemon(
      Effect.interruptible(request(lookup)).pipe(
        Effect.exit,
        Effect.flatMap((exit) => {
          entry.done = true
          // A failed answer is never kept: the next identical lookup asks again.
          if (!meeting.keep || Exit.isFailure(exit)) forget(meeting, lookup.key, entry)
          return Deferred.done(entry.answer, exit)
        }),
        Effect.asVoid
      )
    ),
    (fiber) => {
      entry.request = fiber
    }
  )

// A caller waiting for an entry's answer; the last one interrupted interrupts the request and forgets it.
// Counted before it can be interrupted (`restore` makes the waiting itself interruptible).
const wait = <A>(
  meeting: Meeting,
  key: string,
  entry: Entry,
  restore: <X, E, R>(effect: Effect.Effect<X, E, R>) => Effect.Effect<X, E, R>
): Effect.Effect<A, CallError> =>
  Effect.suspend(() => {
    entry.waiting += 1
    return restore(Deferred.await(entry.answer as Deferred.Deferred<A, CallError>)).pipe(
      Effect.onExit((exit) => {
        entry.waiting -= 1
        if (!Exit.isInterrupted(exit) || entry.waiting > 0 || entry.done) return Effect.void
        forget(meeting, key, entry)
        return entry.request === undefined ? Effect.void : Fiber.interruptFork(entry.request)
      })
    )
  })

/**
 * Runs a lookup where identical ones meet: answered from a kept answer, or by one on its way, or sent. A failed
 * answer is shared by those waiting for it and kept by nobody.
 */
export const run = <A>(asked: Lookup<A>): Effect.Effect<A, CallError> =>
  Effect.flatMap(
    Effect.all([meeting, Clock.currentTimeMillis, FiberRef.get(ErpClient.currentMaxWait)]),
    ([meeting, now, maxWaitMillis]) => {
      const lookup = withMaxWait(asked, maxWaitMillis)
      const found = meeting.entries.get(lookup.key)
      if (found !== undefined && (!found.done || now - found.sentAtMillis < meeting.timeToLiveMillis)) {
        // Used again: last to go.
        meeting.entries.delete(lookup.key)
        meeting.entries.set(lookup.key, found)
        return Effect.zipRight(
          Effect.zipRight(Metric.increment(lookups), Metric.increment(found.done ? cached : shared)),
          Effect.uninterruptibleMask((restore) => wait<A>(meeting, lookup.key, found, restore))
        )
      }
      const entry: Entry = {
        answer: Deferred.unsafeMake(FiberId.none),
        sentAtMillis: now,
        waiting: 0,
        request: undefined,
        done: false
      }
      meeting.entries.delete(lookup.key)
      meeting.entries.set(lookup.key, entry)
      if (meeting.entries.size > meeting.capacity) {
        meeting.entries.delete(meeting.entries.keys().next().value!)
      }
      return Effect.zipRight(
        Metric.increment(lookups),
        Effect.uninterruptibleMask((restore) =>
          Effect.zipRight(send(meeting, lookup, entry), wait<A>(meeting, lookup.key, entry, restore))
        )
      )
    }
  )
