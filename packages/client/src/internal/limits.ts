/**
 * The rate limit as HttpClient combinators (docs/ARCHITECTURE.md, "Rate limit"): waiting for the limiter before
 * each attempt, listening to the server's `X-RateLimit-*` headers after it, and the call's budget for the pauses the
 * server asks for (429s), past which the call is `RateLimited`.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { RateLimited, RateLimiterUnavailable } from "@erp-client/core/ErpError"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Random from "effect/Random"
import type * as ErpRateLimiter from "../ErpRateLimiter.js"
import * as Observe from "./observe.js"
import * as ServerLimit from "./serverLimit.js"
import * as Transport from "./transport.js"
import type { Target } from "./transport.js"

/** The limiter's key of a request: a digest of the API key (never the key: a shared store must not see it) and the endpoint. */
export const keyOf = (keyId: string, target: (request: HttpClientRequest.HttpClientRequest) => Target) =>
(
  request: HttpClientRequest.HttpClientRequest
): string => `erp:${keyId}:${target(request).endpoint}`

/** The deadline (epoch ms) of the current call for waits the server asked for; set by `withServerPauses`. */
class CallDeadline extends Context.Reference<CallDeadline>()("@erp-client/client/internal/CallDeadline", {
  defaultValue: (): number => Number.POSITIVE_INFINITY
}) {}

/**
 * Waits for the limiter before each attempt and hands the slot back when the attempt has ended, with that time: the
 * server saw the request by then, so the slot stays busy a window after it. The waits stay interruptible; handing
 * the slot back always runs. A store failure while handing back is not the caller's: the next acquire meets it.
 */
export const withRateLimit = (
  limiter: ErpRateLimiter.Service,
  key: (request: HttpClientRequest.HttpClientRequest) => string,
  target: (request: HttpClientRequest.HttpClientRequest) => Target
) =>
<E, R>(
  client: HttpClient.HttpClient.With<E, R>
): HttpClient.HttpClient.With<E | ErpRateLimiter.PauseBeyondDeadline | ErpRateLimiter.StoreFailure, R> =>
  HttpClient.transform(
    client,
    (effect, request) =>
      Effect.flatMap(CallDeadline, (deadline) =>
        Effect.uninterruptibleMask((restore) =>
          Effect.flatMap(
            restore(limiter.acquire(key(request), Number.isFinite(deadline) ? deadline : undefined)),
            (acquired) =>
              restore(Effect.zipRight(recordWait(acquired, target(request).endpoint), effect)).pipe(
                Effect.ensuring(
                  Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.ignore(acquired.release(now)))
                )
              )
          )
        ))
  )

const recordWait = (acquired: ErpRateLimiter.Acquired, endpoint: string) => {
  const waited = acquired.spacedMillis + acquired.pausedMillis
  return Effect.all([
    Metric.update(Observe.byEndpoint(Observe.rateLimitWait, endpoint), waited),
    Observe.addToSpan("erp.rate_limit.wait_ms", waited),
    Observe.addToSpan("erp.attempts", 1),
    Effect.flatMap(
      Observe.attemptsOnSpan,
      (attempts) => attempts > 1 ? Effect.annotateCurrentSpan("http.request.resend_count", attempts - 1) : Effect.void
    )
  ], { discard: true })
}

/** A 429 inside one call: retried after the pause it set, until the call's budget runs out. */
export class ServerBusy extends Data.TaggedError("ServerBusy")<{
  readonly limit: ServerLimit.ServerLimit
}> {}

/**
 * Listens to the server's limit on every answer: a 429 fails the attempt with `ServerBusy` (for `withServerPauses`),
 * and `X-RateLimit-Remaining: 0` pauses the endpoint until `X-RateLimit-Reset` (each wait capped at `maxWaitMillis`)
 * when the server's count disagrees with the limiter's: the server counts more requests than the limiter has started
 * (someone else spends the same key's budget), or says its limit is lower than ours. When the two agree, the limiter
 * already holds the next request until the window allows it, and waiting for the reset (rounded up to whole seconds
 * by some servers) would only start each window late.
 */
