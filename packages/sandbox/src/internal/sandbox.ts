import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type * as Http from "node:http"
import * as RateLimit from "../RateLimit.js"
import type * as Sandbox from "../Sandbox.js"
import * as Seed from "../Seed.js"
import * as Admission from "./admission.js"
import * as Answers from "./answers.js"
import * as ApiKeys from "./apiKeys.js"
import * as Drift from "./drift.js"
import * as Envelope from "./envelope.js"
import * as FaultQueue from "./faultQueue.js"
import * as FaultResponse from "./faultResponse.js"
import * as PartnerStore from "./partnerStore.js"
import * as RequestLog from "./requestLog.js"

/** One request, from its arrival to its answer. */
interface Arrival {
  readonly params: URLSearchParams
  readonly draft: RequestLog.Draft
  /** `undefined` for an unknown endpoint. */
  readonly verdict: Admission.Verdict | undefined
  readonly nowMillis: number
  readonly latencyMillis: number
  readonly response: Http.ServerResponse
}

const parseUrl = Option.liftThrowable((url: string) => new URL(url, "http://sandbox.invalid"))

const millis = (input: Duration.DurationInput | undefined): number => input === undefined ? 0 : Duration.toMillis(input)

/** `base` plus a seeded random share of `jitter`, in milliseconds, for each answer. */
const makeLatency = (options: Sandbox.Options["latency"], seed: number): () => number => {
  const base = millis(options?.base)
  const jitter = millis(options?.jitter)
  const prng = Seed.mulberry32(options?.seed ?? seed)
  return base === 0 && jitter === 0 ? () => 0 : () => base + prng() * jitter
}

