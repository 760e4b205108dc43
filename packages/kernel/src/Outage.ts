/**
 * The shared limiter's failure policy, as plain data (docs/rate-limit.md, "Sharing the limit through Redis"): when an
 * outage of its store starts and ends, and what each operation of the limiter does meanwhile. Each edition's
 * `ErpRateLimiterRedis` keeps one state per limiter, tells it every store call's outcome, and asks it before each
 * operation.
 *
 * An outage starts at the first failure of a call begun after the store last changed state and ends at the first
 * answer to a call begun after it started, so it is said once however many calls fail meanwhile. While it lasts one
 * caller a second probes the store; the others wait for the grace, then the policy applies. The local fallback and a
 * store back without its data (its mark changed) both wait a slot's window after the outage started: the store may
 * have counted a full window just before, and that count is unknown here.
 *
 * @since 0.1.0
 */
import { fallback, graceEnds } from "./internal/outage.js"

/**
 * What a request does while the store is unreachable or failing, past the grace.
 *
 * @since 0.1.0
 * @category Models
 */
export type FailurePolicy = "fail" | "local"

/**
 * A limiter's settings for its outages.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Policy {
  readonly onFailure: FailurePolicy
  /** How long requests wait for a store that has answered before; 0 applies the policy at once. */
  readonly graceMillis: number
  /** The limiter's spacing of one slot (its window and margin): how long a request it admitted counts. */
  readonly slotWindowMillis: number
}

/**
 * One limiter's outage (mutable: a limiter's own).
 *
 * @since 0.1.0
 * @category Models
 */
export interface State {
  /** When the current outage was noticed (epoch ms), 0 while the store answers. */
  since: number
  /** When the store last went down or came back: results of calls begun before it are stale. */
  changedAt: number
  /** While down: when the store may be tried again. */
  nextProbe: number
  /** The failure that started the outage, or the last one since. */
  description: string
  /** Whether the store has ever answered this limiter. */
  answeredOnce: boolean
  /** When this limiter's local fallback last admitted a request (epoch ms), 0 if never. */
  lastLocal: number
  /** The store's mark as last read (`MARK_LUA`), `undefined` before the first read. */
  mark: string | undefined
  /** Whether the mark is to be read: by the first request, and after each outage or reconnection. */
  markPending: boolean
  /** When another caller may read the mark, if the one reading it has not finished by then. */
  markNext: number
  /** Requests through the store wait until then: it came back and may have lost its count (until its mark says). */
  heldUntil: number
  /** Counts the store's changes (down, back, reconnected): a request admitted across one looks again. */
  generation: number
}

/** While the store is down, it is tried again at most this often. */
const PROBE_INTERVAL_MILLIS = 1_000

/**
 * A request waiting for the store looks again at least this often, so it goes on soon after another one's call finds
 * the store back.
 *
 * @since 0.1.0
 * @category Constants
 */
export const WAIT_STEP_MILLIS = 100

/**
 * A limiter's state before its first call.
 *
 * @example
 * ```ts
 * import { Outage } from "@erp-client/kernel"
 *
 * console.log(Outage.makeState().since) // => 0
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const makeState = (): State => ({
  since: 0,
  changedAt: 0,
  nextProbe: 0,
  description: "",
  answeredOnce: false,
  lastLocal: 0,
  mark: undefined,
  markPending: true,
  markNext: 0,
  heldUntil: 0,
  generation: 0
})

/**
 * A store call failed: whether this starts an outage (and so is said, once). A failure of a call begun before the
 * store last came back is stale and changes nothing.
 *
 * @example
 * ```ts
 * import { Outage } from "@erp-client/kernel"
 *
 * const state = Outage.makeState()
 * console.log(Outage.failed(state, 9_000, 10_000, "down"), Outage.failed(state, 10_500, 11_000, "down")) // => true false
 * ```
 *
 * @since 0.1.0
 * @category Decisions
 */
