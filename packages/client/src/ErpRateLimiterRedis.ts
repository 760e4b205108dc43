/**
 * The rate limiter shared through Redis: every process that uses one API key keeps one budget per endpoint, and a
 * pause one of them reads from the server's headers pauses them all, processes of either edition alike (the same keys
 * and scripts). The connection is the edition's own (`internal/redis.ts`): on the optional peer dependency `ioredis`
 * in the Effect 3 edition, on Effect 4's `Redis` service in the Effect 4 edition (`@effect/platform-node`'s
 * `NodeRedis`, on the optional peer dependency `redis`), loaded only when this limiter connects.
 *
 * @since 0.1.0
 */
import * as LimiterText from "@erp-client/kernel/LimiterText"
import * as Outage from "@erp-client/kernel/Outage"
import * as Settings from "@erp-client/kernel/Settings"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as Environment from "./Environment.js"
import * as ErpConfig from "./ErpConfig.js"
import * as ErpRateLimiter from "./ErpRateLimiter.js"
import * as Checks from "./internal/checks.js"
import {
  catchFailure,
  type ConfigError,
  configLiteral,
  configRedacted,
  configString,
  type ConfigWrap,
  type DurationInput,
  RateLimiter,
  Result,
  scopedLayer
} from "./internal/edition.js"
import * as Limiter from "./internal/limiter.js"
import * as RedisStores from "./internal/redisStores.js"
import * as Slots from "./internal/slots.js"

/**
 * What a request does when the shared limiter's Redis is unreachable or fails past the grace: `"fail"` fails it with
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
  /** What a request does while Redis is unreachable or failing, past the grace (default `"fail"`). */
  readonly onFailure?: FailurePolicy | undefined
  /** Bound on connecting and on each Redis call (default 1 second). */
  readonly timeout?: DurationInput | undefined
  /**
   * How long requests wait for a Redis that has answered before and stops answering, before `onFailure` applies
   * (default 10 seconds; 0 applies it at once).
   */
  readonly grace?: DurationInput | undefined
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
  readonly grace: Duration.Duration
}

/**
 * The default of every optional setting of the shared limiter besides the limit's own (`ErpRateLimiter.defaults`), as
 * data: the kernel's (`Settings.defaults`, which `resolve` fills in from), as the configuration reference
 * (docs/configuration.md) shows them.
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
  timeout: Settings.durationText(Settings.defaults.redisTimeoutMillis),
  grace: Settings.durationText(Settings.defaults.redisGraceMillis)
} as const satisfies {
  readonly prefix: string
  readonly onFailure: FailurePolicy
  readonly timeout: string
  readonly grace: string
}

/**
 * Checks a Redis URL without ever putting it in a message (it may hold a password): `redis://` or `rediss://`, a
 * host, and nothing after the database number but options in the query.
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
): Result<Redacted.Redacted<string>, ConfigError> => {
  const redacted = Redacted.isRedacted(input) ? input : Redacted.make(input)
  return Result.map(Checks.checked(Settings.checkRedisUrl(Redacted.value(redacted))), () => redacted)
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
 * console.log(settings.prefix, settings.onFailure, settings.limit, Duration.toMillis(settings.timeout))
 * // => erp-client: local 100 1000
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const resolve = (options: Options): Result<Resolved, ConfigError> =>
  // Checked in this order: the first failure is the one said.
  Result.flatMap(Checks.checked(Settings.checkRedisKeys(options)), ({ onFailure, prefix }) =>
    Result.flatMap(ErpRateLimiter.resolve(options), (limits) =>
      Result.flatMap(validateUrl(options.url), (url) =>
        Result.flatMap(
          Checks.positiveDuration("redis.timeout", options.timeout ?? Settings.defaults.redisTimeoutMillis),
          (timeout) =>
            Result.map(
              Checks.nonNegativeDuration("redis.grace", options.grace ?? Settings.defaults.redisGraceMillis),
              (grace): Resolved => ({ ...limits, url, prefix, onFailure, timeout, grace })
            )
        ))))

/**
 * The shared limiter's settings from the environment: `ERP_REDIS_URL` (read as `Redacted`), and optionally
 * `ERP_REDIS_PREFIX`, `ERP_REDIS_ON_FAILURE` (`fail` or `local`), `ERP_REDIS_TIMEOUT`, `ERP_REDIS_GRACE`, and the limit itself
 * (`ERP_RATE_LIMIT`, `ERP_RATE_WINDOW`, as `ErpRateLimiter.fromEnv`).
 *
 * @since 0.1.0
 * @category Config
 */
