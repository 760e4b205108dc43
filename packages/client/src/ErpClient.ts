/**
 * The ERP API v2 client: one configured HttpClient and generic, schema-typed `get`, `list` and `post` for any
 * endpoint. The HttpClient is a pipe of small combinators (see `make`); the rate limiter is a requirement, chosen at
 * the application's edge (`ErpRateLimiter.layer` in memory, `ErpRateLimiterRedis.layer` shared through Redis).
 *
 * @since 0.1.0
 */
import type {
  ApiError,
  DecodeError,
  HttpStatusError,
  NotFound,
  RateLimited,
  RateLimiterUnavailable,
  ResponseTooLarge,
  TimeoutError,
  TransportError,
  Unauthorized
} from "@erp-client/core/ErpError"
import type { InvalidRequest } from "@erp-client/core/ErpError"
import type * as ListQuery from "@erp-client/core/ListQuery"
import type * as Page from "@erp-client/core/Page"
import * as Slots from "@erp-client/kernel/Slots"
import type * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import { dual, identity } from "effect/Function"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as ErpConfig from "./ErpConfig.js"
import * as ErpRateLimiter from "./ErpRateLimiter.js"
import * as Calls from "./internal/calls.js"
import * as Cancel from "./internal/cancel.js"
import {
  type ConfigError,
  type ConfigWrap,
  type Decoder,
  type DurationInput,
  HttpClient,
  HttpClientResponse,
  type Local,
  locally,
  requestUrl,
  Result,
  Service as Tag,
  toMillis
} from "./internal/edition.js"
import * as Executor from "./internal/executor.js"
import * as InFlightInternal from "./internal/inFlight.js"
import * as Observe from "./internal/observe.js"
import * as Transport from "./internal/transport.js"

/**
 * How a request can fail before its body is judged (an HTTP 401 or 403 is the key's refusal, `Unauthorized`, as the
 * envelope's is).
 *
 * @since 0.1.0
 * @category Errors
 */
export type RequestError =
  | TransportError
  | TimeoutError
  | HttpStatusError
  | Unauthorized
  | RateLimited
  | RateLimiterUnavailable
  | ResponseTooLarge
  | InvalidRequest

/**
 * How a call can fail: the request's failures and the envelope's.
 *
 * @since 0.1.0
 * @category Errors
 */
export type CallError = RequestError | DecodeError | Unauthorized | NotFound | ApiError

/**
 * Query parameters of a call. Values are URL-encoded when the URL is built.
 *
 * @since 0.1.0
 * @category Models
 */
export type Params = ReadonlyArray<readonly [string, string]>

/**
 * One page of a list endpoint: `list_offset`, `list_count`, conditions, and what to do with a record that does not
 * match the schema.
 *
 * @since 0.1.0
 * @category Models
 */
export interface PageQuery extends ListQuery.ListQuery {
  /** What to do with a record that does not match the schema (default `"fail"`). */
  readonly invalidRecords?: Page.InvalidRecordMode | undefined
  /** Other query parameters of the endpoint, sent after the paging ones (which they may not name). */
  readonly params?: Params | undefined
  /**
   * Also give each record's text exactly as the server wrote it (`Page.json`, numbers included: see `JsonText`), for
   * output that must reproduce it. Costs one more pass over the body; off by default.
   */
  readonly exact?: boolean | undefined
}

/**
 * Options of `get`.
 *
 * @since 0.1.0
 * @category Models
 */
export interface GetOptions {
  readonly params?: Params | undefined
  /** What was looked up, for `NotFound` (e.g. `id=42`). */
  readonly selector?: string | undefined
  /**
   * How long the call may wait for the rate limit, ours and the server's pauses together (say, a second in a web
   * request). A call the limit would keep longer fails at once with `RateLimited` (its `maxWaitMillis`, and in
   * `neededMillis` the wait it would have needed), taking no place in the limit. Without it, a call waits as long as
   * the limit needs (within `rateLimitBudget` for the server's pauses).
   */
  readonly maxWait?: DurationInput | undefined
}

/**
 * Options of `post`: the body as a value (sent as `JSON.stringify` writes it) or as JSON text (sent as it is, e.g. to
 * keep `12345678901234567890` or `1.10`), not both.
 *
 * @since 0.1.0
 * @category Models
 */
export type PostOptions =
  & { readonly params?: Params | undefined }
  & (
    | { readonly body?: unknown; readonly json?: undefined }
    | { readonly json: string; readonly body?: undefined }
  )