export const failed = (state: State, startedMillis: number, nowMillis: number, description: string): boolean => {
  if (state.since !== 0) {
    state.nextProbe = Math.max(state.nextProbe, nowMillis + PROBE_INTERVAL_MILLIS)
    state.description = description
    return false
  }
  if (startedMillis < state.changedAt) return false
  state.since = nowMillis
  state.changedAt = nowMillis
  state.generation++
  state.nextProbe = nowMillis + PROBE_INTERVAL_MILLIS
  state.description = description
  return true
}

/**
 * A store call answered: how long the store had been down when this ends an outage (said once, as its return), else
 * `undefined`. An answer to a call begun before the outage was noticed does not end it. Each return has the store's
 * mark read again (`admit` gives a `Mark`, as it does to the first request); until the mark says the store kept its
 * data, requests through it are held until a slot's window after the outage started.
 *
 * @example
 * ```ts
 * import { Outage } from "@erp-client/kernel"
 *
 * const policy = { onFailure: "fail", graceMillis: 10_000, slotWindowMillis: 1_050 } as const
 * const state = Outage.makeState()
 * Outage.failed(state, 9_000, 10_000, "down")
 * console.log(Outage.answered(state, policy, 9_500, 10_200), Outage.answered(state, policy, 12_000, 12_300))
 * // => undefined 2300
 * console.log(state.heldUntil) // => 11050
 * ```
 *
 * @since 0.1.0
 * @category Decisions
 */
export const answered = (
  state: State,
  policy: Policy,
  startedMillis: number,
  nowMillis: number
): number | undefined => {
  state.answeredOnce = true
  if (state.since === 0 || startedMillis < state.changedAt) return undefined
  const down = nowMillis - state.since
  state.heldUntil = Math.max(state.heldUntil, state.since + policy.slotWindowMillis)
  state.markPending = true
  state.markNext = 0
  state.since = 0
  state.changedAt = nowMillis
  state.nextProbe = 0
  state.generation++
  return down
}

/**
 * The connection to the store was lost at `lostAtMillis` and is made again, whether or not a call failed meanwhile (a
 * restart while nothing was asked goes unseen by the calls): the store may have been restarted or replaced, so its
 * mark is read again, and until it says the data was kept, requests through it are held until a slot's window after
 * the connection was lost.
 *
 * @example
 * ```ts
 * import { Outage } from "@erp-client/kernel"
 *
 * const policy = { onFailure: "fail", graceMillis: 10_000, slotWindowMillis: 1_050 } as const
 * const state = Outage.makeState()
 * Outage.answered(state, policy, 0, 100)
 * Outage.marked(state, "a")
 * Outage.reconnected(state, policy, 5_000)
 * console.log(Outage.admit(state, policy, "acquire", 5_200), state.heldUntil) // => { _tag: 'Mark' } 6050
 * ```
 *
 * @since 0.1.0
 * @category Decisions
 */
export const reconnected = (state: State, policy: Policy, lostAtMillis: number): void => {
  if (!state.answeredOnce) return
  state.heldUntil = Math.max(state.heldUntil, lostAtMillis + policy.slotWindowMillis)
  state.markPending = true
  state.markNext = 0
  state.generation++
}

/**
 * The store's mark was read: `"kept"` (the same as before: the hold set at its return is lifted), `"lost"` (another:
 * it was restarted empty, or replaced, and the hold stays), `"unknown"` (no mark had been read before this return: the
 * hold stays, to be safe), or `"first"` (the first read, nothing held).
 *
 * @example
 * ```ts
 * import { Outage } from "@erp-client/kernel"
 *
 * const policy = { onFailure: "fail", graceMillis: 10_000, slotWindowMillis: 1_050 } as const
 * const state = Outage.makeState()
 * Outage.answered(state, policy, 0, 100)
 * console.log(Outage.marked(state, "a")) // => first
 * Outage.failed(state, 1_000, 2_000, "down")
 * Outage.answered(state, policy, 3_000, 3_100)
 * console.log(Outage.marked(state, "a"), state.heldUntil) // => kept 0
 * Outage.failed(state, 4_000, 5_000, "down")
 * Outage.answered(state, policy, 6_000, 6_100)
 * console.log(Outage.marked(state, "b"), state.heldUntil) // => lost 6050
 * ```
 *
 * @since 0.1.0
 * @category Decisions
 */
