/**
 * One Redis connection for the shared limiter, and the two stores the limiter's algorithm (`slots.ts`) runs on over it: the counters
 * (`RateLimiterStore`, fixed window only) and the holds (`HoldStore`). No failure policy here: a failing Redis fails
 * the call with `StoreFailure`, and every call's outcome is told to the `Watch` with the time it began;
 * `ErpRateLimiterRedis` decides what that means.
 */
import * as RateLimiter from "@effect/experimental/RateLimiter"
import * as LimiterText from "@erp-client/kernel/LimiterText"
import * as Outage from "@erp-client/kernel/Outage"
import * as Scripts from "@erp-client/kernel/RedisScripts"
import * as Slots from "@erp-client/kernel/Slots"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import type * as Ioredis from "ioredis"
import * as Limiter from "./limiter.js"

interface RedisWithScripts extends Ioredis.Redis {
  erpFixedWindow(key: string, ...args: Array<number>): Promise<[number, number]>
  erpExtendHold(key: string, ttlMillis: number, untilMillis: number): Promise<number>
  erpClaimHold(key: string, ttlMillis: number, mark: string): Promise<number>
  erpSettleHold(key: string, mark: string, ttlMillis: number, untilMillis: number): Promise<number>
  erpSetLearned(key: string, log: string, expected: string, next: string, ttlMillis: number): Promise<number>
  erpLogAdmit(
    key: string,
    limit: number,
    windowMillis: number,
    marginMillis: number,
    keepMillis: number,
    entry: string
  ): Promise<number>
  erpLogMark(key: string, entry: string, keepMillis: number, afterMillis: number): Promise<number>
  erpLogCount(key: string, windowMillis: number): Promise<number>
  erpLogSeed(key: string, configuredWindowMillis: number, ...ttls: Array<number>): Promise<number>
  erpMark(key: string, token: string, ttlMillis: number): Promise<string | null>
}

export interface Connection {
  readonly redis: RedisWithScripts
  /** Runs one Redis call within the timeout; every failure becomes a `StoreFailure` whose text holds no secret. */
  readonly call: <A>(what: string, run: (redis: RedisWithScripts) => Promise<A>) => Effect.Effect<
    A,
    Limiter.StoreFailure
  >
}

/**
 * Told the outcome of every call, with the time (epoch ms) it began: an answer, or the failure it fails with. Told of
 * calls, not of operations: an operation that needs no call (a hold already lapsed) says nothing of the store.
 */
export interface Watch {
  readonly answered: (startedMillis: number) => Effect.Effect<void>
  readonly failed: (startedMillis: number, failure: Limiter.StoreFailure) => Effect.Effect<void>
  /** The connection, lost at `lostAtMillis`, is made again (the store may be another, or have lost its data). */
  readonly reconnected: (lostAtMillis: number) => void
}

const unwatched: Watch = { answered: () => Effect.void, failed: () => Effect.void, reconnected: () => {} }

/** What the connection last said of itself: its last error (redacted), `""` once it is ready again. */
interface Health {
  lastConnectionError: string
  /** Whether it was ready once: a later "ready" is a reconnection. */
  readyOnce: boolean
  /** When it was lost (epoch ms), 0 while it holds. */
  lostAt: number
}

