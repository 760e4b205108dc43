// Per edition: the Redis connection, on ioredis here (Effect 4: effect/persistence's Redis on the redis package).
/**
 * One Redis connection for the shared limiter, on ioredis, with the kernel's scripts defined as its commands: the
 * `Commands` the stores of `redisStores.ts` send. No failure policy here: a failing Redis fails the call with
 * `StoreFailure`, and every call's outcome is told to the `Watch` with the time it began; `ErpRateLimiterRedis`
 * decides what that means.
 */
import * as LimiterText from "@erp-client/kernel/LimiterText"
import * as Outage from "@erp-client/kernel/Outage"
import * as Scripts from "@erp-client/kernel/RedisScripts"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import type * as Ioredis from "ioredis"
import * as Limiter from "./limiter.js"
import { type Commands, type Connection, unwatched, type Watch } from "./redisStores.js"

interface RedisWithScripts extends Ioredis.Redis {
  erpFixedWindow(key: string, ...args: Array<number>): Promise<[number, number]>
  erpExtendHold(key: string, ttlMillis: number, untilMillis: number): Promise<number>
  erpClaimHold(key: string, ttlMillis: number, mark: string): Promise<number>
  erpSettleHold(
    key: string,
    log: string,
    mark: string,
    ttlMillis: number,
    untilMillis: number,
    windowMillis: number
  ): Promise<number>
  erpSetLearned(key: string, log: string, expected: string, next: string, ttlMillis: number): Promise<number>
  erpLogAdmit(
    key: string,
    limit: number,
    windowMillis: number,
    marginMillis: number,
    keepMillis: number,
    entry: string,
    timeoutMillis: number
  ): Promise<number>
  erpLogMark(
    key: string,
    entry: string,
    keepMillis: number,
    afterMillis: number,
    mode: "later" | "end"
  ): Promise<number>
  erpLogCount(key: string, windowMillis: number): Promise<number>
  /** The number of keys first: the log and the slots' holds. */
  erpLogSeed(keys: number, log: string, ...holdsThenWindow: Array<string | number>): Promise<number>
  erpMark(key: string, token: string, ttlMillis: number): Promise<string | null>
}

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
    const commands = commandsOf(redis)
    const call: Connection["call"] = (what, run) =>
      Effect.flatMap(Clock.currentTimeMillis, (startedMillis) =>
        Effect.suspend(() => run(commands)).pipe(
          Effect.mapError((cause) => new Limiter.StoreFailure({ description: failureText(what, cause) })),
          Effect.timeoutFail({
            duration: Duration.millis(timeoutMillis + 100),
            onTimeout: () => new Limiter.StoreFailure({ description: failureText(what, "Command timed out") })
          }),
          Effect.tapBoth({
            onFailure: (failure) => watch.failed(startedMillis, failure),
            onSuccess: () => watch.answered(startedMillis)
          })
        ))
    return { call }
  })

/** The commands on the client, each a promise of its answer made an effect; a failure is the client's error. */
const commandsOf = (redis: RedisWithScripts): Commands => {
  const send = <A>(request: () => Promise<A>) => Effect.tryPromise({ try: request, catch: (cause) => cause })
  return {
    pttl: (key) => send(() => redis.pttl(key)),
    get: (key) => send(() => redis.get(key)),
    zrem: (key, member) => send(() => redis.zrem(key, member)),
    fixedWindow: (key, args) => send(() => redis.erpFixedWindow(key, ...args)),
    extendHold: (key, ttlMillis, untilMillis) => send(() => redis.erpExtendHold(key, ttlMillis, untilMillis)),
    claimHold: (key, ttlMillis, mark) => send(() => redis.erpClaimHold(key, ttlMillis, mark)),
    settleHold: (key, log, mark, ttlMillis, untilMillis, windowMillis) =>
      send(() => redis.erpSettleHold(key, log, mark, ttlMillis, untilMillis, windowMillis)),
    setLearned: (key, log, expected, next, ttlMillis) =>
      send(() => redis.erpSetLearned(key, log, expected, next, ttlMillis)),
    logAdmit: (key, limit, windowMillis, marginMillis, keepMillis, entry, timeoutMillis) =>
      send(() => redis.erpLogAdmit(key, limit, windowMillis, marginMillis, keepMillis, entry, timeoutMillis)),
    logMark: (key, entry, keepMillis, afterMillis, mode) =>
      send(() => redis.erpLogMark(key, entry, keepMillis, afterMillis, mode)),
    logCount: (key, windowMillis) => send(() => redis.erpLogCount(key, windowMillis)),
    logSeed: (log, holds, windowMillis) => send(() => redis.erpLogSeed(1 + holds.length, log, ...holds, windowMillis)),
    mark: (key, token, ttlMillis) => send(() => redis.erpMark(key, token, ttlMillis))
  }
}

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
  redis.defineCommand("erpSettleHold", { lua: Scripts.SETTLE_HOLD_LUA, numberOfKeys: 2 })
  redis.defineCommand("erpSetLearned", { lua: Scripts.SET_LEARNED_LUA, numberOfKeys: 2 })
  redis.defineCommand("erpLogAdmit", { lua: Scripts.LOG_ADMIT_LUA, numberOfKeys: 1 })
  redis.defineCommand("erpLogMark", { lua: Scripts.LOG_MARK_LUA, numberOfKeys: 1 })
  redis.defineCommand("erpLogCount", { lua: Scripts.LOG_COUNT_LUA, numberOfKeys: 1 })
  // As many keys as the limit has slots, and the log: given with each call.
  redis.defineCommand("erpLogSeed", { lua: Scripts.LOG_SEED_LUA })
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
