/**
 * The ERP API v2 client: one configured HttpClient and generic, schema-typed `get`, `list` and `post`.
 *
 * @since 0.1.0
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Decoder from "@erp-client/core/Decoder"
import * as Envelope from "@erp-client/core/Envelope"
import {
  type ApiError,
  type DecodeError,
  HttpStatusError,
  InvalidRequest,
  type NotFound,
  RateLimited,
  RateLimiterUnavailable,
  ResponseTooLarge,
  TimeoutError,
  TransportError,
  type Unauthorized
} from "@erp-client/core/ErpError"
import * as ListQuery from "@erp-client/core/ListQuery"
import * as Page from "@erp-client/core/Page"
import * as Clock from "effect/Clock"
import type { ConfigError } from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as Random from "effect/Random"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import type * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { ErpConfig, type ErpConfigShape } from "./ErpConfig.js"
import * as ErpConfigModule from "./ErpConfig.js"
import * as ErpRateLimiter from "./ErpRateLimiter.js"
import * as ErpRateLimiterRedis from "./ErpRateLimiterRedis.js"

/**
 * How a request can fail before its body is judged.
 *
 * @since 0.1.0
 * @category Errors
 */
export type RequestError =
  | TransportError
  | TimeoutError
  | HttpStatusError
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
 * @since 0.1.0
 * @category Models
 */
export interface ListOptions extends ListQuery.ListQuery {
  /** What to do with a record that does not match the schema (default `"fail"`). */
  readonly invalidRecords?: Page.InvalidRecordMode | undefined
}

/**
 * @since 0.1.0
 * @category Models
 */
export interface Service {
  readonly config: ErpConfigShape
  /**
   * The configured HttpClient: base URL, `X-API-KEY`, `Content-Type`, no trace headers to the third party, the rate
   * limiter, 429 handling within the budget, GET retries and the per-attempt timeout. The body is already read
   * when a response comes out. Use it for endpoints that do not answer with the envelope.
   */
  readonly httpClient: HttpClient.HttpClient.With<RequestError>
  /** GET `endpoint` with `params`; `data` decoded with `schema`. `selector` names what was looked up in `NotFound`. */
  readonly get: <A, I>(
    endpoint: string,
    schema: Schema.Schema<A, I>,
    options?: { readonly params?: Params | undefined; readonly selector?: string | undefined }
  ) => Effect.Effect<A, CallError>
  /** One page of a list endpoint, each record decoded with `schema`. */
  readonly list: <A, I>(
    endpoint: string,
    schema: Schema.Schema<A, I>,
    options: ListOptions
  ) => Effect.Effect<Page.Page<A>, CallError>
  /**
   * POST `body` as JSON to `endpoint`. Never retried after a transient failure (the server may have acted on it);
   * a 429 is retried, since the server refused it before acting.
   */
  readonly post: <A, I>(
    endpoint: string,
    schema: Schema.Schema<A, I>,
    options?: { readonly body?: unknown; readonly params?: Params | undefined }
  ) => Effect.Effect<A, CallError>
}

/**
 * @since 0.1.0
 * @category Tags
 */
export class ErpClient extends Context.Tag("@erp-client/client/ErpClient")<ErpClient, Service>() {}

/**
 * Requests sent, by outcome.
 *
 * @since 0.1.0
 * @category Metrics
 */
export const requests = Metric.counter("erp_client_requests", {
  description: "HTTP requests sent to the ERP, tagged by endpoint and outcome (2xx, 429, 5xx, transport, timeout, ...)"
})

/**
 * Time from sending a request to having its whole body, in milliseconds, tagged by endpoint.
 *
 * @since 0.1.0
 * @category Metrics
 */
export const requestDuration = Metric.histogram(
  "erp_client_request_duration_ms",
  MetricBoundaries.exponential({ start: 1, factor: 2, count: 16 }),
  "time from sending a request to having its whole body"
)

/**
 * Time one request waited for the rate limit (ours and the server's pauses), in milliseconds, tagged by endpoint.
 *
 * @since 0.1.0
 * @category Metrics
 */
export const rateLimitWait = Metric.histogram(
  "erp_client_rate_limit_wait_ms",
  MetricBoundaries.exponential({ start: 1, factor: 2, count: 20 }),
  "time a request waited for the rate limit before it was sent"
)

/**
 * Retries after a transient failure.
 *
 * @since 0.1.0
 * @category Metrics
 */
export const retries = Metric.counter("erp_client_retries", { description: "retries after transient failures" })