export const checkServerLimit = (
  limiter: ErpRateLimiter.Service,
  key: (request: HttpClientRequest.HttpClientRequest) => string,
  maxWaitMillis: number
) =>
<E, R>(
  client: HttpClient.HttpClient.With<E, R>
): HttpClient.HttpClient.With<E | ServerBusy | ErpRateLimiter.StoreFailure, R> =>
  HttpClient.transform(
    client,
    (effect, request) =>
      Effect.flatMap(effect, (response) =>
        Effect.flatMap(Clock.currentTimeMillis, (
          now
        ): Effect.Effect<HttpClientResponse.HttpClientResponse, ServerBusy | ErpRateLimiter.StoreFailure> => {
          const limit = ServerLimit.parse(response.headers, now, maxWaitMillis)
          if (response.status === 429) {
            return Effect.zipRight(Metric.increment(Observe.tooManyRequests), Effect.fail(new ServerBusy({ limit })))
          }
          const { remaining, resetAt } = limit
          if (remaining === undefined || remaining > 0 || resetAt === undefined) return Effect.succeed(response)
          const serverLimit = limit.limit ?? limiter.limit
          return Effect.flatMap(limiter.inUse(key(request)), (ours) =>
            serverLimit - remaining > ours || serverLimit < limiter.limit
              ? Effect.as(limiter.pause(key(request), resetAt), response)
              : Effect.succeed(response))
        }))
  )

/**
 * The call's budget for the server's pauses: after a 429, the endpoint is paused until the server's reset (or a
 * growing, jittered backoff when it gives none) and the call tries again, for as long as `budgetMillis` from its
 * start allows; past it, `RateLimited`. A limiter whose store failed is `RateLimiterUnavailable`: nothing was sent.
 */
export const withServerPauses = (options: {
  readonly limiter: ErpRateLimiter.Service
  readonly key: (request: HttpClientRequest.HttpClientRequest) => string
  readonly target: (request: HttpClientRequest.HttpClientRequest) => Target
  readonly budgetMillis: number
  readonly maxWaitMillis: number
}) =>
<E, R>(
  client: HttpClient.HttpClient.With<E | Handled, R>
): HttpClient.HttpClient.With<Exclude<E, Handled> | RateLimited | RateLimiterUnavailable, R> => {
  const { budgetMillis, limiter, maxWaitMillis } = options
  // The shortest pause worth taking: one request's share of the window.
  const minPauseMillis = Math.max(100, Duration.toMillis(limiter.window) / limiter.limit)
  type Out = Exclude<E, Handled> | RateLimited | RateLimiterUnavailable
  return Transport.around((
    effect: Effect.Effect<HttpClientResponse.HttpClientResponse, E | Handled, R>,
    request: HttpClientRequest.HttpClientRequest
  ) => {
    const { endpoint, method } = options.target(request)
    const key = options.key(request)
    const unavailable = (e: ErpRateLimiter.StoreFailure) =>
      Effect.fail(new RateLimiterUnavailable({ endpoint, description: e.description }))
    const untilBudget = (
      start: number,
      busyCount: number,
      last: ServerLimit.ServerLimit | undefined
    ): Effect.Effect<HttpClientResponse.HttpClientResponse, Out, R> =>
      effect.pipe(
        Effect.provideService(CallDeadline, start + budgetMillis),
        Effect.catchIf(isOurs, (error): Effect.Effect<HttpClientResponse.HttpClientResponse, Out, R> => {
          switch (error._tag) {
            case "StoreFailure":
              return unavailable(error)
            case "PauseBeyondDeadline":
              return Effect.flatMap(
                Clock.currentTimeMillis,
                (now) => Effect.fail(rateLimited(endpoint, last, now - start, error.pausedUntil))
              )
            case "ServerBusy":
              return Effect.gen(function*() {
                const now = yield* Clock.currentTimeMillis
                const jitter = yield* Random.nextRange(0.5, 1)
                const backoff = Math.min(maxWaitMillis, minPauseMillis * 2 ** busyCount) * jitter
                const until = Math.max(error.limit.resetAt ?? now + backoff, now + minPauseMillis)
                yield* Effect.logInfo(
                  `${method} ${endpoint}: the server answered 429; it resets in ${Math.round(until - now)} ms`
                )
                if (until - start > budgetMillis) {
                  return yield* Effect.fail(rateLimited(endpoint, error.limit, now - start, error.limit.resetAt))
                }
                yield* Effect.catchTag(limiter.pause(key, until), "StoreFailure", unavailable)
                return yield* untilBudget(start, busyCount + 1, error.limit)
              })
          }
        })
      )
    return Effect.flatMap(Clock.currentTimeMillis, (start) => untilBudget(start, 0, undefined))
  })(client)
}

type Handled = ServerBusy | ErpRateLimiter.PauseBeyondDeadline | ErpRateLimiter.StoreFailure

const isOurs = (error: unknown): error is Handled => {
  const tag = (error as { readonly _tag?: unknown } | undefined)?._tag
  return tag === "ServerBusy" || tag === "PauseBeyondDeadline" || tag === "StoreFailure"
}

const rateLimited = (
  endpoint: string,
  limit: ServerLimit.ServerLimit | undefined,
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
