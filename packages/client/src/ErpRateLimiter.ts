/**
 * The client-side rate limiter: at most `limit` request starts per (key, endpoint) in ANY interval of `window`, and
 * pauses an endpoint when the server says its budget is spent.
 *
 * @since 0.1.0
 */
import type * as ServerLimit from "@erp-client/kernel/ServerLimit"
import * as Settings from "@erp-client/kernel/Settings"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Environment from "./Environment.js"
import * as ErpConfig from "./ErpConfig.js"
import * as Checks from "./internal/checks.js"
import {
  type ConfigError,
  configInteger,
  type ConfigWrap,
  type DurationInput,
  Result,
  Service as ServiceClass,
  toDuration
} from "./internal/edition.js"
import * as Internal from "./internal/limiter.js"
import * as Memory from "./internal/memory.js"
import * as Slots from "./internal/slots.js"

/**
 * @since 0.1.0
 * @category Models
 */
export interface Options {
  /** Request starts allowed per window and endpoint (default 100, the contract's limit). */
  readonly limit?: number | undefined
  /** The server's window (default 30 seconds). */
  readonly window?: DurationInput | undefined
  /**
   * Added to the window between two uses of one slot, so that network jitter between our start and the server's
   * clock cannot put `limit + 1` arrivals in one server window. Default: 2% of the window, at least 50 ms.
   */
  readonly margin?: DurationInput | undefined
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

/**
 * The default of every optional setting of the limiter, as data: the kernel's (`Settings.defaults`), as the
 * configuration reference (docs/configuration.md) shows them. The margin is a share of the window, at least
 * `margin.atLeast`.
 *
 * @example
 * ```ts
 * import { ErpRateLimiter } from "@erp-client/client"
 *
 * console.log(ErpRateLimiter.defaults.limit, ErpRateLimiter.defaults.window) // => 100 30 seconds
 * ```
 *
 * @since 0.1.0
 * @category Defaults
 */
export const defaults = {
  limit: Settings.defaults.limit,
  window: Settings.durationText(Settings.defaults.windowMillis),
  margin: {
    share: Settings.defaults.marginShare,
    atLeast: Settings.durationText(Settings.defaults.marginAtLeastMillis)
  }
} as const

const defaultMargin = (window: Duration.Duration): Duration.Duration =>
  Duration.millis(Settings.defaultMarginMillis(Duration.toMillis(window)))

/**
 * Checks options and fills in the defaults: 100 requests per 30 seconds, the contract's limit.
 *
 * @example
 * ```ts
 * import { ErpRateLimiter } from "@erp-client/client"
 * import { Duration, Either } from "effect"
 *
 * // The margin defaults to 2% of the window
 * const limits = Either.getOrThrow(ErpRateLimiter.resolve({ limit: 50, window: "10 seconds" }))
 * console.log(limits.limit, Duration.toMillis(limits.margin)) // => 50 200
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const resolve = (options: Options = {}): Result<Resolved, ConfigError> =>
  Result.flatMap(
    Checks.positiveDuration("window", options.window ?? Settings.defaults.windowMillis),
    (window) =>
      Result.map(Checks.positiveInt("limit", options.limit ?? Settings.defaults.limit), (limit) => ({
        limit,
        window,
        margin: options.margin === undefined ? defaultMargin(window) : toDuration(options.margin)
      }))
  )

/**
 * The limit from the environment: `ERP_RATE_LIMIT` (requests per window) and `ERP_RATE_WINDOW` (`"30 seconds"`, or a
 * bare number of seconds), both optional.
 *
 * @since 0.1.0
 * @category Config
 */
export const fromEnv: Config.Config<Options> = Config.all({
  limit: Checks.optional(configInteger(Environment.limiter.limit)),
  window: Checks.optional(Checks.duration(Environment.limiter.window))
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
  /** When the request was let go (epoch ms). */
  readonly startedMillis: number
  /**
   * The limit the request was admitted under, and its window (ms): the limiter's own, or one learned from the server
   * (kept beside the limiter's own: the request was admitted under both).
   */
  readonly limit: number
  readonly windowMillis: number
  /** The limit learned from the server for the key when the request was admitted, if any (see `learn`). */
  readonly learned: Learned | undefined
  /**
   * Call once the request has ended, with the time (epoch ms) it ended: its answer read, or it failed or was
   * abandoned. Until then the request holds its slot (it may still reach the server: a slow connection, a busy event
   * loop, a queue for a socket); the server saw it at the latest when it ended, so the slot stays busy for one window
   * after that, and at least the window and the margin after its start. Not calling it keeps the slot until the
   * request's timeout and a window (and the margin) have passed (`acquire`'s `timeoutMillis`), as for a process that
   * died with its request in flight.
   */
  readonly release: (endedMillis: number) => Effect.Effect<void, StoreFailure>
}

/**
 * `acquire` would have to wait past the caller's deadline for a pause the server asked for.
 *
 * @since 0.1.0
 * @category Errors
 */
export const PauseBeyondDeadline = Internal.PauseBeyondDeadline

/**
 * @since 0.1.0
 * @category Errors
 */
export type PauseBeyondDeadline = Internal.PauseBeyondDeadline

/**
 * A bounded `acquire` could not start its request by its bound: `startsAt` (epoch ms) is the earliest it could have.
 * It took no place in the limit.
 *
 * @since 0.1.0
 * @category Errors
 */
export const WaitBeyondBound = Internal.WaitBeyondBound

/**
 * @since 0.1.0
 * @category Errors
 */
export type WaitBeyondBound = Internal.WaitBeyondBound

/**
 * The limiter's store failed (only possible with a remote store).
 *
 * @since 0.1.0
 * @category Errors
 */
export const StoreFailure = Internal.StoreFailure

/**
 * @since 0.1.0
 * @category Errors
 */
export type StoreFailure = Internal.StoreFailure

/**
 * A limit learned from the server for a key, stricter than the limiter's own: `limit` requests in any `windowMillis`,
 * how it was learned (`X-RateLimit-Limit` and the resets, or 429s alone), since when (epoch ms), and how long it holds
 * unless heard again.
 *
 * @since 0.1.0
 * @category Models
 */
export type Learned = ServerLimit.Learned

/**
 * What one answer said of the server's limit: `X-RateLimit-Limit` and its usable reset when sent, whether it was a
 * 429, and when its request started (epoch ms).
 *
 * @since 0.1.0
 * @category Models
 */
export type Heard = ServerLimit.Heard

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
   * `bound` (epoch ms) bounds the whole wait: a request that could not start by then fails at once with
   * `WaitBeyondBound`, taking no place in the limit. `timeoutMillis` is the longest the request can be in flight (its
   * timeout; default 30 s, the client's default): its slot is held that long and a window more at most when `release`
   * is never called (a process that died), in memory and in Redis alike.
   */
  readonly acquire: (
    key: string,
    deadline?: number,
    bound?: number,
    timeoutMillis?: number
  ) => Effect.Effect<Acquired, PauseBeyondDeadline | WaitBeyondBound | StoreFailure>
  /**
   * Tells the limiter what the answer to a request it admitted (`acquired`) said of the server's limit. A limit
   * stricter than its own (`X-RateLimit-Limit` in the window its resets tell, or found from 429s alone) is kept for
   * `key` beside its own, shared like the rest of its store, and requests wait for both; a queued request plans again
   * when it changes (docs/rate-limit.md, "What the limiter learns").
   */
  readonly learn: (key: string, acquired: Acquired, heard: Heard) => Effect.Effect<void, StoreFailure>
  /** Pauses `key` until `untilMillis` (epoch ms); a later pause wins over an earlier one. */
  readonly pause: (key: string, untilMillis: number) => Effect.Effect<void, StoreFailure>
  /**
   * How many requests under `key` the limiter counts against the current window (the learned one, when it keeps a
   * limit learned from the server): those started within the last window (or ended within it), by every user of its
   * store. Compared with the count the server reports, it tells whether someone else spends the same budget.
   */
  readonly inUse: (key: string) => Effect.Effect<number, StoreFailure>
}

/**
 * @since 0.1.0
 * @category Services
 */
export class ErpRateLimiter extends ServiceClass<ErpRateLimiter, Service>()("@erp-client/client/ErpRateLimiter") {}

/**
 * Why a request waited: our own spacing (`"client-limit"`) or a pause the server asked for (`"server-pause"`).
 *
 * @since 0.1.0
 * @category Models
 */
export type WaitReason = Internal.WaitReason

/**
 * Told about every wait before it starts, e.g. to show progress. Optional: provide it to the limiter's layer.
 *
 * @since 0.1.0
 * @category Services
 */
export const WaitObserver = Internal.WaitObserver

/**
 * @since 0.1.0
 * @category Services
 */
export type WaitObserver = Internal.WaitObserver

/**
 * Time spent waiting for our own spacing, `erp.client.rate_limit.spacing_wait`, in seconds, monotonic: a sum over
 * requests, each adding its own wait, so requests waiting side by side add up to more than the time that passed (eight
 * requests waiting one second together add eight). Each request's wait is `ErpClient.rateLimitWaitDuration`.
 *
 * @since 0.1.0
 * @category Metrics
 */
export const spacingWait = Internal.spacingWait

/**
 * Time spent waiting for pauses the server asked for (429, `X-RateLimit-Remaining: 0`),
 * `erp.client.rate_limit.pause_wait`, in seconds, monotonic: a sum over requests, as `spacingWait` is (a pause of one
 * second that holds eight requests adds eight). Each request's wait is `ErpClient.rateLimitWaitDuration`.
 *
 * @since 0.1.0
 * @category Metrics
 */
export const pauseWait = Internal.pauseWait

/**
 * Requests that had to wait at all, `erp.client.rate_limit.waits`, unit `{request}`, monotonic.
 *
 * @since 0.1.0
 * @category Metrics
 */
export const waits = Internal.waits

/**
 * A limiter in this process's memory: at most `limit` request starts per key in ANY interval of `window`, whatever
 * the server's window alignment, shared by the fibers that use it (`internal/slots.ts` tells how, and
 * docs/ARCHITECTURE.md, "Rate limit", why a token bucket or a fixed window would not do).
 *
 * @example
 * ```ts
 * import { ErpRateLimiter } from "@erp-client/client"
 * import { Clock, Effect } from "effect"
 *
 * // Requests of your own under the limit: acquire a place, send, hand it back
 * const program = Effect.gen(function*() {
 *   const limiter = yield* ErpRateLimiter.make({ limit: 10, window: "1 second" })
 *   const { release } = yield* limiter.acquire("reports:partner/list")
 *   // … send the request …
 *   yield* release(yield* Clock.currentTimeMillis)
 *   return yield* limiter.inUse("reports:partner/list")
 * })
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const make = (options: Options = {}): Effect.Effect<Service, ErpConfig.ErpConfigError> =>
  Effect.flatMap(
    Result.toEffect(Result.mapError(resolve(options), (error) => ErpConfig.fromConfigError(error, "options"))),
    inMemory
  )

const inMemory = (resolved: Resolved): Effect.Effect<Service> => Effect.provide(Slots.make(resolved), Memory.layer)

/**
 * The limiter in this process's memory, shared by every fiber of the client it is provided to. For several processes
 * on one API key, use `ErpRateLimiterRedis` instead.
 *
 * @example
 * ```ts
 * import { FetchHttpClient } from "@effect/platform"
 * import { ErpClient, ErpRateLimiter } from "@erp-client/client"
 * import { Layer, Redacted } from "effect"
 *
 * // 60 of the contract's 100 requests per 30 seconds, leaving the rest to another tool on the same key
 * const ErpLive = ErpClient.layer({
 *   baseUrl: "https://erp.example.com/api/",
 *   apiKey: Redacted.make("sk-live-4f9a2c")
 * }).pipe(
 *   Layer.provide(ErpRateLimiter.layer({ limit: 60, window: "30 seconds" })),
 *   Layer.provide(FetchHttpClient.layer)
 * )
 * ```
 *
 * @since 0.1.0
 * @category Layers
 */
export const layer = (options: Options = {}): Layer.Layer<ErpRateLimiter, ErpConfig.ErpConfigError> =>
  Layer.effect(ErpRateLimiter, make(options))

/**
 * The limiter in memory, its limit read through `Config` (from the environment by default: see `fromEnv`).
 *
 * @example
 * ```ts
 * import { ErpRateLimiter } from "@erp-client/client"
 * import { Config } from "effect"
 *
 * // ERP_RATE_LIMIT and ERP_RATE_WINDOW, or the contract's 100 per 30 seconds without them
 * const RateLimitLive = ErpRateLimiter.layerConfig()
 *
 * // Or a variable of your own
 * const CrmRateLimit = ErpRateLimiter.layerConfig({ limit: Config.integer("CRM_ERP_RATE_LIMIT") })
 * ```
 *
 * @since 0.1.0
 * @category Layers
 */
export const layerConfig = (
  config: ConfigWrap<Options> = fromEnv
): Layer.Layer<ErpRateLimiter, ErpConfig.ErpConfigError> =>
  Layer.effect(
    ErpRateLimiter,
    Effect.flatMap(
      Effect.mapError(
        Effect.flatMap(Config.unwrap(config), (options) => Result.toEffect(resolve(options))),
        // Settings read by `fromEnv` are named by their variables; those of a `Config` of the user's, by the option.
        (error) => ErpConfig.fromConfigError(error, config === fromEnv ? "variables" : "options")
      ),
      inMemory
    )
  )
