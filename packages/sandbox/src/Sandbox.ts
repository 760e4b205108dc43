/**
 * A spec-faithful ERP API v2 server on `@effect/platform` HttpServer: seeded partners, auth, rate limits, faults.
 *
 * @since 0.1.0
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import type * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Http from "node:http"
import type * as Fault from "./Fault.js"
import * as Admission from "./internal/admission.js"
import * as Answers from "./internal/answers.js"
import * as ApiKeys from "./internal/apiKeys.js"
import * as Drift from "./internal/drift.js"
import * as Envelope from "./internal/envelope.js"
import * as FaultQueue from "./internal/faultQueue.js"
import * as PartnerStore from "./internal/partnerStore.js"
import * as RequestLog from "./internal/requestLog.js"
import * as RateLimit from "./RateLimit.js"
import * as Seed from "./Seed.js"

/**
 * The endpoints the sandbox serves; every other path is answered 404.
 *
 * @since 0.1.0
 * @category Constants
 */
export const endpoints = ["/partner/list", "/partner/get"] as const

/**
 * @since 0.1.0
 * @category Models
 */
export type Endpoint = typeof endpoints[number]

/**
 * @since 0.1.0
 * @category Models
 */
export interface Options {
  /** Port to listen on; 0 (the default) lets the OS pick one. */
  readonly port?: number | undefined
  /** Address to listen on (default `"127.0.0.1"`). */
  readonly host?: string | undefined
  /** How many seeded partners exist (default 1000). */
  readonly partners?: number | undefined
  /** Seed of the partners (default 1). */
  readonly seed?: number | undefined
  /** The valid API keys (default `["sandbox-key"]`). */
  readonly apiKeys?: ReadonlyArray<string> | undefined
  /** The rate limit per (API key, endpoint) (default 100 per 30 seconds, epoch-seconds reset), or `false`. */
  readonly rateLimit?: RateLimit.Options | false | undefined
  /** The largest `list_count` served; larger requests get this many records (default 500). */
  readonly maxListCount?: number | undefined
  /** Added to every answer of an endpoint: `base` plus a seeded random share of `jitter`. */
  readonly latency?: {
    readonly base?: Duration.DurationInput | undefined
    readonly jitter?: Duration.DurationInput | undefined
    readonly seed?: number | undefined
  } | undefined
  /** Serves a fault picked from `faults` to a `rate` share of the requests (seeded, so runs repeat). */
  readonly randomFaults?: {
    readonly rate: number
    readonly faults: ReadonlyArray<Fault.Fault>
    readonly seed?: number | undefined
  } | undefined
  /** How many entries the request log keeps, newest last (default 10,000). */
  readonly maxLogEntries?: number | undefined
  /**
   * Data that changes under a running export: right before answering each list request, the sandbox inserts
   * `inserts` new partners and deletes `deletes` partners, each at a seeded random position of the list. Positions
   * before the page shift it: deletes make a plain export skip records, inserts make it repeat them.
   */
  readonly drift?: {
    readonly inserts?: number | undefined
    readonly deletes?: number | undefined
    readonly seed?: number | undefined
  } | undefined
}

/**
 * @since 0.1.0
 * @category Models
 */
export interface InjectOptions {
  /** How many matching requests get the fault (default 1; `Infinity` for every one). */
  readonly times?: number | undefined
  /** Only requests to this endpoint (`"/partner/list"`); any endpoint by default. */
  readonly endpoint?: string | undefined
}

/**
 * One request, as the sandbox saw it. The API key is never recorded: only whether it was valid.
 *
 * @since 0.1.0
 * @category Models
 */
export interface RequestLogEntry {
  readonly method: string
  /** The path, e.g. `/partner/list`. */
  readonly endpoint: string
  /** Query parameters as decoded by the server, in order; a value equal to an API key is replaced. */
  readonly query: ReadonlyArray<readonly [name: string, value: string]>
  /** The HTTP status sent; 0 while in flight, or when no status line was sent (dropped, hung). */
  readonly status: number
  readonly keyValid: boolean
  /** Arrival time, epoch milliseconds from the Effect `Clock`. */
  readonly timeMillis: number
  /** Time until the answer was sent or the request ended; absent while in flight. */
  readonly durationMillis?: number
  /** The fault served, if any. */
  readonly fault?: Fault.Tag
}

