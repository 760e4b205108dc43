/**
 * What one call has been through, as plain data: its attempts, transient failures, 429s and waits, what the last
 * answer said of the server's limit, and how each answer becomes the outcome `RetryPolicy.decide` judges, the fields of
 * the error the call gives up with, and the lines it logs on the way. Each edition's executor (`internal/executor.ts`)
 * keeps one per call and wires it to the clock, the limiter and the wire.
 *
 * @since 0.1.0
 */
import type { RateLimitedFields } from "./ErrorText.js"
import * as LimitHeaders from "./internal/limitHeaders.js"
import type * as RetryPolicy from "./RetryPolicy.js"
import type * as ServerLimit from "./ServerLimit.js"

/**
 * Which call a request belongs to: the endpoint path and the method.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Target {
  readonly endpoint: string
  readonly method: string
}

/**
 * An answer with its whole body.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Answer {
  readonly status: number
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly text: string
}

/**
 * One call's bookkeeping (mutable: a call's own, never shared).
 *
 * @since 0.1.0
 * @category Models
 */
export interface CallState {
  readonly startMillis: number
  /** Attempts sent (or admitted by the limiter). */
  attempts: number
  /** Transient failures so far. */
  failures: number
  /** Of them, the answers with a status, by status. */
  readonly failuresByStatus: Record<number, number>
  /** Pauses for the server's limit so far. */
  busy: number
  /** Answers that were 429. */
  refused: number
  /** Time waited for the limiter, ours and the server's pauses. */
  waitedMillis: number
  lastLimit: ServerLimit.ServerLimit | undefined
  /** `Retry-After` of the last answer, when it was a 429. */
  lastRetryAfter: string | undefined
}

/**
 * A call's state at its start.
 *
 * @example
 * ```ts
 * import { CallState } from "@erp-client/kernel"
 *
 * const call = CallState.make(1_700_000_000_000)
 * console.log(call.attempts, CallState.history(call).failures) // => 0 0
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const make = (startMillis: number): CallState => ({
  startMillis,
  attempts: 0,
  failures: 0,
  failuresByStatus: {},
  busy: 0,
  refused: 0,
  waitedMillis: 0,
  lastLimit: undefined,
  lastRetryAfter: undefined
})

/**
 * What `RetryPolicy.decide` reads of the call, and when the limiter began probing a server that refuses without saying
 * its limit, if it is (`RetryPolicy.History`'s `refusingSinceMillis`).
 *
 * @example
 * ```ts
 * import { CallState } from "@erp-client/kernel"
 *
 * console.log(CallState.history(CallState.make(0))) // => { startMillis: 0, failures: 0, failuresByStatus: {}, busy: 0 }
 * ```
 *
 * @since 0.1.0
 * @category Accessors
 */
export const history = (call: CallState, refusingSinceMillis?: number): RetryPolicy.History => ({
  startMillis: call.startMillis,
  failures: call.failures,
  failuresByStatus: call.failuresByStatus,
  busy: call.busy,
  ...(refusingSinceMillis === undefined ? {} : { refusingSinceMillis })
})

/**
 * A transient failure the call will retry: counted, and by its status when it was an answer.
 *
 * @example
 * ```ts
 * import { CallState } from "@erp-client/kernel"
 *
 * const call = CallState.make(0)
 * CallState.retried(call, { _tag: "NoAnswer", transient: true })
 * CallState.retried(call, { _tag: "Answer", status: 502, limit: { limit: undefined, remaining: undefined, reset: undefined }, retryAfterMillis: undefined, bodyOk: true })
 * console.log(call.failures, call.failuresByStatus) // => 2 { '502': 1 }
 * ```
 *
 * @since 0.1.0
 * @category Bookkeeping
 */
export const retried = (call: CallState, outcome: RetryPolicy.Outcome): void => {
  call.failures += 1
  if (outcome._tag === "Answer") {
    call.failuresByStatus[outcome.status] = (call.failuresByStatus[outcome.status] ?? 0) + 1
  }
}

/**
 * An attempt admitted by the limiter after waiting `waitedMillis`: counted; how many attempts came before it (its
 * span's `http.request.resend_count`).
 *
 * @example
 * ```ts
 * import { CallState } from "@erp-client/kernel"
 *
 * const call = CallState.make(0)
 * console.log(CallState.admitted(call, 0), CallState.admitted(call, 250), call.waitedMillis) // => 0 1 250
 * ```
 *
 * @since 0.1.0
 * @category Bookkeeping
 */
