/**
 * The rate limiter shared through Redis: every process that uses one API key keeps one budget per endpoint, and a
 * pause one of them reads from the server's headers pauses them all. Needs the optional peer dependency `ioredis`;
 * a memory-only user never loads this module.
 *
 * @since 0.1.0
 */
import * as RateLimiter from "@effect/experimental/RateLimiter"
import * as LimiterText from "@erp-client/kernel/LimiterText"
import * as Outage from "@erp-client/kernel/Outage"
import * as Settings from "@erp-client/kernel/Settings"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as Environment from "./Environment.js"
import * as ErpRateLimiter from "./ErpRateLimiter.js"
import * as Checks from "./internal/checks.js"
import * as Limiter from "./internal/limiter.js"
import * as Redis from "./internal/redis.js"
import * as Slots from "./internal/slots.js"

/**
 * What a request does when the shared limiter's Redis is unreachable or fails: `"fail"` fails it with
 * `RateLimiterUnavailable` and sends nothing; `"local"` falls back to this process's memory limiter until Redis
 * answers again.
 *
 * @since 0.1.0
 * @category Models
 */
export type FailurePolicy = Outage.FailurePolicy

/**
 * @since 0.1.0
 * @category Models
 */
export interface Options extends ErpRateLimiter.Options {
  /**
   * `redis://[[user]:password@]host[:port][/db]` or `rediss://…` (TLS). Never printed: it may hold a password, so pass
   * it `Redacted`; a plain string is wrapped at once.
   */
  readonly url: Redacted.Redacted<string> | string
  /** Prefix of every key (default `"erp-client:"`). Processes share a budget when they share Redis and prefix. */
  readonly prefix?: string | undefined
  /** What a request does while Redis is unreachable or failing (default `"fail"`). */
  readonly onFailure?: FailurePolicy | undefined
  /** Bound on connecting and on each Redis call (default 1 second). */
  readonly timeout?: Duration.DurationInput | undefined
}

/**
 * The settings, checked and with defaults filled in.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Resolved extends ErpRateLimiter.Resolved {
  readonly url: Redacted.Redacted<string>
  readonly prefix: string
  readonly onFailure: FailurePolicy
  readonly timeout: Duration.Duration
}

/**
 * The default of every optional setting of the shared limiter besides the limit's own (`ErpRateLimiter.defaults`), as
 * data: `resolve` fills them in from here, and the configuration reference (docs/configuration.md) shows them.
 *
 * @example
 * ```ts
 * import { ErpRateLimiterRedis } from "@erp-client/client"
 *
 * console.log(ErpRateLimiterRedis.defaults.prefix, ErpRateLimiterRedis.defaults.onFailure) // => erp-client: fail
 * ```
 *
 * @since 0.1.0
 * @category Defaults
 */
export const defaults = {
  prefix: Settings.defaults.redisPrefix,
  onFailure: Settings.defaults.redisOnFailure,
  timeout: Checks.durationText(Settings.defaults.redisTimeoutMillis)
} as const satisfies { readonly prefix: string; readonly onFailure: FailurePolicy; readonly timeout: string }

/**
 * Checks a Redis URL without ever putting it in a message (it may hold a password): `redis://` or `rediss://`, a
 * host, and nothing after the database number but ioredis options in the query.
 *
 * @example
 * ```ts
 * import { ErpRateLimiterRedis } from "@erp-client/client"
 * import { Either } from "effect"
 *
 * // The URL comes back Redacted: its password never shows
 * const url = ErpRateLimiterRedis.validateUrl("redis://:s3cret@redis.internal:6379/2")
 * console.log(String(Either.getOrThrow(url))) // => <redacted>
 * console.log(Either.isLeft(ErpRateLimiterRedis.validateUrl("http://redis.internal:6379"))) // => true
 * ```
 *
 * @since 0.1.0
 * @category Validation
 */
export const validateUrl = (
  input: Redacted.Redacted<string> | string
): Either.Either<Redacted.Redacted<string>, ConfigError.ConfigError> => {
  const redacted = Redacted.isRedacted(input) ? input : Redacted.make(input)
  return Either.map(Checks.checked(Settings.checkRedisUrl(Redacted.value(redacted))), () => redacted)
}

