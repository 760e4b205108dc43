/**
 * The sandbox without a transport: a request arrives (method, path and query, API key), the rate limit and the fault
 * queue give their verdict, and the answer comes out as a `Reply` (`internal/replies.ts`) for an adapter to carry
 * out: the Node HTTP server (`internal/nodeServer.ts`) or the in-memory HttpClient (`internal/memoryClient.ts`). Time
 * is the Effect `Clock` of the fiber handling the request, so under `TestClock` the windows, latency, outages and
 * `Delay` follow the test's clock.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Sandbox from "../Sandbox.js"
import * as Admission from "./admission.js"
import * as Answers from "./answers.js"
import * as ApiKeys from "./apiKeys.js"
import * as Drift from "./drift.js"
import * as Envelope from "./envelope.js"
import * as FaultQueue from "./faultQueue.js"
import * as Invoices from "./invoices.js"
import * as PartnerStore from "./partnerStore.js"
import * as Prng from "./prng.js"
import * as Replies from "./replies.js"
import * as RequestLog from "./requestLog.js"
import * as Seeded from "./seed.js"
import * as Window from "./window.js"

/**
 * A request as the core sees it, whatever carried it.
 *
 * @internal
 */
export interface Incoming {
  readonly method: string
  /** The path and query as sent, e.g. `/partner/list?list_offset=0&list_count=100`. */
  readonly url: string
  /** The `X-API-KEY` header, `""` when there is none. */
  readonly apiKey: string
}

/**
 * The service without its address, which the adapter adds.
 *
 * @internal
 */
export type Controls = Omit<Sandbox.Service, "baseUrl" | "port">

/**
 * @internal
 */