/**
 * 429 responses received.
 *
 * @since 0.1.0
 * @category Metrics
 */
export const tooManyRequests = Metric.counter("erp_client_429", { description: "429 responses received" })

// A 429 inside one call: retried after the pause it set, until the call's budget runs out.
class ServerBusy extends Data.TaggedError("ServerBusy")<{
  readonly limit: ErpRateLimiter.ServerLimit
}> {}

const ENDPOINT = /^[A-Za-z0-9_-]+(?:\/[A-Za-z0-9_-]+)*$/

/**
 * Checks an endpoint path (`partner/list`): relative, made of `[A-Za-z0-9_-]` segments, so it can never leave the
 * base URL or smuggle a query.
 *
 * @since 0.1.0
 * @category Validation
 */
export const validateEndpoint = (endpoint: string): Either.Either<string, InvalidRequest> =>
  ENDPOINT.test(endpoint)
    ? Either.right(endpoint)
    : Either.left(
      new InvalidRequest({ endpoint, reason: "an endpoint is a relative path of [A-Za-z0-9_-] segments" })
    )

const isTransient = (error: unknown): boolean =>
  error instanceof TransportError || error instanceof TimeoutError ||
  (error instanceof HttpStatusError && [408, 500, 502, 503, 504].includes(error.status))