/**
 * Checks options and fills in the defaults.
 *
 * @example
 * ```ts
 * import { ErpRateLimiterRedis } from "@erp-client/client"
 * import { Duration, Either, Redacted } from "effect"
 *
 * const settings = Either.getOrThrow(
 *   ErpRateLimiterRedis.resolve({ url: Redacted.make("redis://redis.internal:6379/0"), onFailure: "local" })
 * )
 * console.log(settings.prefix, settings.onFailure, settings.limit, Duration.format(settings.timeout))
 * // => erp-client: local 100 1s
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const resolve = (options: Options): Either.Either<Resolved, ConfigError.ConfigError> =>
  Either.gen(function*() {
    const { onFailure, prefix } = yield* Checks.checked(Settings.checkRedisKeys(options))
    return {
      ...(yield* ErpRateLimiter.resolve(options)),
      url: yield* validateUrl(options.url),
      prefix,
      onFailure,
      timeout: yield* Checks.positiveDuration("redis.timeout", options.timeout ?? Settings.defaults.redisTimeoutMillis)
    }
  })

/**
 * The shared limiter's settings from the environment: `ERP_REDIS_URL` (read as `Redacted`), and optionally
 * `ERP_REDIS_PREFIX`, `ERP_REDIS_ON_FAILURE` (`fail` or `local`), `ERP_REDIS_TIMEOUT`, and the limit itself
 * (`ERP_RATE_LIMIT`, `ERP_RATE_WINDOW`, as `ErpRateLimiter.fromEnv`).
 *
 * @since 0.1.0
 * @category Config
 */
export const fromEnv: Config.Config<Options> = Config.all({
  limits: ErpRateLimiter.fromEnv,
  url: Config.redacted(Environment.redis.url),
  prefix: Checks.optional(Config.string(Environment.redis.prefix)),
  onFailure: Checks.optional(Config.literal("fail", "local")(Environment.redis.onFailure)),
  timeout: Checks.optional(Checks.duration(Environment.redis.timeout))
}).pipe(Config.map(({ limits, ...redis }) => ({ ...limits, ...redis })))

