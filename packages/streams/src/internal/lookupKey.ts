/**
 * What `lookups.ts` needs in both editions: one lookup and its key, and the lookups' metrics. A lookup is identical to
 * another when it asks the same client, the same endpoint and schema, for the same value, with the same bound on
 * waiting for the limit (README.md, "Lookups"): the client is part of the key, so two clients in one process (two
 * servers, two keys) never share an answer.
 */
import type { CallError, Params, Service } from "@erp-client/client/ErpClient"
import { streamMetrics } from "@erp-client/kernel/Telemetry"
import * as Effect from "effect/Effect"
import * as Equal from "effect/Equal"
import * as Hash from "effect/Hash"
import * as Metric from "effect/Metric"
import { counter, type Decoder } from "./edition.js"

// Objects (a client, a schema) as numbers in a key: the same object, the same number, for as long as it lives.
const ids = new WeakMap<object, number>()
let nextId = 0
const idOf = (object: object): number => {
  let id = ids.get(object)
  if (id === undefined) ids.set(object, id = nextId++)
  return id
}

/**
 * One lookup: the client it asks, the get endpoint, the schema its answer is decoded with, the query, and the caller's
 * bound on waiting for the limit. Equal to another lookup (a key of Effect's `Cache`) when `key` is.
 */
export class Lookup<A> implements Equal.Equal {
  /** What the lookup asks, whatever its bound on waiting. */
  readonly query: string
  /** What makes two lookups identical: what they ask, and their bound on waiting. */
  readonly key: string
  private readonly hash: number
  /** How long the request took, from when it was sent to its answer: the time to live counts from when it was sent. */
  elapsedMillis = 0

  constructor(
    readonly client: Service,
    readonly endpoint: string,
    readonly schema: Decoder<A>,
    /** The query's one parameter and its value. */
    readonly param: string,
    readonly value: string,
    /** How `NotFound` names what was looked up (`id=42`). */
    readonly selector: string,
    /** The caller's bound on waiting for the rate limit (`ErpClient.withMaxWait`), in milliseconds. */
    readonly maxWaitMillis: number | undefined
  ) {
    this.query = `${idOf(client)}\u0000${endpoint}\u0000${idOf(schema)}\u0000${param}\u0000${value}`
    this.key = `${this.query}\u0000${maxWaitMillis ?? ""}`
    this.hash = Hash.string(this.key)
  }

  [Equal.symbol](that: Equal.Equal): boolean {
    return that instanceof Lookup && that.key === this.key
  }

  [Hash.symbol](): number {
    return this.hash
  }
}

/** What `make` builds a lookup from: the client to ask, the get endpoint and its schema, and the query. */
export interface LookupOptions<A> {
  readonly client: Service
  readonly endpoint: string
  readonly schema: Decoder<A>
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
export const make = <A>(options: LookupOptions<A>): Lookup<A> =>
  new Lookup(
    options.client,
    options.endpoint,
    options.schema,
    options.param,
    String(options.value),
    options.selector,
    undefined
  )

/** `lookup` under the bound on waiting `maxWaitMillis`: itself when that is its bound already. */
export const withMaxWait = <A>(lookup: Lookup<A>, maxWaitMillis: number | undefined): Lookup<A> =>
  maxWaitMillis === lookup.maxWaitMillis
    ? lookup
    : new Lookup(
      lookup.client,
      lookup.endpoint,
      lookup.schema,
      lookup.param,
      lookup.value,
      lookup.selector,
      maxWaitMillis
    )

const params = (lookup: Lookup<any>): Params => [[lookup.param, lookup.value]]

/**
 * Lookups asked for (`erp.client.lookups`), sent to the server (`…sent`), answered by one already in flight
 * (`…shared`) or by the cache of a `Lookups.layer` (`…cached`).
 */
export const lookups = counter(streamMetrics.lookups)
export const sent = counter(streamMetrics.lookupsSent)
export const shared = counter(streamMetrics.lookupsShared)
export const cached = counter(streamMetrics.lookupsCached)

/** The request of `lookup` to its client, counted as sent. */
export const request = <A>(lookup: Lookup<A>): Effect.Effect<A, CallError> =>
  Effect.andThen(
    Metric.update(sent, 1),
    lookup.client.get(lookup.endpoint, lookup.schema, {
      params: params(lookup),
      selector: lookup.selector,
      maxWait: lookup.maxWaitMillis
    })
  )

/** Where lookups meet (`lookups.ts`): whether and how long answers are kept, and how many entries at most. */
export interface MeetingOptions {
  /** Keep answers for `timeToLiveMillis` (a `Lookups.layer`), or drop each when it arrives (in flight only). */
  readonly keep: boolean
  readonly timeToLiveMillis: number
  /** Past it, the least recently used entry goes (one on its way is then sent again if asked again). */
  readonly capacity: number
}
