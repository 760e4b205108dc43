/**
 * What a call does after each attempt, as a plain function over data (docs/ARCHITECTURE.md, "The data path"): take the
 * answer, pause for the server's limit and try again, retry after a transient failure, or give up. The executor
 * (`executor.ts`) only wires this to the clock, the limiter and the wire; a later edition on another runtime can share
 * it as it is. Every wait is bounded: by a count, and by a time budget from the call's start.
 *
 * @since 0.1.0
 */
import type * as ServerLimit from "./ServerLimit.js"

/**
 * @since 0.1.0
 * @category Models
 */
export interface Policy {
  /** Whether the request may be sent twice (GET): a POST may have been acted on before its answer was lost. */
  readonly idempotent: boolean
  /** Retries after transient failures, at most. */
  readonly retries: number
  /**
   * A lower cap for some statuses, as data: `{ 502: 2 }` retries a 502 at most twice in a call (its other transient
   * failures still count against `retries`).
   */
  readonly retriesByStatus?: Readonly<Record<number, number>> | undefined
  /** Time from the call's start within which a retry may still start. */
  readonly retryBudgetMillis: number
  /** First backoff after a transient failure, doubled each time, jittered, at most `maxRetryDelayMillis`. */
  readonly retryBaseDelayMillis: number
  readonly maxRetryDelayMillis: number
  /** Time from the call's start within which waits for the server's limit (429) may end. */
  readonly rateLimitBudgetMillis: number
  /**
   * The window and limit the request was admitted under (the limiter's own, or one learned from the server): a 429
   * without a usable reset backs off from one request's share of the window, doubling up to the window.
   */
  readonly windowMillis: number
  readonly limit: number
}

/**
 * What the call has been through so far (the attempt just judged not included).
 *
 * @since 0.1.0
 * @category Models
 */
export interface History {
  readonly startMillis: number
  /** Transient failures so far. */
  readonly failures: number
  /** Of them, the answers with a status, by status (for `Policy.retriesByStatus`). */
  readonly failuresByStatus?: Readonly<Record<number, number>> | undefined
  /** 429s so far. */
  readonly busy: number
  /**
   * When the limiter began probing a server that answers 429 without saying its limit (`ServerLimit.Learned`'s
   * `refusedMillis`), if it is: pauses then grow with the time the server has refused, whichever call meets them.
   */
  readonly refusingSinceMillis?: number | undefined
}

/**
 * One attempt, as the policy sees it.
 *
 * @since 0.1.0
 * @category Models
 */
export type Outcome =
  | {
    readonly _tag: "Answer"
    readonly status: number
    readonly limit: ServerLimit.ServerLimit
    /** `Retry-After`, in milliseconds from now. */
    readonly retryAfterMillis: number | undefined
    /** Whether the body is what the call expects (the envelope); `true` for calls that do not check. */
    readonly bodyOk: boolean
  }
  /** No answer: `transient` for a reset connection or a timeout, not for a refused request or a body over the cap. */
  | { readonly _tag: "NoAnswer"; readonly transient: boolean }

/**
 * @since 0.1.0
 * @category Models
 */
export type GiveUp =
  /** The failure is final: not transient, or an answer the contract does not use. */
  | "final"
  /** A transient failure of a request that may not be sent twice. */
  | "not-idempotent"
  | "retries"
  | "retry-budget"
  | "rate-limit-budget"

/**
 * @since 0.1.0
 * @category Models
 */
export type Verdict =
  | { readonly _tag: "Accept" }
  /** The server refused for its limit: hold the endpoint until `untilMillis`, then try again. */
  | { readonly _tag: "Pause"; readonly untilMillis: number }
  | { readonly _tag: "Retry"; readonly afterMillis: number }
  /**
   * `untilMillis`: past a budget, when the server asked the call to come back (`Retry-After`, a reset), or for a 429
   * when the call would have tried again; the error says the wait. `asked`: for a 429, whether that wait is the one the
   * server asked for (`Retry-After` or its reset), rather than the client's own backoff.
   */
  | {
    readonly _tag: "GiveUp"
    readonly why: GiveUp
    readonly untilMillis?: number | undefined
    readonly asked?: boolean | undefined
  }

/** HTTP statuses a proxy or gateway sends while the service is briefly away. */
const isTransientStatus = (status: number): boolean =>
  status === 408 || status === 500 || status === 502 || status === 503 || status === 504

/** The shortest pause after a 429: one request's share of the window, at least 100 ms. */
const minPauseMillis = (policy: Policy): number => Math.max(100, policy.windowMillis / policy.limit)

