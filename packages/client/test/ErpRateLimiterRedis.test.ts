import { RateLimiter } from "@effect/experimental"
import * as RedisStore from "@effect/experimental/RateLimiter/Redis"
import { HttpClient, HttpClientResponse } from "@effect/platform"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { ErpClient, ErpRateLimiter, ErpRateLimiterRedis } from "@erp-client/client"
import {
  Clock,
  ConfigProvider,
  Context,
  Duration,
  Effect,
  Either,
  Exit,
  Fiber,
  Layer,
  Logger,
  Redacted,
  Schedule,
  Schema
} from "effect"
import { Redis } from "ioredis"
import * as Net from "node:net"
import { inspect } from "node:util"
import * as RedisInternal from "../src/internal/redis.js"
import * as RedisStores from "../src/internal/redisStores.js"
import { type OwnRedis, startRedis } from "./redisServer.js"
import { maxInAnyWindow } from "./windows.js"

// The shared Redis of this machine: never flushed, never stopped; each test works under its own prefix and deletes
// only its own keys.
const REDIS = "redis://127.0.0.1:6379"
// Nothing listens on port 1: connections are refused at once.
const UNREACHABLE = "redis://:redis-pw-DO-NOT-LEAK@127.0.0.1:1"
const RUN = `erp-test:${process.pid}:${Date.now().toString(36)}`
let counter = 0
const uniquePrefix = (name: string) => `${RUN}:${name}:${counter++}:`

const admin = new Redis(REDIS, { lazyConnect: true, maxRetriesPerRequest: 1 })
/** A sorted set's members and scores, as `ZRANGE … WITHSCORES` gives them in turn. */
const pairs = (flat: ReadonlyArray<string>) =>
  Array.from({ length: flat.length / 2 }, (_, i) => ({ name: flat[2 * i]!, score: Number(flat[2 * i + 1]) }))
const keysUnder = async (prefix: string) => {
  const keys: Array<string> = []
  let cursor = "0"
  do {
    const [next, batch] = await admin.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000)
    cursor = next
    keys.push(...batch)
  } while (cursor !== "0")
  return keys
}
afterAll(async () => {
  const keys = await keysUnder(`${RUN}:`)
  if (keys.length > 0) await admin.del(...keys)
  await admin.quit()
})

/** Collects log lines (level and message) instead of printing them. */
const captureLogs = () => {
  const lines: Array<string> = []
  const layer = Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ logLevel, message }) => {
      lines.push(`${logLevel.label} ${Array.isArray(message) ? message.join(" ") : String(message)}`)
    })
  )
  return { lines, layer }
}

/** A TCP proxy on 127.0.0.1 in front of the shared Redis, which a test can cut (and restore) mid-way. */
const redisProxy = () =>
  Effect.acquireRelease(
    Effect.async<{ port: number; cut: () => Promise<void>; restore: () => Promise<void>; close: () => Promise<void> }>(
      (resume) => {
        const sockets = new Set<Net.Socket>()
        let server: Net.Server
        let port = 0
        const listen = () =>
          new Promise<void>((resolve, reject) => {
            server = Net.createServer((client) => {
              const upstream = Net.connect(6379, "127.0.0.1")
              for (const s of [client, upstream]) {
                sockets.add(s)
                s.on("error", () => s.destroy())
                s.on("close", () => sockets.delete(s))
              }
              client.pipe(upstream).pipe(client)
            })
            server.once("error", reject)
            server.listen(port, "127.0.0.1", () => {
              port = (server.address() as Net.AddressInfo).port
              resolve()
            })
          })
        const cut = () =>
          new Promise<void>((resolve) => {
            server.close(() => resolve())
            for (const s of sockets) s.destroy()
          })
        void listen().then(() => resume(Effect.succeed({ port, cut, restore: listen, close: cut })))
      }
    ),
    (proxy) => Effect.promise(() => proxy.close().catch(() => undefined))
  )

const L = 10
const W = 1_000

/** A request that ends as soon as it starts: its place, handed back at once (what it was admitted with). */
const sent = (limiter: ErpRateLimiter.Service, key: string) =>
  Effect.tap(
    limiter.acquire(key),
    (acquired) => Effect.flatMap(Clock.currentTimeMillis, (now) => acquired.release(now))
  )

