/**
 * The rate limiter shared through Redis: every process that uses one API key keeps one budget per endpoint, and a
 * pause one of them reads from the server's headers pauses them all.
 *
 * @since 0.1.0
 */
import * as RateLimiter from "@effect/experimental/RateLimiter"
import * as Clock from "effect/Clock"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import { Redis } from "ioredis"
import * as ErpConfig from "./ErpConfig.js"
import * as ErpRateLimiter from "./ErpRateLimiter.js"

/**
 * @since 0.1.0
 * @category Models
 */
export interface Options extends ErpRateLimiter.Options {
  /** `redis://[[user]:password@]host[:port][/db]` or `rediss://…`. Never printed: it may hold a password. */
  readonly url: Redacted.Redacted<string> | string
  /** Prefix of every key (default `"erp-client:"`). Processes share a budget when they share Redis and prefix. */
  readonly prefix?: string | undefined
  /** What a request does while Redis is unreachable or failing (default `"fail"`). */
  readonly onFailure?: ErpConfig.RedisFailurePolicy | undefined
  /** Bound on connecting and on each Redis call (default 1 second). */
  readonly timeout?: Duration.DurationInput | undefined
}

// While Redis is down, it is tried again at most this often; meanwhile requests fail (or go local) at once instead of
// each waiting for a timeout.
const PROBE_INTERVAL_MILLIS = 1_000

// The fixed-window counter of `@effect/experimental/RateLimiter/Redis` (0.61), unchanged: it gives exactly the
// memory store's semantics (count, and a PX time to live that grows by `refill * tokens` from the current one, so
// `RateLimiter.consume` computes the same delay from it). That is all the slots and the ticket of `ErpRateLimiter`
// need, and it is atomic, so invariant 1 holds across processes with it as it is. It is reproduced rather than
// reached through `RedisStore.layerStore` only because that layer owns its connection in a way a failure policy
// cannot live with: no "error" listener (ioredis then prints every failed reconnect to stderr), and a release by
// `quit()`, which rejects when the connection is down and the offline queue is off (a defect at shutdown and a
// reconnect loop that keeps the process alive); with the offline queue on, calls wait queued instead of failing fast.
const FIXED_WINDOW_LUA = `
local key = KEYS[1]
local tokens = tonumber(ARGV[1])
local refillms = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local current = tonumber(redis.call("GET", key))

if not current then
  local nextpttl = refillms * tokens
  redis.call("SET", key, tokens, "PX", nextpttl)
  return { tokens, nextpttl }
end

local currentpttl = tonumber(redis.call("PTTL", key) or "0")
local next = current + tokens
if limit and next > limit then
  return { next, currentpttl }
end

local nextpttl = currentpttl + (refillms * tokens)
redis.call("SET", key, next, "PX", nextpttl)
return { next, nextpttl }
`

// Ours: a pause only ever grows. A plain `SET … PX` would let a short pause (an earlier reset read by another
// process) cut a longer one short. The pause is kept as a time to live, so processes whose clocks disagree still
// agree on when it ends; the value (the reset, epoch ms) is only for people reading Redis.
const EXTEND_PAUSE_LUA = `
local ttl = tonumber(ARGV[1])
local current = redis.call("PTTL", KEYS[1])
if current < ttl then
  redis.call("SET", KEYS[1], ARGV[2], "PX", ttl)
  return ttl
end
return current
`

interface RedisWithScripts extends Redis {
  erpFixedWindow(key: string, ...args: Array<number>): Promise<[number, number]>
  erpExtendPause(key: string, ttlMillis: number, untilMillis: number): Promise<number>
}

interface Connection {
  readonly redis: RedisWithScripts
  /** Runs one Redis call within the timeout; every failure becomes a `StoreFailure` whose text holds no secret. */
  readonly call: <A>(what: string, run: (redis: RedisWithScripts) => Promise<A>) => Effect.Effect<
    A,
    ErpRateLimiter.StoreFailure
  >
}

const secretsOf = (url: Redacted.Redacted<string>): ReadonlyArray<string> => {
  try {
    const parsed = new URL(Redacted.value(url))
    return [Redacted.value(url), parsed.password, decodeURIComponent(parsed.password)].filter((s) => s.length > 0)
  } catch {
    return [Redacted.value(url)]
  }
}