/**
 * What `get` and `post` give with `exact: true`: the decoded data, and its text exactly as the server wrote it
 * (compact: whitespace outside strings removed; numbers, key order and string escapes as sent; see `JsonText`).
 *
 * @since 0.1.0
 * @category Models
 */
export interface Exact<A> {
  readonly value: A
  readonly json: string
}

/**
 * @since 0.1.0
 * @category Models
 */
export interface Service {
  /**
   * The configured HttpClient: base URL, `X-API-KEY`, `Content-Type`, no trace headers to the third party, the rate
   * limiter, 429 handling within the budget, GET retries and the per-attempt timeout, as every call has them. The body
   * is already read when a response comes out. Use it for endpoints that do not answer with the envelope.
   */
  readonly httpClient: HttpClient.HttpClient.With<RequestError>
  /**
   * The base URL every endpoint is appended to, as configured and checked (never credentials, a query or a fragment):
   * what a changes state records of its server (`Changes.make`'s `source`).
   */
  readonly baseUrl: string
  /**
   * GET `endpoint` with `params`; `data` decoded with `schema`. `selector` names what was looked up in `NotFound`.
   * With `exact: true`, also `data`'s text as the server wrote it (`Exact`).
   */
  readonly get: {
    <A>(
      endpoint: string,
      schema: Decoder<A>,
      options: GetOptions & { readonly exact: true }
    ): Effect.Effect<Exact<A>, CallError>
    <A>(
      endpoint: string,
      schema: Decoder<A>,
      options?: GetOptions & { readonly exact?: false | undefined }
    ): Effect.Effect<A, CallError>
  }
  /** One page of a list endpoint, each record decoded with `schema` (and its text as sent, with `exact`). */
  readonly list: <A>(
    endpoint: string,
    schema: Decoder<A>,
    query: PageQuery
  ) => Effect.Effect<Page.Page<A>, CallError>
  /**
   * POST a JSON body to `endpoint` (`body`, or `json` sent as written; an invalid `json` is an `InvalidRequest`, not
   * sent). Never retried after a transient failure (the server may have acted on it); a 429 is retried, since the
   * server refused it before acting. With `exact: true`, also `data`'s text as the server wrote it (`Exact`).
   */
  readonly post: {
    <A>(
      endpoint: string,
      schema: Decoder<A>,
      options: PostOptions & { readonly exact: true }
    ): Effect.Effect<Exact<A>, CallError>
    <A>(
      endpoint: string,
      schema: Decoder<A>,
      options?: PostOptions & { readonly exact?: false | undefined }
    ): Effect.Effect<A, CallError>
  }
}

/**
 * @since 0.1.0
 * @category Services
 */
export class ErpClient extends Tag<ErpClient, Service>()("@erp-client/client/ErpClient") {}

/**
 * Requests sent (every attempt), `erp.client.requests`, unit `{request}`, monotonic, tagged `erp.endpoint` and
 * `erp.outcome` (`2xx`, `429`, `5xx`, `transport`, `timeout`, `interrupted`, `cancelled` by the client, …).
 *
 * @since 0.1.0
 * @category Metrics
 */
export const requests = Observe.requests

/**
 * `http.client.request.duration` of OpenTelemetry's HTTP conventions: the time from sending an attempt to having its
 * whole body (or its failure, or its interruption), in seconds, with the conventions' bucket boundaries and attributes
 * (`http.request.method`, `server.address`, `server.port`, `http.response.status_code`, `error.type`) and
 * `erp.endpoint`. Every attempt is recorded: one that did not complete has `error.type` `timeout`, `TransportError`,
 * `interrupted`, or `cancelled` when the client cancelled it (`cancel`).
 *
 * @since 0.1.0
 * @category Metrics
 */
export const requestDuration = Observe.requestDuration

/**
 * Time each attempt waited for the rate limit in all (ours and the server's pauses), `erp.client.rate_limit.wait`, in
 * seconds, 0 for an attempt that did not wait: one observation per attempt, tagged `erp.endpoint`.
 *
 * @since 0.1.0
 * @category Metrics
 */
export const rateLimitWait = Observe.rateLimitWait

