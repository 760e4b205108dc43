/**
 * The executor: one call from its first attempt to its answer or its error, and the one place that owns the call's
 * budgets (docs/ARCHITECTURE.md, "The data path"). Each attempt waits for the limiter, goes on the wire in its own
 * span, hands the slot back, and is judged by `policy.ts`; the executor only wires those decisions to the clock, the
 * limiter and the wire, and counts the attempts where they happen.
 */
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Envelope from "@erp-client/core/Envelope"
import {
  DecodeError,
  HttpStatusError,
  RateLimited,
  RateLimiterUnavailable,
  TimeoutError,
  TransportError,
  Unauthorized
} from "@erp-client/core/ErpError"
import * as Policy from "@erp-client/kernel/RetryPolicy"
import * as ServerLimit from "@erp-client/kernel/ServerLimit"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FiberRef from "effect/FiberRef"
import * as Random from "effect/Random"
import type * as Tracer from "effect/Tracer"
import type { RequestError } from "../ErpClient.js"
import type * as ErpRateLimiter from "../ErpRateLimiter.js"
import type * as InFlight from "./inFlight.js"
import * as Observe from "./observe.js"
import type * as Transport from "./transport.js"

/** What a call asks of its answer. */
export interface CallOptions {
  /** Check that a 2xx body is the envelope (every ERP endpoint); a broken one is retried like a reset connection. */
  readonly envelope: boolean
  /**
   * How long the call may wait for the rate limit in all (ours and the server's pauses), in milliseconds: past it,
   * it fails at once with `RateLimited` (`maxWaitMillis`, `neededMillis`), taking no place in the limit.
   */
  readonly maxWaitMillis?: number | undefined
}

/** An answer, with the envelope parsed when the call asked for it. */
export interface Exchange {
  readonly answer: Transport.Answer
  readonly envelope: Envelope.RawEnvelope | undefined
}

/** How a call can fail before its envelope is judged (`ErpClient.RequestError`), and a body that is not the envelope. */
export type ExecuteError = RequestError | DecodeError

/** `execute`: a call that checks the envelope can fail with a `DecodeError`; one that does not, never. */
export interface Execute {
  (
    request: HttpClientRequest.HttpClientRequest,
    options: { readonly envelope: true; readonly maxWaitMillis?: number | undefined }
  ): Effect.Effect<Exchange, RequestError | DecodeError>
  (
    request: HttpClientRequest.HttpClientRequest,
    options: { readonly envelope: false; readonly maxWaitMillis?: number | undefined }
  ): Effect.Effect<Exchange, RequestError>
}

export interface Settings {
  readonly limiter: ErpRateLimiter.Service
  /** The limiter's key of a request: a digest of the API key and the endpoint (never the key). */
  readonly keyOf: (target: Transport.Target) => string
  readonly targetOf: (request: HttpClientRequest.HttpClientRequest) => Transport.Target
  /** The whole URL a request goes to (its span's `url.full`, `server.address` and `server.port`). */
  readonly urlOf: (request: HttpClientRequest.HttpClientRequest) => URL | undefined
  /** The response headers that become attributes of the attempts' spans. */
  readonly headers?: Observe.HeaderNames | undefined
  /** One attempt, in its span (`span`: the parent of what the attempt traces). */
  readonly attempt: (
    request: HttpClientRequest.HttpClientRequest,
    target: Transport.Target,
    span: Tracer.Span
  ) => Effect.Effect<Transport.Answer, Transport.AttemptError>
  readonly retries: number
  readonly retryBudgetMillis: number
  readonly retryBaseDelayMillis: number
  readonly maxRetryDelayMillis: number
  readonly rateLimitBudgetMillis: number
  readonly maxServerWaitMillis: number
}

// The failure an attempt ended with, or the answer that the policy refused.
type Last =
  | { readonly _tag: "Error"; readonly error: Transport.AttemptError }
  | {
    readonly _tag: "Answer"
    readonly answer: Transport.Answer
    readonly envelope: Either.Either<Envelope.RawEnvelope | undefined, DecodeError>
  }