/**
 * @since 0.1.0
 * @category Models
 */
export interface Stats {
  /** Every request received, any path. */
  readonly requests: number
  readonly byEndpoint: Readonly<Record<string, number>>
  /** Requests by the HTTP status sent (`"0"`: none sent). */
  readonly byStatus: Readonly<Record<string, number>>
  /** 429 responses sent, from the window or from a fault. */
  readonly tooManyRequests: number
  readonly faultsServed: number
  /** Requests being handled now (hung requests included until the client goes). */
  readonly inFlight: number
  readonly maxInFlight: number
  /**
   * Per endpoint, the most requests one API key started within any one window (rejected ones included): above the
   * limit means a client did not keep to it.
   */
  readonly maxObservedInWindow: Readonly<Record<string, number>>
  /** Partners inserted and deleted since the start (by `drift` or the service's methods). */
  readonly inserted: number
  readonly deleted: number
}

/**
 * @since 0.1.0
 * @category Models
 */
export interface Service {
  /** `http://127.0.0.1:PORT`, no trailing slash. */
  readonly baseUrl: string
  readonly port: number
  /** The first valid API key at start. */
  readonly apiKey: string
  readonly seed: number
  /** How many seeded partners the list started with (see `size` for now). */
  readonly partnerCount: number
  readonly maxListCount: number
  /** The rate limit in force, or `false`. */
  readonly rateLimit: RateLimit.Resolved | false
  /** The seeded partner at `index` (zero-based): what the list holds there until partners are inserted or deleted. */
  readonly partnerAt: (index: number) => Seed.PartnerRecord
  /** Queues `fault` for the next `times` matching requests (after the rate limit let them through). */
  readonly inject: (fault: Fault.Fault, options?: InjectOptions) => Effect.Effect<void>
  readonly clearFaults: Effect.Effect<void>
  readonly stats: Effect.Effect<Stats>
  readonly requests: Effect.Effect<ReadonlyArray<RequestLogEntry>>
  /** Clears the counters and the request log (not the rate-limit windows). */
  readonly resetStats: Effect.Effect<void>
  readonly resetRateLimits: Effect.Effect<void>
  /** Makes `key` invalid from the next request on, e.g. a key revoked in the middle of an export. */
  readonly revokeKey: (key: string) => Effect.Effect<void>
  readonly setKeys: (keys: ReadonlyArray<string>) => Effect.Effect<void>
  /** How many partners the list holds now. */
  readonly size: Effect.Effect<number>
  /** The ids of the partners, in list order, now. */
  readonly partnerIds: Effect.Effect<ReadonlyArray<number>>
  /** Inserts `count` new partners (fresh ids) before list position `at`; returns their ids. */
  readonly insertPartners: (count: number, at: number) => Effect.Effect<ReadonlyArray<number>>
  /** Deletes the partners with these ids; returns how many existed. */
  readonly deletePartners: (ids: Iterable<number>) => Effect.Effect<number>
}

/**
 * @since 0.1.0
 * @category Tags
 */
export class Sandbox extends Context.Tag("@erp-client/sandbox/Sandbox")<Sandbox, Service>() {}

type Verdict = { readonly _tag: "Unknown" } | Admission.Verdict

interface Arrival {
  readonly url: Option.Option<URL>
  readonly draft: RequestLog.Draft
  readonly verdict: Verdict
  readonly nowMillis: number
  readonly latencyMillis: number
  readonly response: Http.ServerResponse
}

const TOO_MANY_REQUESTS = "Too Many Requests"

const parseUrl = Option.liftThrowable((url: string) => new URL(url, "http://sandbox.invalid"))

const statusText = (status: number): string => Http.STATUS_CODES[status] ?? "Error"

const millis = (input: Duration.DurationInput | undefined): number =>
  input === undefined ? 0 : Duration.toMillis(Duration.decode(input))

