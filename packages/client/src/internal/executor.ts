/**
 * The executor: one call from its first attempt to its answer or its error, and the one place that owns the call's
 * budgets (docs/ARCHITECTURE.md, "The data path"). Each attempt waits for the limiter, goes on the wire in its own
 * span, hands the slot back, and is judged by `@erp-client/kernel/RetryPolicy`; the call's bookkeeping, its errors'
 * fields and its log lines are `@erp-client/kernel/CallState`'s. The executor only wires those decisions to the
 * clock, the limiter and the wire, and counts the attempts where they happen.
 */
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
import * as CallState from "@erp-client/kernel/CallState"
import * as Rules from "@erp-client/kernel/Envelope"
import * as Policy from "@erp-client/kernel/RetryPolicy"
import * as ServerLimit from "@erp-client/kernel/ServerLimit"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Tracer from "effect/Tracer"
import type { RequestError } from "../ErpClient.js"
import type * as ErpRateLimiter from "../ErpRateLimiter.js"
import {
  type HttpClientRequest,
  type Local,
  makeLocal,
  randomBetween,
  Result,
  result as resultOf,
  withLocals
} from "./edition.js"
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
  /** A lower cap of retries for some statuses (`ErpConfig.Options.retriesByStatus`). */
  readonly retriesByStatus?: Readonly<Record<number, number>> | undefined
  readonly retryBudgetMillis: number
  readonly retryBaseDelayMillis: number
  readonly maxRetryDelayMillis: number
  readonly rateLimitBudgetMillis: number
  /** An attempt's timeout: the longest it holds its slot in the limit when its end is never told (`acquire`). */
  readonly timeoutMillis: number
  readonly maxServerWaitMillis: number
}

// The failure an attempt ended with, or the answer that the policy refused.
type Last =
  | { readonly _tag: "Error"; readonly error: Transport.AttemptError }
  | {
    readonly _tag: "Answer"
    readonly answer: Transport.Answer
    readonly envelope: Result<Envelope.RawEnvelope | undefined, DecodeError>
  }

/**
 * The bound on waiting for the rate limit of the calls in its scope, in milliseconds (`ErpClient.withMaxWait`); a
 * call's own `maxWait` wins.
 */
export const currentMaxWait: Local<number | undefined> = makeLocal<number | undefined>(
  "@erp-client/client/ErpClient/currentMaxWait",
  undefined
)

/**
 * The places for attempts in flight of the calls in its scope (`ErpClient.withMaxInFlight`): an attempt holds one
 * while it waits for the limiter and while it is on the wire, never while its call waits to try again, so a call that
 * keeps failing does not hold up the others.
 */
export const currentInFlight: Local<InFlight.InFlight | undefined> = makeLocal<InFlight.InFlight | undefined>(
  "@erp-client/client/ErpClient/currentInFlight",
  undefined
)

/**
 * The executor of a client: `execute(request, options)` runs one call. A GET is retried after a transient failure
 * (reset connection, timeout, 408/500/502/503/504, a 2xx body that is not the envelope) within `retries` and
 * `retryBudgetMillis`, honouring `Retry-After`; any call is tried again after a 429 once the server's window allows,
 * within `rateLimitBudgetMillis`. Giving up, the error says how many attempts were made and over how long.
 *
 * A call goes through these steps, each a function below: `begin` (its bounds and state), `attemptOnce` (the slot,
 * the wire, the slot handed back), `judge` (the answer or failure as the policy's outcome), `tellLimiter` (what the
 * answer said of the server's limit), then `act` on the policy's verdict: `accept`, `pause`, `retry` or `giveUp`.
 */
export const make = (settings: Settings): { readonly execute: Execute } => {
  const windowMillis = Duration.toMillis(settings.limiter.window)
  // The endpoints whose `X-RateLimit-Reset` could not be read, said once each for the life of the client.
  const unreadableSaid = new Set<string>()
  const execute = (
    request: HttpClientRequest.HttpClientRequest,
    options: CallOptions
  ): Effect.Effect<Exchange, ExecuteError> =>
    // The caller's bounds, read from its fiber at once rather than an effect each.
    withLocals((get) => {
      const maxWaitMillis = options.maxWaitMillis ?? get(currentMaxWait)
      const inFlight = get(currentInFlight)
      return Effect.flatMap(Clock.currentTimeMillis, (startMillis) =>
        loop(begin(settings, { request, options, windowMillis, unreadableSaid, maxWaitMillis, inFlight, startMillis })))
    })
  // The overloads say what the options decide: without the envelope check no DecodeError can come out.
  return { execute: execute as Execute }
}