/**
 * The bound on waiting for the rate limit of the calls in its scope, in milliseconds (`ErpClient.withMaxWait`); a
 * call's own `maxWait` wins.
 */
export const currentMaxWait: FiberRef.FiberRef<number | undefined> = FiberRef.unsafeMake<number | undefined>(undefined)

/**
 * The places for attempts in flight of the calls in its scope (`ErpClient.withMaxInFlight`): an attempt holds one
 * while it waits for the limiter and while it is on the wire, never while its call waits to try again, so a call that
 * keeps failing does not hold up the others.
 */
export const currentInFlight: FiberRef.FiberRef<InFlight.InFlight | undefined> = FiberRef.unsafeMake<
  InFlight.InFlight | undefined
>(undefined)

/**
 * The executor of a client: `execute(request, options)` runs one call. A GET is retried after a transient failure
 * (reset connection, timeout, 408/500/502/503/504, a 2xx body that is not the envelope) within `retries` and
 * `retryBudgetMillis`, honouring `Retry-After`; any call is tried again after a 429 once the server's window allows,
 * within `rateLimitBudgetMillis`. Giving up, the error says how many attempts were made and over how long.
 */
export const make = (settings: Settings): { readonly execute: Execute } => {
  const { limiter } = settings
  const windowMillis = Duration.toMillis(limiter.window)
  // The endpoints whose `X-RateLimit-Reset` could not be read, said once each for the life of the client.
  const unreadableSaid = new Set<string>()

  const execute = (
    request: HttpClientRequest.HttpClientRequest,
    options: CallOptions
  ): Effect.Effect<Exchange, ExecuteError> => {
    const target = settings.targetOf(request)
    const key = settings.keyOf(target)
    const policy: Policy.Policy = {
      idempotent: request.method === "GET",
      retries: settings.retries,
      retryBudgetMillis: settings.retryBudgetMillis,
      retryBaseDelayMillis: settings.retryBaseDelayMillis,
      maxRetryDelayMillis: settings.maxRetryDelayMillis,
      rateLimitBudgetMillis: settings.rateLimitBudgetMillis,
      windowMillis,
      limit: limiter.limit
    }
    const span = Observe.attemptSpan(target, settings.urlOf(request))

    // The caller's bounds, read from its fiber at once rather than an effect each.
    return Effect.withFiberRuntime((fiber) => {
      const maxWaitMillis = options.maxWaitMillis ?? fiber.getFiberRef(currentMaxWait)
      const inFlight = fiber.getFiberRef(currentInFlight)
      return Effect.flatMap(Clock.currentTimeMillis, (startMillis) => {
        let attempts = 0
        let failures = 0
        let busy = 0
        // Answers that were 429 (`busy` counts the pauses they led to).
        let refused = 0
        let waitedMillis = 0
        let lastLimit: ServerLimit.ServerLimit | undefined = undefined
        let lastRetryAfter: string | undefined = undefined
        // The place the last attempt had in the limit: what the limiter is told about the answer is judged against it.
        let admitted: ErpRateLimiter.Acquired | undefined = undefined

        const rateLimited = (
          nowMillis: number,
          neededMillis: number | undefined,
          bounded: { readonly maxWaitMillis?: number | undefined; readonly budgetMillis?: number | undefined } = {}
        ) =>
          new RateLimited({
            endpoint: target.endpoint,
            ...(bounded.maxWaitMillis === undefined ? {} : { maxWaitMillis: bounded.maxWaitMillis }),
            ...(bounded.budgetMillis === undefined ? {} : { budgetMillis: bounded.budgetMillis }),
            waitedMillis,
            attempts,
            ...(refused === 0 ? {} : { tooManyRequests: refused }),
            elapsedMillis: nowMillis - startMillis,
            ...(neededMillis === undefined ? {} : { neededMillis }),
            ...(lastLimit?.limit === undefined ? {} : { limit: lastLimit.limit }),
            ...(lastLimit?.remaining === undefined ? {} : { remaining: lastLimit.remaining }),
            ...(lastLimit?.reset === undefined
              ? {}
              : { serverReset: lastLimit.reset.raw, resetAt: lastLimit.reset.at }),
            ...(lastRetryAfter === undefined ? {} : { retryAfter: lastRetryAfter })
          })

        // The error a call gives up with, saying its attempts.
        const giveUp = (last: Last, nowMillis: number, verdict: Policy.Verdict): ExecuteError => {
          const tally = { attempts, elapsedMillis: nowMillis - startMillis }
          if (last._tag === "Answer") {
            const { answer } = last
            if (answer.status >= 200 && answer.status < 300 && Either.isLeft(last.envelope)) {
              return new DecodeError({ ...last.envelope.left, ...tally })
            }
            const serverMessage = messageOf(target, answer)
            // A gateway in front of the service refuses a key with 401 or 403: the key's refusal as the envelope's.
            if (answer.status === 401 || answer.status === 403) {
              return new Unauthorized({
                endpoint: target.endpoint,
                status: answer.status,
                ...(serverMessage === undefined || serverMessage === "Unauthorized" ? {} : { serverMessage })
              })
            }
            const retryAfter = answer.headers["retry-after"]
            return new HttpStatusError({
              ...target,
              status: answer.status,
              ...(retryAfter === undefined ? {} : { retryAfter }),
              ...(serverMessage === undefined ? {} : { serverMessage }),
              // The retry the server asked for would have gone past the budget: the error says the wait asked for.
              ...(verdict._tag === "GiveUp" && verdict.why === "retry-budget" && verdict.untilMillis !== undefined
                ? { neededMillis: verdict.untilMillis - nowMillis, budgetMillis: settings.retryBudgetMillis }
                : {}),
              ...tally
            })
          }
          const error = last.error
          switch (error._tag) {
            case "TransportError":
              return new TransportError({ ...error, ...tally })
            case "TimeoutError":
              return new TimeoutError({ ...error, ...tally })
            default:
              return error
          }
        }

        const bound = maxWaitMillis === undefined ? undefined : startMillis + maxWaitMillis
        const acquire = Effect.catchTags(limiter.acquire(key, startMillis + settings.rateLimitBudgetMillis, bound), {
          WaitBeyondBound: (beyond) =>
            Effect.flatMap(
              Clock.currentTimeMillis,
              (nowMillis) => Effect.fail(rateLimited(nowMillis, beyond.startsAt - nowMillis, { maxWaitMillis }))
            ),
          PauseBeyondDeadline: (pause) =>
            Effect.flatMap(
              Clock.currentTimeMillis,
              (nowMillis) => Effect.fail(rateLimited(nowMillis, pause.pausedUntil - nowMillis))
            ),
          StoreFailure: (failure) =>
            Effect.fail(new RateLimiterUnavailable({ endpoint: target.endpoint, description: failure.description }))
        })

        // One attempt: the slot, the wire (in the attempt's span), the slot handed back with the time it ended.
        const once = Effect.uninterruptibleMask((restore) =>
          Effect.flatMap(restore(acquire), (acquired) => {
            waitedMillis += acquired.spacedMillis + acquired.pausedMillis
            admitted = acquired
            const resend = attempts
            attempts += 1
            return restore(
              Observe.recordWait(target.endpoint, acquired).pipe(
                Effect.zipRight(
                  Observe.observeAttempt(
                    target,
                    span(resend),
                    (current) => settings.attempt(request, target, current),
                    settings.headers
                  )
                ),
                Effect.either
              )
            ).pipe(
              Effect.ensuring(Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.ignore(acquired.release(now))))
            )
          })
        )

        const loop: Effect.Effect<Exchange, ExecuteError> = Effect.flatMap(
          // Older calls first: a retry goes before the calls that started after it.
          inFlight === undefined ? once : inFlight.withPlace(startMillis, once),
          (result) =>
            Effect.flatMap(Clock.currentTimeMillis, (nowMillis) => {
              let last: Last
              let outcome: Policy.Outcome
              if (Either.isLeft(result)) {
                last = { _tag: "Error", error: result.left }
                outcome = {
                  _tag: "NoAnswer",
                  transient: result.left._tag === "TransportError" || result.left._tag === "TimeoutError"
                }
              } else {
                const answer = result.right
                const ok = answer.status >= 200 && answer.status < 300
                const envelope: Either.Either<Envelope.RawEnvelope | undefined, DecodeError> = ok && options.envelope
                  ? Envelope.parseBody(target.endpoint, answer.text)
                  : Either.right(undefined)
                lastLimit = ServerLimit.parse(answer.headers, nowMillis, settings.maxServerWaitMillis)
                lastRetryAfter = answer.status === 429 ? answer.headers["retry-after"] : undefined
                if (answer.status === 429) refused += 1
                last = { _tag: "Answer", answer, envelope }
                outcome = {
                  _tag: "Answer",
                  status: answer.status,
                  limit: lastLimit,
                  retryAfterMillis: ServerLimit.retryAfter(answer.headers, nowMillis),
                  bodyOk: Either.isRight(envelope)
                }
              }
              // What the answer said of the server's limit goes to the limiter first: a lower limit holds back the
              // requests queued behind this one, whatever becomes of this call.
              const heard = outcome._tag === "Answer" && admitted !== undefined &&
                  (outcome.status === 429 || outcome.limit.limit !== undefined)
                ? limiter.learn(key, admitted, {
                  serverLimit: outcome.limit.limit,
                  tooManyRequests: outcome.status === 429,
                  startedMillis: admitted.startedMillis
                })
                : Effect.void
              const unreadable = outcome._tag === "Answer" ? outcome.limit.unreadableReset : undefined
              const said = unreadable === undefined || unreadableSaid.has(target.endpoint)
                ? Effect.void
                : Effect.suspend(() => {
                  unreadableSaid.add(target.endpoint)
                  return Effect.logInfo(
                    `${target.method} ${target.endpoint}: X-RateLimit-Reset ${
                      JSON.stringify(unreadable)
                    } is neither a number nor a date; the server's reset is taken as unknown`
                  )
                })
              // A failing store costs what the limiter learns, never the answer at hand.
              const jitter = heard === Effect.void && said === Effect.void
                ? Random.nextRange(0.5, 1)
                : Effect.zipRight(Effect.zipRight(Effect.ignore(heard), said), Random.nextRange(0.5, 1))
              return Effect.flatMap(jitter, (jitter) => {
                const verdict = Policy.decide(policy, { startMillis, failures, busy }, outcome, nowMillis, jitter)
                switch (verdict._tag) {
                  case "Accept": {
                    const answered = last as Extract<Last, { _tag: "Answer" }>
                    return Effect.as(
                      pauseIfServerCountsMore(lastLimit!),
                      { answer: answered.answer, envelope: Either.getOrUndefined(answered.envelope) }
                    )
                  }
                  case "Pause": {
                    busy += 1
                    const pause = Effect.catchTag(
                      limiter.pause(key, verdict.untilMillis),
                      "StoreFailure",
                      (failure) =>
                        Effect.fail(
                          new RateLimiterUnavailable({ endpoint: target.endpoint, description: failure.description })
                        )
                    )
                    // A call bounded by `maxWait` that cannot meet the server's pause fails now (the pause still holds
                    // the endpoint for every other call), saying what it sent and what came back.
                    if (bound !== undefined && verdict.untilMillis > bound) {
                      return Effect.zipRight(
                        pause,
                        Effect.fail(rateLimited(nowMillis, verdict.untilMillis - nowMillis, { maxWaitMillis }))
                      )
                    }
                    return Effect.zipRight(
                      Effect.zipRight(
                        Effect.logInfo(
                          `${target.method} ${target.endpoint}: the server answered 429${
                            describeWait(lastLimit, lastRetryAfter, nowMillis)
                          }; trying again in ${Math.round(verdict.untilMillis - nowMillis)} ms`
                        ),
                        pause
                      ),
                      loop
                    )
                  }
                  case "Retry":
                    failures += 1
                    return Observe.retried.pipe(
                      Effect.zipRight(Effect.logWarning(
                        `${describeLast(target, last)}; retrying in ${Math.round(verdict.afterMillis)} ms (attempt ${
                          attempts + 1
                        })`
                      )),
                      Effect.zipRight(Effect.sleep(Duration.millis(verdict.afterMillis))),
                      Effect.zipRight(loop)
                    )
                  case "GiveUp":
                    return Effect.fail(
                      verdict.why === "rate-limit-budget"
                        ? rateLimited(
                          nowMillis,
                          verdict.untilMillis === undefined ? undefined : verdict.untilMillis - nowMillis,
                          { budgetMillis: settings.rateLimitBudgetMillis }
                        )
                        : giveUp(last, nowMillis, verdict)
                    )
                }
              })
            })
        )

        // `X-RateLimit-Remaining: 0` pauses the endpoint until the reset when the server counts more than we sent.
        const pauseIfServerCountsMore = (limit: ServerLimit.ServerLimit): Effect.Effect<void, RateLimiterUnavailable> =>
          limit.remaining !== 0 || limit.reset === undefined || !limit.reset.usable
            ? Effect.void
            : Effect.flatMap(
              limiter.inUse(key),
              (inUse) =>
                ServerLimit.pausesOnEmpty(limit, { limit: limiter.limit, inUse })
                  ? limiter.pause(key, limit.reset!.at)
                  : Effect.void
            ).pipe(
              Effect.catchTag(
                "StoreFailure",
                (failure) =>
                  Effect.fail(
                    new RateLimiterUnavailable({ endpoint: target.endpoint, description: failure.description })
                  )
              )
            )

        return loop
      })
    })
  }

  // The overloads say what the options decide: without the envelope check no DecodeError can come out.
  return { execute: execute as Execute }
}