export const marked = (state: State, mark: string): "kept" | "lost" | "unknown" | "first" => {
  const before = state.mark
  state.markPending = false
  state.mark = mark
  if (before === mark) {
    state.heldUntil = 0
    return "kept"
  }
  if (before !== undefined) return "lost"
  return state.heldUntil > 0 ? "unknown" : "first"
}

/**
 * An operation of the limiter on its store.
 *
 * @since 0.1.0
 * @category Models
 */
export type Operation = "acquire" | "release" | "learn" | "pause" | "inUse"

/**
 * What an operation does now:
 * - `Store`: use the store;
 * - `Mark`: read the store's mark (`marked`), then look again: when due after its first answer or a return, and as the
 *   probe of a store that is down (a read that answers ends the outage and tells at once whether it kept its data);
 * - `Wait`: look again at `untilMillis` (the store may be back by then, or the grace over);
 * - `Beyond`: a request held (the store may have lost its count) whose caller's bound comes first: it could start at
 *   `startsAt`;
 * - `Fail`: fail with the store's failure (the client's `RateLimiterUnavailable`);
 * - `Local`: this process's memory limiter instead;
 * - `Ignore`: nothing (a limit not learned costs a 429 later, never the answer at hand; a pause under `local` is kept
 *   locally anyway).
 *
 * @since 0.1.0
 * @category Models
 */
export type Admission =
  | { readonly _tag: "Store" }
  | { readonly _tag: "Mark" }
  | { readonly _tag: "Wait"; readonly untilMillis: number }
  | { readonly _tag: "Beyond"; readonly startsAt: number }
  | { readonly _tag: "Fail" }
  | { readonly _tag: "Local" }
  | { readonly _tag: "Ignore" }

const store: Admission = { _tag: "Store" }
const mark: Admission = { _tag: "Mark" }
const fail: Admission = { _tag: "Fail" }
const local: Admission = { _tag: "Local" }
const ignore: Admission = { _tag: "Ignore" }

/**
 * When the local fallback may admit its first request of this outage: a slot's window after the outage was noticed,
 * when the store has answered before (it may have counted a full window just before), at once otherwise.
 */
const localFrom = (state: State, policy: Policy): number =>
  state.answeredOnce ? state.since + policy.slotWindowMillis : 0

/**
 * What `operation` does now (see `Admission`). While the store is down, the first caller due claims the probe (a
 * `Mark` admission: nobody else tries before the next second); a request bounded by its caller (`boundMillis`, when
 * it would rather fail than wait long) fails at its bound rather than wait further. A learned limit is never waited
 * for, and a slot handed back never probes: its caller waits while the store is down (`ErpRateLimiterRedis` gives up on
 * it once the slot is free anyway). While the store answers, a request reads its mark when due (one caller a second),
 * and waits out the hold set at its return.
 *
 * @example
 * ```ts
 * import { Outage } from "@erp-client/kernel"
 *
 * const policy = { onFailure: "fail", graceMillis: 10_000, slotWindowMillis: 1_050 } as const
 * const state = Outage.makeState()
 * Outage.answered(state, policy, 0, 100)
 * Outage.failed(state, 1_000, 2_000, "down")
 * console.log(Outage.admit(state, policy, "acquire", 2_500)) // => { _tag: 'Wait', untilMillis: 2600 }
 * console.log(Outage.admit(state, policy, "acquire", 3_000)) // => { _tag: 'Mark' }
 * console.log(Outage.admit(state, policy, "acquire", 3_000)) // => { _tag: 'Wait', untilMillis: 3100 }
 * console.log(Outage.admit(state, policy, "acquire", 12_500)) // => { _tag: 'Fail' }
 * ```
 *
 * @since 0.1.0
 * @category Decisions
 */