export const fromEnv: Config.Config<Options> = Config.all({
  limits: ErpRateLimiter.fromEnv,
  url: configRedacted(Environment.redis.url),
  prefix: Checks.optional(configString(Environment.redis.prefix)),
  onFailure: Checks.optional(configLiteral(["fail", "local"], Environment.redis.onFailure)),
  timeout: Checks.optional(Checks.duration(Environment.redis.timeout)),
  grace: Checks.optional(Checks.duration(Environment.redis.grace))
}).pipe(Config.map(({ limits, ...redis }) => ({ ...limits, ...redis })))

/**
 * Builds the shared limiter: the memory limiter's algorithm (slots and ticket, `internal/slots.ts`) on Redis counters,
 * and the holds (the server's pauses, the slots' busy marks) in Redis, so every process with the same Redis, prefix
 * and API key shares them. Keys: `${prefix}erp:${sha256(apiKey) prefix}:${endpoint}:ticket`, `…:slot:${n}`, and the
 * holds `…:hold` (the endpoint paused for the server) and `…:slot:${n}:hold` (the slot busy); all expire on their
 * own.
 *
 * When Redis stops answering (the kernel's `Outage` decides; docs/rate-limit.md): the requests that need it wait for
 * it for `grace`, Redis tried again once a second, and go on through it once it answers, so a restart or a failover
 * costs a pause and nothing goes out uncounted. Past the grace, or at once for a Redis never reached, `onFailure`
 * applies: `"fail"` fails the call with `StoreFailure` (the client's `RateLimiterUnavailable`); `"local"` uses an
 * in-process memory limiter instead, from a window after Redis stopped (the count it kept is unknown), and for a
 * window after its last request once Redis is back, requests take a place in both. One warning when an outage starts
 * (never the URL or its password), one line when it ends.
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
): Effect.Effect<ErpRateLimiter.Service, ErpConfig.ErpConfigError, Scope.Scope> =>
  Effect.flatMap(
    Result.toEffect(Result.mapError(resolve(options), (error) => ErpConfig.fromConfigError(error, "options"))),
    sharedLimiter
  )

const sharedLimiter = (
  settings: Resolved
): Effect.Effect<ErpRateLimiter.Service, ErpConfig.ErpConfigError, Scope.Scope> =>
  Effect.gen(function*() {
    // Loaded here, on the first connection: the edition's Redis client (an optional peer dependency) is never loaded
    // by a program that keeps its limit in memory, even one that imports this package's index.
    const Redis = yield* Effect.promise(() => import("./internal/redis.js"))
    const policy: Outage.Policy = {
      onFailure: settings.onFailure,
      graceMillis: Duration.toMillis(settings.grace),
      slotWindowMillis: Duration.toMillis(settings.window) + Duration.toMillis(settings.margin)
    }
    const outage = Outage.makeState()
    const connection = yield* Redis.connect(settings.url, settings.prefix, settings.timeout, watch(outage, policy))
    const remote = yield* Slots.make(settings).pipe(
      Effect.provideService(RateLimiter.RateLimiterStore, RedisStores.makeStore(connection, settings.prefix)),
      Effect.provideService(Limiter.HoldStore, RedisStores.makeHoldStore(connection, settings.prefix))
    )
    const shared: Shared = {
      outage,
      policy,
      remote,
      local: settings.onFailure === "local" ? yield* ErpRateLimiter.make(settings) : undefined,
      scope: yield* Effect.scope,
      // A token of this read's own, set should the store hold no mark (it is new, or lost its data since).
      mark: readMark(outage, () => RedisStores.readMark(connection, settings.prefix, globalThis.crypto.randomUUID()))
    }
    const { local } = shared
    return ErpRateLimiter.ErpRateLimiter.of({
      limit: remote.limit,
      window: remote.window,
      margin: remote.margin,
      acquire: (key, deadline, bound, timeoutMillis) => acquire(shared, key, deadline, bound, timeoutMillis),
      learn: (key, acquired, heard) => guard(shared, "learn", remote.learn(key, acquired, heard), Effect.void),
      // Kept locally too under `local`, so an outage that starts now still honours it.
      pause: (key, untilMillis) =>
        Effect.andThen(
          local === undefined ? Effect.void : local.pause(key, untilMillis),
          guard(shared, "pause", remote.pause(key, untilMillis), Effect.void)
        ),
      inUse: (key) =>
        guard(shared, "inUse", remote.inUse(key), local === undefined ? unavailable(shared) : local.inUse(key))
    })
  })

/** What the limiter's operations share: the outage, Redis's limiter and the local one, and the store's mark. */
interface Shared {
  readonly outage: Outage.State
  readonly policy: Outage.Policy
  readonly remote: ErpRateLimiter.Service
  readonly local: ErpRateLimiter.Service | undefined
  /** Where slots handed back while Redis is down are kept trying. */
  readonly scope: Scope.Scope
  /** Reads the store's mark and notes it (`Outage.marked`). */
  readonly mark: Effect.Effect<void>
}

