/**
 * The client-side rate limiter: at most `limit` request starts per (key, endpoint) in ANY interval of `window`, and
 * pauses an endpoint when the server says its budget is spent.
 *
 * @since 0.1.0
 */
import * as RateLimiter from "@effect/experimental/RateLimiter"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as LogLevel from "effect/LogLevel"
import * as Metric from "effect/Metric"
import * as SynchronizedRef from "effect/SynchronizedRef"

/**
 * @since 0.1.0
 * @category Models
 */
export interface Options {
  /** Request starts allowed per window (the server's 100). */
  readonly limit: number
  /** The server's window (30 seconds). */
  readonly window: Duration.DurationInput
  /**
   * Added to the window between two uses of one slot, so that network jitter between our start and the server's
   * clock cannot put `limit + 1` arrivals in one server window. Default: 2% of the window, at least 50 ms.
   */
  readonly margin?: Duration.DurationInput | undefined
}

/**
 * What one `acquire` cost (time spent waiting for our own spacing and for pauses the server asked for), and how to
 * hand its slot back.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Acquired {
  readonly spacedMillis: number
  readonly pausedMillis: number
  /**
   * Call once the request has ended, with the time (epoch ms) its answer began to arrive, or the time it failed or
   * was abandoned. The server saw the request at the latest then, so the slot stays busy for one window after it:
   * a request held up between `acquire` and the wire (a busy event loop, a slow connect) cannot bring the slot's
   * next request within a window of it as the server counts. Not calling it only loses that protection.
   */
  readonly release: (endedMillis: number) => Effect.Effect<void, StoreFailure>
}

/**
 * `acquire` would have to wait past the caller's deadline for a pause the server asked for.
 *
 * @since 0.1.0
 * @category Errors
 */
export class PauseBeyondDeadline extends Data.TaggedError("PauseBeyondDeadline")<{
  readonly pausedUntil: number
}> {}

/**
 * The limiter's store failed (only possible with a remote store).
 *
 * @since 0.1.0
 * @category Errors
 */
export class StoreFailure extends Data.TaggedError("StoreFailure")<{
  readonly description: string
}> {}

/**
 * @since 0.1.0
 * @category Models
 */
export interface Service {
  readonly limit: number
  readonly window: Duration.Duration
  readonly margin: Duration.Duration
  /**
   * Waits until a request under `key` may start, then returns. `deadline` (epoch ms) bounds how long it waits for
   * server-requested pauses; our own spacing is not bounded by it (it is bounded by the queue in front of us).
   */
  readonly acquire: (key: string, deadline?: number) => Effect.Effect<Acquired, PauseBeyondDeadline | StoreFailure>
  /** Pauses `key` until `untilMillis` (epoch ms); a later pause wins over an earlier one. */
  readonly pause: (key: string, untilMillis: number) => Effect.Effect<void, StoreFailure>
}

/**
 * @since 0.1.0
 * @category Tags
 */
export class ErpRateLimiter extends Context.Tag("@erp-client/client/ErpRateLimiter")<ErpRateLimiter, Service>() {}

/**
 * Why a request waited: our own spacing (`"client-limit"`) or a pause the server asked for (`"server-pause"`).
 *
 * @since 0.1.0
 * @category Models
 */
export type WaitReason = "client-limit" | "server-pause"

/**
 * Told about every wait before it starts, e.g. to show progress. Optional: provide it to the limiter's layer.
 *
 * @since 0.1.0
 * @category Tags
 */
export class WaitObserver extends Context.Tag("@erp-client/client/ErpRateLimiter/WaitObserver")<WaitObserver, {
  readonly onWait: (
    wait: { readonly key: string; readonly reason: WaitReason; readonly untilMillis: number }
  ) => Effect.Effect<void>
}>() {}

/**
 * Where pauses the server asked for are kept. In memory by default: one process shares them across its fibers.
 *
 * @since 0.1.0
 * @category Tags
 */
export class PauseStore extends Context.Tag("@erp-client/client/ErpRateLimiter/PauseStore")<PauseStore, {
  readonly get: (key: string) => Effect.Effect<number, StoreFailure>
  readonly extend: (key: string, untilMillis: number) => Effect.Effect<void, StoreFailure>
}>() {}

/**
 * @since 0.1.0
 * @category Layers
 */
export const layerPauseStoreMemory: Layer.Layer<PauseStore> = Layer.effect(
  PauseStore,
  Effect.map(Effect.suspend(() => SynchronizedRef.make(new Map<string, number>())), (ref) =>
    PauseStore.of({
      get: (key) => Effect.map(SynchronizedRef.get(ref), (pauses) => pauses.get(key) ?? 0),
      extend: (key, untilMillis) =>
        SynchronizedRef.update(ref, (pauses) => {
          if ((pauses.get(key) ?? 0) < untilMillis) pauses.set(key, untilMillis)
          return pauses
        })
    }))
)

/**
 * Time spent waiting for our own spacing, in milliseconds.
 *
 * @since 0.1.0
 * @category Metrics
 */