/** One call on its way: what it asks, its bounds, its bookkeeping (`CallState`), and its one attempt. */
interface Call {
  readonly settings: Settings
  readonly request: HttpClientRequest.HttpClientRequest
  readonly options: CallOptions
  readonly target: Transport.Target
  /** The limiter's key of the call. */
  readonly key: string
  readonly policy: Policy.Policy
  readonly span: (resend: number) => Observe.AttemptSpan
  readonly state: CallState.CallState
  readonly startMillis: number
  readonly maxWaitMillis: number | undefined
  /** When the call must have started its attempt by, from `maxWaitMillis`. */
  readonly bound: number | undefined
  /** The endpoints whose unreadable `X-RateLimit-Reset` the client has said (one client's, shared by its calls). */
  readonly unreadableSaid: Set<string>
  /** The caller's places for attempts in flight (`ErpClient.withMaxInFlight`), if any. */
  readonly inFlight: InFlight.InFlight | undefined
  /** The place the last attempt had in the limit: what the limiter is told about the answer is judged against it. */
  admitted: ErpRateLimiter.Acquired | undefined
}

/** The call's bounds, its policy and its state, from the request and the caller's fiber. */
const begin = (settings: Settings, start: {
  readonly request: HttpClientRequest.HttpClientRequest
  readonly options: CallOptions
  readonly windowMillis: number
  readonly unreadableSaid: Set<string>
  readonly maxWaitMillis: number | undefined
  readonly inFlight: InFlight.InFlight | undefined
  readonly startMillis: number
}): Call => {
  const { inFlight, maxWaitMillis, request, startMillis } = start
  const target = settings.targetOf(request)
  return {
    settings,
    request,
    options: start.options,
    target,
    key: settings.keyOf(target),
    policy: {
      idempotent: request.method === "GET",
      retries: settings.retries,
      retriesByStatus: settings.retriesByStatus,
      retryBudgetMillis: settings.retryBudgetMillis,
      retryBaseDelayMillis: settings.retryBaseDelayMillis,
      maxRetryDelayMillis: settings.maxRetryDelayMillis,
      rateLimitBudgetMillis: settings.rateLimitBudgetMillis,
      windowMillis: start.windowMillis,
      limit: settings.limiter.limit
    },
    span: Observe.attemptSpan(target, settings.urlOf(request)),
    state: CallState.make(startMillis),
    startMillis,
    maxWaitMillis,
    bound: maxWaitMillis === undefined ? undefined : startMillis + maxWaitMillis,
    unreadableSaid: start.unreadableSaid,
    inFlight,
    admitted: undefined
  }
}

/** Attempts until the policy accepts the answer or gives up. */
const loop = (call: Call): Effect.Effect<Exchange, ExecuteError> =>
  // Older calls first: a retry goes before the calls that started after it.
  Effect.flatMap(
    call.inFlight === undefined ? attemptOnce(call) : call.inFlight.withPlace(call.startMillis, attemptOnce(call)),
    (result) =>
      Effect.flatMap(Clock.currentTimeMillis, (nowMillis) => {
        const { last, outcome } = judge(call, result, nowMillis)
        const learned = call.admitted?.learned
        return Effect.flatMap(
          tellLimiter(call, outcome),
          (jitter) =>
            act(
              call,
              last,
              outcome,
              Policy.decide(
                policyOf(call),
                CallState.history(call.state, learned?.refusedMillis),
                outcome,
                nowMillis,
                jitter
              ),
              nowMillis
            )
        )
      })
  )

/**
 * The policy for the attempt just judged: its 429s back off by the limit and window it was admitted under, once the
 * limiter knows them (a limit learned from the server; while it probes for one, its own).
 */
const policyOf = (call: Call): Policy.Policy => {
  const learned = call.admitted?.learned
  return learned === undefined || learned.refusedMillis !== undefined
    ? call.policy
    : { ...call.policy, limit: learned.limit, windowMillis: learned.windowMillis }
}

/** A failure of the limiter's store, as the call's error. */
const unavailable = (call: Call) => (failure: { readonly description: string }) =>
  Effect.fail(new RateLimiterUnavailable({ endpoint: call.target.endpoint, description: failure.description }))

/** The call's `RateLimited`: it would wait `neededMillis` more than it may. */
const rateLimited = (
  call: Call,
  nowMillis: number,
  neededMillis: number | undefined,
  bounded: {
    readonly maxWaitMillis?: number | undefined
    readonly budgetMillis?: number | undefined
    readonly askedMillis?: number | undefined
  } = {}
) => new RateLimited(CallState.rateLimitedFields(call.state, call.target.endpoint, nowMillis, neededMillis, bounded))