/**
 * Time one attempt waited before it was sent, by why, `erp.client.rate_limit.wait.duration`, in seconds: one
 * observation per attempt and reason that made it wait, tagged `erp.endpoint` and `erp.rate_limit.reason`
 * (`client-limit`: the client's own limit; `server-pause`: a pause the server asked for). Each observation is one
 * request's wait: requests that wait side by side each count theirs, so a sum over them is not time elapsed (the
 * count and the quantiles are what a dashboard reads).
 *
 * @since 0.1.0
 * @category Metrics
 */
export const rateLimitWaitDuration = Observe.rateLimitWaitDuration

/**
 * Errors the ERP reported in its answer (an HTTP 200 whose envelope says `result.code = 0`, or a code the contract
 * does not define), `erp.client.api_errors`, unit `{error}`, monotonic, one per call, tagged `erp.endpoint`,
 * `erp.error.type` (`NotFound`, `Unauthorized`, `ApiError`) and `erp.result.code`. The HTTP metrics count these
 * answers as the successes they are on the wire.
 *
 * @since 0.1.0
 * @category Metrics
 */
export const apiErrors = Observe.apiErrors

/**
 * Retries after a transient failure, `erp.client.retries`, unit `{retry}`, monotonic.
 *
 * @since 0.1.0
 * @category Metrics
 */
export const retries = Observe.retries

/**
 * 429 responses received, `erp.client.too_many_requests`, unit `{response}`, monotonic.
 *
 * @since 0.1.0
 * @category Metrics
 */
export const tooManyRequests = Observe.tooManyRequests

/**
 * Checks an endpoint path (`partner/list`): relative, made of `[A-Za-z0-9_-]` segments, so it can never leave the
 * base URL or smuggle a query.
 *
 * @example
 * ```ts
 * import { ErpClient } from "@erp-client/client"
 * import { Either } from "effect"
 *
 * console.log(Either.getOrThrow(ErpClient.validateEndpoint("partner/list"))) // => partner/list
 *
 * // A path that would leave the base URL is refused before anything is sent
 * const refused = ErpClient.validateEndpoint("../admin/users")
 * if (Either.isLeft(refused)) console.log(refused.left._tag) // => InvalidRequest
 * ```
 *
 * @since 0.1.0
 * @category Validation
 */
export const validateEndpoint: (endpoint: string) => Result<string, InvalidRequest> = Calls.validateEndpoint

/**
 * The client's options: its settings (`ErpConfig.Options`), and a seam for the HttpClient of every attempt.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Options extends ErpConfig.Options {
  /**
   * Applied to the HttpClient every attempt goes out on, after the ERP's base URL and headers are set: a header of
   * your own on every request, a proxy's settings, your own instrumentation. The limiter, retries and timeout stay
   * around it (docs/ARCHITECTURE.md, "Where to change what").
   */
  readonly transformClient?: ((client: HttpClient.HttpClient) => HttpClient.HttpClient) | undefined
  /**
   * Headers recorded on the span of every attempt, by name (`http.request.header.<name>`,
   * `http.response.header.<name>`, as the HTTP conventions name them): none unless asked for. `X-API-KEY`,
   * `Authorization` and cookies are never recorded, whatever is asked.
   */
  readonly spanHeaders?: {
    readonly request?: ReadonlyArray<string> | undefined
    readonly response?: ReadonlyArray<string> | undefined
  } | undefined
}

