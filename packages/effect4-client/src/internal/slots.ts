/**
 * The limiter's algorithm, on Effect 4's `RateLimiterStore` (in memory, `memory.ts`, or Redis) and a `HoldStore`: the same slots,
 * ticket, keys and busy marks as the Effect 3 edition's `internal/slots.ts` (docs/rate-limit.md), so a process of
 * either edition on one Redis shares one limit. The arithmetic is `@erp-client/kernel/Slots`'s.
 *
 * Why not the store's algorithms as they are: its token bucket lets about 2L through in one window, and its
 * "fixed-window" is a spacing counter whose bursts can land L + 1 starts in one server window after an idle gap.
 * Neither keeps the limit in every window (docs/ARCHITECTURE.md, "Rate limit"). What this does instead, with the
 * store's primitives unchanged:
 *
 * - L slots per key. Each slot is the store's fixed-window counter with `limit: 1`, consumed through Effect 4's own
 *   `RateLimiter` ("fixed-window", "delay"): a zero-burst spacer, two uses of one slot at least `window + margin` apart.
 * - A shared ticket counter (also a store counter) deals requests to slots round-robin (`slotOf`), to as many slots as
 *   the limit learned from the server allows.
 *
 * Any L + 1 starts put two on one slot, and those are more than `window` apart, so no interval of length `window` holds
 * more than L starts, wherever the server's window sits. Each slot also carries a "busy until" mark (in the
 * `HoldStore`): `window + margin` from its request's start, extended to a window after it ended (`busyFrom`), so a
 * request held up between the limiter and the wire cannot bring two arrivals on one slot within a window.
 */
import * as LimiterText from "@erp-client/kernel/LimiterText"
import * as MemoryStore from "@erp-client/kernel/MemoryStore"
import * as ServerLimit from "@erp-client/kernel/ServerLimit"
import { busyFrom, slotKey, slotOf, ticketKey, waitFor } from "@erp-client/kernel/Slots"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as RateLimiter from "effect/persistence/RateLimiter"
import type { Acquired, Resolved, Service } from "../ErpRateLimiter.js"
import {
  HoldStore,
  PauseBeyondDeadline,
  pauseWait,
  spacingWait,
  StoreFailure,
  WaitBeyondBound,
  WaitObserver,
  type WaitReason,
  waits
} from "./limiter.js"
import * as Memory from "./memory.js"

/** What a store error says, for `StoreFailure`: the store's own message (a remote store's holds no secret). */
const storeFailure = (error: RateLimiter.RateLimiterError): StoreFailure =>
  new StoreFailure({
    description: error.reason._tag === "RateLimitStoreError" ? error.reason.message : "unexpected rate limit rejection"
  })