/** The mark read (a failure is an outage like any other: the mark is read again once it ends), and noted. */
const readMark = (outage: Outage.State, read: () => Effect.Effect<string, ErpRateLimiter.StoreFailure>) =>
  Effect.matchEffect(Effect.suspend(read), {
    onFailure: () => Effect.void,
    onSuccess: (found) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const kept = Outage.marked(outage, found)
        return kept === "lost" || kept === "unknown"
          ? Effect.logInfo(LimiterText.countLost(kept, outage.heldUntil - now))
          : Effect.void
      })
  })

const unavailable = ({ outage }: Shared) =>
  Effect.suspend(() => Effect.fail(new ErpRateLimiter.StoreFailure({ description: outage.description })))

/**
 * A place in the limit, on Redis as the outage allows (`guard`), or from the local limiter. A request admitted across
 * a change of the store (an outage, a reconnection) that now holds requests (the store may have lost its count,
 * `Outage.marked`) gives up the place it took and takes another once the hold is over: it would go late on that
 * place, and could come within a window of the place's next request. A place not used is safe. One admitted while
 * the store is down again was counted all the same: it goes.
 */
const acquire = (
  shared: Shared,
  key: string,
  deadline?: number,
  bound?: number,
  timeoutMillis?: number
): ReturnType<ErpRateLimiter.Service["acquire"]> =>
  Effect.suspend(() => {
    const { outage, policy } = shared
    const generation = outage.generation
    const again = Effect.suspend(() => acquire(shared, key, deadline, bound, timeoutMillis))
    const admitted = guard(
      shared,
      "acquire",
      sharedAndLocal(shared, key, deadline, bound, timeoutMillis),
      localOnly(shared, key, deadline, bound, timeoutMillis),
      {
        bound,
        beyond: (startsAt) => Effect.fail(new ErpRateLimiter.WaitBeyondBound({ startsAt }))
      }
    )
    return Effect.flatMap(admitted, (acquired) =>
      outage.generation === generation ? Effect.succeed(acquired) : Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const admission = outage.since !== 0
          ? { _tag: "Store" as const }
          : Outage.admit(outage, policy, "acquire", now, bound)
        switch (admission._tag) {
          case "Mark":
            return Effect.andThen(shared.mark, again)
          case "Wait":
            return Effect.andThen(Effect.sleep(Duration.millis(admission.untilMillis - now)), again)
          case "Beyond":
            return Effect.fail(new ErpRateLimiter.WaitBeyondBound({ startsAt: admission.startsAt }))
          default:
            return Effect.succeed(acquired)
        }
      }))
  })

