// Per edition: the Redis connection, on effect/persistence's Redis and the redis package (Effect 3: ioredis).
/**
 * The shared limiter's Redis: Effect 4's `Redis` service (`effect/persistence/Redis`), provided by
 * `@effect/platform-node`'s `NodeRedis` on the `redis` package, with the kernel's scripts (`RedisScripts`) sent
 * through `Redis.eval`: the `Commands` the stores of `redisStores.ts` send. No failure policy here: a failing Redis
 * fails the call with `StoreFailure`, and every call's outcome is told to the `Watch` with the time it began;
 * `ErpRateLimiterRedis` decides what that means.
 *
 * What is written by hand, and why: `NodeRedis.layer` fails to build when Redis is down at start, and a limiter whose
 * policy is `local` must start anyway; so the connection is its layer built into a scope of its own when first needed,
 * and built again on a later call after a failure (at most once a second: the limiter's outage probe). It is built
 * with its log lines off (it logs a warning for every failed reconnect; the limiter says one line per outage), with
 * no offline queue (a call while disconnected fails at once instead of waiting), and every call is bounded by the
 * timeout.
 */
import * as NodeRedis from "@effect/platform-node/NodeRedis"
import * as LimiterText from "@erp-client/kernel/LimiterText"
import * as Outage from "@erp-client/kernel/Outage"
import * as Scripts from "@erp-client/kernel/RedisScripts"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redis from "effect/persistence/Redis"
import * as Redacted from "effect/Redacted"
import * as References from "effect/References"
import * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as Limiter from "./limiter.js"
import { type Commands, type Connection, unwatched, type Watch } from "./redisStores.js"

interface Open {
  readonly commands: Commands
}

const fixedWindow = Redis.script(
  (key: string, args: ReadonlyArray<number>) => [key, ...args],
  { lua: Scripts.FIXED_WINDOW_LUA, numberOfKeys: 1 }
).withReturnType<[number, number]>()

const extendHold = Redis.script(
  (key: string, ttlMillis: number, untilMillis: number) => [key, ttlMillis, untilMillis],
  { lua: Scripts.EXTEND_HOLD_LUA, numberOfKeys: 1 }
).withReturnType<number>()

const claimHold = Redis.script(
  (key: string, ttlMillis: number, mark: string) => [key, ttlMillis, mark],
  { lua: Scripts.CLAIM_HOLD_LUA, numberOfKeys: 1 }
).withReturnType<number>()

const settleHold = Redis.script(
  (key: string, log: string, mark: string, ttlMillis: number, untilMillis: number, windowMillis: number) => [
    key,
    log,
    mark,
    ttlMillis,
    untilMillis,
    windowMillis
  ],
  { lua: Scripts.SETTLE_HOLD_LUA, numberOfKeys: 2 }
).withReturnType<number>()

const setLearned = Redis.script(
  (key: string, log: string, expected: string, next: string, ttlMillis: number) => [
    key,
    log,
    expected,
    next,
    ttlMillis
  ],
  { lua: Scripts.SET_LEARNED_LUA, numberOfKeys: 2 }
).withReturnType<number>()

const logAdmit = Redis.script(
  (
    key: string,
    limit: number,
    windowMillis: number,
    marginMillis: number,
    keepMillis: number,
    entry: string,
    timeoutMillis: number
  ) => [key, limit, windowMillis, marginMillis, keepMillis, entry, timeoutMillis],
  { lua: Scripts.LOG_ADMIT_LUA, numberOfKeys: 1 }
).withReturnType<number>()

const logMark = Redis.script(
  (key: string, entry: string, keepMillis: number, afterMillis: number, mode: "later" | "end") => [
    key,
    entry,
    keepMillis,
    afterMillis,
    mode
  ],
  { lua: Scripts.LOG_MARK_LUA, numberOfKeys: 1 }
).withReturnType<number>()

const logCount = Redis.script(
  (key: string, windowMillis: number) => [key, windowMillis],
  { lua: Scripts.LOG_COUNT_LUA, numberOfKeys: 1 }
).withReturnType<number>()

const logSeed = Redis.script(
  (
    key: string,
    holds: ReadonlyArray<string>,
    configuredWindowMillis: number
  ) => [key, ...holds, configuredWindowMillis],
  { lua: Scripts.LOG_SEED_LUA, numberOfKeys: (_key, holds) => 1 + holds.length }
).withReturnType<number>()

