/**
 * The client-side rate limiter: at most `limit` request starts per (key, endpoint) in ANY interval of `window`, and
 * pauses an endpoint when the server says its budget is spent.
 *
 * @since 0.1.0
 */
import * as RateLimiter from "@effect/experimental/RateLimiter"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Settings from "./internal/settings.js"
import * as Slots from "./internal/slots.js"

/**
 * @since 0.1.0
 * @category Models
 */
export interface Options {
  /** Request starts allowed per window and endpoint (default 100, the contract's limit). */
  readonly limit?: number | undefined
  /** The server's window (default 30 seconds). */
  readonly window?: Duration.DurationInput | undefined
  /**
   * Added to the window between two uses of one slot, so that network jitter between our start and the server's
   * clock cannot put `limit + 1` arrivals in one server window. Default: 2% of the window, at least 50 ms.
   */
  readonly margin?: Duration.DurationInput | undefined
}

/**
 * The limiter's settings, checked and with defaults filled in.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Resolved {
  readonly limit: number
  readonly window: Duration.Duration
  readonly margin: Duration.Duration
}

const defaultMargin = (window: Duration.Duration): Duration.Duration =>
  Duration.millis(Math.max(50, Math.ceil(Duration.toMillis(window) * 0.02)))

/**
 * Checks options and fills in the defaults: 100 requests per 30 seconds, the contract's limit.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const resolve = (options: Options = {}): Either.Either<Resolved, ConfigError.ConfigError> =>
  Either.gen(function*() {
    const window = yield* Settings.positiveDuration("rateWindow", options.window ?? Duration.seconds(30))
    return {
      limit: yield* Settings.positiveInt("rateLimit", options.limit ?? 100),
      window,
      margin: options.margin === undefined ? defaultMargin(window) : Duration.decode(options.margin)
    }
  })

/**
 * The limit from the environment: `ERP_RATE_LIMIT` (requests per window) and `ERP_RATE_WINDOW` (`"30 seconds"`, or a
 * bare number of seconds), both optional.
 *
 * @since 0.1.0
 * @category Config
 */
export const fromEnv: Config.Config<Options> = Config.all({
  limit: Settings.optional(Config.integer("ERP_RATE_LIMIT")),
  window: Settings.optional(Settings.duration("ERP_RATE_WINDOW"))
})

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
   * Call once the request has ended, with the time (epoch ms) it ended: its answer read, or it failed or was
   * abandoned. The server saw the request at the latest then, so the slot stays busy for one window after it:
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
  /**
   * How many requests under `key` the limiter counts against the current window: those started within the last
   * window (or ended within it), by every user of its store. Compared with the count the server reports, it tells
   * whether someone else spends the same budget.
   */
  readonly inUse: (key: string) => Effect.Effect<number, StoreFailure>
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
 * Until when each key is held: an endpoint paused at the server's request (429, `X-RateLimit-Remaining: 0`), or one
 * of its slots busy until a window after its last request ended. In memory by default (one process shares it across
 * its fibers); `ErpRateLimiterRedis` keeps it in Redis, shared by every process.
 *
 * @since 0.1.0
 * @category Tags
 */
export class HoldStore extends Context.Tag("@erp-client/client/ErpRateLimiter/HoldStore")<HoldStore, {
  /** Epoch ms until which `key` is held, 0 when it is not. */
  readonly get: (key: string) => Effect.Effect<number, StoreFailure>
  /** Holds `key` until `untilMillis`; a later hold wins over an earlier one, never the reverse. */
  readonly extend: (key: string, untilMillis: number) => Effect.Effect<void, StoreFailure>
}>() {}

/**
 * A `HoldStore` in this process's memory.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const makeHoldStoreMemory: Effect.Effect<HoldStore["Type"]> = Effect.map(
  Effect.sync(() => new Map<string, number>()),
  (holds) =>
    HoldStore.of({
      get: (key) => Effect.sync(() => holds.get(key) ?? 0),
      extend: (key, untilMillis) =>
        Effect.sync(() => {
          if ((holds.get(key) ?? 0) < untilMillis) holds.set(key, untilMillis)
        })
    })
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

/**
 * Builds the limiter on the `RateLimiterStore` of `@effect/experimental` (memory or Redis).
 *
 * Why not the store's algorithms as they are: its token bucket lets about 2L through in one window, and its
 * "fixed-window" is a spacing counter whose bursts can land L + 1 starts in one server window after an idle gap.
 * Neither keeps the limit in every window (docs/ARCHITECTURE.md, "Rate limit"). What this does instead, with the
 * store's primitives unchanged:
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
 * slot also carries a "busy until" mark (kept in the `HoldStore`, so it is shared like the counters): a request
 * marks its slot busy for `window + margin` from its actual start, and `release` extends that to `window` after
 * it ended. The next user of the slot waits for the mark. Since a request reaches the server between its start and
 * its end, two arrivals on one slot are at least `window` apart however late the first one left. It costs nothing
 * while requests end within the margin.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const make = (
  options: Resolved
): Effect.Effect<Service, never, RateLimiter.RateLimiterStore | HoldStore> => Slots.make(options)

// The memory stores, new for each limiter: Effect shares a layer value between builds alive at the same time, so the
// constant `RateLimiter.layerStoreMemory` would hand two limiters (other settings, other TestClock) one counter map.
const memoryStores = Layer.fresh(
  Layer.merge(RateLimiter.layerStoreMemory, Layer.effect(HoldStore, makeHoldStoreMemory))
)

/**
 * The limiter on new stores in this process's memory.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const makeMemory = (options: Resolved): Effect.Effect<Service> => Effect.provide(make(options), memoryStores)

/**
 * The limiter in this process's memory, shared by every fiber of the client it is provided to. For several processes
 * on one API key, use `ErpRateLimiterRedis` instead.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layer = (options: Options = {}): Layer.Layer<ErpRateLimiter, ConfigError.ConfigError> =>
  Layer.effect(ErpRateLimiter, Effect.flatMap(resolve(options), makeMemory))

/**
 * The limiter in memory, its limit read through `Config` (from the environment by default: see `fromEnv`).
 *
 * @since 0.1.0
 * @category Layers
 */
export const layerConfig = (
  config: Config.Config.Wrap<Options> = fromEnv
): Layer.Layer<ErpRateLimiter, ConfigError.ConfigError> => Layer.unwrapEffect(Effect.map(Config.unwrap(config), layer))