/**
 * Builds the client from its options, the limiter and the HttpClient the user picked: every attempt goes through the
 * executor (`src/internal/executor.ts`), which owns the call's budgets, its retries and its pauses for the server's
 * limit (docs/ARCHITECTURE.md, "The data path"). A setting that fails its check is an `ErpConfigError` naming it.
 *
 * @example
 * ```ts
 * import { FetchHttpClient } from "@effect/platform"
 * import { ErpClient, ErpRateLimiter } from "@erp-client/client"
 * import { Partner } from "@erp-client/core"
 * import { Effect, Layer, Redacted } from "effect"
 *
 * // The service as a value, for a one-off job: partner 7
 * const program = Effect.gen(function*() {
 *   const erp = yield* ErpClient.make({
 *     baseUrl: "https://erp.example.com/api/",
 *     apiKey: Redacted.make("sk-live-4f9a2c")
 *   })
 *   return yield* erp.get("partner/get", Partner.Partner, { params: [["id", "7"]], selector: "id=7" })
 * }).pipe(Effect.provide(Layer.mergeAll(ErpRateLimiter.layer(), FetchHttpClient.layer)))
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const make = (
  options: Options
): Effect.Effect<Service, ErpConfig.ErpConfigError, ErpRateLimiter.ErpRateLimiter | HttpClient.HttpClient> =>
  Effect.mapError(build(options), (error) => ErpConfig.fromConfigError(error, "options"))

const build = (
  options: Options
): Effect.Effect<Service, ConfigError, ErpRateLimiter.ErpRateLimiter | HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const limiter = yield* ErpRateLimiter.ErpRateLimiter
    const config = yield* Result.toEffect(ErpConfig.resolve(options, limiter))
    const keyId = yield* Effect.promise(() => Slots.keyIdOf(Redacted.value(config.apiKey)))
    const transform = options.transformClient ?? identity
    const headers = Observe.headerNames(options.spanHeaders)
    const sent = transform(
      (yield* HttpClient.HttpClient).pipe(Transport.withErpRequest(config.baseUrl, config.apiKey, config.headers))
    )
    // The request headers asked for, as they go out (after `transformClient`), on the attempt's span.
    const client = headers.request.length === 0
      ? sent
      : HttpClient.tapRequest(sent, (request) => Observe.annotateRequestHeaders(headers, request))
    const { execute } = Executor.make({
      limiter,
      keyOf: (target) => Slots.limiterKey(keyId, target.endpoint),
      targetOf: Transport.targetOf(config.baseUrl),
      urlOf: (request) => requestUrl(request, config.baseUrl),
      headers,
      attempt: Transport.attempt(client, { maxBytes: config.maxBodyBytes, timeout: config.timeout }),
      retries: config.retries,
      retriesByStatus: config.retriesByStatus,
      retryBudgetMillis: Duration.toMillis(config.retryBudget),
      retryBaseDelayMillis: Duration.toMillis(config.retryBaseDelay),
      maxRetryDelayMillis: 10_000,
      rateLimitBudgetMillis: Duration.toMillis(config.rateLimitBudget),
      timeoutMillis: Duration.toMillis(config.timeout),
      maxServerWaitMillis: Duration.toMillis(config.maxServerWait)
    })

    // For endpoints that do not answer with the envelope: the same executor, the body handed back as it came.
    const httpClient = HttpClient.makeWith<never, never, RequestError, never>(
      (request) =>
        Effect.flatMap(
          request,
          (request) =>
            Effect.map(execute(request, { envelope: false }), ({ answer }) =>
              HttpClientResponse.fromWeb(
                request,
                new Response(answer.status === 204 || answer.status === 304 ? null : answer.text, {
                  status: answer.status,
                  headers: Object.entries(answer.headers).filter((entry): entry is [string, string] =>
                    entry[1] !== undefined
                  )
                })
              ))
        ),
      Effect.succeed
    )

    return ErpClient.of({ httpClient, baseUrl: config.baseUrl, ...Calls.make(execute) })
  })

/**
 * The client from options. It needs the limiter and the HttpClient, chosen at the edge:
 * `Layer.provide(ErpRateLimiter.layer())` (or `ErpRateLimiterRedis.layer(…)`) and
 * `Layer.provide(NodeHttpClient.layerUndici)`.
 *
 * @example
 * ```ts
 * import { FetchHttpClient } from "@effect/platform"
 * import { ErpClient, ErpRateLimiter } from "@erp-client/client"
 * import { Layer, Redacted } from "effect"
 *
 * // The client at the application's edge: the limit in this process's memory, requests through fetch
 * const ErpLive = ErpClient.layer({
 *   baseUrl: "https://erp.example.com/api/",
 *   apiKey: Redacted.make("sk-live-4f9a2c"),
 *   timeout: "10 seconds"
 * }).pipe(
 *   Layer.provide(ErpRateLimiter.layer()),
 *   Layer.provide(FetchHttpClient.layer)
 * )
 * ```
 *
 * @since 0.1.0
 * @category Layers
 */
export const layer = (
  options: Options
): Layer.Layer<ErpClient, ErpConfig.ErpConfigError, ErpRateLimiter.ErpRateLimiter | HttpClient.HttpClient> =>
  Layer.effect(ErpClient, make(options))