/**
 * Builds the sandbox on an `HttpServer` already provided, serving until the scope closes.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const make = (options: Options = {}): Effect.Effect<Service, never, HttpServer.HttpServer | Scope.Scope> =>
  Effect.gen(function*() {
    const seed = options.seed ?? 1
    const partnerCount = Math.max(0, Math.floor(options.partners ?? 1000))
    const maxListCount = Math.max(1, Math.floor(options.maxListCount ?? 500))
    const maxLogEntries = Math.max(0, Math.floor(options.maxLogEntries ?? 10_000))
    const rateLimit = options.rateLimit === false ? false as const : RateLimit.resolve(options.rateLimit)
    const store = PartnerStore.make(seed, partnerCount)
    const latencyBase = millis(options.latency?.base)
    const latencyJitter = millis(options.latency?.jitter)
    const latencyPrng = Seed.mulberry32(options.latency?.seed ?? seed)

    // All mutable state lives here and is only touched inside `Effect.sync`, so each step is atomic.
    const keys = ApiKeys.make(options.apiKeys ?? ["sandbox-key"])
    const faults = FaultQueue.make(options.randomFaults, seed)
    const log = RequestLog.make(maxLogEntries)
    const admission = Admission.make(rateLimit, faults, log)
    // Responses still open, so shutdown can cut hung requests instead of waiting for their clients.
    const open = new Set<Http.ServerResponse>()

    const admit = (
      request: HttpServerRequest.HttpServerRequest,
      endpoint: Endpoint | undefined,
      nowMillis: number
    ): Arrival => {
      const url = parseUrl(request.url)
      const path = Option.match(url, { onNone: () => request.url, onSome: (url) => url.pathname })
      const key = request.headers["x-api-key"] ?? ""
      const query = Option.match(url, {
        onNone: () => [],
        onSome: (url) => Array.from(url.searchParams, ([name, value]) => [name, keys.redact(value, key)] as const)
      })
      const draft = log.begin({
        method: request.method,
        endpoint: path,
        query,
        keyValid: keys.isValid(key),
        timeMillis: nowMillis
      })
      const response = NodeHttpServerRequest.toServerResponse(request)
      open.add(response)
      const verdict: Verdict = endpoint === undefined ? { _tag: "Unknown" } : admission.decide(endpoint, key, nowMillis)
      if (verdict._tag === "Allowed" && verdict.fault !== undefined) log.faultServed(draft, verdict.fault._tag)
      const latencyMillis = endpoint === undefined || (latencyBase === 0 && latencyJitter === 0)
        ? 0
        : latencyBase + latencyPrng() * latencyJitter
      return { url, draft, verdict, nowMillis, latencyMillis, response }
    }

    const finish = (arrival: Arrival, nowMillis: number): void => {
      log.finish(arrival.draft, nowMillis)
      open.delete(arrival.response)
    }

    const answerOf = Answers.make({
      store,
      maxListCount,
      beforeList: Drift.make(options.drift, seed, store, log)
    })
    const answer = (endpoint: Endpoint, url: Option.Option<URL>, keyValid: boolean): string =>
      answerOf(
        endpoint,
        Option.match(url, { onNone: () => new URLSearchParams(), onSome: (url) => url.searchParams }),
        keyValid
      )

    // Cuts the connection, optionally after raw bytes, bypassing the Node response object so the platform can still
    // close its side cleanly. The fiber ends when the socket is closed (the platform interrupts it as a client abort).
    const cut = (response: Http.ServerResponse, raw: Uint8Array | undefined): Effect.Effect<never> =>
      Effect.async<never>((resume) => {
        const socket = response.socket
        if (socket === null || socket.destroyed) {
          resume(Effect.interrupt)
          return
        }
        const onClose = () => resume(Effect.interrupt)
        socket.once("close", onClose)
        if (raw === undefined) socket.destroy()
        else socket.write(raw, () => socket.destroy())
        return Effect.sync(() => socket.off("close", onClose))
      })

    const dropMidBody = (
      response: Http.ServerResponse,
      headers: Record<string, string>,
      body: string,
      fraction: number
    ): Effect.Effect<never> => {
      const bytes = new TextEncoder().encode(body)
      const sent = Math.min(bytes.length - 1, Math.max(1, Math.floor(bytes.length * fraction)))
      const head = [
        "HTTP/1.1 200 OK",
        `content-type: ${Envelope.JSON_TYPE}`,
        `content-length: ${bytes.length}`,
        ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
        "",
        ""
      ].join("\r\n")
      const headBytes = new TextEncoder().encode(head)
      const raw = new Uint8Array(headBytes.length + sent)
      raw.set(headBytes, 0)
      raw.set(bytes.subarray(0, sent), headBytes.length)
      return cut(response, raw)
    }

    const respond = (
      arrival: Arrival,
      endpoint: Endpoint | undefined
    ): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
      Effect.gen(function*() {
        const { draft, nowMillis, url, verdict } = arrival
        if (verdict._tag === "Unknown" || endpoint === undefined) {
          return Envelope.json(Envelope.failure("Unknown endpoint"), 404, {})
        }
        if (arrival.latencyMillis > 0) yield* Effect.sleep(Duration.millis(arrival.latencyMillis))
        if (verdict._tag === "Limited") return Envelope.json(Envelope.failure(TOO_MANY_REQUESTS), 429, verdict.headers)
        const { fault, headers } = verdict
        const normal = () => Envelope.json(answer(endpoint, url, draft.keyValid), 200, headers)
        if (fault === undefined) return normal()
        switch (fault._tag) {
          case "Status":
            return HttpServerResponse.text(
              fault.body ?? `<html><body><h1>${fault.status} ${statusText(fault.status)}</h1></body></html>\n`,
              { status: fault.status, headers, contentType: "text/html" }
            )
          case "TooManyRequests": {
            const limit = rateLimit === false ? RateLimit.defaults.limit : rateLimit.limit
            const unit = fault.resetUnit ?? (rateLimit === false ? RateLimit.defaults.resetUnit : rateLimit.resetUnit)
            const resetAt = nowMillis + (fault.resetAfter === undefined ? 1000 : millis(fault.resetAfter))
            const faultHeaders = fault.headers === false
              ? {}
              : RateLimit.headers({ allowed: false, limit, remaining: 0, resetAtMillis: resetAt }, unit, nowMillis)
            return Envelope.json(Envelope.failure(TOO_MANY_REQUESTS), 429, faultHeaders)
          }
          case "DropBeforeResponse":
            return yield* cut(arrival.response, undefined)
          case "DropMidBody":
            draft.status = 200
            return yield* dropMidBody(
              arrival.response,
              headers,
              answer(endpoint, url, draft.keyValid),
              fault.fraction ?? 0.5
            )
          case "MalformedJson": {
            const body = answer(endpoint, url, draft.keyValid)
            return Envelope.json(body.slice(0, Math.max(1, Math.floor(body.length / 2))), 200, headers)
          }
          case "NotEnvelope":
            return Envelope.json(JSON.stringify(fault.body === undefined ? { items: [] } : fault.body), 200, headers)
          case "UnknownCode":
            return Envelope.json(
              Envelope.envelope(fault.code ?? 2, fault.message ?? "Service temporarily unavailable", null),
              200,
              headers
            )
          case "Hang":
            return yield* Effect.never
          case "Delay":
            yield* Effect.sleep(fault.duration)
            return normal()
          case "Unauthorized":
            return Envelope.json(Envelope.failure(Answers.UNAUTHORIZED), 200, headers)
          case "Redirect":
            return HttpServerResponse.empty({
              status: fault.status ?? 302,
              headers: { ...headers, location: fault.location }
            })
        }
      })

    const handler = (endpoint: Endpoint | undefined) =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
        Effect.acquireUseRelease(
          Effect.clockWith((clock) => Effect.sync(() => admit(request, endpoint, clock.unsafeCurrentTimeMillis()))),
          (arrival) =>
            Effect.tap(respond(arrival, endpoint), (response) =>
              Effect.sync(() => {
                arrival.draft.status = response.status
              })),
          (arrival) => Effect.clockWith((clock) => Effect.sync(() => finish(arrival, clock.unsafeCurrentTimeMillis())))
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
    const baseUrl = `http://${reachable.includes(":") ? `[${reachable}]` : reachable}:${port}`

    return Sandbox.of({
      baseUrl,
      port,
      apiKey: keys.first,
      seed,
      partnerCount,
      maxListCount,
      rateLimit,
      partnerAt: (index) => Seed.partnerAt(seed, index),
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
    })
  })

/**
 * The sandbox on its own Node HTTP server, listening on `host` (default 127.0.0.1) and `port` (default 0: the OS
 * picks one, read it from `baseUrl`). The server closes when the layer is released.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layer = (options: Options = {}): Layer.Layer<Sandbox, HttpServerError.ServeError> =>
  Layer.scoped(Sandbox, make(options)).pipe(
    Layer.provide(
      NodeHttpServer.layer(() => Http.createServer(), {
        port: options.port ?? 0,
        host: options.host ?? "127.0.0.1"
      })
    )
  )