/** A slot in the limit, within the rate-limit budget and the caller's `maxWait`. */
const acquire = (call: Call): Effect.Effect<ErpRateLimiter.Acquired, RateLimited | RateLimiterUnavailable> =>
  Effect.catchTags(
    call.settings.limiter.acquire(
      call.key,
      call.startMillis + call.settings.rateLimitBudgetMillis,
      call.bound,
      call.settings.timeoutMillis
    ),
    {
      WaitBeyondBound: (beyond) =>
        Effect.flatMap(
          Clock.currentTimeMillis,
          (nowMillis) =>
            Effect.fail(
              rateLimited(call, nowMillis, beyond.startsAt - nowMillis, { maxWaitMillis: call.maxWaitMillis })
            )
        ),
      PauseBeyondDeadline: (pause) =>
        Effect.flatMap(
          Clock.currentTimeMillis,
          (nowMillis) => Effect.fail(rateLimited(call, nowMillis, pause.pausedUntil - nowMillis))
        ),
      StoreFailure: unavailable(call)
    }
  )

/** One attempt: the slot, the wire (in the attempt's span), the slot handed back with the time it ended. */
const attemptOnce = (
  call: Call
): Effect.Effect<Result<Transport.Answer, Transport.AttemptError>, ExecuteError> => {
  const { request, settings, target } = call
  return Effect.uninterruptibleMask((restore) =>
    Effect.flatMap(restore(acquire(call)), (acquired) => {
      call.admitted = acquired
      const resend = CallState.admitted(call.state, acquired.spacedMillis + acquired.pausedMillis)
      return restore(
        Observe.recordWait(target.endpoint, acquired).pipe(
          Effect.andThen(
            Observe.observeAttempt(
              target,
              call.span(resend),
              (current) => settings.attempt(request, target, current),
              settings.headers
            )
          ),
          resultOf
        )
      ).pipe(
        Effect.ensuring(Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.ignore(acquired.release(now))))
      )
    })
  )
}

/** The attempt's answer or failure, kept for the error, and as the policy's outcome. */
const judge = (
  call: Call,
  result: Result<Transport.Answer, Transport.AttemptError>,
  nowMillis: number
): { readonly last: Last; readonly outcome: Policy.Outcome } => {
  const error = Result.failureOrUndefined(result)
  if (error !== undefined) return { last: { _tag: "Error", error }, outcome: CallState.noAnswer(error._tag) }
  const answer = Result.getOrUndefined(result)!
  const ok = answer.status >= 200 && answer.status < 300
  const envelope: Result<Envelope.RawEnvelope | undefined, DecodeError> = ok && call.options.envelope
    ? Envelope.parseBody(call.target.endpoint, answer.text)
    : Result.succeed(undefined)
  return {
    last: { _tag: "Answer", answer, envelope },
    outcome: CallState.answered(
      call.state,
      answer,
      Result.isSuccess(envelope),
      nowMillis,
      call.settings.maxServerWaitMillis
    )
  }
}

/**
 * What the answer said of the server's limit goes to the limiter first: a lower limit holds back the requests queued
 * behind this one, whatever becomes of this call. A reset that cannot be read is said once per endpoint. Then the
 * jitter of the policy's delays.
 */
const tellLimiter = (call: Call, outcome: Policy.Outcome): Effect.Effect<number> => {
  const { admitted, target, unreadableSaid } = call
  // While the limiter keeps a limit learned from 429s, every answer tells whether the server still refuses.
  const told = admitted === undefined
    ? undefined
    : CallState.heard(outcome, admitted.startedMillis, admitted.learned?.from === "refusals")
  const heard = told === undefined ? Effect.void : call.settings.limiter.learn(call.key, admitted!, told)
  const unreadable = outcome._tag === "Answer" ? outcome.limit.unreadableReset : undefined
  const said = unreadable === undefined || unreadableSaid.has(target.endpoint)
    ? Effect.void
    : Effect.suspend(() => {
      unreadableSaid.add(target.endpoint)
      return Effect.logInfo(CallState.unreadableResetNote(target, unreadable))
    })
  // A failing store costs what the limiter learns, never the answer at hand.
  return heard === Effect.void && said === Effect.void
    ? randomBetween(0.5, 1)
    : Effect.andThen(Effect.andThen(Effect.ignore(heard), said), randomBetween(0.5, 1))
}

/** The policy's verdict carried out. */
const act = (
  call: Call,
  last: Last,
  outcome: Policy.Outcome,
  verdict: Policy.Verdict,
  nowMillis: number
): Effect.Effect<Exchange, ExecuteError> => {
  switch (verdict._tag) {
    case "Accept":
      return accept(call, last as Extract<Last, { _tag: "Answer" }>)
    case "Pause":
      return pause(call, verdict.untilMillis, nowMillis)
    case "Retry":
      return retry(call, last, outcome, verdict.afterMillis)
    case "GiveUp":
      return Effect.fail(
        verdict.why === "rate-limit-budget"
          ? rateLimited(
            call,
            nowMillis,
            verdict.untilMillis === undefined ? undefined : verdict.untilMillis - nowMillis,
            {
              budgetMillis: call.settings.rateLimitBudgetMillis,
              ...(verdict.asked === true && verdict.untilMillis !== undefined
                ? { askedMillis: verdict.untilMillis - nowMillis }
                : {})
            }
          )
          : giveUp(call, last, nowMillis, verdict)
      )
  }
}