// Opens the connection for the life of the scope. Each call fails fast: no offline queue (a call while disconnected
// fails at once), a connect and a command timeout, no retries per request; ioredis keeps reconnecting in the
// background, so a Redis that comes back is used again.
const connect = (
  url: Redacted.Redacted<string>,
  prefix: string,
  timeout: Duration.Duration
): Effect.Effect<Connection, never, Scope.Scope> =>
  Effect.gen(function*() {
    const timeoutMillis = Math.max(1, Math.ceil(Duration.toMillis(timeout)))
    const secrets = secretsOf(url)
    const redact = (text: string): string => secrets.reduce((out, secret) => out.split(secret).join("<redacted>"), text)
    let lastConnectionError = ""
    const redis = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const redis = new Redis(Redacted.value(url), {
          connectTimeout: timeoutMillis,
          commandTimeout: timeoutMillis,
          maxRetriesPerRequest: 0,
          enableOfflineQueue: false,
          autoResendUnfulfilledCommands: false,
          retryStrategy: (times) => Math.min(50 * 2 ** times, 2_000),
          // Shows in CLIENT LIST who holds the connection.
          connectionName: `erp-client:${prefix.replace(/[^\x21-\x7e]/g, "_")}`
        }) as RedisWithScripts
        // Without a listener ioredis prints each failed reconnect to stderr; the failure reaches the caller of the
        // next call instead, and the limiter logs it once per outage.
        redis.on("error", (error: unknown) => {
          lastConnectionError = redact(error instanceof Error ? error.message : String(error))
        })
        redis.on("ready", () => {
          lastConnectionError = ""
        })
        redis.defineCommand("erpFixedWindow", { lua: FIXED_WINDOW_LUA, numberOfKeys: 1 })
        redis.defineCommand("erpExtendPause", { lua: EXTEND_PAUSE_LUA, numberOfKeys: 1 })
        return redis
      }),
      // `disconnect` also stops the reconnect timer, so nothing keeps the process alive after the scope closes.
      (redis) =>
        Effect.promise(() => redis.quit().catch(() => "")).pipe(
          Effect.timeout(Duration.millis(timeoutMillis)),
          Effect.ignore,
          Effect.ensuring(Effect.sync(() => redis.disconnect()))
        )
    )
    // The offline queue is off, so the first calls would fail while connecting: wait for the connection (or its
    // first error) within the timeout. A Redis that is down does not fail the layer; the calls report it.
    yield* Effect.async<void>((resume) => {
      if (redis.status === "ready") return resume(Effect.void)
      const done = () => resume(Effect.void)
      redis.once("ready", done)
      redis.once("error", done)
      return Effect.sync(() => {
        redis.off("ready", done)
        redis.off("error", done)
      })
    }).pipe(Effect.timeout(Duration.millis(timeoutMillis)), Effect.ignore)

    const describe = (what: string, cause: unknown): string => {
      const message = cause instanceof Error ? cause.message : String(cause)
      const why = message.includes("enableOfflineQueue") || message.includes("Connection is closed")
        ? `not connected${lastConnectionError === "" ? "" : ` (${lastConnectionError})`}`
        : message === "Command timed out"
        ? `no answer within ${timeoutMillis} ms`
        : message
      return redact(`Redis ${what}: ${why}`)
    }

    const call: Connection["call"] = (what, run) =>
      Effect.tryPromise({
        try: () => run(redis),
        catch: (cause) => new ErpRateLimiter.StoreFailure({ description: describe(what, cause) })
      }).pipe(
        Effect.timeoutFail({
          duration: Duration.millis(timeoutMillis + 100),
          onTimeout: () => new ErpRateLimiter.StoreFailure({ description: describe(what, "Command timed out") })
        })
      )
    return { redis, call }
  })

const validUrl = (url: Redacted.Redacted<string> | string) =>
  Either.match(ErpConfig.validateRedisUrl(url), { onLeft: Effect.fail, onRight: Effect.succeed })

const storeError = (error: ErpRateLimiter.StoreFailure) =>
  new RateLimiter.RateLimitStoreError({ message: error.description, cause: error })