/**
 * Builds the shared limiter: the memory limiter's algorithm (slots and ticket, `internal/slots.ts`) on Redis counters,
 * and the holds (the server's pauses, the slots' busy marks) in Redis, so every process with the same Redis, prefix
 * and API key shares them. Keys: `${prefix}erp:${sha256(apiKey) prefix}:${endpoint}:ticket`, `…:slot:${n}`, and the
 * holds `…:hold` (the endpoint paused for the server) and `…:slot:${n}:hold` (the slot busy); all expire on their
 * own.
 *
 * When Redis fails, `onFailure` decides: `"fail"` fails the call with `StoreFailure` (the client's
 * `RateLimiterUnavailable`), so nothing is sent blind; `"local"` uses an in-process memory limiter instead, which
 * keeps the limit for this process only. Either way one warning is logged per outage (never the URL or its
 * password), Redis is tried again at most once a second, and its return is logged.
 *
 * @example
 * ```ts
 * import { FetchHttpClient } from "@effect/platform"
 * import { ErpClient, ErpRateLimiter, ErpRateLimiterRedis } from "@erp-client/client"
 * import { Partner } from "@erp-client/core"
 * import { Effect, Redacted } from "effect"
 *
 * // A short job on the shared limit: connect, look up partner 7, disconnect
 * const job = Effect.gen(function*() {
 *   const limiter = yield* ErpRateLimiterRedis.make({ url: Redacted.make("redis://redis.internal:6379/0") })
 *   const erp = yield* ErpClient.make({
 *     baseUrl: "https://erp.example.com/api/",
 *     apiKey: Redacted.make("sk-live-4f9a2c")
 *   }).pipe(Effect.provideService(ErpRateLimiter.ErpRateLimiter, limiter))
 *   return yield* erp.get("partner/get", Partner.Partner, { params: [["id", "7"]], selector: "id=7" })
 * }).pipe(Effect.scoped, Effect.provide(FetchHttpClient.layer))
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const make = (
  options: Options
): Effect.Effect<ErpRateLimiter.Service, ConfigError.ConfigError, Scope.Scope> =>
  Effect.gen(function*() {
    const settings = yield* resolve(options)
    const connection = yield* Redis.connect(settings.url, settings.prefix, settings.timeout)
    const remote = yield* Slots.make(settings).pipe(
      Effect.provideService(RateLimiter.RateLimiterStore, Redis.makeStore(connection, settings.prefix)),
      Effect.provideService(Limiter.HoldStore, Redis.makeHoldStore(connection, settings.prefix))
    )
    const local = settings.onFailure === "local"
      ? yield* ErpRateLimiter.make(settings)
      : undefined

    // The failure policy's state and decisions are the kernel's (`Outage`): one warning per outage, one line at its
    // end, Redis tried again at most once a second, and what each operation does meanwhile.
    const outage = Outage.makeState()
    const said = (line: Effect.Effect<void>, say: boolean) => say ? line : Effect.void

    const guarded = <A, E>(
      operation: Outage.Operation,
      use: Effect.Effect<A, E | ErpRateLimiter.StoreFailure>,
      otherwise: () => Effect.Effect<A, E | ErpRateLimiter.StoreFailure>
    ): Effect.Effect<A, E | ErpRateLimiter.StoreFailure> => {
      const fallback = (error: ErpRateLimiter.StoreFailure) =>
        Outage.fallback(settings.onFailure, operation) === "fail" ? Effect.fail(error) : otherwise()
      return Effect.flatMap(Clock.currentTimeMillis, (now) => {
        // While down and before the next probe: the last failure again, at once.
        const down = Outage.shortCircuit(outage, now)
        if (down !== undefined) return fallback(new ErpRateLimiter.StoreFailure({ description: down }))
        return use.pipe(
          Effect.tap(() =>
            Effect.flatMap(Clock.currentTimeMillis, (now) => {
              const downMillis = Outage.answered(outage, now)
              return said(Effect.logInfo(LimiterText.recovered(downMillis ?? 0)), downMillis !== undefined)
            })
          ),
          Effect.catchIf(
            (error): error is ErpRateLimiter.StoreFailure => error instanceof ErpRateLimiter.StoreFailure,
            (error) =>
              Effect.flatMap(Clock.currentTimeMillis, (now) =>
                said(
                  Effect.logWarning(LimiterText.outage(error.description, local !== undefined)),
                  Outage.failed(outage, now, error.description)
                )).pipe(Effect.zipRight(fallback(error)))
          )
        )
      })
    }

    return ErpRateLimiter.ErpRateLimiter.of({
      limit: remote.limit,
      window: remote.window,
      margin: remote.margin,
      acquire: (key, deadline, bound) =>
        guarded(
          "acquire",
          Effect.map(remote.acquire(key, deadline, bound), (acquired) => ({
            ...acquired,
            release: (endedMillis: number) => guarded("release", acquired.release(endedMillis), () => Effect.void)
          })),
          () => local!.acquire(key, deadline, bound)
        ),
      learn: (key, acquired, heard) => guarded("learn", remote.learn(key, acquired, heard), () => Effect.void),
      // Kept locally too under `local`, so an outage that starts now still honours it.
      pause: (key, untilMillis) =>
        Effect.zipRight(
          local === undefined ? Effect.void : local.pause(key, untilMillis),
          guarded("pause", remote.pause(key, untilMillis), () => Effect.void)
        ),
      inUse: (key) => guarded("inUse", remote.inUse(key), () => local!.inUse(key))
    })
  })

/**
 * The shared limiter as a Layer; its Redis connection is closed when the layer is released.
 *
 * @example
 * ```ts
 * import { FetchHttpClient } from "@effect/platform"
 * import { ErpClient, ErpRateLimiterRedis } from "@erp-client/client"
 * import { Layer, Redacted } from "effect"
 *
 * // Every process on this API key shares one budget per endpoint; while Redis is down, each keeps its own
 * const ErpLive = ErpClient.layer({
 *   baseUrl: "https://erp.example.com/api/",
 *   apiKey: Redacted.make("sk-live-4f9a2c")
 * }).pipe(
 *   Layer.provide(
 *     ErpRateLimiterRedis.layer({ url: Redacted.make("redis://redis.internal:6379/0"), onFailure: "local" })
 *   ),
 *   Layer.provide(FetchHttpClient.layer)
 * )
 * ```
 *
 * @since 0.1.0
 * @category Layers
 */
export const layer = (options: Options): Layer.Layer<ErpRateLimiter.ErpRateLimiter, ConfigError.ConfigError> =>
  Layer.scoped(ErpRateLimiter.ErpRateLimiter, make(options))

/**
 * The shared limiter, its settings read through `Config` (from the environment by default: see `fromEnv`).
 *
 * @example
 * ```ts
 * import { FetchHttpClient } from "@effect/platform"
 * import { ErpClient, ErpRateLimiterRedis } from "@erp-client/client"
 * import { Layer } from "effect"
 *
 * // Everything from the environment: ERP_BASE_URL, ERP_API_KEY, ERP_REDIS_URL, ERP_REDIS_ON_FAILURE, …
 * const ErpLive = ErpClient.layerConfig().pipe(
 *   Layer.provide(ErpRateLimiterRedis.layerConfig()),
 *   Layer.provide(FetchHttpClient.layer)
 * )
 * ```
 *
 * @since 0.1.0
 * @category Layers
 */
export const layerConfig = (
  config: Config.Config.Wrap<Options> = fromEnv
): Layer.Layer<ErpRateLimiter.ErpRateLimiter, ConfigError.ConfigError> =>
  Layer.scoped(ErpRateLimiter.ErpRateLimiter, Effect.flatMap(Config.unwrap(config), make))