/** The answer, once the endpoint is paused if the server counts more than we sent. */
const accept = (
  call: Call,
  answered: Extract<Last, { _tag: "Answer" }>
): Effect.Effect<Exchange, RateLimiterUnavailable> =>
  Effect.as(
    pauseIfServerCountsMore(call, call.state.lastLimit!),
    { answer: answered.answer, envelope: Result.getOrUndefined(answered.envelope) }
  )

/** A 429: the endpoint paused until the server's window allows, then the call tried again. */
const pause = (call: Call, untilMillis: number, nowMillis: number): Effect.Effect<Exchange, ExecuteError> => {
  call.state.busy += 1
  const paused = Effect.catchTag(call.settings.limiter.pause(call.key, untilMillis), "StoreFailure", unavailable(call))
  // A call bounded by `maxWait` that cannot meet the server's pause fails now (the pause still holds the endpoint for
  // every other call), saying what it sent and what came back.
  if (call.bound !== undefined && untilMillis > call.bound) {
    return Effect.andThen(
      paused,
      Effect.fail(rateLimited(call, nowMillis, untilMillis - nowMillis, { maxWaitMillis: call.maxWaitMillis }))
    )
  }
  return Effect.andThen(
    Effect.andThen(Effect.logInfo(CallState.pauseNote(call.state, call.target, untilMillis, nowMillis)), paused),
    loop(call)
  )
}

/** A transient failure: counted, said, and tried again after the policy's delay. */
const retry = (
  call: Call,
  last: Last,
  outcome: Policy.Outcome,
  afterMillis: number
): Effect.Effect<Exchange, ExecuteError> => {
  CallState.retried(call.state, outcome)
  return Observe.retried.pipe(
    Effect.andThen(Effect.logWarning(CallState.retryNote(call.state, describeLast(call.target, last), afterMillis))),
    Effect.andThen(Effect.sleep(Duration.millis(afterMillis))),
    Effect.andThen(loop(call))
  )
}

/** The error a call gives up with, saying its attempts. */
const giveUp = (call: Call, last: Last, nowMillis: number, verdict: Policy.Verdict): ExecuteError => {
  const { state, target } = call
  const tally = CallState.tally(state, nowMillis)
  if (last._tag === "Answer") {
    const { answer } = last
    const undecoded = Result.failureOrUndefined(last.envelope)
    if (answer.status >= 200 && answer.status < 300 && undecoded !== undefined) {
      return new DecodeError({ ...undecoded, ...tally })
    }
    const error = CallState.statusError(
      state,
      target,
      answer,
      messageOf(target, answer),
      verdict,
      nowMillis,
      call.settings.retryBudgetMillis
    )
    return error._tag === "Unauthorized" ? new Unauthorized(error.fields) : new HttpStatusError(error.fields)
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

/** `X-RateLimit-Remaining: 0` pauses the endpoint until the reset when the server counts more than we sent. */
const pauseIfServerCountsMore = (
  call: Call,
  limit: ServerLimit.ServerLimit
): Effect.Effect<void, RateLimiterUnavailable> => {
  const { key, settings: { limiter } } = call
  return limit.remaining !== 0 || limit.reset === undefined || !limit.reset.usable
    ? Effect.void
    : Effect.flatMap(
      limiter.inUse(key),
      (inUse) =>
        ServerLimit.pausesOnEmpty(limit, { limit: call.admitted?.limit ?? limiter.limit, inUse })
          ? limiter.pause(key, limit.reset!.at)
          : Effect.void
    ).pipe(Effect.catchTag("StoreFailure", unavailable(call)))
}

const describeLast = (target: Transport.Target, last: Last): string => {
  if (last._tag === "Error") return last.error.message
  const undecoded = Result.failureOrUndefined(last.envelope)
  if (undecoded !== undefined) return undecoded.message
  return CallState.describeAnswer(target, last.answer, messageOf(target, last.answer))
}

/** The message of an answer that is not a success but whose body is the envelope (`result.message`), if any. */
const messageOf = (target: Transport.Target, answer: Transport.Answer): string | undefined => {
  if (answer.status >= 200 && answer.status < 300) return undefined
  const parsed = Envelope.parseBody(target.endpoint, answer.text)
  return Rules.serverMessage(answer.status, Result.getOrUndefined(parsed)?.result)
}