/**
 * Builds the client from its config, a limiter and the HttpClient the user picked.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const make: Effect.Effect<Service, never, ErpConfig | ErpRateLimiter.ErpRateLimiter | HttpClient.HttpClient> =
  Effect.gen(function*() {
    const config = yield* ErpConfig
    const limiter = yield* ErpRateLimiter.ErpRateLimiter
    // The limiter's keys hold a digest of the API key, never the key: a shared store must not see it.
    const keyId = yield* digest(Redacted.value(config.apiKey))
    const timeoutMillis = Duration.toMillis(config.timeout)
    const budgetMillis = Duration.toMillis(config.rateLimitBudget)
    const maxWaitMillis = Duration.toMillis(config.maxServerWait)
    const minPauseMillis = Math.max(100, Duration.toMillis(config.rateWindow) / config.rateLimit)

    const endpointOf = (request: HttpClientRequest.HttpClientRequest): string =>
      request.url.startsWith(config.baseUrl) ? request.url.slice(config.baseUrl.length) : request.url

    const transientSchedule = Schedule.exponential(config.retryBaseDelay, 2).pipe(
      Schedule.jittered,
      Schedule.intersect(Schedule.recurs(config.retries)),
      Schedule.tapOutput(() => Metric.increment(retries))
    )

    const base = (yield* HttpClient.HttpClient).pipe(
      HttpClient.mapRequest((request) =>
        request.pipe(
          HttpClientRequest.prependUrl(config.baseUrl),
          HttpClientRequest.setHeader("X-API-KEY", Redacted.value(config.apiKey)),
          HttpClientRequest.setHeader("Content-Type", "application/json"),
          HttpClientRequest.acceptJson
        )
      ),
      HttpClient.withTracerPropagation(false)
    )

    const transportError = (error: HttpClientError.HttpClientError, endpoint: string, method: string) =>
      error._tag === "RequestError" && error.reason !== "Transport"
        ? new InvalidRequest({ endpoint, reason: `the request could not be built (${error.reason})` })
        : new TransportError({
          endpoint,
          method,
          // The description comes from the socket layer; the request and its headers are deliberately left out.
          description: error._tag === "ResponseError"
            ? "the response body broke off"
            : error.description ?? "the connection failed"
        })

    const textDecoder = new TextDecoder()

    // Reads the whole body, but never more than maxBodyBytes of it: a declared length over the cap is refused before
    // reading, a body that turns out longer is cut off. The result is a response whose body is already in memory.
    const readCapped = (response: HttpClientResponse.HttpClientResponse, endpoint: string, method: string) =>
      Effect.gen(function*() {
        const tooLarge = new ResponseTooLarge({ endpoint, method, limitBytes: config.maxBodyBytes })
        const declared = Number(response.headers["content-length"])
        if (Number.isFinite(declared) && declared > config.maxBodyBytes) return yield* Effect.fail(tooLarge)
        const chunks: Array<Uint8Array> = []
        let size = 0
        yield* Stream.runForEach(response.stream, (chunk) => {
          size += chunk.length
          if (size > config.maxBodyBytes) return Effect.fail(tooLarge)
          chunks.push(chunk)
          return Effect.void
        })
        const body = new Uint8Array(size)
        let at = 0
        for (const chunk of chunks) {
          body.set(chunk, at)
          at += chunk.length
        }
        return HttpClientResponse.fromWeb(
          response.request,
          new Response(
            size === 0 || response.status === 204 || response.status === 304 ? null : textDecoder.decode(body),
            {
              status: response.status,
              headers: Object.entries(response.headers)
            }
          )
        )
      })

    const httpClient: HttpClient.HttpClient.With<RequestError> = HttpClient.transformResponse(
      HttpClient.transform(base, (send, request) => {
        const endpoint = endpointOf(request)
        const method = request.method
        const key = `erp:${keyId}:${endpoint}`

        // One attempt: wait for the limiter, send, read the whole body within the timeout, listen to the headers.
        // The slot is handed back with the time the answer began (or the attempt ended): the server saw the request
        // by then. A store failure there is not the caller's: the next acquire meets it (and the policy logs it).
        // Per call, for its span: how many attempts were sent and how long they waited for the rate limit.
        let sent = 0
        let waited = 0
        const tagged = <Type, In, Out>(metric: Metric.Metric<Type, In, Out>) =>
          Metric.tagged(metric, "endpoint", endpoint)

        const attempt = (deadline: number) =>
          // The waits in `acquire` and the request stay interruptible; handing the slot back always runs.
          Effect.uninterruptibleMask((restore) =>
            Effect.flatMap(restore(limiter.acquire(key, deadline)), (acquired) => {
              const slot = { answeredAt: 0 }
              waited += acquired.spacedMillis + acquired.pausedMillis
              sent++
              return restore(answer(slot)).pipe(
                Effect.ensuring(
                  Effect.flatMap(
                    Clock.currentTimeMillis,
                    (now) => Effect.ignore(acquired.release(slot.answeredAt > 0 ? slot.answeredAt : now))
                  )
                )
              )
            })
          )

        const outcome = (o: string) => Metric.increment(Metric.tagged(tagged(requests), "outcome", o))

        const answer = (slot: { answeredAt: number }) =>
          Effect.gen(function*() {
            yield* Metric.update(tagged(rateLimitWait), waited)
            yield* Effect.annotateCurrentSpan({
              "erp.rate_limit.wait_ms": waited,
              ...(sent > 1 ? { "http.request.resend_count": sent - 1 } : {})
            })
            const started = yield* Clock.currentTimeMillis
            const response = yield* send.pipe(
              Effect.tap(() => Effect.map(Clock.currentTimeMillis, (now) => (slot.answeredAt = now))),
              Effect.flatMap((response) => readCapped(response, endpoint, method)),
              // Redirects are refused, never followed: fetch-based clients would carry X-API-KEY to any origin.
              Effect.provideService(FetchHttpClient.RequestInit, { redirect: "manual" }),
              Effect.timeoutFail({
                duration: config.timeout,
                onTimeout: () => new TimeoutError({ endpoint, method, timeoutMillis })
              }),
              Effect.catchIf(HttpClientError.isHttpClientError, (error) =>
                Effect.fail(transportError(error, endpoint, method))),
              Effect.tapError((error) =>
                outcome(
                  error._tag === "TimeoutError" ? "timeout" : error._tag === "TransportError" ? "transport" : "other"
                )
              )
            )
            const now = yield* Clock.currentTimeMillis
            yield* Metric.update(tagged(requestDuration), now - started)
            yield* outcome(response.status === 429 ? "429" : `${Math.floor(response.status / 100)}xx`)
            yield* Effect.annotateCurrentSpan("http.response.status_code", response.status)
            const serverLimit = ErpRateLimiter.parseServerLimit(response.headers, now, maxWaitMillis)
            if (response.status === 429) {
              yield* Metric.increment(tooManyRequests)
              return yield* Effect.fail(new ServerBusy({ limit: serverLimit }))
            }
            if (
              serverLimit.remaining !== undefined && serverLimit.remaining <= 0 && serverLimit.resetAt !== undefined
            ) {
              yield* limiter.pause(key, serverLimit.resetAt)
            }
            if (response.status < 200 || response.status >= 300) {
              return yield* Effect.fail(new HttpStatusError({ endpoint, method, status: response.status }))
            }
            return response
          })

        const withTransientRetries = (deadline: number) =>
          method === "GET"
            ? Effect.retry(
              attempt(deadline).pipe(
                Effect.tapError((error) =>
                  isTransient(error)
                    ? Effect.logWarning(`${(error as { message: string }).message}; retrying`)
                    : Effect.void
                )
              ),
              { schedule: transientSchedule, while: isTransient }
            )
            : attempt(deadline)

        // 429s: pause the endpoint until the server's reset (or a growing backoff when it gives none) and try
        // again, for as long as the call's budget allows; past it, RateLimited.
        const untilBudget = (
          start: number,
          busyCount: number,
          last: ErpRateLimiter.ServerLimit | undefined
        ): Effect.Effect<HttpClientResponse.HttpClientResponse, RequestError> =>
          withTransientRetries(start + budgetMillis).pipe(
            Effect.catchTags({
              PauseBeyondDeadline: (e) =>
                Effect.flatMap(
                  Clock.currentTimeMillis,
                  (now) => Effect.fail(rateLimited(endpoint, last, now - start, e.pausedUntil))
                ),
              StoreFailure: (e) => Effect.fail(new RateLimiterUnavailable({ endpoint, description: e.description })),
              ServerBusy: (busy) =>
                Effect.gen(function*() {
                  const now = yield* Clock.currentTimeMillis
                  const jitter = yield* Random.nextRange(0.5, 1)
                  const backoff = Math.min(maxWaitMillis, minPauseMillis * 2 ** busyCount) * jitter
                  const until = Math.max(busy.limit.resetAt ?? now + backoff, now + minPauseMillis)
                  yield* Effect.logInfo(
                    `${method} ${endpoint}: the server answered 429; it resets in ${Math.round(until - now)} ms`
                  )
                  if (until - start > budgetMillis) {
                    return yield* Effect.fail(rateLimited(endpoint, busy.limit, now - start, busy.limit.resetAt))
                  }
                  yield* limiter.pause(key, until).pipe(
                    Effect.catchTag("StoreFailure", (e) =>
                      Effect.fail(new RateLimiterUnavailable({ endpoint, description: e.description })))
                  )
                  return yield* untilBudget(start, busyCount + 1, busy.limit)
                })
            })
          )

        return Effect.flatMap(Clock.currentTimeMillis, (start) => untilBudget(start, 0, undefined))
      }),
      // Everything above already failed with our typed errors; this only narrows the type of the base client's.
      (effect) =>
        Effect.catchIf(
          effect,
          HttpClientError.isHttpClientError,
          (error) => Effect.fail(transportError(error, endpointOf(error.request), error.request.method))
        )
    )

    const call = (
      method: "GET" | "POST",
      endpoint: string,
      params: Params,
      body: unknown
    ): Effect.Effect<string, RequestError> =>
      Either.match(validateEndpoint(endpoint), {
        onLeft: Effect.fail,
        onRight: (path) => {
          let request = method === "GET" ? HttpClientRequest.get(path) : HttpClientRequest.post(path)
          if (params.length > 0) request = HttpClientRequest.setUrlParams(request, params)
          if (method === "POST" && body !== undefined) {
            request = HttpClientRequest.bodyText(request, JSON.stringify(body), "application/json")
          }
          return Effect.flatMap(httpClient.execute(request), (response) =>
            Effect.catchAll(response.text, () =>
              Effect.fail(new TransportError({ endpoint, method, description: "the response body broke off" }))))
        }
      })

    // The envelope of a body, with its `result.code` on the call's span.
    const envelopeOf = (endpoint: string, text: string) =>
      Either.match(Envelope.parseBody(endpoint, text), {
        onLeft: Effect.fail,
        onRight: (envelope) => Effect.as(Effect.annotateCurrentSpan("erp.result.code", envelope.result.code), envelope)
      })

    const get: Service["get"] = (endpoint, schema, options) => {
      const decode = Decoder.make(schema)
      return call("GET", endpoint, options?.params ?? [], undefined).pipe(
        Effect.flatMap((text) => envelopeOf(endpoint, text)),
        Effect.flatMap((envelope) => Envelope.decodeEnvelope(endpoint, envelope, decode, options?.selector)),
        Effect.withSpan("ErpClient.get", { attributes: { "erp.endpoint": endpoint }, captureStackTrace: false })
      )
    }

    const list: Service["list"] = (endpoint, schema, options) => {
      const decode = Decoder.make(schema)
      const mode = options.invalidRecords ?? "fail"
      return Either.match(ListQuery.toParams(endpoint, options), {
        onLeft: Effect.fail,
        onRight: (params) =>
          call("GET", endpoint, params, undefined).pipe(
            Effect.flatMap((text) => envelopeOf(endpoint, text)),
            Effect.flatMap((envelope) =>
              Either.flatMap(
                Envelope.toData(endpoint, envelope),
                (data) => Page.decodePage(endpoint, decode, data, options.offset, options.count, mode)
              )
            ),
            Effect.tap((page) => Effect.annotateCurrentSpan("erp.records", page.received)),
            Effect.withSpan("ErpClient.list", {
              attributes: {
                "erp.endpoint": endpoint,
                "erp.list_offset": options.offset,
                "erp.list_count": options.count
              },
              // A stack trace per call costs more than the rest of the span; the attributes say where it came from.
              captureStackTrace: false
            })
          )
      })
    }

    const post: Service["post"] = (endpoint, schema, options) => {
      const decode = Decoder.make(schema)
      return call("POST", endpoint, options?.params ?? [], options?.body).pipe(
        Effect.flatMap((text) => envelopeOf(endpoint, text)),
        Effect.flatMap((envelope) => Envelope.decodeEnvelope(endpoint, envelope, decode)),
        Effect.withSpan("ErpClient.post", { attributes: { "erp.endpoint": endpoint }, captureStackTrace: false })
      )
    }

    return ErpClient.of({ config, httpClient, get, list, post })
  })

const rateLimited = (
  endpoint: string,
  limit: ErpRateLimiter.ServerLimit | undefined,
  waitedMillis: number,
  resetAt: number | undefined
) =>
  new RateLimited({
    endpoint,
    waitedMillis,
    ...(limit?.limit === undefined ? {} : { limit: limit.limit }),
    ...(limit?.remaining === undefined ? {} : { remaining: limit.remaining }),
    ...(resetAt === undefined ? {} : { resetAt })
  })

const digest = (value: string): Effect.Effect<string> =>
  Effect.promise(async () => {
    const bytes = await globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(value))
    return Array.from(new Uint8Array(bytes).subarray(0, 12), (b) => b.toString(16).padStart(2, "0")).join("")
  })

/**
 * The client on a limiter you provide (e.g. one on a Redis store).
 *
 * @since 0.1.0
 * @category Layers
 */