/** A place in Redis, its slot handed back in the background should Redis be down then (`handBack`). */
const inRedis = (shared: Shared, key: string, deadline?: number, bound?: number, timeoutMillis?: number) =>
  Effect.map(shared.remote.acquire(key, deadline, bound, timeoutMillis), (acquired): ErpRateLimiter.Acquired => ({
    ...acquired,
    release: (endedMillis) => handBack(shared, () => acquired.release(endedMillis), endedMillis)
  }))

/** A place in Redis; within a window of the local fallback's last request, which Redis never counted, in both. */
const sharedAndLocal = (shared: Shared, key: string, deadline?: number, bound?: number, timeoutMillis?: number) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => {
    const { local, outage, policy } = shared
    return local === undefined || !Outage.alsoLocal(outage, policy, now)
      ? inRedis(shared, key, deadline, bound, timeoutMillis)
      : Effect.flatMap(
        inRedis(shared, key, deadline, bound, timeoutMillis),
        (there) =>
          Effect.map(local.acquire(key, deadline, bound, timeoutMillis), (own): ErpRateLimiter.Acquired => ({
            ...there,
            spacedMillis: there.spacedMillis + own.spacedMillis,
            pausedMillis: there.pausedMillis + own.pausedMillis,
            startedMillis: own.startedMillis,
            release: (endedMillis) => Effect.andThen(own.release(endedMillis), there.release(endedMillis))
          }))
      )
  })

/** A place from the local fallback alone, noted (`Outage.admittedLocally`). */
const localOnly = (shared: Shared, key: string, deadline?: number, bound?: number, timeoutMillis?: number) =>
  shared.local === undefined ? unavailable(shared) : Effect.tap(
    shared.local.acquire(key, deadline, bound, timeoutMillis),
    (acquired) => Effect.sync(() => Outage.admittedLocally(shared.outage, acquired.startedMillis))
  )

/**
 * The outage told of every Redis call (its start said once, a warning; its end once) and of every reconnection.
 */
const watch = (outage: Outage.State, policy: Outage.Policy): RedisStores.Watch => ({
  answered: (startedMillis) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const downMillis = Outage.answered(outage, policy, startedMillis, now)
      return downMillis === undefined ? Effect.void : Effect.logInfo(LimiterText.recovered(downMillis))
    }),
  failed: (startedMillis, failure) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const reachedBefore = outage.answeredOnce
      return Outage.failed(outage, startedMillis, now, failure.description)
        ? Effect.logWarning(LimiterText.outage(failure.description, { ...policy, reachedBefore }))
        : Effect.void
    }),
  reconnected: (lostAtMillis) => Outage.reconnected(outage, policy, lostAtMillis)
})

const isStoreFailure = (error: unknown): error is ErpRateLimiter.StoreFailure =>
  error instanceof ErpRateLimiter.StoreFailure

/** A request its caller bounded (`acquire`'s `bound`), and its failure when it could start only after the bound. */
interface Bounded<A, E> {
  readonly bound: number | undefined
  readonly beyond: (startsAt: number) => Effect.Effect<A, E | ErpRateLimiter.StoreFailure>
}

/**
 * Runs `operation` as the outage allows (`Outage.admit`): on Redis (its mark read first when due), after waiting for
 * it, or `otherwise` (the local limiter, or nothing). A call that fails on Redis is looked at again: the outage it
 * started decides; a failure that started none (a call begun before Redis came back) is tried once more, then is the
 * answer.
 */