const mark = Redis.script(
  (key: string, token: string, ttlMillis: number) => [key, token, ttlMillis],
  { lua: Outage.MARK_LUA, numberOfKeys: 1 }
).withReturnType<string | null>()

const messageOf = (cause: unknown): string => {
  // A store's error carries the Redis error, which carries the client's.
  let inner = cause
  for (let depth = 0; depth < 4 && typeof inner === "object" && inner !== null && "cause" in inner; depth++) {
    if ((inner as { readonly cause?: unknown }).cause === undefined) break
    inner = (inner as { readonly cause: unknown }).cause
  }
  return inner instanceof Error ? inner.message : String(inner)
}

/** One connection's state: opened when first needed, in a scope of its own, and what it last said of itself. */
interface Link {
  readonly scope: Scope.Scope
  /** One connection attempt at a time. */
  readonly opening: Semaphore.Semaphore
  readonly prefix: string
  readonly timeoutMillis: number
  readonly redact: (text: string) => string
  open: Open | undefined
  connectedOnce: boolean
  /** The connection's last error (redacted), `""` once it is ready again. */
  lastConnectionError: string
  /** When the connection was lost (epoch ms), 0 while it holds. */
  lostAt: number
  readonly watch: Watch
}

/** Opens (when first needed) the connection for the life of the scope. */
export const connect = (
  url: Redacted.Redacted<string>,
  prefix: string,
  timeout: Duration.Duration,
  watch: Watch = unwatched
): Effect.Effect<Connection, never, Scope.Scope> =>
  Effect.gen(function*() {
    const link: Link = {
      scope: yield* Effect.scope,
      opening: yield* Semaphore.make(1),
      prefix,
      timeoutMillis: Math.max(1, Math.ceil(Duration.toMillis(timeout))),
      redact: LimiterText.redactor(Redacted.value(url)),
      open: undefined,
      connectedOnce: false,
      lastConnectionError: "",
      lostAt: 0,
      watch
    }
    const layer = redisLayer(url, link)
    // One connection attempt at a time; the calls waiting for it share its outcome.
    const current: Effect.Effect<Open, unknown> = Effect.suspend(() =>
      link.open !== undefined
        ? Effect.succeed(link.open)
        : link.opening.withPermits(1)(
          Effect.suspend(() => link.open !== undefined ? Effect.succeed(link.open) : openNow(link, layer))
        )
    )
    const call: Connection["call"] = (what, run) =>
      Effect.flatMap(Clock.currentTimeMillis, (startedMillis) =>
        Effect.flatMap(current, (open) =>
          run(open.commands)).pipe(
            Effect.timeoutOrElse({
              duration: link.timeoutMillis + 100,
              orElse: () => Effect.fail(new Error("Command timed out"))
            }),
            Effect.catchCause((cause) =>
              Effect.fail(new Limiter.StoreFailure({ description: failureText(link, what, causeValue(cause)) }))
            ),
            Effect.tapError((failure) => watch.failed(startedMillis, failure)),
            Effect.tap(() => watch.answered(startedMillis))
          ))
    return { call }
  })

/** `NodeRedis`'s layer, failing fast: no offline queue, a connect and a command timeout, no handshake to hang on. */
const redisLayer = (url: Redacted.Redacted<string>, link: Link) =>
  NodeRedis.layer({
    url: Redacted.value(url),
    // RESP2: no HELLO in the handshake (see `openNow`'s CLIENT SETNAME).
    RESP: 2,
    disableClientInfo: true,
    disableOfflineQueue: true,
    commandOptions: { timeout: link.timeoutMillis },
    socket: {
      connectTimeout: link.timeoutMillis,
      // The first connection fails at once (the layer is built again later); once connected, reconnect for ever in
      // the background, at most a second apart, so a Redis that comes back is used again about as soon as the
      // limiter's next probe would look.
      reconnectStrategy: (retries: number, cause: Error) =>
        link.connectedOnce ? Math.min(50 * 2 ** retries, 1_000) : cause
    }
  })