// Opens the connection for the life of the scope. Each call fails fast: no offline queue (a call while disconnected
// fails at once), a connect and a command timeout, no retries per request; ioredis keeps reconnecting in the
// background, so a Redis that comes back is used again.
export const connect = (
  url: Redacted.Redacted<string>,
  prefix: string,
  timeout: Duration.Duration,
  watch: Watch = unwatched
): Effect.Effect<Connection, never, Scope.Scope> =>
  Effect.gen(function*() {
    const timeoutMillis = Math.max(1, Math.ceil(Duration.toMillis(timeout)))
    const redact = LimiterText.redactor(Redacted.value(url))
    const health: Health = { lastConnectionError: "", readyOnce: false, lostAt: 0 }
    const { Redis } = yield* loadIoredis
    const redis = yield* Effect.acquireRelease(
      Effect.sync(() => open(Redis, { url, prefix, timeoutMillis, redact, health, watch })),
      // `disconnect` also stops the reconnect timer, so nothing keeps the process alive after the scope closes.
      (redis) =>
        Effect.promise(() => redis.quit().catch(() => "")).pipe(
          Effect.timeout(Duration.millis(timeoutMillis)),
          Effect.ignore,
          Effect.ensuring(Effect.sync(() => redis.disconnect()))
        )
    )
    yield* awaitReady(redis, timeoutMillis)
    const failureText = (what: string, cause: unknown): string =>
      redact(`Redis ${what}: ${whyFailed(cause, health, timeoutMillis)}`)
    const call: Connection["call"] = (what, run) =>
      Effect.flatMap(Clock.currentTimeMillis, (startedMillis) =>
        Effect.tryPromise({
          try: () => run(redis),
          catch: (cause) => new Limiter.StoreFailure({ description: failureText(what, cause) })
        }).pipe(
          Effect.timeoutFail({
            duration: Duration.millis(timeoutMillis + 100),
            onTimeout: () => new Limiter.StoreFailure({ description: failureText(what, "Command timed out") })
          }),
          Effect.tapBoth({
            onFailure: (failure) => watch.failed(startedMillis, failure),
            onSuccess: () => watch.answered(startedMillis)
          })
        ))
    return { redis, call }
  })

// ioredis, an optional peer dependency, is loaded here, on the first connection, and never by a program that keeps its
// limit in memory, even one that imports this package's index.
const loadIoredis = Effect.promise(() =>
  import("ioredis").catch((cause: unknown) => {
    throw new Error(
      "ErpRateLimiterRedis needs the optional peer dependency ioredis (npm install ioredis@^5): " + String(cause)
    )
  })
)

/** The client, failing fast, with our scripts defined and its errors kept in `health` rather than printed. */
const open = (
  Redis: typeof Ioredis.Redis,
  options: {
    readonly url: Redacted.Redacted<string>
    readonly prefix: string
    readonly timeoutMillis: number
    readonly redact: (text: string) => string
    readonly health: Health
    readonly watch: Watch
  }
): RedisWithScripts => {
  const { health, redact, timeoutMillis, watch } = options
  const redis = new Redis(Redacted.value(options.url), {
    connectTimeout: timeoutMillis,
    commandTimeout: timeoutMillis,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    // At most a second between reconnects: a Redis back from a restart is found about as soon as the limiter's next
    // probe would look.
    retryStrategy: (times) => Math.min(50 * 2 ** times, 1_000),
    // A primary turned replica by a failover answers writes with READONLY: connect again, so a name that now points at
    // the new primary is resolved anew. The call itself is not sent again (the limiter decides what to retry).
    reconnectOnError: (error) => error.message.startsWith("READONLY"),
    // `disconnect` (at release, after `quit` had its time) ends the socket and destroys it if still open after
    // this long. ioredis's 2 s timer stays even when the socket had already closed (a Redis that was never
    // reached), and kept a failed command's process alive for those 2 s: `quit` already waited, so at once.
    disconnectTimeout: 0,
    // Shows in CLIENT LIST who holds the connection.
    connectionName: `erp-client:${options.prefix.replace(/[^\x21-\x7e]/g, "_")}`
  }) as RedisWithScripts
  // Without a listener ioredis prints each failed reconnect to stderr; the failure reaches the caller of the
  // next call instead, and the limiter logs it once per outage.
  redis.on("error", (error: unknown) => {
    health.lastConnectionError = redact(error instanceof Error ? error.message : String(error))
  })
  redis.on("close", () => {
    if (health.readyOnce && health.lostAt === 0) health.lostAt = Date.now()
  })
  redis.on("ready", () => {
    health.lastConnectionError = ""
    if (health.readyOnce) watch.reconnected(health.lostAt === 0 ? Date.now() : health.lostAt)
    health.readyOnce = true
    health.lostAt = 0
  })
  redis.defineCommand("erpFixedWindow", { lua: Scripts.FIXED_WINDOW_LUA, numberOfKeys: 1 })
  redis.defineCommand("erpExtendHold", { lua: Scripts.EXTEND_HOLD_LUA, numberOfKeys: 1 })
  redis.defineCommand("erpClaimHold", { lua: Scripts.CLAIM_HOLD_LUA, numberOfKeys: 1 })
  redis.defineCommand("erpSettleHold", { lua: Scripts.SETTLE_HOLD_LUA, numberOfKeys: 1 })
  redis.defineCommand("erpSetLearned", { lua: Scripts.SET_LEARNED_LUA, numberOfKeys: 2 })
  redis.defineCommand("erpLogAdmit", { lua: Scripts.LOG_ADMIT_LUA, numberOfKeys: 1 })
  redis.defineCommand("erpLogMark", { lua: Scripts.LOG_MARK_LUA, numberOfKeys: 1 })
  redis.defineCommand("erpLogCount", { lua: Scripts.LOG_COUNT_LUA, numberOfKeys: 1 })
  redis.defineCommand("erpLogSeed", { lua: Scripts.LOG_SEED_LUA, numberOfKeys: 1 })
  redis.defineCommand("erpMark", { lua: Outage.MARK_LUA, numberOfKeys: 1 })
  return redis
}