describe("ErpRateLimiterRedis", () => {
  it.scopedLive("its counter gives the memory store's and the library's Redis store's answers", () =>
    Effect.gen(function*() {
      const prefix = uniquePrefix("store")
      // The library's store, only to compare answers while Redis is up (its connection is not the one we run on).
      const library = yield* Layer.build(
        RedisStore.layerStore({ host: "127.0.0.1", port: 6379, prefix: `${prefix}lib:` })
      )
      const connection = yield* RedisInternal.connect(Redacted.make(REDIS), `${prefix}ours:`, Duration.seconds(1))
      const ours = Context.make(RateLimiter.RateLimiterStore, RedisStores.makeStore(connection, `${prefix}ours:`))
      const memory = yield* Layer.build(RateLimiter.layerStoreMemory)
      // Refills of 40 s: a time to live off by one refill is 40 s off, so the stores read moments apart (seconds, on a
      // starved machine) still tell a wrong answer from a right one.
      const calls = [
        { tokens: 1, refill: 40_000, limit: undefined },
        { tokens: 1, refill: 40_000, limit: undefined },
        { tokens: 2, refill: 40_000, limit: undefined },
        { tokens: 1, refill: 40_000, limit: 3 },
        { tokens: 1, refill: 40_000, limit: 10 }
      ]
      for (const call of calls) {
        const options = { key: "k", tokens: call.tokens, refillRate: Duration.millis(call.refill), limit: call.limit }
        const answers = yield* Effect.all(
          [library, ours, memory].map((context) =>
            Effect.flatMap(RateLimiter.RateLimiterStore, (store) => store.fixedWindow(options)).pipe(
              Effect.provide(context)
            )
          )
        )
        const [lib, our, mem] = answers
        expect(our[0]).toBe(lib[0])
        expect(our[0]).toBe(mem[0])
        // The time to live is read moments apart in three stores.
        expect(Math.abs(our[1] - lib[1])).toBeLessThan(5_000)
        expect(Math.abs(our[1] - mem[1])).toBeLessThan(5_000)
      }
      expect((yield* Effect.promise(() => keysUnder(prefix))).length).toBeGreaterThan(0)
    }))

  it.scopedLive(
    "keeps the limit in every window across three limiters on three connections sharing one Redis",
    () =>
      Effect.gen(function*() {
        const prefix = uniquePrefix("invariant")
        // A window long enough that the burst below is dealt within it even on a starved machine.
        const window = 2_000
        const limiters = yield* Effect.all(
          [0, 1, 2].map(() => ErpRateLimiterRedis.make({ url: REDIS, prefix, limit: L, window }))
        )
        // 25 requests at once (2.5 windows of demand), dealt over the three limiters.
        const acquired = yield* Effect.forEach(
          Array.from({ length: 25 }, (_, i) => i),
          (i) => sent(limiters[i % 3]!, "erp:k:partner/list"),
          { concurrency: "unbounded" }
        )
        // When the limiter let each request go (its clock, read as it marked the slot busy), not when this fiber ran
        // again: on a loaded machine the two are hundreds of ms apart, and the wire sees the former.
        const starts = acquired.map((a) => a.startedMillis)
        const worst = maxInAnyWindow(starts, window)
        console.log(`3 limiters on one Redis: at most ${worst} starts in any ${window} ms (limit ${L})`)
        expect(worst).toBeLessThanOrEqual(L)
        // Not throttled below the limit either: exactly L went at once, the rest waited for a slot (the limiter's own
        // account, not a stopwatch: a limiter letting 7 a window through has 7 here whatever the machine's load).
        expect(acquired.filter((a) => a.spacedMillis === 0 && a.pausedMillis === 0)).toHaveLength(L)
        // A different API key (another digest) or endpoint is another budget: not held up by the 25 above.
        for (
          const other of [
            yield* limiters[0]!.acquire("erp:other-key:partner/list"),
            yield* limiters[1]!.acquire("erp:k:partner/get")
          ]
        ) {
          expect([other.spacedMillis, other.pausedMillis]).toEqual([0, 0])
        }
        const keys = yield* Effect.promise(() => keysUnder(prefix))
        expect(keys.some((k) => k === `${prefix}erp:k:partner/list:ticket`)).toBe(true)
        expect(keys.some((k) => k.startsWith(`${prefix}erp:k:partner/list:slot:`))).toBe(true)
      }),
    30_000
  )

  it.effect("three memory limiters do let more than L through (the measure can fail)", () =>
    Effect.gen(function*() {
      const limiters = yield* Effect.all(
        [0, 1, 2].map(() => ErpRateLimiter.make({ limit: L, window: Duration.millis(W) }))
      )
      // On the TestClock: each lets its own L go at once, so the window holds 3L.
      const starts = yield* Effect.forEach(
        Array.from({ length: 3 * L }, (_, i) => i),
        (i) => Effect.map(limiters[i % 3]!.acquire("erp:k:partner/list"), (acquired) => acquired.startedMillis),
        { concurrency: "unbounded" }
      )
      expect(maxInAnyWindow(starts, W)).toBe(3 * L)
    }))

  it.scopedLive("a pause set through one limiter holds up the others, and a shorter pause does not cut it short", () =>
    Effect.gen(function*() {
      const prefix = uniquePrefix("pause")
      const [a, b, c] = yield* Effect.all(
        [0, 1, 2].map(() => ErpRateLimiterRedis.make({ url: REDIS, prefix, limit: L, window: Duration.millis(W) }))
      )
      const key = "erp:k:partner/list"
      const t0 = Date.now()
      yield* a!.pause(key, t0 + 600)
      yield* c!.pause(key, t0 + 100)
      const acquired = yield* b!.acquire(key)
      // On the limiter's own clock: it sat out the longer pause, and only that (a starved machine starts it later,
      // never sooner).
      expect(acquired.startedMillis).toBeGreaterThanOrEqual(t0 + 600)
      expect(acquired.pausedMillis).toBeGreaterThan(500)
      expect(acquired.pausedMillis).toBeLessThanOrEqual(600)
      // The pause lives in Redis as a time to live: it is gone once over.
      expect(yield* Effect.promise(() => admin.pttl(`${prefix}${key}:hold`))).toBe(-2)
      // A pause past the caller's deadline is refused at once, as in memory.
      yield* a!.pause(key, Date.now() + 5_000)
      const beyond = yield* Effect.flip(b!.acquire(key, Date.now() + 1_000))
      expect(beyond._tag).toBe("PauseBeyondDeadline")
    }))

  it.scopedLive("a bounded acquire across processes: past its bound it fails at once and takes no place", () =>
    Effect.gen(function*() {
      const prefix = uniquePrefix("bound")
      const [a, b] = yield* Effect.all(
        [0, 1].map(() => ErpRateLimiterRedis.make({ url: REDIS, prefix, limit: 2, window: Duration.seconds(30) }))
      )
      const key = "erp:k:partner/get"
      yield* a!.acquire(key)
      yield* a!.acquire(key)
      // Both places are taken for 30 s: the other process, bounded to one second, is refused at once.
      const refused = yield* Effect.flip(b!.acquire(key, undefined, Date.now() + 1_000))
      expect(refused._tag).toBe("WaitBeyondBound")
      expect(refused._tag === "WaitBeyondBound" && refused.startsAt - Date.now()).toBeGreaterThan(25_000)
      // No slot counter went past its one use: the refusal took nothing.
      for (const slot of [0, 1]) {
        expect(yield* Effect.promise(() => admin.get(`${prefix}${key}:slot:${slot}`))).toBe("1")
      }
    }))

  it.scopedLive("a request in flight holds its slot for every process until it ends, then a window (and the margin)", () =>
    Effect.gen(function*() {
      const prefix = uniquePrefix("in-flight")
      const [a, b] = yield* Effect.all(
        [0, 1].map(() => ErpRateLimiterRedis.make({ url: REDIS, prefix, limit: 1, window: 200, margin: 50 }))
      )
      const key = "erp:k:partner/get"
      const hold = `${prefix}${key}:slot:0:hold`
      // In flight with a 5 s timeout: held in Redis that long and a window (and the margin) at most
      const first = yield* a!.acquire(key, undefined, undefined, 5_000)
      expect(yield* Effect.promise(() => admin.get(hold))).toContain(":in-flight:")
      expect(yield* Effect.promise(() => admin.pttl(hold))).toBeGreaterThan(250)
      expect(yield* Effect.promise(() => admin.pttl(hold))).toBeLessThanOrEqual(5_250)
      // Two windows later it is still in flight: the other process may not take the slot
      yield* Effect.sleep("400 millis")
      const refused = yield* Effect.flip(b!.acquire(key, undefined, Date.now() + 100))
      expect(refused._tag).toBe("WaitBeyondBound")
      // It ends: the slot is busy the window and the margin after its end, and then the other process has it
      const endedMillis = yield* Clock.currentTimeMillis
      yield* first.release(endedMillis)
      expect(yield* Effect.promise(() => admin.get(hold))).not.toContain(":in-flight:")
      expect(yield* Effect.promise(() => admin.pttl(hold))).toBeLessThanOrEqual(250)
      const next = yield* b!.acquire(key)
      expect(next.startedMillis).toBeGreaterThanOrEqual(endedMillis + 250)
      expect(next.startedMillis).toBeGreaterThanOrEqual(first.startedMillis + 400)
    }))

  it.scopedLive("under a learned limit, a request in flight counts in the shared log until it ends, then a learned window", () =>
    Effect.gen(function*() {
      const prefix = uniquePrefix("learned-in-flight")
      const [a, b] = yield* Effect.all(
        [0, 1].map(() => ErpRateLimiterRedis.make({ url: REDIS, prefix, limit: 10, window: Duration.seconds(30) }))
      )
      const key = "erp:k:partner/get"
      const log = `${prefix}${key}:log`
      // Scores are times on Redis's clock: how far ahead of it each entry lies (ms)
      const ahead = () =>
        Effect.promise(async () => {
          const [seconds, micros] = await admin.time()
          const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)
          return (pairs(await admin.zrange(log, 0, -1, "WITHSCORES"))).map(({ name, score }) => ({
            name,
            ahead: score - now
          }))
        })
      // In flight with a 5 s timeout when the server says 1 per second: the log starts with it, named by its claim
      const first = yield* a!.acquire(key, undefined, undefined, 5_000)
      const reset = first.startedMillis + 1_000
      yield* a!.learn(key, first, {
        serverLimit: 1,
        tooManyRequests: false,
        startedMillis: first.startedMillis,
        reset: { at: reset, raw: String(reset) }
      })
      expect((yield* Effect.promise(() => admin.get(`${prefix}${key}:learned`)))?.split(":").slice(0, 2)).toEqual([
        "1",
        "1000"
      ])
      const mark = yield* Effect.promise(() => admin.get(`${prefix}${key}:slot:0:hold`))
      const [seeded] = yield* ahead()
      expect(seeded!.name).toBe(`seed:${mark}`)
      // Counted for its timeout (and the limiter's margin, 600 ms), far past the learned window
      expect(seeded!.ahead).toBeGreaterThan(4_000)
      expect(seeded!.ahead).toBeLessThanOrEqual(5_600)
      const refused = yield* Effect.flip(b!.acquire(key, undefined, Date.now() + 300))
      expect(refused._tag).toBe("WaitBeyondBound")
      // It ends: the seed counts from its end and the margin, in every process
      yield* first.release(yield* Clock.currentTimeMillis)
      const [ended] = yield* ahead()
      expect(ended!.name).toBe(`seed:${mark}`)
      expect(ended!.ahead).toBeLessThanOrEqual(600)
      // A request admitted under the learned limit, in flight: its entry counts for its timeout and the margin (50 ms)
      const second = yield* b!.acquire(key, undefined, undefined, 5_000)
      expect(second.learned).toMatchObject({ limit: 1, windowMillis: 1_000 })
      const own = (yield* ahead()).find((entry) => !entry.name.startsWith("seed:"))
      expect(own!.ahead).toBeGreaterThan(4_000)
      expect(own!.ahead).toBeLessThanOrEqual(5_050)
      const refusedAgain = yield* Effect.flip(a!.acquire(key, undefined, Date.now() + 300))
      expect(refusedAgain._tag).toBe("WaitBeyondBound")
      const endedMillis = yield* Clock.currentTimeMillis
      yield* second.release(endedMillis)
      const settled = (yield* ahead()).find((entry) => entry.name === own!.name)
      expect(settled!.ahead).toBeLessThanOrEqual(50)
      // The next starts a learned window and the margin after it ended, not before
      const third = yield* a!.acquire(key)
      expect(third.startedMillis).toBeGreaterThanOrEqual(endedMillis + 1_050)
    }))

  it.scopedLive("a holder that dies in flight keeps the slot its timeout and a window (and the margin), then Redis drops it", () =>
    Effect.gen(function*() {
      const prefix = uniquePrefix("dead-holder")
      const key = "erp:k:partner/get"
      const hold = `${prefix}${key}:slot:0:hold`
      // A process that takes the slot for a request with a 300 ms timeout and dies: its scope closes, no release
      const dead = yield* Effect.scoped(
        Effect.flatMap(
          ErpRateLimiterRedis.make({ url: REDIS, prefix, limit: 1, window: 200, margin: 50 }),
          (limiter) => limiter.acquire(key, undefined, undefined, 300)
        )
      )
      const ttl = yield* Effect.promise(() => admin.pttl(hold))
      expect(ttl).toBeGreaterThan(250)
      expect(ttl).toBeLessThanOrEqual(550)
      const other = yield* ErpRateLimiterRedis.make({ url: REDIS, prefix, limit: 1, window: 200, margin: 50 })
      const next = yield* other.acquire(key)
      // Not before the mark's end, and the mark gone from Redis by itself
      expect(next.startedMillis).toBeGreaterThanOrEqual(dead.startedMillis + 550)
      expect(yield* Effect.promise(() => admin.get(hold))).toContain(":in-flight:")
      yield* next.release(yield* Clock.currentTimeMillis)
      expect(yield* Effect.promise(() => admin.get(hold))).not.toContain(":in-flight:")
    }))

  it.scopedLive("a limit learned by one process holds for the others, counted in one log; a 429 judged by two is one change", () => {
    const logs = captureLogs()
    return Effect.gen(function*() {
      const prefix = uniquePrefix("learn")
      const [a, b] = yield* Effect.all(
        [0, 1].map(() => ErpRateLimiterRedis.make({ url: REDIS, prefix, limit: 100, window: Duration.seconds(30) }))
      )
      const key = "erp:k:partner/list"
      const first = yield* a!.acquire(key)
      expect(first).toMatchObject({ limit: 100, windowMillis: 30_000, learned: undefined })
      yield* first.release(Date.now())
      // The server says 4, and a reset 20 s from the request's start (in epoch ms): 4 per 20 s.
      const reset = first.startedMillis + 20_000
      yield* a!.learn(key, first, {
        serverLimit: 4,
        tooManyRequests: false,
        startedMillis: first.startedMillis,
        reset: { at: reset, raw: String(reset) }
      })
      const second = yield* b!.acquire(key)
      expect(second).toMatchObject({ limit: 4, windowMillis: 20_000, learned: { limit: 4, from: "header" } })
      expect(yield* Effect.promise(() => admin.pttl(`${prefix}${key}:learned`))).toBeGreaterThan(3_000_000)
      // One log for both: the request sent before it was learned, and three more, by either process; a fifth must wait.
      const third = yield* a!.acquire(key)
      const fourth = yield* b!.acquire(key)
      const refused = yield* Effect.flip(a!.acquire(key, undefined, Date.now() + 1_000))
      expect(refused._tag).toBe("WaitBeyondBound")
      expect(refused._tag === "WaitBeyondBound" && refused.startsAt - Date.now()).toBeGreaterThan(15_000)
      expect(yield* Effect.promise(() => admin.zcard(`${prefix}${key}:log`))).toBe(4)
      // The server says ours again (to a request admitted under the 4): forgotten, with its log, by every process.
      yield* b!.learn(key, second, { serverLimit: 100, tooManyRequests: false, startedMillis: second.startedMillis })
      const fifth = yield* a!.acquire(key)
      expect(fifth.limit).toBe(100)
      // Requests end: one still in flight when a limit is learned counts for its whole timeout (30 s) in the new log
      for (const done of [second, third, fourth, fifth]) yield* done.release(Date.now())
      expect(yield* Effect.promise(() => admin.exists(`${prefix}${key}:learned`, `${prefix}${key}:log`))).toBe(0)
      // Two processes meet a 429 that says no limit, each admitted under the limiter's own: one probe, not two.
      const [x, y] = yield* Effect.all([a!.acquire(key), b!.acquire(key)])
      const heard = { serverLimit: undefined, tooManyRequests: true, startedMillis: Date.now() }
      yield* Effect.all([a!.learn(key, x!, heard), b!.learn(key, y!, heard)], { concurrency: 2 })
      yield* x!.release(Date.now())
      yield* y!.release(Date.now())
      expect((yield* a!.acquire(key)).learned).toMatchObject({ limit: 1, from: "refusals" })
      // Said once per change, by the process that made it.
      expect(logs.lines.filter((line) => line.includes("without saying its limit"))).toHaveLength(1)
      expect(logs.lines.filter((line) => line.includes("4 per 20 s"))).toHaveLength(1)
    }).pipe(Effect.provide(logs.layer))
  })

  describe("when Redis cannot be reached", () => {
    it.scopedLive("\"fail\": acquire fails fast with StoreFailure, and the URL's password is nowhere", () => {
      const logs = captureLogs()
      return Effect.gen(function*() {
        // A Redis never reached gets the policy at once: no grace, and no wait for the (long) timeout.
        const limiter = yield* ErpRateLimiterRedis.make({
          url: UNREACHABLE,
          prefix: uniquePrefix("fail"),
          limit: L,
          window: Duration.millis(W),
          onFailure: "fail",
          timeout: "20 seconds"
        })
        const t0 = Date.now()
        const errors = yield* Effect.forEach([1, 2, 3], () => Effect.flip(limiter.acquire("erp:k:partner/list")))
        // Far below one timeout (refused at once), with room for a starved machine.
        expect(Date.now() - t0).toBeLessThan(10_000)
        for (const error of errors) {
          expect(error._tag).toBe("StoreFailure")
          expect(inspect(error) + JSON.stringify(error)).not.toContain("DO-NOT-LEAK")
        }
        expect((errors[0] as ErpRateLimiter.StoreFailure).description).toMatch(/not connected|ECONNREFUSED/)
        const pause = yield* Effect.flip(limiter.pause("erp:k:partner/list", Date.now() + 1000))
        expect(pause._tag).toBe("StoreFailure")
        const warnings = logs.lines.filter((l) => l.startsWith("WARN"))
        expect(warnings).toHaveLength(1)
        expect(warnings[0]).toContain("requests fail with RateLimiterUnavailable")
        expect(logs.lines.join("\n")).not.toContain("DO-NOT-LEAK")
      }).pipe(Effect.provide(logs.layer))
    })

    it.scopedLive("a Redis that accepts connections but never answers: calls fail within the timeout", () =>
      Effect.gen(function*() {
        const sockets = new Set<Net.Socket>()
        const server = yield* Effect.acquireRelease(
          Effect.async<Net.Server>((resume) => {
            const server = Net.createServer((socket) => {
              sockets.add(socket)
              socket.on("error", () => socket.destroy())
            })
            server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
          }),
          (server) =>
            Effect.async<void>((resume) => {
              for (const socket of sockets) socket.destroy()
              server.close(() => resume(Effect.void))
            })
        )
        const port = (server.address() as Net.AddressInfo).port
        const t0 = Date.now()
        const limiter = yield* ErpRateLimiterRedis.make({
          url: `redis://127.0.0.1:${port}`,
          prefix: uniquePrefix("hung"),
          limit: L,
          window: Duration.millis(W),
          timeout: "300 millis"
        })
        const error = yield* Effect.flip(limiter.acquire("erp:k:partner/list"))
        expect(error._tag).toBe("StoreFailure")
        // Connecting waits at most the timeout; the call then fails at once (or after the timeout): never hangs.
        expect((error as ErpRateLimiter.StoreFailure).description).toMatch(/no answer within 300 ms|not connected/)
        expect(Date.now() - t0).toBeLessThan(10_000)
      }).pipe(Effect.provide(captureLogs().layer)))

    it.scopedLive("\"fail\" through the client: RateLimiterUnavailable and nothing sent", () =>
      Effect.gen(function*() {
        let sent = 0
        const http = Layer.succeed(
          HttpClient.HttpClient,
          HttpClient.make((request) =>
            Effect.sync(() => {
              sent++
              return HttpClientResponse.fromWeb(request, new Response("{}"))
            })
          )
        )
        const client = yield* Layer.build(
          ErpClient.layer({
            baseUrl: "https://erp.example.com/api/",
            apiKey: Redacted.make("sk-test-redis")
          }).pipe(
            Layer.provide(
              ErpRateLimiterRedis.layer({ url: Redacted.make(UNREACHABLE), prefix: uniquePrefix("client-fail") })
            ),
            Layer.provide(http)
          )
        )
        const error = yield* Effect.flip(
          Effect.flatMap(ErpClient.ErpClient, (c) => c.get("partner/get", Schema.Unknown)).pipe(Effect.provide(client))
        )
        expect(error._tag).toBe("RateLimiterUnavailable")
        expect(error.message).not.toContain("DO-NOT-LEAK")
        expect(sent).toBe(0)
      }).pipe(Effect.provide(captureLogs().layer)))

    it.scopedLive("\"local\": falls back to this process's limiter with one warning, and still keeps the limit", () => {
      const logs = captureLogs()
      return Effect.gen(function*() {
        const limiter = yield* ErpRateLimiterRedis.make({
          url: UNREACHABLE,
          prefix: uniquePrefix("local"),
          limit: 3,
          window: Duration.millis(400),
          onFailure: "local"
        })
        const acquired = yield* Effect.forEach(
          Array.from({ length: 7 }, () => 0),
          () => sent(limiter, "erp:k:partner/list"),
          { concurrency: "unbounded" }
        )
        // A Redis never reached: the local limit at once (the first three without waiting), and kept. (On a starved
        // machine a window may pass before a later one asks: it too goes at once, and the window check still holds.)
        expect(maxInAnyWindow(acquired.map((a) => a.startedMillis), 400)).toBeLessThanOrEqual(3)
        expect(acquired.filter((a) => a.spacedMillis === 0).length).toBeGreaterThanOrEqual(3)
        const warnings = logs.lines.filter((l) => l.startsWith("WARN"))
        expect(warnings).toHaveLength(1)
        expect(warnings[0]).toContain("falling back to this process's own limit")
        expect(logs.lines.join("\n")).not.toContain("DO-NOT-LEAK")
      }).pipe(Effect.provide(logs.layer))
    })
  })

  describe("when Redis fails midway (a proxy in front of it is cut), with no grace", () => {
    for (const policy of ["fail", "local"] as const) {
      it.scopedLive(`"${policy}": ${policy === "fail" ? "fails" : "goes local"} while cut, then shares again`, () => {
        const logs = captureLogs()
        return Effect.gen(function*() {
          const proxy = yield* redisProxy()
          const prefix = uniquePrefix(`midway-${policy}`)
          const limiter = yield* ErpRateLimiterRedis.make({
            url: `redis://127.0.0.1:${proxy.port}`,
            prefix,
            limit: L,
            window: Duration.millis(W),
            onFailure: policy,
            grace: 0,
            timeout: "20 seconds"
          })
          const key = "erp:k:partner/list"
          const ticket = () => Effect.promise(() => admin.get(`${prefix}${key}:ticket`)).pipe(Effect.map(Number))
          yield* sent(limiter, key)
          expect(yield* ticket()).toBe(1)
          yield* Effect.promise(proxy.cut)
          const t0 = Date.now()
          const during = yield* Effect.either(sent(limiter, key))
          // The connection is gone, so no wait for the (long) timeout; and no grace.
          expect(Date.now() - t0).toBeLessThan(10_000)
          if (policy === "fail") {
            expect(Either.isLeft(during) && during.left._tag).toBe("StoreFailure")
          } else {
            expect(Either.isRight(during)).toBe(true)
          }
          // Nothing counted in Redis while cut (the ticket of the first may have lapsed meanwhile).
          expect(yield* ticket()).toBeLessThanOrEqual(1)
          yield* Effect.promise(proxy.restore)
          // ioredis reconnects in the background; the limiter tries Redis again at most once a second.
          yield* Effect.repeat(Effect.zipRight(Effect.either(sent(limiter, key)), ticket()), {
            until: (n) => n >= 2,
            schedule: Schedule.spaced("100 millis").pipe(Schedule.upTo("5 seconds"))
          })
          expect(logs.lines.filter((l) => l.startsWith("WARN"))).toHaveLength(1)
          expect(logs.lines.some((l) => l.startsWith("INFO") && l.includes("answers again"))).toBe(true)
        }).pipe(Effect.provide(logs.layer))
      }, 15_000)
    }
  })

  describe("when Redis stops answering for a while (a redis-server of the test's own, frozen or restarted)", () => {
    let own: OwnRedis & { readonly close: () => Promise<void> }
    beforeAll(async () => {
      own = await startRedis()
    })
    afterAll(() => own?.close())
    const ownTicket = (prefix: string, key: string) =>
      Effect.promise(async () => {
        const client = new Redis(own.url, { maxRetriesPerRequest: 1 })
        try {
          return Number(await client.get(`${prefix}${key}:ticket`))
        } finally {
          client.disconnect()
        }
      })

    // The limiters below wait 2 s for an answer: a freeze is noticed after that, and a machine at load 8 does not
    // starve a call that long, which would be an outage of its own (and a second warning).

    /**
     * `count` requests through `limiter`, 4 at a time as an export sends them, each handed back as it ends; Redis
     * frozen from the 10th start for `frozenMillis`. What each acquire gave (or how it failed).
     */
    const exportThrough = (limiter: ErpRateLimiter.Service, key: string, count: number, frozenMillis: number) =>
      Effect.gen(function*() {
        let started = 0
        const work = yield* Effect.fork(
          Effect.forEach(
            Array.from({ length: count }, () => 0),
            () =>
              Effect.either(limiter.acquire(key)).pipe(
                Effect.tap((acquired) =>
                  Either.isLeft(acquired) ? Effect.void : Effect.flatMap(
                    Effect.sync(() => started++),
                    () => Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.ignore(acquired.right.release(now)))
                  )
                )
              ),
            { concurrency: 4 }
          )
        )
        while (started < 10) yield* Effect.sleep("10 millis")
        own.freeze()
        yield* Effect.sleep(Duration.millis(frozenMillis))
        own.thaw()
        return yield* Fiber.join(work)
      })

    it.scopedLive("frozen 5 s, within the grace: requests wait and go on through Redis, each counted there", () => {
      const logs = captureLogs()
      return Effect.gen(function*() {
        const prefix = uniquePrefix("frozen")
        const key = "erp:k:partner/list"
        const limiter = yield* ErpRateLimiterRedis.make({
          url: own.url,
          prefix,
          limit: L,
          window: Duration.millis(W),
          timeout: "2 seconds",
          grace: "10 seconds"
        })
        const results = yield* exportThrough(limiter, key, 40, 5_000)
        const acquired = results.filter(Either.isRight).map((r) => r.right)
        expect(results.filter(Either.isLeft)).toEqual([])
        // Not one request went without its ticket and slot taken in Redis: a request admitted otherwise (a local
        // guess while Redis was frozen) would leave the ticket short of the requests.
        expect(yield* ownTicket(prefix, key)).toBeGreaterThanOrEqual(40)
        expect(maxInAnyWindow(acquired.map((a) => a.startedMillis), W)).toBeLessThanOrEqual(L)
        // Said once when it started, once when it ended.
        const warnings = logs.lines.filter((l) => l.startsWith("WARN"))
        expect(warnings).toHaveLength(1)
        expect(warnings[0]).toContain("requests wait up to 10 s for it")
        expect(logs.lines.filter((l) => l.includes("answers again after"))).toHaveLength(1)
      }).pipe(Effect.provide(logs.layer))
    }, 30_000)

    it.scopedLive("restarted empty: its lost count is waited out, a window after it stopped, the limit kept", () => {
      const logs = captureLogs()
      return Effect.gen(function*() {
        const prefix = uniquePrefix("restarted")
        const key = "erp:k:partner/list"
        const window = 3_000
        const limiter = yield* ErpRateLimiterRedis.make({
          url: own.url,
          prefix,
          limit: 5,
          window
        })
        // A full window, then Redis restarted empty (its count of those five gone), then five more.
        const before = yield* Effect.forEach([1, 2, 3, 4, 5], () => limiter.acquire(key), { concurrency: 5 })
        yield* Effect.promise(() => own.stop().then(() => own.start()))
        const after = yield* Effect.forEach([1, 2, 3, 4, 5], () => limiter.acquire(key), { concurrency: 5 })
        const starts = [...before, ...after].map((a) => a.startedMillis)
        expect(maxInAnyWindow(starts, window)).toBeLessThanOrEqual(5)
        // Said once; an outage too, if a call met the restart (the connection may also be made again unasked).
        expect(logs.lines.filter((l) => l.includes("came back without its data"))).toHaveLength(1)
        expect(logs.lines.filter((l) => l.startsWith("WARN")).length).toBeLessThanOrEqual(1)
      }).pipe(Effect.provide(logs.layer))
    }, 30_000)

    it.scopedLive(
      "frozen 5 s, past the grace, \"local\": its own limit from a window after it stopped, never above it",
      () => {
        const logs = captureLogs()
        return Effect.gen(function*() {
          const prefix = uniquePrefix("frozen-local")
          const key = "erp:k:partner/list"
          const limiter = yield* ErpRateLimiterRedis.make({
            url: own.url,
            prefix,
            limit: L,
            window: Duration.millis(W),
            timeout: "2 seconds",
            grace: "500 millis",
            onFailure: "local"
          })
          const results = yield* exportThrough(limiter, key, 60, 5_000)
          const acquired = results.filter(Either.isRight).map((r) => r.right)
          expect(results.filter(Either.isLeft)).toEqual([])
          // Some went by the local limit while Redis was frozen (Redis never counted them), and across the three
          // stretches (shared, local, shared again) no window held more than the limit.
          expect(yield* ownTicket(prefix, key)).toBeLessThan(60)
          expect(maxInAnyWindow(acquired.map((a) => a.startedMillis), W)).toBeLessThanOrEqual(L)
          const warnings = logs.lines.filter((l) => l.startsWith("WARN"))
          expect(warnings).toHaveLength(1)
          expect(warnings[0]).toContain("then fall back to this process's own limit")
          expect(logs.lines.filter((l) => l.includes("answers again after"))).toHaveLength(1)
        }).pipe(Effect.provide(logs.layer))
      },
      30_000
    )

    it.scopedLive("frozen past the grace, \"fail\": StoreFailure, nothing admitted, then shared again", () => {
      const logs = captureLogs()
      return Effect.gen(function*() {
        const prefix = uniquePrefix("frozen-fail")
        const key = "erp:k:partner/get"
        // A long window: the first request's ticket outlives the test.
        const limiter = yield* ErpRateLimiterRedis.make({
          url: own.url,
          prefix,
          limit: L,
          window: "30 seconds",
          timeout: "2 seconds",
          grace: "500 millis"
        })
        yield* limiter.acquire(key)
        own.freeze()
        const during = yield* Effect.either(limiter.acquire(key)).pipe(Effect.ensuring(Effect.sync(() => own.thaw())))
        expect(Either.isLeft(during) && during.left._tag).toBe("StoreFailure")
        yield* Effect.retry(limiter.acquire(key), Schedule.spaced("100 millis").pipe(Schedule.upTo("10 seconds")))
        expect(yield* ownTicket(prefix, key)).toBe(2)
        expect(logs.lines.filter((l) => l.startsWith("WARN"))).toHaveLength(1)
        expect(logs.lines.filter((l) => l.includes("answers again after"))).toHaveLength(1)
      }).pipe(Effect.provide(logs.layer))
    }, 30_000)
  })

  describe("configuration", () => {
    it.effect("ERP_REDIS_URL and friends are read from the environment; the URL stays redacted", () =>
      Effect.gen(function*() {
        const options = yield* ErpRateLimiterRedis.fromEnv.pipe(
          Effect.withConfigProvider(ConfigProvider.fromMap(
            new Map([
              ["ERP_REDIS_URL", "redis://:redis-pw-DO-NOT-LEAK@10.0.0.5:6380/2"],
              ["ERP_REDIS_PREFIX", "team-a:"],
              ["ERP_REDIS_ON_FAILURE", "local"],
              ["ERP_REDIS_TIMEOUT", "250 millis"],
              ["ERP_RATE_LIMIT", "40"]
            ])
          ))
        )
        const settings = yield* ErpRateLimiterRedis.resolve(options)
        expect(settings.prefix).toBe("team-a:")
        expect(settings.onFailure).toBe("local")
        expect(settings.limit).toBe(40)
        expect(Duration.toMillis(settings.timeout)).toBe(250)
        expect(Redacted.value(settings.url)).toBe("redis://:redis-pw-DO-NOT-LEAK@10.0.0.5:6380/2")
        expect(inspect(settings, { depth: 5 }) + JSON.stringify(settings) + String(settings.url)).not.toContain(
          "DO-NOT-LEAK"
        )
      }))

    it("refuses bad Redis settings without printing the URL", () => {
      for (
        const url of ["http://:pw-DO-NOT-LEAK@host", "not a url DO-NOT-LEAK", "redis://:pw-DO-NOT-LEAK@host/x/y", ""]
      ) {
        const result = ErpRateLimiterRedis.resolve({ url })
        expect(Either.isLeft(result)).toBe(true)
        expect(String(Either.isLeft(result) ? result.left : "")).not.toContain("DO-NOT-LEAK")
      }
      expect(Either.isRight(ErpRateLimiterRedis.resolve({ url: REDIS }))).toBe(true)
      expect(Either.isLeft(ErpRateLimiterRedis.resolve({ url: REDIS, prefix: "a b" }))).toBe(true)
    })

    it.scopedLive("the Redis connection is closed when the limiter's scope closes", () =>
      Effect.gen(function*() {
        const prefix = uniquePrefix("scope")
        const named = Effect.promise(() => admin.client("LIST") as Promise<string>).pipe(
          Effect.map((list) => list.split("\n").filter((line) => line.includes(` name=erp-client:${prefix} `)).length)
        )
        const exit = yield* Effect.scoped(
          Effect.gen(function*() {
            const limiter = yield* ErpRateLimiterRedis.make({
              url: REDIS,
              prefix,
              limit: L,
              window: Duration.millis(W)
            })
            yield* limiter.acquire("erp:k:x")
            return yield* named
          })
        ).pipe(Effect.exit)
        expect(exit).toEqual(Exit.succeed(1))
        expect(yield* named).toBe(0)
      }))
  })
})