/**
 * The client with its options read through `Config`: from the environment by default (`ErpConfig.fromEnv`, the
 * variables in `Environment.client`), or from any structure of `Config` values, e.g.
 * `{ baseUrl: Config.string("CRM_ERP_URL"), apiKey: Config.redacted("CRM_ERP_KEY") }` (Effect 4: `Config.String`,
 * `Config.Redacted`). Like `layer`, it needs the limiter and the HttpClient: for everything from the environment, the
 * limit in memory, `ErpClient.layerConfig().pipe(Layer.provide(ErpRateLimiter.layerConfig()))`.
 *
 * @example
 * ```ts
 * import { FetchHttpClient } from "@effect/platform"
 * import { ErpClient, ErpRateLimiter } from "@erp-client/client"
 * import { Config, Layer } from "effect"
 *
 * // Everything from the environment: ERP_BASE_URL, ERP_API_KEY, ERP_RATE_LIMIT, …
 * const ErpLive = ErpClient.layerConfig().pipe(
 *   Layer.provide(ErpRateLimiter.layerConfig()),
 *   Layer.provide(FetchHttpClient.layer)
 * )
 *
 * // Or from variables of your own
 * const CrmErp = ErpClient.layerConfig({
 *   baseUrl: Config.string("CRM_ERP_URL"),
 *   apiKey: Config.redacted("CRM_ERP_KEY")
 * })
 * ```
 *
 * @since 0.1.0
 * @category Layers
 */
export const layerConfig = (
  config: ConfigWrap<Options> = ErpConfig.fromEnv
): Layer.Layer<ErpClient, ErpConfig.ErpConfigError, ErpRateLimiter.ErpRateLimiter | HttpClient.HttpClient> =>
  Layer.effect(
    ErpClient,
    Effect.mapError(
      Effect.flatMap(Config.unwrap(config), build),
      // Settings read by `fromEnv` are named by their variables; those of a `Config` of the user's, by the option.
      (error) => ErpConfig.fromConfigError(error, config === ErpConfig.fromEnv ? "variables" : "options")
    )
  )

/**
 * Interrupts `fiber` as a cancellation by the client: its work is no longer wanted (`reason`, e.g. `list-ended` for a
 * page fetched ahead past the end of its list), and that is no failure. The spans of the calls and attempts it had
 * under way end without an error, marked `erp.cancelled: true` and `erp.cancel_reason`; their attempts are counted
 * (`http.client.request.duration` with `error.type: cancelled`, `erp.client.requests` with `erp.outcome: cancelled`).
 * Any other interruption (Ctrl-C, a caller's timeout) stays one: an error, `error.type: interrupted`. Waits for the
 * fiber to end, as `Fiber.interrupt` does.
 *
 * @example
 * ```ts
 * import { ErpClient } from "@erp-client/client"
 * import { Effect, Fiber } from "effect"
 *
 * // A page fetched ahead, no longer wanted: its spans end as cancelled, not as errors
 * const program = Effect.gen(function*() {
 *   const ahead = Effect.runFork(Effect.never)
 *   yield* ErpClient.cancel(ahead, "list-ended")
 *   const exit = yield* Fiber.await(ahead)
 *   console.log(exit._tag === "Failure" && ErpClient.cancelReason(exit.cause)) // => list-ended
 * })
 * ```
 *
 * @since 0.1.0
 * @category Combinators
 */
export const cancel: <A, E>(fiber: Fiber.Fiber<A, E>, reason: string) => Effect.Effect<void> = Cancel.cancel

/**
 * The reason `cause` is a cancellation by the client (`cancel`), or `undefined` when it is anything else: a failure, or
 * an interruption by anyone else.
 *
 * @example
 * ```ts
 * import { ErpClient } from "@erp-client/client"
 * import { Cause } from "effect"
 *
 * // A failure is no cancellation (nor is an interruption by anyone but the client, as on Ctrl-C)
 * console.log(ErpClient.cancelReason(Cause.fail("refused"))) // => undefined
 * ```
 *
 * @since 0.1.0
 * @category Combinators
 */
export const cancelReason: (cause: Cause.Cause<unknown>) => string | undefined = Cancel.reasonOf

/**
 * The bound on waiting for the rate limit of the calls in its scope (see `withMaxWait`), in milliseconds.
 *
 * @since 0.1.0
 * @category References
 */
export const currentMaxWait: Local<number | undefined> = Executor.currentMaxWait

