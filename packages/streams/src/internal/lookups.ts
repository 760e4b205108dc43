/**
 * Lookups as Effect `Request`s (README.md, "Lookups"): a lookup is a request for one record of a get endpoint, run by a
 * `RequestResolver` on the client. Identical lookups in flight share one request: they meet in a request cache, kept
 * here for the lookups that no cache was asked for (entries leave it when their answer arrives), or the cache of a
 * `Lookups.layer`, which keeps answers for its time to live. A lookup is identical to another when it asks the same
 * client, the same endpoint and schema, for the same value, with the same bound on waiting for the limit: the client
 * is part of the key, so two clients in one process (two servers, two keys) never share an answer.
 */
import type { CallError, Params, Service } from "@erp-client/client/ErpClient"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Request from "effect/Request"
import * as RequestResolver from "effect/RequestResolver"
import type * as Schema from "effect/Schema"

/** One lookup: the client it asks, the get endpoint, the schema its answer is decoded with, and the query. */
export interface Lookup<A> extends Request.Request<A, CallError> {
  readonly _tag: "ErpLookup"
  readonly client: Service
  readonly endpoint: string
  readonly schema: Schema.Schema<A, any>
  /** The query's one parameter and its value: what makes two lookups of an endpoint identical. */
  readonly param: string
  readonly value: string
  /** How `NotFound` names what was looked up (`id=42`). */
  readonly selector: string
  /** The caller's bound on waiting for the rate limit (`GetOptions.maxWait`), in milliseconds. */
  readonly maxWaitMillis: number | undefined
}

const lookup = Request.tagged<Lookup<any>>("ErpLookup")

/** The lookup of `value` by the query parameter `param` of `endpoint`, for `client`; `NotFound` names it as `selector`. */
export const make = <A>(
  client: Service,
  endpoint: string,
  schema: Schema.Schema<A, any>,
  param: string,
  value: string | number,
  selector: string,
  maxWaitMillis?: number
): Lookup<A> => lookup({ client, endpoint, schema, param, value: String(value), selector, maxWaitMillis })

const params = (request: Lookup<any>): Params => [[request.param, request.value]]

/**
 * Sends each distinct lookup once: the client's `get`, whose limiter, retries and budgets apply to each; the requests
 * of one batch go out together, as many as the limiter lets through.
 */
const resolver: RequestResolver.RequestResolver<Lookup<any>> = RequestResolver.fromEffect((request: Lookup<any>) =>
  Effect.zipRight(
    Metric.increment(sent),
    request.client.get(request.endpoint, request.schema, {
      params: params(request),
      selector: request.selector,
      maxWait: request.maxWaitMillis
    })
  )
)

/**
 * Lookups asked for (`erp.client.lookups`), sent to the server (`…sent`), answered by one already in flight
 * (`…shared`) or by the cache of a `Lookups.layer` (`…cached`).
 */
export const lookups = Metric.tagged(
  Metric.counter("erp.client.lookups", {
    description: "lookups asked for (Resource.get and getMany)",
    incremental: true
  }),
  "unit",
  "{lookup}"
)
export const sent = Metric.tagged(
  Metric.counter("erp.client.lookups.sent", {
    description: "lookups sent to the server (one per distinct lookup in flight or not cached)",
    incremental: true
  }),
  "unit",
  "{lookup}"
)
export const shared = Metric.tagged(
  Metric.counter("erp.client.lookups.shared", {
    description: "lookups answered by an identical one already in flight",
    incremental: true
  }),
  "unit",
  "{lookup}"
)
export const cached = Metric.tagged(
  Metric.counter("erp.client.lookups.cached", {
    description: "lookups answered from the cache of Lookups.layer",
    incremental: true
  }),
  "unit",
  "{lookup}"
)

/** Where lookups meet: a request cache, and whether it keeps answers after they arrive. */
export interface Meeting {
  readonly cache: Request.Cache
  /** Keep answers (a `Lookups.layer` cache: for its time to live), or drop each when it arrives (in flight only). */
  readonly keep: boolean
}

/** The cache of `Lookups.layer`, when one was provided. */
export class Lookups extends Context.Tag("@erp-client/streams/Lookups")<Lookups, Meeting>() {}

// The lookups no cache was asked for meet here while in flight. An entry is dropped as soon as its answer is in (see
// `run`), so the time to live only bounds an entry whose caller went away without it; the capacity bounds the
// lookups in flight at once, past which some are sent twice rather than waited for.
const inFlight: Meeting = {
  cache: Effect.runSync(Request.makeCache({ capacity: 65_536, timeToLive: Duration.hours(1) })),
  keep: false
}

/** Where a lookup meets identical ones: the cache of a `Lookups.layer` if one is provided, else in flight only. */
export const meeting: Effect.Effect<Meeting> = Effect.map(
  Effect.serviceOption(Lookups),
  Option.getOrElse(() => inFlight)
)

// Whether the cache holds an answer for the request (a cached lookup), one on its way (a shared one), or neither. An
// entry of a request cache is the handle its answer arrives in: done once the answer is in.
const seen = (cache: Request.Cache, request: Lookup<any>): Effect.Effect<"answered" | "waiting" | "new"> =>
  Effect.flatMap(cache.getOptionComplete(request), (entry) =>
    Option.match(entry, {
      onNone: () => Effect.succeed("new" as const),
      onSome: ({ handle }) =>
        Effect.map(Deferred.isDone(handle), (done) => done ? "answered" as const : "waiting" as const)
    }))

/**
 * Runs a lookup where identical ones meet. A failed answer is never kept: the next identical lookup asks again (the
 * callers waiting for this one share its failure). In flight only, the answer is dropped once it is in.
 */
export const run = <A>(request: Lookup<A>): Effect.Effect<A, CallError> =>
  Effect.flatMap(meeting, (meeting) =>
    Effect.flatMap(seen(meeting.cache, request), (state) =>
      Effect.zipRight(
        Effect.zipRight(
          Metric.increment(lookups),
          state === "answered"
            ? Metric.increment(cached)
            : state === "waiting"
            ? Metric.increment(shared)
            : Effect.void
        ),
        Effect.request(request, resolver).pipe(
          Effect.withRequestCaching(true),
          Effect.withRequestCache(meeting.cache),
          Effect.onExit((exit) =>
            meeting.keep && Exit.isSuccess(exit) ? Effect.void : meeting.cache.invalidate(request)
          )
        )
      )))
