// Per edition: Effect 3's Cache runs lookups in its own context; this map of answers does what Effect 4's Cache does.
/**
 * Lookups that spare the rate limit (README.md, "Lookups"): identical lookups in flight share one request, and with a
 * `Lookups.layer` an answer is kept for its time to live. A lookup is identical to another when it asks the same
 * client, the same endpoint and schema, for the same value, with the same bound on waiting for the limit: the client
 * is part of the key, so two clients in one process (two servers, two keys) never share an answer.
 *
 * Written by hand, a map of answers on their way, rather than through Effect's `Request` / `RequestResolver`: every
 * `Effect.request` goes through the batching machinery (a daemon fiber for the block, another per resolver, the fiber
 * refs copied and joined each time), which measured 0.6 to 1 ms of CPU per lookup, as much as the lookup's own
 * request (`client.get`, about 0.9 ms), for a resolver with nothing to batch (one GET per lookup; `pnpm bench cost`).
 * `effect/Cache` does not serve either: it runs its lookup in the cache's context (the lookup's span would lose its
 * parent), and interrupting the first caller interrupts everyone waiting with it.
 */
import type { CallError, Params, Service } from "@erp-client/client/ErpClient"
import * as ErpClient from "@erp-client/client/ErpClient"
import * as Telemetry from "@erp-client/kernel/Telemetry"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as FiberRef from "effect/FiberRef"
import * as Metric from "effect/Metric"
import * as MetricKey from "effect/MetricKey"
import * as Option from "effect/Option"
import type * as Schema from "effect/Schema"

/** One lookup: the client it asks, the get endpoint, the schema its answer is decoded with, and the query. */
export interface Lookup<A> {
  readonly client: Service
  readonly endpoint: string
  readonly schema: Schema.Schema<A, any>
  /** The query's one parameter and its value. */
  readonly param: string
  readonly value: string
  /** How `NotFound` names what was looked up (`id=42`). */
  readonly selector: string
  /** The caller's bound on waiting for the rate limit (`ErpClient.withMaxWait`), in milliseconds. */
  readonly maxWaitMillis: number | undefined
  /** What the lookup asks, whatever its bound on waiting. */
  readonly query: string
  /** What makes two lookups identical: what they ask, and their bound on waiting (see the module's comment). */
  readonly key: string
}

// Objects (a client, a schema) as numbers in a key: the same object, the same number, for as long as it lives.
const ids = new WeakMap<object, number>()
let nextId = 0
const idOf = (object: object): number => {
  let id = ids.get(object)
  if (id === undefined) ids.set(object, id = nextId++)
  return id
}

/** What `make` builds a lookup from: the client to ask, the get endpoint and its schema, and the query. */
export interface LookupOptions<A> {
  readonly client: Service
  readonly endpoint: string
  readonly schema: Schema.Schema<A, any>
  /** The query's one parameter and its value. */
  readonly param: string
  readonly value: string | number
  /** How `NotFound` names what was looked up (`id=42`). */
  readonly selector: string
}

/**
 * The lookup of `value` by the query parameter `param` of `endpoint`, for `client`; `NotFound` names it as `selector`.
 * Its bound on waiting is the caller's (`ErpClient.currentMaxWait`), read by `run`.
 */
export const make = <A>(options: LookupOptions<A>): Lookup<A> => {
  const { client, endpoint, param, schema, selector, value } = options
  const query = `${idOf(client)}\u0000${endpoint}\u0000${idOf(schema)}\u0000${param}\u0000${value}`
  return withMaxWait({
    client,
    endpoint,
    schema,
    param,
    value: String(value),
    selector,
    maxWaitMillis: undefined,
    query,
    key: ""
  }, undefined)
}

const withMaxWait = <A>(lookup: Lookup<A>, maxWaitMillis: number | undefined): Lookup<A> => ({
  ...lookup,
  maxWaitMillis,
  key: `${lookup.query}\u0000${maxWaitMillis ?? ""}`
})

const params = (lookup: Lookup<any>): Params => [[lookup.param, lookup.value]]

// A counter with its unit in its key, made with `Metric.fromMetricKey` rather than `Metric.tagged`, which would join
// the tags anew at every update (the client's observe.ts tells the cost).
const counter = (info: Telemetry.MetricInfo) =>
  Metric.fromMetricKey(
    MetricKey.tagged(
      MetricKey.counter(info.name, { description: info.description, incremental: true }),
      "unit",
      info.unit
    )
  )

/**
 * Lookups asked for (`erp.client.lookups`), sent to the server (`…sent`), answered by one already in flight
 * (`…shared`) or by the cache of a `Lookups.layer` (`…cached`).
 */
export const lookups = counter(Telemetry.streamMetrics.lookups)
export const sent = counter(Telemetry.streamMetrics.lookupsSent)
export const shared = counter(Telemetry.streamMetrics.lookupsShared)
export const cached = counter(Telemetry.streamMetrics.lookupsCached)

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
export interface Meeting {
  /** By key, least recently used first. */
  readonly entries: Map<string, Entry>
  /** Keep answers for `timeToLiveMillis` (a `Lookups.layer`), or drop each when it arrives (in flight only). */
  readonly keep: boolean
  readonly timeToLiveMillis: number
  /** Past it, the least recently used entry goes (one on its way is then sent again if asked again). */
  readonly capacity: number
}

/** An empty meeting place. */
export const makeMeeting = (options: {
  readonly keep: boolean
  readonly timeToLiveMillis: number
  readonly capacity: number
}): Meeting => ({ entries: new Map(), ...options })

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
      Effect.interruptible(Effect.zipRight(
        Metric.increment(sent),
        lookup.client.get(lookup.endpoint, lookup.schema, {
          params: params(lookup),
          selector: lookup.selector,
          maxWait: lookup.maxWaitMillis
        })
      )).pipe(
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
      const lookup = maxWaitMillis === asked.maxWaitMillis ? asked : withMaxWait(asked, maxWaitMillis)
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