// The offline queue is off, so the first calls would fail while connecting: wait for the connection (or its first
// error) within the timeout. A Redis that is down does not fail the layer; the calls report it.
const awaitReady = (redis: RedisWithScripts, timeoutMillis: number): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    if (redis.status === "ready") return resume(Effect.void)
    const done = () => resume(Effect.void)
    redis.once("ready", done)
    redis.once("error", done)
    return Effect.sync(() => {
      redis.off("ready", done)
      redis.off("error", done)
    })
  }).pipe(Effect.timeout(Duration.millis(timeoutMillis)), Effect.ignore)

/**
 * Why a call failed, in words: not connected (and the connection's last error), the connection lost under it (with
 * retries per request off, ioredis says so in terms of its option), no answer in time, or its message.
 */
const whyFailed = (cause: unknown, health: Health, timeoutMillis: number): string => {
  const message = cause instanceof Error ? cause.message : String(cause)
  const lastError = health.lastConnectionError === "" ? "" : ` (${health.lastConnectionError})`
  return message.includes("enableOfflineQueue") || message.includes("Connection is closed")
    ? `not connected${lastError}`
    : message.includes("maxRetriesPerRequest")
    ? `the connection was lost${lastError}`
    : message === "Command timed out"
    ? `no answer within ${timeoutMillis} ms`
    : message
}

const storeError = (error: Limiter.StoreFailure) =>
  new RateLimiter.RateLimitStoreError({ message: error.description, cause: error })

// The `RateLimiterStore` of `@effect/experimental` on our connection. Only the fixed window is offered: the token
// bucket lets about twice the limit through one window, which is what this limiter exists to prevent.
export const makeStore = (connection: Connection, prefix: string): RateLimiter.RateLimiterStore["Type"] =>
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

/** The mark every limiter on this Redis and prefix shares (`Outage.MARK_LUA`), `token` set if there is none. */
export const readMark = (
  connection: Connection,
  prefix: string,
  token: string
): Effect.Effect<string, Limiter.StoreFailure> =>
  Effect.map(
    connection.call("mark", (redis) => redis.erpMark(`${prefix}erp:mark`, token, Outage.MARK_TTL_MILLIS)),
    (mark) => mark ?? ""
  )