export const admitted = (call: CallState, waitedMillis: number): number => {
  call.waitedMillis += waitedMillis
  const resend = call.attempts
  call.attempts += 1
  return resend
}

/**
 * An attempt that failed without an answer, as the policy sees it: transient for a reset connection or a timeout.
 *
 * @example
 * ```ts
 * import { CallState } from "@erp-client/kernel"
 *
 * console.log(CallState.noAnswer("TimeoutError"), CallState.noAnswer("ResponseTooLarge"))
 * // => { _tag: 'NoAnswer', transient: true } { _tag: 'NoAnswer', transient: false }
 * ```
 *
 * @since 0.1.0
 * @category Bookkeeping
 */
export const noAnswer = (tag: string): RetryPolicy.Outcome => ({
  _tag: "NoAnswer",
  transient: tag === "TransportError" || tag === "TimeoutError"
})

/**
 * An answer, noted (what it said of the server's limit, a 429 counted) and as the policy sees it. `bodyOk`: whether
 * its body is what the call expects (the envelope of a 2xx).
 *
 * @example
 * ```ts
 * import { CallState } from "@erp-client/kernel"
 *
 * const now = 1_700_000_000_000
 * const call = CallState.make(now)
 * const outcome = CallState.answered(call, { status: 429, headers: { "retry-after": "5" }, text: "" }, true, now, 60_000)
 * console.log(outcome._tag === "Answer" && outcome.retryAfterMillis, call.refused, call.lastRetryAfter) // => 5000 1 5
 * ```
 *
 * @since 0.1.0
 * @category Bookkeeping
 */
export const answered = (
  call: CallState,
  answer: Answer,
  bodyOk: boolean,
  nowMillis: number,
  maxServerWaitMillis: number
): RetryPolicy.Outcome & { readonly _tag: "Answer" } => {
  const limit = LimitHeaders.parse(answer.headers, nowMillis, maxServerWaitMillis)
  call.lastLimit = limit
  call.lastRetryAfter = answer.status === 429 ? answer.headers["retry-after"] : undefined
  if (answer.status === 429) call.refused += 1
  return {
    _tag: "Answer",
    status: answer.status,
    limit,
    retryAfterMillis: LimitHeaders.retryAfter(answer.headers, nowMillis),
    bodyOk
  }
}

/**
 * What an answer told the limiter about the server's limit (`ErpRateLimiter.learn`), when it told anything: a 429, an
 * `X-RateLimit-Limit` (with its reset, when usable: the window it counts in), or, while the limiter keeps a limit it
 * learned from 429s (`learning`), that the server accepted a request (how it climbs back).
 *
 * @example
 * ```ts
 * import { CallState } from "@erp-client/kernel"
 *
 * const call = CallState.make(0)
 * const outcome = CallState.answered(call, { status: 200, headers: { "x-ratelimit-limit": "10" }, text: "" }, true, 0, 60_000)
 * console.log(CallState.heard(outcome, 5)) // => { serverLimit: 10, tooManyRequests: false, startedMillis: 5 }
 * ```
 *
 * @since 0.1.0
 * @category Bookkeeping
 */
export const heard = (
  outcome: RetryPolicy.Outcome,
  startedMillis: number,
  learning = false
): ServerLimit.Heard | undefined => {
  if (outcome._tag !== "Answer") return undefined
  const { limit, status } = outcome
  if (status !== 429 && limit.limit === undefined && !learning) return undefined
  const reset = limit.reset !== undefined && limit.reset.usable
    ? { at: limit.reset.at, raw: limit.reset.raw }
    : undefined
  return {
    serverLimit: limit.limit,
    tooManyRequests: status === 429,
    startedMillis,
    ...(limit.remaining === undefined ? {} : { remaining: limit.remaining }),
    ...(reset === undefined ? {} : { reset })
  }
}

/**
 * `{ attempts, elapsedMillis }` of the error a call gives up with.
 *
 * @example
 * ```ts
 * import { CallState } from "@erp-client/kernel"
 *
 * const call = CallState.make(1_000)
 * CallState.admitted(call, 0)
 * console.log(CallState.tally(call, 16_000)) // => { attempts: 1, elapsedMillis: 15000 }
 * ```
 *
 * @since 0.1.0
 * @category Errors
 */
export const tally = (
  call: CallState,
  nowMillis: number
): { readonly attempts: number; readonly elapsedMillis: number } => ({
  attempts: call.attempts,
  elapsedMillis: nowMillis - call.startMillis
})