// The `RateLimiterStore` of `@effect/experimental` on our connection. Only the fixed window is offered: the token
// bucket lets about twice the limit through one window, which is what this limiter exists to prevent.
const makeStore = (connection: Connection, prefix: string): RateLimiter.RateLimiterStore["Type"] =>
  RateLimiter.RateLimiterStore.of({
    fixedWindow: (options) => {
      // PX takes whole milliseconds; rounding the spacing up only ever spaces requests further apart.
      const refillMillis = Math.max(1, Math.ceil(Duration.toMillis(options.refillRate)))
      const args = options.limit === undefined
        ? [options.tokens, refillMillis]
        : [options.tokens, refillMillis, options.limit]
      return connection.call("fixedWindow", (redis) => redis.erpFixedWindow(`${prefix}${options.key}`, ...args)).pipe(
        Effect.map(([count, ttl]) => [Number(count), Number(ttl)] as const),
        Effect.mapError(storeError)
      )
    },
    tokenBucket: () =>
      Effect.fail(
        new RateLimiter.RateLimitStoreError({
          message: "the token bucket is not offered: it lets about twice the limit through one window"
        })
      )
  })

const makePauseStore = (connection: Connection, prefix: string): ErpRateLimiter.PauseStore["Type"] =>
  ErpRateLimiter.PauseStore.of({
    get: (key) =>
      Effect.flatMap(connection.call("pause get", (redis) => redis.pttl(`${prefix}${key}:pause`)), (ttl) =>
        ttl > 0
          ? Effect.map(Clock.currentTimeMillis, (now) => now + ttl)
          : Effect.succeed(0)),
    extend: (key, untilMillis) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const ttl = Math.ceil(untilMillis - now)
        return ttl <= 0
          ? Effect.void
          : connection.call("pause set", (redis) => redis.erpExtendPause(`${prefix}${key}:pause`, ttl, untilMillis))
      })
  })

interface Outage {
  /** Epoch ms of the first failure of this outage, 0 while Redis answers. */
  readonly since: number
  /** While down: when Redis is tried again. */
  readonly nextProbe: number
  readonly description: string
}

