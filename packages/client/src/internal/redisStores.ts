/**
 * The two stores the limiter's algorithm (`slots.ts`) runs on over one Redis connection (`redis.ts`, one per edition):
 * the counters (`RateLimiterStore`, fixed window only) and the holds (`HoldStore`), each call one of the kernel's
 * scripts (`RedisScripts`) or a plain command on the keys `${prefix}${key}…`, the same in both editions: processes of
 * either edition on one Redis, prefix and key share one limit. No failure policy here: a failing Redis fails the call
 * with `StoreFailure`, and every call's outcome is told to the `Watch` with the time it began; `ErpRateLimiterRedis`
 * decides what that means.
 */
import * as Outage from "@erp-client/kernel/Outage"
import * as Scripts from "@erp-client/kernel/RedisScripts"
import * as Settings from "@erp-client/kernel/Settings"
import * as Slots from "@erp-client/kernel/Slots"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { RateLimiter, type ServiceOf, storeError, unusedStoreMethods } from "./edition.js"
import * as Limiter from "./limiter.js"

/**
 * The commands the stores send, each key whole (the prefix in it), each answer as Redis gives it; a failure is the
 * client's own error, which the connection says in words (`Connection.call`).
 */
export interface Commands {
  readonly pttl: (key: string) => Effect.Effect<number, unknown>
  readonly get: (key: string) => Effect.Effect<string | null, unknown>
  readonly zrem: (key: string, member: string) => Effect.Effect<unknown, unknown>
  /** `FIXED_WINDOW_LUA`: tokens, the refill in whole milliseconds, and the limit if there is one. */
  readonly fixedWindow: (
    key: string,
    args: ReadonlyArray<number>
  ) => Effect.Effect<readonly [number | string, number | string], unknown>
  readonly extendHold: (key: string, ttlMillis: number, untilMillis: number) => Effect.Effect<unknown, unknown>
  readonly claimHold: (key: string, ttlMillis: number, mark: string) => Effect.Effect<number | string, unknown>
  readonly settleHold: (
    key: string,
    log: string,
    mark: string,
    ttlMillis: number,
    untilMillis: number,
    windowMillis: number
  ) => Effect.Effect<unknown, unknown>
  readonly setLearned: (
    key: string,
    log: string,
    expected: string,
    next: string,
    ttlMillis: number
  ) => Effect.Effect<number | string, unknown>
  readonly logAdmit: (
    key: string,
    limit: number,
    windowMillis: number,
    marginMillis: number,
    keepMillis: number,
    entry: string,
    timeoutMillis: number
  ) => Effect.Effect<number | string, unknown>
  readonly logMark: (
    key: string,
    entry: string,
    keepMillis: number,
    afterMillis: number,
    mode: "later" | "end"
  ) => Effect.Effect<unknown, unknown>
  readonly logCount: (key: string, windowMillis: number) => Effect.Effect<number | string, unknown>
  /** The log's key, then the slots' holds' keys, then the configured window. */
  readonly logSeed: (log: string, holds: ReadonlyArray<string>, windowMillis: number) => Effect.Effect<unknown, unknown>
  readonly mark: (key: string, token: string, ttlMillis: number) => Effect.Effect<string | null, unknown>
}