/**
 * The verdict on one attempt. `jitter` is a number in [0.5, 1) from the caller's random source, so the function stays
 * pure and backoffs of many clients do not line up.
 *
 * @example
 * ```ts
 * import { CallState, RetryPolicy } from "@erp-client/kernel"
 *
 * const policy = {
 *   idempotent: true,
 *   retries: 8,
 *   retryBudgetMillis: 60_000,
 *   retryBaseDelayMillis: 200,
 *   maxRetryDelayMillis: 10_000,
 *   rateLimitBudgetMillis: 300_000,
 *   windowMillis: 30_000,
 *   limit: 100
 * }
 * const now = 1_700_000_000_000
 * const history = { startMillis: now, failures: 0, busy: 0 }
 * // A 503 saying Retry-After: 5, as the call's bookkeeping reads it
 * const answer = { status: 503, headers: { "retry-after": "5" }, text: "" }
 * const outcome = CallState.answered(CallState.make(now), answer, false, now, 60_000)
 * console.log(RetryPolicy.decide(policy, history, outcome, now, 1)) // => { _tag: 'Retry', afterMillis: 5000 }
 * ```
 *
 * @since 0.1.0
 * @category Decisions
 */
export const decide = (
  policy: Policy,
  history: History,
  outcome: Outcome,
  nowMillis: number,
  jitter: number
): Verdict => {
  const retry = (retryAfterMillis: number | undefined, status?: number): Verdict => {
    if (!policy.idempotent) return { _tag: "GiveUp", why: "not-idempotent" }
    if (history.failures >= policy.retries) return { _tag: "GiveUp", why: "retries" }
    const cap = status === undefined ? undefined : policy.retriesByStatus?.[status]
    if (cap !== undefined && (history.failuresByStatus?.[status!] ?? 0) >= cap) {
      return { _tag: "GiveUp", why: "retries" }
    }
    const backoff = Math.min(policy.maxRetryDelayMillis, policy.retryBaseDelayMillis * 2 ** history.failures) * jitter
    // Whole milliseconds: clocks and stores keep integers, and a fraction left over would be waited for again.
    const afterMillis = Math.ceil(Math.max(backoff, retryAfterMillis ?? 0))
    if (nowMillis + afterMillis - history.startMillis > policy.retryBudgetMillis) {
      return retryAfterMillis !== undefined && retryAfterMillis >= backoff
        ? { _tag: "GiveUp", why: "retry-budget", untilMillis: nowMillis + afterMillis }
        : { _tag: "GiveUp", why: "retry-budget" }
    }
    return { _tag: "Retry", afterMillis }
  }
  if (outcome._tag === "NoAnswer") return outcome.transient ? retry(undefined) : { _tag: "GiveUp", why: "final" }
  const { status } = outcome
  if (status === 429) {
    // The server refused before acting: any method is tried again, once its window allows. `Retry-After` is the
    // server's own word on when: believed as a 503's is, beyond the budget too (the call then fails at once, saying
    // the wait asked for, instead of knocking until the budget is spent). A reset that is not ahead of now (a skewed
    // clock) or beyond the longest wait (a unit misread) says the server's window is unknown: back off by a whole
    // window, so the calls waiting on the endpoint meet about one more 429 a window. Without any reset, back off from
    // one request's share of the window, doubling up to a window; while the limiter probes a server that says
    // nothing, at least half the time it has refused so far, so the probes thin out whichever call sends them.
    const reset = outcome.limit.reset
    const least = minPauseMillis(policy)
    const known = reset !== undefined && reset.usable && reset.at > nowMillis
    const asked = outcome.retryAfterMillis
    const refusing = history.refusingSinceMillis === undefined
      ? 0
      : Math.min(policy.windowMillis, (nowMillis - history.refusingSinceMillis) / 2)
    const backoff = reset !== undefined && !known
      ? policy.windowMillis * jitter
      : Math.max(Math.min(policy.windowMillis, least * 2 ** history.busy), refusing) * jitter
    const untilMillis = Math.ceil(
      asked !== undefined
        ? Math.max(nowMillis + Math.max(asked, least), known ? reset.at : 0)
        : known
        ? Math.max(reset.at, nowMillis + least)
        : nowMillis + Math.max(least, backoff)
    )
    // The server's own word set the wait, not the client's least pause or backoff.
    const serverSaid = (asked !== undefined && asked >= least) || (known && reset.at >= nowMillis + least)
    return untilMillis - history.startMillis > policy.rateLimitBudgetMillis
      ? { _tag: "GiveUp", why: "rate-limit-budget", untilMillis, asked: serverSaid }
      : { _tag: "Pause", untilMillis }
  }
  if (status >= 200 && status < 300) return outcome.bodyOk ? { _tag: "Accept" } : retry(undefined)
  return isTransientStatus(status) ? retry(outcome.retryAfterMillis, status) : { _tag: "GiveUp", why: "final" }
}