/**
 * Builds the shared limiter: the algorithm of `ErpRateLimiter.make` (slots and ticket, see there) on Redis counters,
 * and the server's pauses in Redis, so every process with the same Redis, prefix and API key shares them. Keys:
 * `${prefix}erp:${sha256(apiKey) prefix}:${endpoint}:ticket`, `…:slot:${n}` and `…:pause`; all expire on their own.
 *
 * When Redis fails, `onFailure` decides: `"fail"` fails the call with `StoreFailure` (the client's
 * `RateLimiterUnavailable`), so nothing is sent blind; `"local"` uses an in-process memory limiter instead, which
 * keeps the limit for this process only. Either way one warning is logged per outage (never the URL or its
 * password), Redis is tried again at most once a second, and its return is logged.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const make = (
  options: Options
): Effect.Effect<ErpRateLimiter.Service, ConfigError.ConfigError, Scope.Scope> =>
  Effect.gen(function*() {
    const url = yield* validUrl(options.url)
    const prefix = options.prefix ?? "erp-client:"
    const policy = options.onFailure ?? "fail"
    const connection = yield* connect(url, prefix, Duration.decode(options.timeout ?? Duration.seconds(1)))
    const limiterOptions: ErpRateLimiter.Options = {
      limit: options.limit,
      window: options.window,
      margin: options.margin
    }
    const remote = yield* ErpRateLimiter.make(limiterOptions).pipe(
      Effect.provideService(RateLimiter.RateLimiterStore, makeStore(connection, prefix)),
      Effect.provideService(ErpRateLimiter.PauseStore, makePauseStore(connection, prefix))
    )
    const local = policy === "local"
      ? yield* ErpRateLimiter.make(limiterOptions).pipe(
        Effect.provide([Layer.fresh(RateLimiter.layerStoreMemory), Layer.fresh(ErpRateLimiter.layerPauseStoreMemory)])
      )
      : undefined

    const outage = yield* Ref.make<Outage>({ since: 0, nextProbe: 0, description: "" })

    const failed = (error: ErpRateLimiter.StoreFailure) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.flatMap(
          Ref.modify(outage, (state): [boolean, Outage] => [
            state.since === 0,
            {
              since: state.since === 0 ? now : state.since,
              nextProbe: now + PROBE_INTERVAL_MILLIS,
              description: error.description
            }
          ]),
          (first) =>
            first
              ? Effect.logWarning(
                `the shared rate limit in Redis is unavailable (${error.description}); ` +
                  (local === undefined
                    ? "requests fail with RateLimiterUnavailable until it answers again"
                    : "falling back to this process's own limit until it answers again: other processes are not " +
                      "counted meanwhile")
              )
              : Effect.void
        ))

    const answered = Effect.flatMap(Ref.get(outage), (state) =>
      state.since === 0 ? Effect.void : Ref.set(outage, { since: 0, nextProbe: 0, description: "" }).pipe(
        Effect.zipRight(Effect.flatMap(Clock.currentTimeMillis, (now) =>
          Effect.logInfo(
            `the shared rate limit in Redis answers again after ${now - state.since} ms; it is shared again`
          )))
      ))

    // While down and before the next probe: the last failure again, at once.
    const guarded = <A, E>(
      use: Effect.Effect<A, E | ErpRateLimiter.StoreFailure>,
      fallback: (error: ErpRateLimiter.StoreFailure) => Effect.Effect<A, E | ErpRateLimiter.StoreFailure>
    ): Effect.Effect<A, E | ErpRateLimiter.StoreFailure> =>
      Effect.gen(function*() {
        const state = yield* Ref.get(outage)
        if (state.since !== 0 && (yield* Clock.currentTimeMillis) < state.nextProbe) {
          return yield* fallback(new ErpRateLimiter.StoreFailure({ description: state.description }))
        }
        return yield* use.pipe(
          Effect.tap(() =>
            answered
          ),
          Effect.catchIf(
            (error): error is ErpRateLimiter.StoreFailure => error instanceof ErpRateLimiter.StoreFailure,
            (error) => Effect.zipRight(failed(error), fallback(error))
          )
        )
      })

    return ErpRateLimiter.ErpRateLimiter.of({
      limit: remote.limit,
      window: remote.window,
      margin: remote.margin,
      acquire: (key, deadline) =>
        guarded(
          Effect.map(remote.acquire(key, deadline), (acquired) => ({
            ...acquired,
            release: (endedMillis: number) =>
              guarded(acquired.release(endedMillis), (error) => local === undefined ? Effect.fail(error) : Effect.void)
          })),
          (error) => local === undefined ? Effect.fail(error) : local.acquire(key, deadline)
        ),
      pause: (key, untilMillis) =>
        local === undefined
          ? guarded(remote.pause(key, untilMillis), Effect.fail)
          // Kept locally too, so an outage that starts now still honours it.
          : Effect.zipRight(
            local.pause(key, untilMillis),
            guarded(remote.pause(key, untilMillis), () => Effect.void)
          )
    })
  })

/**
 * The two stores of `ErpRateLimiter.layer` on one Redis connection, closed when the layer is released: the counters
 * (`RateLimiterStore`, fixed window only) and the server's pauses (`PauseStore`). No failure policy here: a failing
 * Redis fails the call. `layer` is the limiter on them with the policy.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layerStores = (options: {
  readonly url: Redacted.Redacted<string> | string
  readonly prefix?: string | undefined
  readonly timeout?: Duration.DurationInput | undefined
}): Layer.Layer<RateLimiter.RateLimiterStore | ErpRateLimiter.PauseStore, ConfigError.ConfigError> =>
  Layer.scopedContext(Effect.gen(function*() {
    const url = yield* validUrl(options.url)
    const prefix = options.prefix ?? "erp-client:"
    const connection = yield* connect(url, prefix, Duration.decode(options.timeout ?? Duration.seconds(1)))
    return Context.make(RateLimiter.RateLimiterStore, makeStore(connection, prefix)).pipe(
      Context.add(ErpRateLimiter.PauseStore, makePauseStore(connection, prefix))
    )
  }))

/**
 * The shared limiter as a Layer; its Redis connection is closed when the layer is released.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layer = (options: Options): Layer.Layer<ErpRateLimiter.ErpRateLimiter, ConfigError.ConfigError> =>
  Layer.scoped(ErpRateLimiter.ErpRateLimiter, make(options))