export const spacingWaitMillis = Metric.counter("erp_client_rate_limit_spacing_wait_ms", {
  description: "time requests waited for the client-side rate limit"
})

/**
 * Time spent waiting for pauses the server asked for (429, `X-RateLimit-Remaining: 0`), in milliseconds.
 *
 * @since 0.1.0
 * @category Metrics
 */
export const pauseWaitMillis = Metric.counter("erp_client_rate_limit_pause_wait_ms", {
  description: "time requests waited for pauses the server asked for"
})

/**
 * Requests that had to wait at all.
 *
 * @since 0.1.0
 * @category Metrics
 */
export const waits = Metric.counter("erp_client_rate_limit_waits", {
  description: "requests that waited for the rate limit"
})

const defaultMargin = (window: Duration.Duration): Duration.Duration =>
  Duration.millis(Math.max(50, Math.ceil(Duration.toMillis(window) * 0.02)))

const describe = (error: RateLimiter.RateLimiterError): string =>
  // The two experimental errors share one `_tag`; `reason` tells them apart.
  error.reason === "StoreError" ? error.message : "unexpected rate limit rejection"

/**
 * Builds the limiter on the `RateLimiterStore` of `@effect/experimental` (memory or Redis).
 *
 * Why not the store's algorithms as they are: its token bucket lets about 2L through in one window, and its
 * "fixed-window" is a spacing counter whose bursts can land L + 1 starts in one server window after an idle gap.
 * Neither keeps invariant 1. What this does instead, with the store's primitives unchanged:
 *
 * - L slots per key. Each slot is the store's fixed-window counter with `limit: 1`, i.e. a zero-burst spacer: two
 *   uses of one slot start at least `window + margin` apart.
 * - A shared ticket counter (also a store counter) deals requests to slots round-robin.
 *
 * Any L + 1 starts put two on one slot (pigeonhole), and those are more than `window` apart, so no interval of
 * length `window` holds more than L starts, wherever the server's window sits. With the tickets in order this is
 * exactly a sliding-window log: request n starts at max(now, start(n - L) + window + margin), so a burst of L goes
 * at once and the next L one window later. A reservation that is not used (interrupted fiber) only wastes a slot.
 *
 * The server counts arrivals, not our starts. The margin covers the usual gap between the two; for the rest, each
 * slot also carries a "busy until" mark (kept in the `PauseStore`, so it is shared like the counters): a request
 * marks its slot busy for `window + margin` from its actual start, and `release` extends that to `window` after
 * it ended. The next user of the slot waits for the mark. Since a request reaches the server between its start and
 * its end, two arrivals on one slot are at least `window` apart however late the first one left. It costs nothing
 * while requests end within the margin.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const make = (
  options: Options
): Effect.Effect<Service, never, RateLimiter.RateLimiterStore | PauseStore> =>
  Effect.gen(function*() {
    const store = yield* RateLimiter.RateLimiterStore
    const pauses = yield* PauseStore
    const limiter = yield* RateLimiter.make
    const observer = yield* Effect.serviceOption(WaitObserver)
    const observe = (key: string, reason: WaitReason, untilMillis: number): Effect.Effect<void> =>
      observer._tag === "Some"
        ? observer.value.onWait({ key, reason, untilMillis })
        : Effect.void
    const limit = options.limit
    const window = Duration.decode(options.window)
    const margin = options.margin === undefined ? defaultMargin(window) : Duration.decode(options.margin)
    const slotWindow = Duration.sum(window, margin)
    const windowMillis = Duration.toMillis(window)
    const slotWindowMillis = Duration.toMillis(slotWindow)

    const storeFailure = (error: RateLimiter.RateLimiterError) => new StoreFailure({ description: describe(error) })

    const reserve = (key: string) =>
      store.fixedWindow({ key: `${key}:ticket`, tokens: 1, refillRate: slotWindow, limit: undefined }).pipe(
        Effect.flatMap(([ticket]) => {
          const slot = `${key}:slot:${(ticket - 1) % limit}`
          return limiter.consume({
            key: slot,
            limit: 1,
            window: slotWindow,
            algorithm: "fixed-window",
            onExceeded: "delay"
          })
            .pipe(Effect.map((result) => ({ slot, delay: Duration.toMillis(result.delay) })))
        }),
        Effect.mapError(storeFailure)
      )

    const waitForPause = (
      key: string,
      deadline: number | undefined
    ): Effect.Effect<number, PauseBeyondDeadline | StoreFailure> =>
      Effect.gen(function*() {
        let paused = 0
        // Each pause is capped by whoever set it; the deadline bounds how many we sit through.
        while (true) {
          const until = yield* pauses.get(key)
          const now = yield* Clock.currentTimeMillis
          if (until <= now) return paused
          if (deadline !== undefined && until > deadline) {
            return yield* Effect.fail(new PauseBeyondDeadline({ pausedUntil: until }))
          }
          yield* observe(key, "server-pause", until)
          yield* Effect.logInfo(`waiting ${until - now} ms: the server asked to pause`).pipe(
            Effect.annotateLogs("erp.limiter_key", key)
          )
          yield* Effect.sleep(Duration.millis(until - now))
          paused += until - now
        }
      })

    const acquire = (key: string, deadline?: number): Effect.Effect<Acquired, PauseBeyondDeadline | StoreFailure> =>
      Effect.gen(function*() {
        let pausedMillis = 0
        let spacedMillis = 0
        const space = (delay: number) =>
          Effect.gen(function*() {
            yield* observe(key, "client-limit", (yield* Clock.currentTimeMillis) + delay)
            // A long wait is worth telling an operator about; the usual short spacing is not.
            yield* Effect.logWithLevel(
              delay >= 1_000 ? LogLevel.Info : LogLevel.Debug,
              `waiting ${delay} ms for the client-side rate limit`
            ).pipe(
              Effect.annotateLogs("erp.limiter_key", key)
            )
            yield* Effect.sleep(Duration.millis(delay))
            spacedMillis += delay
          })
        while (true) {
          pausedMillis += yield* waitForPause(key, deadline)
          const { delay, slot } = yield* reserve(key)
          if (delay > 0) yield* space(delay)
          // The slot's previous request may have ended (or started) late: it keeps the slot busy until a window
          // after that.
          while (true) {
            const busy = (yield* pauses.get(slot)) - (yield* Clock.currentTimeMillis)
            if (busy <= 0) break
            yield* space(busy)
          }
          // A pause set while we slept wins: starting late on a reserved slot could bring it closer than a window
          // to that slot's next use, so the reservation is dropped (a wasted slot is safe) and we queue again.
          const until = yield* pauses.get(key)
          const now = yield* Clock.currentTimeMillis
          if (until <= now) {
            yield* pauses.extend(slot, now + slotWindowMillis)
            if (spacedMillis > 0 || pausedMillis > 0) {
              yield* Metric.increment(waits)
              yield* Metric.incrementBy(spacingWaitMillis, spacedMillis)
              yield* Metric.incrementBy(pauseWaitMillis, pausedMillis)
            }
            return {
              spacedMillis,
              pausedMillis,
              release: (endedMillis: number) => pauses.extend(slot, endedMillis + windowMillis)
            }
          }
        }
      })

    return ErpRateLimiter.of({
      limit,
      window,
      margin,
      acquire,
      pause: (key, untilMillis) => pauses.extend(key, untilMillis)
    })
  })

/**
 * The limiter on a store you provide (e.g. `@effect/experimental/RateLimiter/Redis`) and pauses in memory.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layer = (
  options: Options
): Layer.Layer<ErpRateLimiter, never, RateLimiter.RateLimiterStore | PauseStore> =>
  Layer.effect(ErpRateLimiter, make(options))

/**
 * The limiter shared by every fiber of this process: memory store, memory pauses.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layerMemory = (options: Options): Layer.Layer<ErpRateLimiter> =>
  // Fresh: Effect memoizes a layer value process-wide while it is in use, which would let two clients built with
  // different settings share counters. One limiter layer, one store.
  layer(options).pipe(Layer.provide([Layer.fresh(RateLimiter.layerStoreMemory), Layer.fresh(layerPauseStoreMemory)]))

/**
 * What the server said about its limit in one response.
 *
 * @since 0.1.0
 * @category Models
 */