const describeLast = (target: Transport.Target, last: Last): string => {
  if (last._tag === "Error") return last.error.message
  const { answer } = last
  if (Either.isLeft(last.envelope)) return last.envelope.left.message
  const retryAfter = answer.headers["retry-after"]
  const said = messageOf(target, answer)
  return `${target.method} ${target.endpoint}: HTTP status ${answer.status}${
    said === undefined ? "" : ` (the server said: ${said})`
  }${retryAfter === undefined ? "" : ` (Retry-After: ${retryAfter})`}`
}

/** The message of an answer that is not a success but whose body is the envelope (`result.message`), if any. */
const messageOf = (target: Transport.Target, answer: Transport.Answer): string | undefined => {
  if (answer.status >= 200 && answer.status < 300) return undefined
  const parsed = Envelope.parseBody(target.endpoint, answer.text)
  const message = Either.isRight(parsed) ? parsed.right.result.message : undefined
  return typeof message === "string" && message.trim() !== "" ? message : undefined
}

/** What a 429 said of when to come back, for the log line: ` (Retry-After: 5, X-RateLimit-Reset: … (in 5 s))`. */
const describeWait = (
  limit: ServerLimit.ServerLimit | undefined,
  retryAfter: string | undefined,
  nowMillis: number
): string => {
  const said = [
    ...(retryAfter === undefined ? [] : [`Retry-After: ${retryAfter}`]),
    ...(limit?.reset === undefined ? [] : [ServerLimit.describeReset(limit.reset, nowMillis)])
  ]
  return said.length === 0 ? "" : ` (${said.join(", ")})`
}