/**
 * The fields of the `RateLimited` a call fails with: what it waited, sent and was refused, what the server last said,
 * and `neededMillis` (the wait it would have needed); `bounded` says which bound it met (`maxWaitMillis`, the call's
 * own; `budgetMillis`, the rate-limit budget) and, past the budget, `askedMillis` when that wait was the server's own.
 *
 * @example
 * ```ts
 * import { CallState } from "@erp-client/kernel"
 *
 * const call = CallState.make(0)
 * console.log(CallState.rateLimitedFields(call, "partner/get", 10, 4_000, { maxWaitMillis: 1_000 }))
 * // => { endpoint: 'partner/get', maxWaitMillis: 1000, waitedMillis: 0, attempts: 0, elapsedMillis: 10, neededMillis: 4000 }
 * ```
 *
 * @since 0.1.0
 * @category Errors
 */
export const rateLimitedFields = (
  call: CallState,
  endpoint: string,
  nowMillis: number,
  neededMillis: number | undefined,
  bounded: {
    readonly maxWaitMillis?: number | undefined
    readonly budgetMillis?: number | undefined
    readonly askedMillis?: number | undefined
  } = {}
): RateLimitedFields => {
  const last = call.lastLimit
  return {
    endpoint,
    ...(bounded.maxWaitMillis === undefined ? {} : { maxWaitMillis: bounded.maxWaitMillis }),
    ...(bounded.budgetMillis === undefined ? {} : { budgetMillis: bounded.budgetMillis }),
    ...(bounded.askedMillis === undefined ? {} : { askedMillis: bounded.askedMillis }),
    waitedMillis: call.waitedMillis,
    attempts: call.attempts,
    ...(call.refused === 0 ? {} : { tooManyRequests: call.refused }),
    elapsedMillis: nowMillis - call.startMillis,
    ...(neededMillis === undefined ? {} : { neededMillis }),
    ...(last?.limit === undefined ? {} : { limit: last.limit }),
    ...(last?.remaining === undefined ? {} : { remaining: last.remaining }),
    ...(last?.reset === undefined ? {} : { serverReset: last.reset.raw, resetAt: last.reset.at }),
    ...(call.lastRetryAfter === undefined ? {} : { retryAfter: call.lastRetryAfter })
  }
}

/**
 * The error a call gives up with after an answer that is not a 2xx: an HTTP 401 or 403 is the key's refusal
 * (`Unauthorized`: a gateway in front of the service refuses a key so), anything else an `HttpStatusError` with the
 * server's message, its `Retry-After`, and the wait it asked for when that would have ended past the retry budget.
 *
 * @example
 * ```ts
 * import { CallState } from "@erp-client/kernel"
 *
 * const call = CallState.make(0)
 * const answer = { status: 503, headers: { "retry-after": "90" }, text: "" }
 * const verdict = { _tag: "GiveUp" as const, why: "retry-budget" as const, untilMillis: 90_000 }
 * console.log(CallState.statusError(call, { endpoint: "partner/get", method: "GET" }, answer, undefined, verdict, 0, 60_000))
 * // => { _tag: 'HttpStatusError', fields: { endpoint: 'partner/get', method: 'GET', status: 503, retryAfter: '90', neededMillis: 90000, budgetMillis: 60000, attempts: 0, elapsedMillis: 0 } }
 * ```
 *
 * @since 0.1.0
 * @category Errors
 */
export const statusError = (
  call: CallState,
  target: Target,
  answer: Answer,
  serverMessage: string | undefined,
  verdict: RetryPolicy.Verdict,
  nowMillis: number,
  retryBudgetMillis: number
):
  | {
    readonly _tag: "Unauthorized"
    readonly fields: { readonly endpoint: string; readonly status: number; readonly serverMessage?: string }
  }
  | {
    readonly _tag: "HttpStatusError"
    readonly fields: {
      readonly endpoint: string
      readonly method: string
      readonly status: number
      readonly retryAfter?: string
      readonly serverMessage?: string
      readonly neededMillis?: number
      readonly budgetMillis?: number
      readonly attempts: number
      readonly elapsedMillis: number
    }
  } =>
{
  if (answer.status === 401 || answer.status === 403) {
    return {
      _tag: "Unauthorized",
      fields: {
        endpoint: target.endpoint,
        status: answer.status,
        ...(serverMessage === undefined || serverMessage === "Unauthorized" ? {} : { serverMessage })
      }
    }
  }
  const retryAfter = answer.headers["retry-after"]
  return {
    _tag: "HttpStatusError",
    fields: {
      endpoint: target.endpoint,
      method: target.method,
      status: answer.status,
      ...(retryAfter === undefined ? {} : { retryAfter }),
      ...(serverMessage === undefined ? {} : { serverMessage }),
      // The retry the server asked for would have gone past the budget: the error says the wait asked for.
      ...(verdict._tag === "GiveUp" && verdict.why === "retry-budget" && verdict.untilMillis !== undefined
        ? { neededMillis: verdict.untilMillis - nowMillis, budgetMillis: retryBudgetMillis }
        : {}),
      ...tally(call, nowMillis)
    }
  }
}