export interface ServerLimit {
  readonly limit: number | undefined
  readonly remaining: number | undefined
  /** When the server's window resets, epoch ms, already capped to `now + maxWait`. */
  readonly resetAt: number | undefined
}

const headerNumber = (headers: Readonly<Record<string, string | undefined>>, name: string): number | undefined => {
  const raw = headers[name]
  if (raw === undefined) return undefined
  const value = Number(raw.trim())
  return raw.trim() === "" || !Number.isFinite(value) ? undefined : value
}

/**
 * Reads `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset`. The contract does not give the unit of
 * the reset, so all three plausible ones are accepted: epoch milliseconds (>= 1e12), epoch seconds (>= 1e9) and
 * seconds from now (anything smaller). The wait it implies is capped at `maxWaitMillis`, so a wrong guess or a
 * hostile header cannot park a client for hours.
 *
 * @since 0.1.0
 * @category Server headers
 */
export const parseServerLimit = (
  headers: Readonly<Record<string, string | undefined>>,
  nowMillis: number,
  maxWaitMillis: number
): ServerLimit => {
  const reset = headerNumber(headers, "x-ratelimit-reset")
  let resetAt: number | undefined
  if (reset !== undefined && reset >= 0) {
    const at = reset >= 1e12 ? reset : reset >= 1e9 ? reset * 1000 : nowMillis + reset * 1000
    resetAt = Math.min(Math.max(at, nowMillis), nowMillis + maxWaitMillis)
  }
  return {
    limit: headerNumber(headers, "x-ratelimit-limit"),
    remaining: headerNumber(headers, "x-ratelimit-remaining"),
    resetAt
  }
}