export const admit = (
  state: State,
  policy: Policy,
  operation: Operation,
  nowMillis: number,
  boundMillis?: number
): Admission => {
  if (state.since === 0) return operation === "acquire" ? admitWhileUp(state, nowMillis, boundMillis) : store
  if (operation === "learn") return ignore
  if (operation === "release") return { _tag: "Wait", untilMillis: nowMillis + WAIT_STEP_MILLIS }
  if (nowMillis >= state.nextProbe) {
    state.nextProbe = nowMillis + PROBE_INTERVAL_MILLIS
    return mark
  }
  let until = graceEnds(state, policy)
  if (nowMillis >= until) {
    switch (fallback(policy.onFailure, operation)) {
      case "fail":
        return fail
      case "ignore":
        return ignore
      case "local":
        if (operation !== "acquire") return local
        until = localFrom(state, policy)
        if (nowMillis >= until) return local
    }
  }
  if (boundMillis !== undefined && nowMillis >= boundMillis) return fail
  return {
    _tag: "Wait",
    untilMillis: Math.min(until, state.nextProbe, nowMillis + WAIT_STEP_MILLIS, boundMillis ?? Infinity)
  }
}

const admitWhileUp = (state: State, nowMillis: number, boundMillis: number | undefined): Admission => {
  if (state.markPending && nowMillis >= state.markNext) {
    state.markNext = nowMillis + PROBE_INTERVAL_MILLIS
    return mark
  }
  if (nowMillis >= state.heldUntil) return store
  if (boundMillis !== undefined && boundMillis < state.heldUntil) return { _tag: "Beyond", startsAt: state.heldUntil }
  return {
    _tag: "Wait",
    untilMillis: Math.min(state.heldUntil, nowMillis + WAIT_STEP_MILLIS)
  }
}

/**
 * The mark every limiter on one Redis and prefix shares (key `${prefix}erp:mark`): a token set by the first of them
 * and kept for a week from its last read. Read again after an outage, the same token means the store kept its data
 * (a pause, a lost connection, a failover to a replica that had it); another one, that it lost it (a restart without
 * persistence, a replica the data never reached). KEYS[1] the mark, ARGV[1] a token of the reader's own (set when
 * there is none), ARGV[2] the time to live (ms); returns the mark.
 *
 * @since 0.1.0
 * @category Scripts
 */
export const MARK_LUA = `
redis.call("SET", KEYS[1], ARGV[1], "NX")
redis.call("PEXPIRE", KEYS[1], ARGV[2])
return redis.call("GET", KEYS[1])
`

/**
 * How long the shared mark lives after its last read.
 *
 * @since 0.1.0
 * @category Constants
 */
export const MARK_TTL_MILLIS = 7 * 24 * 3_600_000

/**
 * The local fallback admitted a request that started at `startedMillis`.
 *
 * @example
 * ```ts
 * import { Outage } from "@erp-client/kernel"
 *
 * const state = Outage.makeState()
 * Outage.admittedLocally(state, 5_000)
 * console.log(state.lastLocal) // => 5000
 * ```
 *
 * @since 0.1.0
 * @category Decisions
 */
export const admittedLocally = (state: State, startedMillis: number): void => {
  state.lastLocal = Math.max(state.lastLocal, startedMillis)
}

/**
 * Whether a request the store admits now must also take a place in the local limiter: within a slot's window of the
 * last request the local fallback admitted, which the store never counted.
 *
 * @example
 * ```ts
 * import { Outage } from "@erp-client/kernel"
 *
 * const policy = { onFailure: "local", graceMillis: 10_000, slotWindowMillis: 1_050 } as const
 * const state = Outage.makeState()
 * Outage.admittedLocally(state, 5_000)
 * console.log(Outage.alsoLocal(state, policy, 6_000), Outage.alsoLocal(state, policy, 6_050)) // => true false
 * ```
 *
 * @since 0.1.0
 * @category Decisions
 */
export const alsoLocal = (state: State, policy: Policy, nowMillis: number): boolean =>
  state.lastLocal !== 0 && nowMillis < state.lastLocal + policy.slotWindowMillis