export const makeHoldStore = (connection: Connection, prefix: string): Limiter.HoldStore["Type"] =>
  Limiter.HoldStore.of({
    get: (key) =>
      Effect.flatMap(connection.call("hold get", (redis) => redis.pttl(`${prefix}${key}:hold`)), (ttl) =>
        ttl > 0
          ? Effect.map(Clock.currentTimeMillis, (now) => now + ttl)
          : Effect.succeed(0)),
    extend: (key, untilMillis) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const ttl = Math.ceil(untilMillis - now)
        return ttl <= 0
          ? Effect.void
          : connection.call("hold set", (redis) => redis.erpExtendHold(`${prefix}${key}:hold`, ttl, untilMillis))
      }),
    // The marks' ends are times of ours, kept as times to live (Redis's clock never meets ours).
    claim: (key, untilMillis) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const mark = Scripts.inFlightMark(untilMillis)
        return Effect.map(
          connection.call(
            "hold claim",
            (redis) => redis.erpClaimHold(`${prefix}${key}:hold`, Math.max(1, Math.ceil(untilMillis - now)), mark)
          ),
          (busy) => Number(busy) > 0 ? { busyUntil: now + Number(busy) } : { claim: mark }
        )
      }),
    settle: (key, claim, untilMillis) =>
      Effect.flatMap(
        Clock.currentTimeMillis,
        (now) =>
          connection.call("hold settle", (redis) =>
            redis.erpSettleHold(`${prefix}${key}:hold`, claim, Math.ceil(untilMillis - now), untilMillis))
      ),
    learned: (key) =>
      Effect.map(
        connection.call("learned get", (redis) => redis.get(`${prefix}${key}:learned`)),
        Scripts.decodeLearned
      ),
    setLearned: (key, expected, next) =>
      Effect.map(
        connection.call("learned set", (redis) =>
          redis.erpSetLearned(
            `${prefix}${key}:learned`,
            `${prefix}${key}:log`,
            Scripts.encodeLearned(expected),
            Scripts.encodeLearned(next ?? undefined),
            Math.max(1, Math.ceil(next?.ttlMillis ?? 1))
          )),
        (changed) => Number(changed) === 1
      ),
    admitLogged: (key, windows) =>
      Effect.map(
        connection.call("log admit", (redis) => {
          const entry = Scripts.logEntryName()
          return redis.erpLogAdmit(
            `${prefix}${key}:log`,
            windows.limit,
            Math.ceil(windows.windowMillis),
            Math.ceil(windows.marginMillis),
            Math.ceil(windows.keepMillis),
            entry
          ).then((wait) => ({ entry, wait: Number(wait) }))
        }),
        ({ entry, wait }) => wait > 0 ? { waitMillis: wait } : { entry }
      ),
    // The log keeps Redis's clock: a time of ours becomes an offset from now.
    markLogged: (key, entry, keepMillis, atMillis) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        connection.call("log mark", (redis) =>
          redis.erpLogMark(
            `${prefix}${key}:log`,
            entry,
            Math.ceil(keepMillis),
            Math.max(0, Math.ceil(atMillis - now))
          ))),
    dropLogged: (key, entry) =>
      Effect.asVoid(connection.call("log drop", (redis) => redis.zrem(`${prefix}${key}:log`, entry))),
    countLogged: (key, windowMillis) =>
      Effect.map(
        connection.call("log count", (redis) => redis.erpLogCount(`${prefix}${key}:log`, Math.ceil(windowMillis))),
        Number
      ),
    // A mark of a request in flight is read as one that started now (`MemoryStore.seedLogged`).
    seedLogged: (key, configured, slotWindowMillis) =>
      Effect.flatMap(
        Effect.forEach(
          Array.from({ length: configured.limit }, (_, i) => `${prefix}${Slots.slotKey(key, i)}:hold`),
          (hold) => connection.call("log seed", (redis) => redis.pttl(hold)),
          { concurrency: "unbounded" }
        ),
        (ttls) =>
          connection.call("log seed", (redis) =>
            redis.erpLogSeed(
              `${prefix}${key}:log`,
              Math.ceil(configured.windowMillis),
              ...ttls.filter((ttl) => ttl > 0).map((ttl) => Math.min(ttl, Math.ceil(slotWindowMillis)))
            ))
      ).pipe(Effect.asVoid)
  })