/** Builds the layer into a scope of its own, within the timeout, and makes the stores' `Open` over it. */
const openNow = (link: Link, layer: ReturnType<typeof redisLayer>): Effect.Effect<Open, unknown> =>
  Effect.gen(function*() {
    const { redact, timeoutMillis } = link
    const child = yield* Scope.fork(link.scope)
    // Building a layer cannot be interrupted, and a Redis that accepts connections but never answers holds the
    // connection's handshake (and its closing) for ever: the build runs on a fiber of its own, waited for within the
    // timeout; a build given up on closes its scope when it ends, if it ever does.
    let abandoned = false
    const build = yield* Effect.forkDetach(
      Layer.buildWithScope(layer, child).pipe(
        Effect.provideService(References.MinimumLogLevel, "None"),
        Effect.onExit((exit) => Exit.isFailure(exit) || abandoned ? Scope.close(child, Exit.void) : Effect.void)
      )
    )
    const done = yield* Effect.timeoutOption(Fiber.await(build), timeoutMillis)
    if (Option.isNone(done)) {
      abandoned = true
      return yield* Effect.fail(new Redis.RedisError({ cause: new Error("Connection timeout") }))
    }
    const built = done.value
    if (Exit.isFailure(built)) return yield* Effect.failCause(built.cause)
    const { client } = Context.get(built.value, NodeRedis.NodeRedis)
    link.connectedOnce = true
    // Every "ready" from here on is a reconnection: the store may be another, or have lost its data.
    const lost = () => {
      if (link.lostAt === 0) link.lostAt = Date.now()
    }
    client.on("error", (error: unknown) => {
      link.lastConnectionError = redact(messageOf(error))
      lost()
    })
    client.on("end", lost)
    client.on("reconnecting", lost)
    client.on("ready", () => {
      link.lastConnectionError = ""
      link.watch.reconnected(link.lostAt === 0 ? Date.now() : link.lostAt)
      link.lostAt = 0
    })
    // `close` waits for the commands in flight, for ever on a Redis that stopped answering: bounded, then the
    // socket is destroyed, so nothing keeps the process alive after the scope closes.
    // (A finalizer cannot be interrupted: the bound is a timer of its own.)
    yield* Scope.addFinalizer(
      child,
      Effect.promise(() =>
        Promise.race([
          client.close().catch(() => undefined),
          new Promise<void>((resolve) => setTimeout(resolve, timeoutMillis).unref())
        ]).finally(() => {
          if (client.isOpen) client.destroy()
        })
      )
    )
    const redis = Context.get(built.value, Redis.Redis)
    // Shows in CLIENT LIST who holds the connection. Set once connected, not in the client's handshake: a handshake
    // command to a Redis that accepts connections but never answers would hold the connection, and its closing, for
    // ever (likewise the client's library name, not sent).
    yield* Effect.ignore(redis.send("CLIENT", "SETNAME", `erp-client:${link.prefix.replace(/[^\x21-\x7e]/g, "_")}`))
    link.open = { commands: commandsOf(redis) }
    return link.open
  })

/** The commands on Effect 4's `Redis`: the kernel's scripts through `eval`, the rest through `send`. */
const commandsOf = (redis: Redis.Redis["Service"]): Commands => ({
  pttl: (key) => redis.send<number>("PTTL", key),
  get: (key) => redis.send<string | null>("GET", key),
  zrem: (key, member) => redis.send("ZREM", key, member),
  fixedWindow: redis.eval(fixedWindow),
  extendHold: redis.eval(extendHold),
  claimHold: redis.eval(claimHold),
  settleHold: redis.eval(settleHold),
  setLearned: redis.eval(setLearned),
  logAdmit: redis.eval(logAdmit),
  logMark: redis.eval(logMark),
  logCount: redis.eval(logCount),
  logSeed: redis.eval(logSeed),
  mark: redis.eval(mark)
})

/** What a failed call says: not connected (and why), no answer in time, or its message; redacted. */
const failureText = (link: Link, what: string, cause: unknown): string => {
  const message = messageOf(cause)
  const { lastConnectionError } = link
  const why = /offline|closed|ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|Socket closed/i.test(message)
    ? `not connected${
      lastConnectionError === "" || message.includes(lastConnectionError)
        ? ` (${message})`
        : ` (${lastConnectionError})`
    }`
    : /timeout|timed out/i.test(message)
    ? `no answer within ${link.timeoutMillis} ms`
    : message
  return link.redact(`Redis ${what}: ${why}`)
}

// The error a failed call ended with, or its defect, or a word for an interruption.
const causeValue = (cause: Cause.Cause<unknown>): unknown => {
  const first = cause.reasons[0]
  return first === undefined
    ? "no cause"
    : Cause.isFailReason(first)
    ? first.error
    : Cause.isDieReason(first)
    ? first.defect
    : "interrupted"
}