export const make = (
  options: Resolved
): Effect.Effect<Service, never, RateLimiter.RateLimiterStore | HoldStore> =>
  Effect.gen(function*() {
    const store = yield* RateLimiter.RateLimiterStore
    const holds = yield* HoldStore
    const memory = yield* Effect.serviceOption(Memory.Memory)
    const limiter = yield* RateLimiter.make
    const observer = yield* Effect.serviceOption(WaitObserver)
    const observe = (key: string, reason: WaitReason, untilMillis: number): Effect.Effect<void> =>
      observer._tag === "Some" ? observer.value.onWait({ key, reason, untilMillis }) : Effect.void
    const { limit, margin, window } = options
    const slotWindow = Duration.sum(window, margin)
    const windows = { windowMillis: Duration.toMillis(window), slotWindowMillis: Duration.toMillis(slotWindow) }

    const takeTicket = (key: string) =>
      Effect.mapError(
        store.fixedWindow({ key: ticketKey(key), tokens: 1, refillRate: slotWindow, limit: undefined }),
        storeFailure
      )

    const reserve = (key: string, limitNow: number) =>
      Effect.flatMap(takeTicket(key), ([ticket]) => {
        const slot = slotKey(key, slotOf(ticket, limitNow))
        return limiter.consume({
          key: slot,
          limit: 1,
          window: slotWindow,
          algorithm: "fixed-window",
          onExceeded: "delay"
        })
          .pipe(
            Effect.map((result) => ({ slot, delay: Duration.toMillis(result.delay) })),
            Effect.mapError(storeFailure)
          )
      })

    // A bounded acquire takes its slot only if it may start at once: a slot that is spaced or busy is not reserved
    // (only its ticket is spent, which skips the slot for this turn of the round-robin and keeps the limit); it waits
    // for the slot if that ends by the bound, or fails saying when the request could start.
    const reserveBounded = Effect.fnUntraced(function*(key: string, limitNow: number, bound: number) {
      const [ticket] = yield* takeTicket(key)
      const slot = slotKey(key, slotOf(ticket, limitNow))
      const now = yield* Clock.currentTimeMillis
      const busyUntil = yield* holds.get(slot)
      let freeAt = busyUntil
      if (busyUntil <= now) {
        const [count, ttl] = yield* Effect.mapError(
          store.fixedWindow({ key: slot, tokens: 1, refillRate: slotWindow, limit: 1 }),
          storeFailure
        )
        // Over its limit of one, the counter was left as it was: the slot is free again when it expires.
        freeAt = count > 1 ? now + ttl : now
      }
      if (freeAt > bound) return yield* new WaitBeyondBound({ startsAt: freeAt })
      return { slot, freeAt }
    })

    const waitForPause = Effect.fnUntraced(function*(
      key: string,
      deadline: number | undefined,
      bound: number | undefined
    ) {
      let paused = 0
      // Each pause is capped by whoever set it; the deadline bounds how many we sit through.
      while (true) {
        const until = yield* holds.get(key)
        const now = yield* Clock.currentTimeMillis
        if (until <= now) return paused
        if (bound !== undefined && until > bound) return yield* new WaitBeyondBound({ startsAt: until })
        if (deadline !== undefined && until > deadline) return yield* new PauseBeyondDeadline({ pausedUntil: until })
        yield* observe(key, "server-pause", until)
        yield* Effect.logInfo(LimiterText.pause(until - now)).pipe(Effect.annotateLogs("erp.limiter_key", key))
        yield* Effect.sleep(Duration.millis(until - now))
        paused += until - now
      }
    })

    const acquireSteps: Service["acquire"] = Effect.fnUntraced(
      function*(key: string, deadline?: number, bound?: number) {
        let pausedMillis = 0
        let spacedMillis = 0
        const space = Effect.fnUntraced(function*(delay: number) {
          yield* observe(key, "client-limit", (yield* Clock.currentTimeMillis) + delay)
          // A long wait is worth telling an operator about; the usual short spacing is not.
          yield* Effect.logWithLevel(LimiterText.spacingIsNews(delay) ? "Info" : "Debug")(LimiterText.spacing(delay))
            .pipe(Effect.annotateLogs("erp.limiter_key", key))
          yield* Effect.sleep(Duration.millis(delay))
          spacedMillis += delay
        })
        while (true) {
          pausedMillis += yield* waitForPause(key, deadline, bound)
          // The limit learned from the server, if lower: requests go to that many slots only.
          const learned = yield* holds.learned(key)
          const limitNow = learned?.limit ?? limit
          let slot: string
          if (bound === undefined) {
            const reserved = yield* reserve(key, limitNow)
            slot = reserved.slot
            if (reserved.delay > 0) yield* space(reserved.delay)
          } else {
            const reserved = yield* reserveBounded(key, limitNow, bound)
            const wait = waitFor(reserved.freeAt, yield* Clock.currentTimeMillis)
            // A slot that frees within the bound is waited for, then asked for again (it was not reserved).
            if (wait > 0) {
              yield* space(wait)
              continue
            }
            slot = reserved.slot
          }
          // The slot's previous request may have ended (or started) late: it keeps the slot busy until a window after.
          while (true) {
            const busy = waitFor(yield* holds.get(slot), yield* Clock.currentTimeMillis)
            if (busy === 0) break
            yield* space(busy)
          }
          // A pause set while we slept wins: starting late on a reserved slot could bring it closer than a window to
          // that slot's next use, so the reservation is dropped (a wasted slot is safe) and we queue again.
          const until = yield* holds.get(key)
          const now = yield* Clock.currentTimeMillis
          if (waitFor(until, now) === 0) {
            yield* holds.extend(slot, busyFrom({ startedMillis: now }, windows))
            if (spacedMillis > 0 || pausedMillis > 0) {
              yield* Metric.update(waits, 1)
              yield* Metric.update(spacingWait, spacedMillis / 1000)
              yield* Metric.update(pauseWait, pausedMillis / 1000)
            }
            const acquired: Acquired = {
              spacedMillis,
              pausedMillis,
              startedMillis: now,
              limit: limitNow,
              learned,
              release: (endedMillis: number) =>
                holds.extend(slot, busyFrom({ startedMillis: now, endedMillis }, windows))
            }
            return acquired
          }
        }
      }
    )

    // With the stores in this process's memory, a request that need not wait takes its place in one synchronous step
    // (`MemoryStore.acquireNow`: the same places the steps above would take); anything else takes the steps from the
    // start, having changed nothing.
    const acquire: Service["acquire"] = memory._tag === "None" ?
      acquireSteps :
      (key, deadline, bound) =>
        Effect.clockWith((clock) =>
          Effect.suspend(() => {
            const now = clock.currentTimeMillisUnsafe()
            const taken = MemoryStore.acquireNow(memory.value, key, { limit, ...windows }, now, bound)
            if (taken === undefined) return acquireSteps(key, deadline, bound)
            const acquired: Acquired = {
              spacedMillis: 0,
              pausedMillis: 0,
              startedMillis: now,
              limit: taken.limit,
              learned: taken.learned,
              release: (endedMillis: number) =>
                Effect.sync(() =>
                  MemoryStore.extendHold(
                    memory.value,
                    taken.slot,
                    busyFrom({ startedMillis: now, endedMillis }, windows)
                  )
                )
            }
            return Effect.succeed(acquired)
          })
        )

    // A slot is held until a window (and the margin) after its request started, or a window after it ended.
    const inUse: Service["inUse"] = (key) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.map(
          Effect.forEach(Array.from({ length: limit }, (_, i) => slotKey(key, i)), holds.get, {
            concurrency: "unbounded"
          }),
          (marks) => marks.filter((until) => until > now).length
        ))

    // What an answer said of the server's limit: a lower one is kept for the key (`ServerLimit.learn` decides), and
    // said once by whoever changed it.
    const learn: Service["learn"] = (key, acquired, heard) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const next = ServerLimit.learn(limit, acquired.learned, heard, now, windows.windowMillis)
        if (next === undefined) return Effect.void
        const note = LimiterText.learned({
          configured: limit,
          admittedUnder: acquired.limit,
          serverLimit: heard.serverLimit,
          window: Duration.format(window)
        }, next)
        return Effect.flatMap(holds.setLearned(key, acquired.learned, next), (changed) =>
          !changed || note === undefined
            ? Effect.void
            : Effect.logInfo(note).pipe(Effect.annotateLogs("erp.limiter_key", key)))
      })

    const service: Service = {
      limit,
      window,
      margin,
      acquire,
      learn,
      // Whole milliseconds: a fraction would leave a sliver to wait for again, a sleep of almost nothing at a time.
      pause: (key, untilMillis) => holds.extend(key, Math.ceil(untilMillis)),
      inUse
    }
    return service
  })