export const layerWithLimiter: Layer.Layer<
  ErpClient,
  never,
  ErpConfig | ErpRateLimiter.ErpRateLimiter | HttpClient.HttpClient
> = Layer.effect(ErpClient, make)

const limiterFromConfig: Layer.Layer<ErpRateLimiter.ErpRateLimiter, never, ErpConfig> = Layer.unwrapEffect(
  Effect.map(ErpConfig, (config) => {
    const options = { limit: config.rateLimit, window: config.rateWindow, margin: config.rateMargin }
    return config.redis === undefined
      ? ErpRateLimiter.layerMemory(options)
      // The settings were checked when the config was built, so this layer cannot fail on them.
      : Layer.orDie(ErpRateLimiterRedis.layer({ ...options, ...config.redis }))
  })
)

/**
 * The client from a config layer, with its limiter in memory (shared by every fiber that uses this client), or in
 * Redis (shared by every process with the same Redis, prefix and key) when the config has a Redis URL.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layerFromConfig: Layer.Layer<ErpClient, never, ErpConfig | HttpClient.HttpClient> = layerWithLimiter.pipe(
  Layer.provide(limiterFromConfig)
)

// Each client layer built from settings gets its own limiter: Effect memoizes a layer value process-wide while it
// is in use, which would otherwise hand a second client (other settings, other TestClock) the first one's state.
const fromConfig = <E, R>(config: Layer.Layer<ErpConfig, E, R>) =>
  Layer.provideMerge(Layer.fresh(layerFromConfig), config)

/**
 * The client from options. Provide an HttpClient: `Layer.provide(NodeHttpClient.layerUndici)`. With `redisUrl`, the
 * rate limit is shared through Redis (see `ErpRateLimiterRedis`); the connection closes when the layer is released.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layer = (
  options: ErpConfigModule.Options
): Layer.Layer<ErpClient | ErpConfig, ConfigError, HttpClient.HttpClient> => fromConfig(ErpConfigModule.layer(options))

/**
 * The client from the environment (`ERP_BASE_URL`, `ERP_API_KEY`, …, `ERP_REDIS_URL` to share the limit through Redis;
 * see `ErpConfig.layerConfig`).
 *
 * @since 0.1.0
 * @category Layers
 */
export const layerConfig = (
  overrides?: Partial<ErpConfigModule.Options>
): Layer.Layer<ErpClient | ErpConfig, ConfigError, HttpClient.HttpClient> =>
  fromConfig(ErpConfigModule.layerConfig(overrides))
