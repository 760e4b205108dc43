/**
 * What the limiter's algorithm (`slots.ts`) and its stores (`memory.ts`, `redis.ts`) share with the public modules: its
 * errors, the wait observer, the hold store and the limiter's metrics. Defined here so internal modules never import
 * the public ones; `ErpRateLimiter` re-exports what users see.
 */
import type { Configured, Learned } from "@erp-client/kernel/ServerLimit"
import type { LogWindows } from "@erp-client/kernel/Slots"
import { metrics } from "@erp-client/kernel/Telemetry"
import * as Data from "effect/Data"
import type * as Effect from "effect/Effect"
import { counter, Service } from "./edition.js"

/** `acquire` would have to wait past the caller's deadline for a pause the server asked for. */
export class PauseBeyondDeadline extends Data.TaggedError("PauseBeyondDeadline")<{
  readonly pausedUntil: number
}> {}

/**
 * `acquire` was bounded (a caller that would rather fail than wait long, `ErpClient`'s `maxWait`) and the request
 * could not start by then: it would start at `startsAt` at the earliest. No place in the limit was taken.
 */
export class WaitBeyondBound extends Data.TaggedError("WaitBeyondBound")<{
  readonly startsAt: number
}> {}

/** The limiter's store failed (only possible with a remote store). */
export class StoreFailure extends Data.TaggedError("StoreFailure")<{
  readonly description: string
}> {}

/** Why a request waited: our own spacing (`"client-limit"`) or a pause the server asked for (`"server-pause"`). */
export type WaitReason = "client-limit" | "server-pause"

/** Told about every wait before it starts, e.g. to show progress. */
export class WaitObserver extends Service<WaitObserver, {
  readonly onWait: (
    wait: { readonly key: string; readonly reason: WaitReason; readonly untilMillis: number }
  ) => Effect.Effect<void>
}>()("@erp-client/client/ErpRateLimiter/WaitObserver") {}

/**
 * Until when each key is held: an endpoint paused at the server's request (429, `X-RateLimit-Remaining: 0`), or one
 * of its slots busy while its request is in flight and a window after it ended; the limit learned from the server for an endpoint
 * (`ServerLimit.learn`), and the log of the requests it counts (`Slots.logWindows`). In memory by default (`memory.ts`:
 * one process shares it across its fibers); in Redis for the shared limiter, so every process sees it.
 */
export class HoldStore extends Service<HoldStore, {
  /** Epoch ms until which `key` is held, 0 when it is not. */
  readonly get: (key: string) => Effect.Effect<number, StoreFailure>
  /** Holds `key` until `untilMillis`; a later hold wins over an earlier one, never the reverse. */
  readonly extend: (key: string, untilMillis: number) => Effect.Effect<void, StoreFailure>
  /**
   * Takes the slot `key` for a request that starts now, if its mark has lapsed: marks it in flight until `untilMillis`
   * (`Slots.inFlightFrom`) and gives the claim, for `settle`; else changes nothing and gives when the mark that keeps
   * it busy ends (epoch ms). Of two requests that find the slot free, one takes it.
   */
  readonly claim: (
    key: string,
    untilMillis: number
  ) => Effect.Effect<{ readonly claim: string } | { readonly busyUntil: number }, StoreFailure>
  /**
   * The request that took the slot `key` with `claim` ended: the slot is busy until `untilMillis` (`Slots.busyFrom`),
   * earlier or later than its in-flight mark. A mark that is another's is only lengthened. The entry a learned limit's
   * log was started with for this claim (`seedLogged`), if any, counts from `untilMillis - windowMillis` (the limiter's
   * window) instead of the claim's bound.
   */
  readonly settle: (
    key: string,
    claim: string,
    untilMillis: number,
    windowMillis: number
  ) => Effect.Effect<void, StoreFailure>
  /** The limit learned for `key` and not yet lapsed, if any. */
  readonly learned: (key: string) => Effect.Effect<Learned | undefined, StoreFailure>
  /**
   * Replaces the limit learned for `key` with `next` (`null`: forgets it), if it is still `expected`: of two users
   * that judged alike, one changes it (a 429 seen by two processes halves the limit once). Whether it changed it.
   */
  readonly setLearned: (
    key: string,
    expected: Learned | undefined,
    next: Learned | null
  ) => Effect.Effect<boolean, StoreFailure>
  /**
   * A place for a request under the learned limit of `key`: its entry in the log, in flight (`Slots.logInFlightAt`, for
   * its timeout `timeoutMillis`) until `settleLogged` tells its end, or how long until there would be room, taking
   * nothing.
   */
  readonly admitLogged: (
    key: string,
    windows: LogWindows,
    timeoutMillis: number | undefined
  ) => Effect.Effect<{ readonly entry: string } | { readonly waitMillis: number }, StoreFailure>
  /**
   * A logged request counts from `atMillis` (its late start, `Slots.logInFlightAt`) if that is later than it did; the
   * log is kept `keepMillis` after that.
   */
  readonly markLogged: (key: string, entry: string, keepMillis: number, atMillis: number) => Effect.Effect<
    void,
    StoreFailure
  >
  /**
   * A logged request ended: it counts from `atMillis` (`Slots.logEndedAt`), earlier or later than it did while in
   * flight; the log is kept `keepMillis` after that.
   */
  readonly settleLogged: (key: string, entry: string, keepMillis: number, atMillis: number) => Effect.Effect<
    void,
    StoreFailure
  >
  /** A logged request that never started: its place is given back. */
  readonly dropLogged: (key: string, entry: string) => Effect.Effect<void, StoreFailure>
  /** How many requests the log of `key` counts in `windowMillis`. */
  readonly countLogged: (key: string, windowMillis: number) => Effect.Effect<number, StoreFailure>
  /** Starts the log of a limit just learned with the requests the limiter's own slots count. */
  readonly seedLogged: (key: string, configured: Configured) => Effect.Effect<void, StoreFailure>
}>()("@erp-client/client/ErpRateLimiter/HoldStore") {}

// Each counter's unit is an attribute, as the OTLP exporters read it (observe.ts). The two times are sums over
// requests: each request that waits adds its own wait, so requests waiting side by side add up to more than the time
// that passed. Each request's wait, by reason, is `erp.client.rate_limit.wait.duration` (observe.ts).

export const spacingWait = counter(metrics.spacingWait)

export const pauseWait = counter(metrics.pauseWait)

export const waits = counter(metrics.waits)