export interface Core {
  readonly controls: Controls
  /**
   * Handles one request: `deliver` carries the reply out (sends it, cuts the connection, or never answers). The
   * request is in flight until `deliver` ends, fails or is interrupted; the log records it then.
   */
  readonly handle: <A, E, R>(
    incoming: Incoming,
    deliver: (reply: Replies.Reply) => Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E, R>
}

/** One request, from its arrival to its answer. */
interface Arrival {
  readonly endpoint: Sandbox.Endpoint | undefined
  readonly params: URLSearchParams
  readonly draft: RequestLog.Draft
  /** `undefined` for an unknown endpoint. */
  readonly verdict: Admission.Verdict | undefined
  readonly nowMillis: number
  readonly latencyMillis: number
}

const parseUrl = Option.liftThrowable((url: string) => new URL(url, "http://sandbox.invalid"))

const millis = (input: Duration.DurationInput | undefined): number => input === undefined ? 0 : Duration.toMillis(input)

/** `base` plus a seeded random share of `jitter`, in milliseconds, for each answer. */
const makeLatency = (options: Sandbox.Options["latency"], seed: number): () => number => {
  const base = millis(options?.base)
  const jitter = millis(options?.jitter)
  const prng = Prng.mulberry32(options?.seed ?? seed)
  return base === 0 && jitter === 0 ? () => 0 : () => base + prng() * jitter
}

/**
 * The endpoints the sandbox serves (`Sandbox.endpoints`).
 *
 * @internal
 */
export const endpoints = ["/partner/list", "/partner/get", "/invoice/list", "/invoice/get"] as const

/**
 * The endpoint a request is for: GET or POST to one of `Sandbox.endpoints`; anything else is answered 404.
 *
 * @internal
 */
export const endpointOf = (method: string, pathname: string): Sandbox.Endpoint | undefined =>
  method === "GET" || method === "POST" ? endpoints.find((endpoint) => endpoint === pathname) : undefined

/** @internal */
export const make = (options: Sandbox.Options = {}): Core => {
  const seed = options.seed ?? 1
  const given = typeof options.partners === "object" ? options.partners : undefined
  const partnerCount = given?.length ??
    Math.max(0, Math.floor(typeof options.partners === "number" ? options.partners : 1000))
  const maxListCount = Math.max(1, Math.floor(options.maxListCount ?? 500))
  const defaultListCount = options.defaultListCount === undefined
    ? undefined
    : Math.max(1, Math.floor(options.defaultListCount))
  const rateLimit = options.rateLimit === false ? false as const : Window.resolve(options.rateLimit)
  // Odd records stray seeded partners only: partners given as records are served as given.
  const oddRecords = given === undefined ? options.oddRecords : undefined

  // All mutable state lives in these objects and is only touched inside `Effect.sync`, so each step is atomic.
  const initial = given === undefined
    ? PartnerStore.seeded(seed, partnerCount, oddRecords)
    : PartnerStore.given(given)
  const store = PartnerStore.fromInitial(seed, initial, options.hidden)
  const invoiceCount = Math.max(0, Math.floor(options.invoices ?? 100))
  const invoices = Invoices.make(seed, invoiceCount, partnerCount)
  const keys = ApiKeys.make(options.apiKeys ?? ["sandbox-key"])
  const faults = FaultQueue.make(options.randomFaults, seed)
  for (const { fault, ...injectOptions } of options.inject ?? []) faults.push(fault, injectOptions)
  const log = RequestLog.make(Math.max(0, Math.floor(options.maxLogEntries ?? 10_000)))
  const admission = Admission.make(rateLimit, faults, log)
  const latency = makeLatency(options.latency, seed)
  const messages = Envelope.resolveMessages(options.messages)
  const answer = Answers.make({
    store,
    invoices,
    maxListCount,
    defaultListCount,
    messages,
    beforeList: Drift.make(options.drift, seed, store, log),
    ignoreOffset: options.ignoreOffset,
    maxListCountSchedule: options.maxListCountSchedule
  })
  const replies = Replies.make({
    rateLimit,
    messages,
    tooManyRequestsBody: options.tooManyRequestsBody ?? "envelope"
  })

  // `failingIds`: partner/get of these ids fails every time.
  const failing = options.failingIds
  const failingSet = new Set((failing?.ids ?? []).map(String))
  const every = failing?.every === undefined ? 0 : Math.max(0, Math.floor(failing.every))
  const fails = (endpoint: string, params: URLSearchParams): boolean => {
    if (failing === undefined || endpoint !== "/partner/get") return false
    const id = params.get("id")
    if (id === null || !/^\d+$/.test(id)) return false
    return failingSet.has(String(Number(id))) || (every > 0 && Number(id) % every === 0)
  }

  const arrive = (incoming: Incoming, nowMillis: number): Arrival => {
    const url = parseUrl(incoming.url)
    const params = Option.match(url, { onNone: () => new URLSearchParams(), onSome: (url) => url.searchParams })
    const pathname = Option.match(url, { onNone: () => incoming.url, onSome: (url) => url.pathname })
    const endpoint = endpointOf(incoming.method, pathname)
    const key = incoming.apiKey
    const draft = log.begin({
      method: incoming.method,
      endpoint: pathname,
      query: Array.from(params, ([name, value]) => [name, keys.redact(value, key)] as const),
      keyValid: keys.isValid(key),
      timeMillis: nowMillis
    })
    const verdict = endpoint === undefined ? undefined : admission.decide(endpoint, key, nowMillis)
    if (verdict?._tag === "Allowed" && verdict.fault !== undefined) log.faultServed(draft, verdict.fault._tag)
    const latencyMillis = endpoint === undefined ? 0 : latency()
    return { endpoint, params, draft, verdict, nowMillis, latencyMillis }
  }

  const reply = (arrival: Arrival): Effect.Effect<Replies.Reply> =>
    Effect.gen(function*() {
      const { draft, endpoint, verdict } = arrival
      if (verdict === undefined || endpoint === undefined) {
        return Replies.json(Envelope.failure("Unknown endpoint"), 404, {})
      }
      if (arrival.latencyMillis > 0) yield* Effect.sleep(Duration.millis(arrival.latencyMillis))
      if (verdict._tag === "Limited") return replies.tooManyRequests(verdict.headers)
      const { fault, headers } = verdict
      const body = () => {
        const answered = answer(endpoint, arrival.params, draft.keyValid)
        draft.records = answered.records
        draft.hidden = answered.hidden
        return answered.body
      }
      if (fault === undefined && fails(endpoint, arrival.params)) {
        return Replies.json(Envelope.failure(failing?.message ?? "Internal error"), failing?.status ?? 500, headers)
      }
      if (fault === undefined) return Replies.json(body(), 200, headers)
      const plan = replies.forFault({ fault, headers, nowMillis: arrival.nowMillis, answer: body })
      if (plan._tag !== "Delay") return plan
      yield* Effect.sleep(Duration.millis(plan.millis))
      return Replies.json(body(), 200, headers)
    })

  const handle = <A, E, R>(
    incoming: Incoming,
    deliver: (reply: Replies.Reply) => Effect.Effect<A, E, R>
  ): Effect.Effect<A, E, R> =>
    Effect.acquireUseRelease(
      Effect.clockWith((clock) => Effect.sync(() => arrive(incoming, clock.unsafeCurrentTimeMillis()))),
      (arrival) =>
        Effect.flatMap(reply(arrival), (reply) =>
          Effect.suspend(() => {
            // Logged as sent before it goes out: a cut body has sent its status line.
            arrival.draft.status = Replies.statusOf(reply)
            return deliver(reply)
          })),
      (arrival) =>
        Effect.clockWith((clock) => Effect.sync(() => log.finish(arrival.draft, clock.unsafeCurrentTimeMillis())))
    )

  const controls: Controls = {
    apiKey: keys.first,
    seed,
    partnerCount,
    maxListCount,
    rateLimit,
    partnerAt: (index) => {
      if (given === undefined) return Seeded.servedPartnerAt(seed, index, oddRecords)
      if (!(Number.isInteger(index) && index >= 0 && index < partnerCount)) {
        throw new RangeError(`no partner was given at index ${index}`)
      }
      return initial.recordAt(index)
    },
    invoiceAt: (index) => {
      if (!(Number.isInteger(index) && index >= 0 && index < invoiceCount)) {
        throw new RangeError(`no invoice at index ${index}`)
      }
      return Invoices.invoiceAt(seed, index, partnerCount)
    },
    oddKindAt: (index) => Seeded.oddKindAt(seed, index, oddRecords),
    hiddenAt: (index) => index >= 0 && index < partnerCount && Seeded.hiddenAt(seed, index, options.hidden),
    visiblePartners: Effect.sync(() => store.visible()),
    inject: (fault, options) => Effect.sync(() => faults.push(fault, options)),
    clearFaults: Effect.sync(faults.clear),
    stats: Effect.sync(log.stats),
    requests: Effect.sync(log.entries),
    resetStats: Effect.sync(log.reset),
    resetRateLimits: Effect.sync(admission.reset),
    revokeKey: (key) => Effect.sync(() => keys.revoke(key)),
    setKeys: (next) => Effect.sync(() => keys.set(next)),
    size: Effect.sync(() => store.size()),
    partnerIds: Effect.sync(() => store.ids()),
    insertPartners: (count, at) =>
      Effect.sync(() => {
        const ids = store.insert(at, Math.max(0, Math.floor(count)))
        log.countChanges(ids.length, 0)
        return ids
      }),
    deletePartners: (ids) =>
      Effect.sync(() => {
        const removed = store.remove(ids)
        log.countChanges(0, removed)
        return removed
      })
  }

  return { controls, handle }
}