/** @internal */
export const make = (
  options: Sandbox.Options = {}
): Effect.Effect<Sandbox.Service, never, HttpServer.HttpServer | Scope.Scope> =>
  Effect.gen(function*() {
    const seed = options.seed ?? 1
    const partnerCount = Math.max(0, Math.floor(options.partners ?? 1000))
    const maxListCount = Math.max(1, Math.floor(options.maxListCount ?? 500))
    const defaultListCount = options.defaultListCount === undefined
      ? undefined
      : Math.max(1, Math.floor(options.defaultListCount))
    const rateLimit = options.rateLimit === false ? false as const : RateLimit.resolve(options.rateLimit)

    // All mutable state lives in these objects and is only touched inside `Effect.sync`, so each step is atomic.
    const store = PartnerStore.make(seed, partnerCount, options.oddRecords, options.hidden)
    const keys = ApiKeys.make(options.apiKeys ?? ["sandbox-key"])
    const faults = FaultQueue.make(options.randomFaults, seed)
    for (const { fault, ...injectOptions } of options.inject ?? []) faults.push(fault, injectOptions)
    const log = RequestLog.make(Math.max(0, Math.floor(options.maxLogEntries ?? 10_000)))
    const admission = Admission.make(rateLimit, faults, log)
    const latency = makeLatency(options.latency, seed)
    const messages = Envelope.resolveMessages(options.messages)
    const answer = Answers.make({
      store,
      maxListCount,
      defaultListCount,
      messages,
      beforeList: Drift.make(options.drift, seed, store, log),
      ignoreOffset: options.ignoreOffset,
      maxListCountSchedule: options.maxListCountSchedule
    })
    const responder = FaultResponse.make({
      rateLimit,
      messages,
      tooManyRequestsBody: options.tooManyRequestsBody ?? "envelope"
    })
    // Responses still open, so shutdown can cut hung requests instead of waiting for their clients.
    const open = new Set<Http.ServerResponse>()

    const arrive = (
      request: HttpServerRequest.HttpServerRequest,
      endpoint: Sandbox.Endpoint | undefined,
      nowMillis: number
    ): Arrival => {
      const url = parseUrl(request.url)
      const params = Option.match(url, { onNone: () => new URLSearchParams(), onSome: (url) => url.searchParams })
      const key = request.headers["x-api-key"] ?? ""
      const draft = log.begin({
        method: request.method,
        endpoint: Option.match(url, { onNone: () => request.url, onSome: (url) => url.pathname }),
        query: Array.from(params, ([name, value]) => [name, keys.redact(value, key)] as const),
        keyValid: keys.isValid(key),
        timeMillis: nowMillis
      })
      const response = NodeHttpServerRequest.toServerResponse(request)
      open.add(response)
      const verdict = endpoint === undefined ? undefined : admission.decide(endpoint, key, nowMillis)
      if (verdict?._tag === "Allowed" && verdict.fault !== undefined) log.faultServed(draft, verdict.fault._tag)
      const latencyMillis = endpoint === undefined ? 0 : latency()
      return { params, draft, verdict, nowMillis, latencyMillis, response }
    }

    const respond = (
      arrival: Arrival,
      endpoint: Sandbox.Endpoint | undefined
    ): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
      Effect.gen(function*() {
        const { draft, verdict } = arrival
        if (verdict === undefined || endpoint === undefined) {
          return Envelope.json(Envelope.failure("Unknown endpoint"), 404, {})
        }
        if (arrival.latencyMillis > 0) yield* Effect.sleep(Duration.millis(arrival.latencyMillis))
        if (verdict._tag === "Limited") return responder.tooManyRequests(verdict.headers)
        const { fault, headers } = verdict
        const body = () => {
          const answered = answer(endpoint, arrival.params, draft.keyValid)
          draft.records = answered.records
          draft.hidden = answered.hidden
          return answered.body
        }
        if (fault === undefined) return Envelope.json(body(), 200, headers)
        return yield* responder.serve({
          fault,
          headers,
          nowMillis: arrival.nowMillis,
          draft,
          response: arrival.response,
          answer: body
        })
      })

    const handler = (endpoint: Sandbox.Endpoint | undefined) =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
        Effect.acquireUseRelease(
          Effect.clockWith((clock) => Effect.sync(() => arrive(request, endpoint, clock.unsafeCurrentTimeMillis()))),
          (arrival) =>
            Effect.tap(respond(arrival, endpoint), (response) =>
              Effect.sync(() => {
                arrival.draft.status = response.status
              })),
          (arrival) =>
            Effect.clockWith((clock) =>
              Effect.sync(() => {
                log.finish(arrival.draft, clock.unsafeCurrentTimeMillis())
                open.delete(arrival.response)
              })
            )
        ))

    const router = HttpRouter.empty.pipe(
      HttpRouter.get("/partner/list", handler("/partner/list")),
      HttpRouter.post("/partner/list", handler("/partner/list")),
      HttpRouter.get("/partner/get", handler("/partner/get")),
      HttpRouter.post("/partner/get", handler("/partner/get")),
      HttpRouter.all("*", handler(undefined))
    )

    const server = yield* HttpServer.HttpServer
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        for (const response of open) response.socket?.destroy()
      })
    )
    yield* HttpServer.serveEffect(router)

    const port = server.address._tag === "TcpAddress" ? server.address.port : 0
    const hostname = server.address._tag === "TcpAddress" ? server.address.hostname : "127.0.0.1"
    // A wildcard address is not something a client can connect to: point it at loopback.
    const reachable = hostname === "0.0.0.0" || hostname === "::" ? "127.0.0.1" : hostname

    return {
      baseUrl: `http://${reachable.includes(":") ? `[${reachable}]` : reachable}:${port}`,
      port,
      apiKey: keys.first,
      seed,
      partnerCount,
      maxListCount,
      rateLimit,
      partnerAt: (index) => Seed.servedPartnerAt(seed, index, options.oddRecords),
      oddKindAt: (index) => Seed.oddKindAt(seed, index, options.oddRecords),
      hiddenAt: (index) => index >= 0 && index < partnerCount && Seed.hiddenAt(seed, index, options.hidden),
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
  })