/** What a 429 said of when to come back, for the log line: ` (Retry-After: 5, X-RateLimit-Reset: … (in 5 s))`. */
const describeWait = (
  limit: ServerLimit.ServerLimit | undefined,
  retryAfter: string | undefined,
  nowMillis: number
): string => {
  const said = [
    ...(retryAfter === undefined ? [] : [`Retry-After: ${retryAfter}`]),
    ...(limit?.reset === undefined ? [] : [LimitHeaders.describeReset(limit.reset, nowMillis)])
  ]
  return said.length === 0 ? "" : ` (${said.join(", ")})`
}

/**
 * The line logged when the server answered 429 and the call waits to try again.
 *
 * @example
 * ```ts
 * import { CallState } from "@erp-client/kernel"
 *
 * const call = CallState.make(0)
 * call.lastRetryAfter = "3"
 * console.log(CallState.pauseNote(call, { endpoint: "partner/list", method: "GET" }, 3_000, 0))
 * // => GET partner/list: the server answered 429 (Retry-After: 3); trying again in 3000 ms
 * ```
 *
 * @since 0.1.0
 * @category Notes
 */
export const pauseNote = (call: CallState, target: Target, untilMillis: number, nowMillis: number): string =>
  `${target.method} ${target.endpoint}: the server answered 429${
    describeWait(call.lastLimit, call.lastRetryAfter, nowMillis)
  }; trying again in ${Math.round(untilMillis - nowMillis)} ms`

/**
 * What an answer that is retried was, for the retry's log line: `GET partner/get: HTTP status 503 (the server said: …)
 * (Retry-After: 5)`.
 *
 * @example
 * ```ts
 * import { CallState } from "@erp-client/kernel"
 *
 * console.log(CallState.describeAnswer({ endpoint: "partner/get", method: "GET" }, { status: 503, headers: { "retry-after": "5" }, text: "" }, "database unavailable"))
 * // => GET partner/get: HTTP status 503 (the server said: database unavailable) (Retry-After: 5)
 * ```
 *
 * @since 0.1.0
 * @category Notes
 */
export const describeAnswer = (target: Target, answer: Answer, serverMessage: string | undefined): string => {
  const retryAfter = answer.headers["retry-after"]
  return `${target.method} ${target.endpoint}: HTTP status ${answer.status}${
    serverMessage === undefined ? "" : ` (the server said: ${serverMessage})`
  }${retryAfter === undefined ? "" : ` (Retry-After: ${retryAfter})`}`
}

/**
 * The line logged before a retry: what failed, when it is tried again, and which attempt that is.
 *
 * @example
 * ```ts
 * import { CallState } from "@erp-client/kernel"
 *
 * const call = CallState.make(0)
 * CallState.admitted(call, 0)
 * console.log(CallState.retryNote(call, "GET partner/get: HTTP status 503", 200.4))
 * // => GET partner/get: HTTP status 503; retrying in 200 ms (attempt 2)
 * ```
 *
 * @since 0.1.0
 * @category Notes
 */
export const retryNote = (call: CallState, what: string, afterMillis: number): string =>
  `${what}; retrying in ${Math.round(afterMillis)} ms (attempt ${call.attempts + 1})`

/**
 * The line logged, once per endpoint, for an `X-RateLimit-Reset` that is neither a number nor a date.
 *
 * @example
 * ```ts
 * import { CallState } from "@erp-client/kernel"
 *
 * console.log(CallState.unreadableResetNote({ endpoint: "partner/list", method: "GET" }, "soon"))
 * // => GET partner/list: X-RateLimit-Reset "soon" is neither a number nor a date; the server's reset is taken as unknown
 * ```
 *
 * @since 0.1.0
 * @category Notes
 */
export const unreadableResetNote = (target: Target, raw: string): string =>
  `${target.method} ${target.endpoint}: X-RateLimit-Reset ${
    JSON.stringify(raw)
  } is neither a number nor a date; the server's reset is taken as unknown`