export interface Connection {
  /** Runs one call within the timeout; every failure becomes a `StoreFailure` whose text holds no secret. */
  readonly call: <A>(
    what: string,
    run: (commands: Commands) => Effect.Effect<A, unknown>
  ) => Effect.Effect<A, Limiter.StoreFailure>
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

export const unwatched: Watch = { answered: () => Effect.void, failed: () => Effect.void, reconnected: () => {} }

const toStoreError = (error: Limiter.StoreFailure) => storeError(error.description, error)

// The `RateLimiterStore` on our connection. Only the fixed window is offered: the token bucket lets about twice the
// limit through one window, which is what this limiter exists to prevent.
export const makeStore = (connection: Connection, prefix: string): ServiceOf<RateLimiter.RateLimiterStore> =>
  RateLimiter.RateLimiterStore.of({
    fixedWindow: (options) => {
      // PX takes whole milliseconds; rounding the spacing up only ever spaces requests further apart.
      const refillMillis = Math.max(1, Math.ceil(Duration.toMillis(options.refillRate)))
      const args = options.limit === undefined
        ? [options.tokens, refillMillis]
        : [options.tokens, refillMillis, options.limit]
      return connection.call("fixedWindow", (redis) => redis.fixedWindow(`${prefix}${options.key}`, args)).pipe(
        Effect.map(([count, ttl]) => [Number(count), Number(ttl)] as const),
        Effect.mapError(toStoreError)
      )
    },
    tokenBucket: () =>
      Effect.fail(storeError("the token bucket is not offered: it lets about twice the limit through one window")),
    ...unusedStoreMethods
  })

/** The mark every limiter on this Redis and prefix shares (`Outage.MARK_LUA`), `token` set if there is none. */
export const readMark = (
  connection: Connection,
  prefix: string,
  token: string
): Effect.Effect<string, Limiter.StoreFailure> =>
  Effect.map(
    connection.call("mark", (redis) => redis.mark(`${prefix}erp:mark`, token, Outage.MARK_TTL_MILLIS)),
    (mark) => mark ?? ""
  )

export const makeHoldStore = (connection: Connection, prefix: string): ServiceOf<Limiter.HoldStore> =>
  Limiter.HoldStore.of({
    get: (key) =>
      Effect.flatMap(
        connection.call("hold get", (redis) => redis.pttl(`${prefix}${key}:hold`)),
        (ttl) => Number(ttl) > 0 ? Effect.map(Clock.currentTimeMillis, (now) => now + Number(ttl)) : Effect.succeed(0)
      ),
    extend: (key, untilMillis) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const ttl = Math.ceil(untilMillis - now)
        return ttl <= 0
          ? Effect.void
          : Effect.asVoid(
            connection.call("hold set", (redis) => redis.extendHold(`${prefix}${key}:hold`, ttl, untilMillis))
          )
      }),
    // The marks' ends are times of ours, kept as times to live (Redis's clock never meets ours).
    claim: (key, untilMillis) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const mark = Scripts.inFlightMark(untilMillis)
        return Effect.map(
          connection.call(
            "hold claim",
            (redis) => redis.claimHold(`${prefix}${key}:hold`, Math.max(1, Math.ceil(untilMillis - now)), mark)
          ),
          (busy) => Number(busy) > 0 ? { busyUntil: now + Number(busy) } : { claim: mark }
        )
      }),
    settle: (key, claim, untilMillis, windowMillis) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.asVoid(
          connection.call("hold settle", (redis) =>
            redis.settleHold(
              `${prefix}${key}:hold`,
              `${prefix}${Slots.limiterKeyOfSlot(key)}:log`,
              claim,
              Math.ceil(untilMillis - now),
              untilMillis,
              Math.ceil(windowMillis)
            ))
        )),
    learned: (key) =>
      Effect.map(
        connection.call("learned get", (redis) => redis.get(`${prefix}${key}:learned`)),
        Scripts.decodeLearned
      ),
    setLearned: (key, expected, next) =>
      Effect.map(
        connection.call("learned set", (redis) =>
          redis.setLearned(
            `${prefix}${key}:learned`,
            `${prefix}${key}:log`,
            Scripts.encodeLearned(expected),
            Scripts.encodeLearned(next ?? undefined),
            Math.max(1, Math.ceil(next?.ttlMillis ?? 1))
          )),
        (changed) => Number(changed) === 1
      ),
    admitLogged: (key, windows, timeoutMillis) => {
      const entry = Scripts.logEntryName()
      return Effect.map(
        connection.call("log admit", (redis) =>
          redis.logAdmit(
            `${prefix}${key}:log`,
            windows.limit,
            Math.ceil(windows.windowMillis),
            Math.ceil(windows.marginMillis),
            Math.ceil(windows.keepMillis),
            entry,
            Math.ceil(timeoutMillis ?? Settings.defaults.timeoutMillis)
          )),
        (wait) => Number(wait) > 0 ? { waitMillis: Number(wait) } : { entry }
      )
    },
    // The log keeps Redis's clock: a time of ours becomes an offset from now.
    markLogged: (key, entry, keepMillis, atMillis) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.asVoid(
          connection.call("log mark", (redis) =>
            redis.logMark(
              `${prefix}${key}:log`,
              entry,
              Math.ceil(keepMillis),
              Math.max(0, Math.ceil(atMillis - now)),
              "later"
            ))
        )),
    settleLogged: (key, entry, keepMillis, atMillis) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.asVoid(
          connection.call("log settle", (redis) =>
            redis.logMark(
              `${prefix}${key}:log`,
              entry,
              Math.ceil(keepMillis),
              Math.max(0, Math.ceil(atMillis - now)),
              "end"
            ))
        )),
    dropLogged: (key, entry) =>
      Effect.asVoid(connection.call("log drop", (redis) => redis.zrem(`${prefix}${key}:log`, entry))),
    countLogged: (key, windowMillis) =>
      Effect.map(
        connection.call("log count", (redis) => redis.logCount(`${prefix}${key}:log`, Math.ceil(windowMillis))),
        Number
      ),
    // The slots' holds are read by the script, in the same step as the log is started (`MemoryStore.seedLogged`).
    seedLogged: (key, configured) =>
      Effect.asVoid(
        connection.call("log seed", (redis) =>
          redis.logSeed(
            `${prefix}${key}:log`,
            Array.from({ length: configured.limit }, (_, i) => `${prefix}${Slots.slotKey(key, i)}:hold`),
            Math.ceil(configured.windowMillis)
          ))
      )
  })