const guard = <A, E>(
  { mark, outage, policy }: Shared,
  operation: Outage.Operation,
  use: Effect.Effect<A, E | ErpRateLimiter.StoreFailure>,
  otherwise: Effect.Effect<A, E | ErpRateLimiter.StoreFailure>,
  bounded?: Bounded<A, E>
): Effect.Effect<A, E | ErpRateLimiter.StoreFailure> => {
  let triedWhileUp = false
  const attempt: Effect.Effect<A, E | ErpRateLimiter.StoreFailure> = Effect.flatMap(
    Clock.currentTimeMillis,
    (now) => {
      const admission = Outage.admit(outage, policy, operation, now, bounded?.bound)
      switch (admission._tag) {
        case "Store":
          return Effect.catchIf(use, isStoreFailure, (failure) => {
            if (outage.since !== 0) return Effect.suspend(() => attempt)
            if (triedWhileUp) return Effect.fail(failure)
            triedWhileUp = true
            return Effect.suspend(() => attempt)
          })
        case "Mark":
          return Effect.andThen(mark, Effect.suspend(() => attempt))
        case "Wait":
          return Effect.andThen(
            Effect.sleep(Duration.millis(admission.untilMillis - now)),
            Effect.suspend(() => attempt)
          )
        case "Beyond":
          return bounded === undefined
            ? Effect.fail(new ErpRateLimiter.StoreFailure({ description: outage.description }))
            : bounded.beyond(admission.startsAt)
        case "Fail":
          return Effect.fail(new ErpRateLimiter.StoreFailure({ description: outage.description }))
        case "Local":
        case "Ignore":
          return otherwise
      }
    }
  )
  return attempt
}

/**
 * Hands a slot back: its busy mark, a window after the request ended, replaces its in-flight mark in Redis now if Redis
 * answers, else in the background as soon as it does, until a slot's window after the end. Past that the in-flight
 * mark left standing only holds the slot longer than needed (until the request's timeout and a window after its start,
 * when Redis drops it), never shorter. The answer at hand never waits for it.
 */
const handBack = (
  { outage, policy, scope }: Shared,
  release: () => Effect.Effect<void, ErpRateLimiter.StoreFailure>,
  endedMillis: number
): Effect.Effect<void> => {
  const mootAt = endedMillis + policy.slotWindowMillis
  const later: Effect.Effect<void> = Effect.flatMap(Clock.currentTimeMillis, (now) => {
    if (now >= mootAt) return Effect.void
    const admission = Outage.admit(outage, policy, "release", now)
    return admission._tag === "Wait"
      ? Effect.andThen(Effect.sleep(Duration.millis(admission.untilMillis - now)), Effect.suspend(() => later))
      : catchFailure(
        release(),
        () => Effect.andThen(Effect.sleep(Duration.millis(Outage.WAIT_STEP_MILLIS)), Effect.suspend(() => later))
      )
  })
  // Forked from an uninterruptible release: made interruptible, so the scope's end stops it at once.
  const inBackground = Effect.asVoid(Effect.forkIn(Effect.interruptible(later), scope))
  return Effect.flatMap(
    Clock.currentTimeMillis,
    (now) =>
      Outage.admit(outage, policy, "release", now)._tag === "Store"
        ? catchFailure(release(), () => inBackground)
        : inBackground
  )
}

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
export const layer = (options: Options): Layer.Layer<ErpRateLimiter.ErpRateLimiter, ErpConfig.ErpConfigError> =>
  scopedLayer(ErpRateLimiter.ErpRateLimiter, make(options))

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
  config: ConfigWrap<Options> = fromEnv
): Layer.Layer<ErpRateLimiter.ErpRateLimiter, ErpConfig.ErpConfigError> =>
  scopedLayer(
    ErpRateLimiter.ErpRateLimiter,
    Effect.flatMap(
      Effect.mapError(
        Effect.flatMap(Config.unwrap(config), (options) => Result.toEffect(resolve(options))),
        // Settings read by `fromEnv` are named by their variables; those of a `Config` of the user's, by the option.
        (error) => ErpConfig.fromConfigError(error, config === fromEnv ? "variables" : "options")
      ),
      sharedLimiter
    )
  )