/**
 * Bounds how long every call in `effect` may wait for the rate limit, ours and the server's pauses together (say, a
 * second in a web request): a call the limit would keep longer fails at once with `RateLimited` (its `maxWaitMillis`,
 * and in `neededMillis` the wait it would have needed), taking no place in the limit. A call's own `maxWait`
 * (`GetOptions`) wins.
 *
 * @example
 * ```ts
 * import { ErpClient } from "@erp-client/client"
 * import { Partner } from "@erp-client/core"
 * import { Effect } from "effect"
 *
 * // At checkout: the partner within a second, or a RateLimited to answer with "try again".
 * const partner = Effect.flatMap(ErpClient.ErpClient, (erp) =>
 *   erp.get("partner/get", Partner.Partner, { params: [["id", "7"]], selector: "id=7" })).pipe(
 *     ErpClient.withMaxWait("1 second")
 *   )
 * ```
 *
 * @since 0.1.0
 * @category Combinators
 */
export const withMaxWait: {
  (maxWait: DurationInput): <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  <A, E, R>(effect: Effect.Effect<A, E, R>, maxWait: DurationInput): Effect.Effect<A, E, R>
} = dual(
  2,
  <A, E, R>(effect: Effect.Effect<A, E, R>, maxWait: DurationInput): Effect.Effect<A, E, R> =>
    locally(effect, Executor.currentMaxWait, toMillis(maxWait))
)

/**
 * Places for requests in flight, shared by the calls it is given to (`currentInFlight`, `withMaxInFlight`): an attempt
 * holds one while it waits for the rate limit and while it is on the wire, and waiting attempts are served oldest call
 * first, so a call trying again goes before the calls that started after it.
 *
 * @since 0.1.0
 * @category Models
 */
export type InFlight = InFlightInternal.InFlight

/**
 * `max` places for requests in flight, to share among calls with `currentInFlight` (a batch whose lookups run as
 * separate effects: `Effect.locally(ErpClient.currentInFlight, places)` on each, `Effect.provideService` in Effect 4).
 *
 * @example
 * ```ts
 * import { ErpClient } from "@erp-client/client"
 * import { Partner } from "@erp-client/core"
 * import { Effect, Stream } from "effect"
 *
 * // A stream of lookups, 64 under way, 4 requests in flight
 * const places = ErpClient.makeInFlight(4)
 * const lookup = (id: number) =>
 *   Effect.flatMap(ErpClient.ErpClient, (erp) => erp.get("partner/get", Partner.Partner, { params: [["id", `${id}`]] }))
 * const partners = Stream.fromIterable([1, 2, 3]).pipe(
 *   Stream.mapEffect((id) => lookup(id).pipe(Effect.locally(ErpClient.currentInFlight, places)), {
 *     concurrency: 64
 *   })
 * )
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const makeInFlight = (max: number): InFlight => InFlightInternal.make(max)

/**
 * The places for requests in flight of the calls in its scope (see `withMaxInFlight`), if bounded.
 *
 * @since 0.1.0
 * @category References
 */
export const currentInFlight: Local<InFlight | undefined> = Executor.currentInFlight

/**
 * At most `max` requests of the calls in `effect` in flight at once (waiting for the rate limit or on the wire), all
 * its fibers together. A call waiting to try again after a failure holds no place meanwhile, and gets one before the
 * calls that started after it, so in a batch of many calls run side by side with more concurrency than `max`
 * (`Resource.getMany`, `erp partners get --stdin`), one that keeps failing is retried beside the others instead of
 * holding a place for its whole retry budget: the batch takes about the time it takes without faults plus one retry
 * budget, not one budget per failing call.
 *
 * @example
 * ```ts
 * import { ErpClient } from "@erp-client/client"
 * import { Partner } from "@erp-client/core"
 * import { Effect } from "effect"
 *
 * // 500 lookups side by side, 8 requests in flight at a time
 * const ids = Array.from({ length: 500 }, (_, i) => i + 1)
 * const lookup = (id: number) =>
 *   Effect.flatMap(ErpClient.ErpClient, (erp) => erp.get("partner/get", Partner.Partner, { params: [["id", `${id}`]] }))
 * const partners = Effect.forEach(ids, (id) => Effect.exit(lookup(id)), { concurrency: 500 }).pipe(
 *   ErpClient.withMaxInFlight(8)
 * )
 * ```
 *
 * @since 0.1.0
 * @category Combinators
 */
export const withMaxInFlight: {
  (max: number): <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  <A, E, R>(effect: Effect.Effect<A, E, R>, max: number): Effect.Effect<A, E, R>
} = dual(
  2,
  <A, E, R>(effect: Effect.Effect<A, E, R>, max: number): Effect.Effect<A, E, R> =>
    Effect.suspend(() => locally(effect, Executor.currentInFlight, InFlightInternal.make(max)))
)
