/**
 * The limiter's algorithm, on the `RateLimiterStore` of `@effect/experimental` (memory or Redis) and a `HoldStore`.
 *
 * Why not the store's algorithms as they are: its token bucket lets about 2L through in one window, and its
 * "fixed-window" is a spacing counter whose bursts can land L + 1 starts in one server window after an idle gap.
 * Neither keeps the limit in every window (docs/ARCHITECTURE.md, "Rate limit"). What this does instead, with the
 * store's primitives unchanged:
 *
 * - L slots per key. Each slot is the store's fixed-window counter with `limit: 1`, i.e. a zero-burst spacer: two
 *   uses of one slot start at least `window + margin` apart.
 * - A shared ticket counter (also a store counter) deals requests to slots round-robin (`slotOf`).
 *
 * Any L + 1 starts put two on one slot (pigeonhole), and those are more than `window` apart, so no interval of
 * length `window` holds more than L starts, wherever the server's window sits. With the tickets in order this is
 * exactly a sliding-window log: request n starts at max(now, start(n - L) + window + margin), so a burst of L goes
 * at once and the next L one window later. A reservation that is not used (interrupted fiber) only wastes a slot.
 *
 * The server counts arrivals, not our starts. The margin covers the usual gap between the two; for the rest, each
 * slot also carries a "busy until" mark (kept in the `HoldStore`, so it is shared like the counters): a request
 * marks its slot busy for `window + margin` from its actual start, and `release` extends that to `window` after
 * it ended (`busyFrom`). The next user of the slot waits for the mark. Since a request reaches the server between its
 * start and its end, two arrivals on one slot are at least `window` apart however late the first one left. It costs
 * nothing while requests end within the margin.
 */
import * as RateLimiter from "@effect/experimental/RateLimiter"
import * as LimiterText from "@erp-client/kernel/LimiterText"
import * as ServerLimit from "@erp-client/kernel/ServerLimit"
import { busyFrom, slotKey, slotOf, ticketKey, waitFor } from "@erp-client/kernel/Slots"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as LogLevel from "effect/LogLevel"
import * as Metric from "effect/Metric"
import type * as Option from "effect/Option"
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

const storeErrorText = (error: RateLimiter.RateLimiterError): string =>
  // The two experimental errors share one `_tag`; `reason` tells them apart.
  error.reason === "StoreError" ? error.message : "unexpected rate limit rejection"

/** What the limiter's steps share: the stores, the settings, and who is told of a wait. */
interface Slots {
  readonly store: RateLimiter.RateLimiterStore["Type"]
  readonly holds: HoldStore["Type"]
  readonly limiter: RateLimiter.RateLimiter
  readonly observer: Option.Option<WaitObserver["Type"]>
  readonly limit: number
  readonly window: Duration.Duration
  /** A slot's spacing: the window and the margin. */
  readonly slotWindow: Duration.Duration
  readonly windowMillis: number
  readonly slotWindowMillis: number
}

/**
 * The limiter on its stores. `acquire` takes these steps: `waitForPause` (a pause the server asked for), then a slot
 * (`reserve`, or `reserveBounded` under the caller's bound), `waitWhileBusy` (its previous request's mark), and
 * `startOn` (the slot marked busy, unless a pause came meanwhile); with the stores in memory, `fastAcquire` first.
 */
export const make = (
  options: Resolved
): Effect.Effect<Service, never, RateLimiter.RateLimiterStore | HoldStore> =>
  Effect.gen(function*() {
    const memory = yield* Effect.serviceOption(Memory.Memory)
    const { limit, margin, window } = options
    const slotWindow = Duration.sum(window, margin)
    const slots: Slots = {
      store: yield* RateLimiter.RateLimiterStore,
      holds: yield* HoldStore,
      limiter: yield* RateLimiter.make,
      observer: yield* Effect.serviceOption(WaitObserver),
      limit,
      window,
      slotWindow,
      windowMillis: Duration.toMillis(window),
      slotWindowMillis: Duration.toMillis(slotWindow)
    }
    const acquire = memory._tag === "None"
      ? (key: string, deadline?: number, bound?: number) => acquireSteps(slots, key, deadline, bound)
      : (
        key: string,
        deadline?: number,
        bound?: number
      ): Effect.Effect<Acquired, PauseBeyondDeadline | WaitBeyondBound | StoreFailure> =>
        Effect.clockWith((clock) =>
          Effect.suspend(() => {
            const acquired = fastAcquire(slots, memory.value, key, clock.unsafeCurrentTimeMillis(), bound)
            return acquired === undefined ? acquireSteps(slots, key, deadline, bound) : Effect.succeed(acquired)
          })
        )
    const service: Service = {
      limit,
      window,
      margin,
      acquire,
      learn: (key, acquired, heard) => learn(slots, key, acquired, heard),
      // Whole milliseconds: a fraction would leave a sliver to wait for again, a sleep of almost nothing at a time.
      pause: (key, untilMillis) => slots.holds.extend(key, Math.ceil(untilMillis)),
      inUse: (key) => inUse(slots, key)
    }
    return service
  })

/** Tells the `WaitObserver`, if one is provided, that `key` waits until `untilMillis` and why. */
const observe = (slots: Slots, key: string, reason: WaitReason, untilMillis: number): Effect.Effect<void> =>
  slots.observer._tag === "Some"
    ? slots.observer.value.onWait({ key, reason, untilMillis })
    : Effect.void

const storeFailure = (error: RateLimiter.RateLimiterError) => new StoreFailure({ description: storeErrorText(error) })

/** A ticket, and the slot it deals, reserved: `delay` is how long until the slot may start again. */
const reserve = (slots: Slots, key: string, limitNow: number) =>
  slots.store.fixedWindow({ key: ticketKey(key), tokens: 1, refillRate: slots.slotWindow, limit: undefined }).pipe(
    Effect.flatMap(([ticket]) => {
      const slot = slotKey(key, slotOf(ticket, limitNow))
      return slots.limiter.consume({
        key: slot,
        limit: 1,
        window: slots.slotWindow,
        algorithm: "fixed-window",
        onExceeded: "delay"
      })
        .pipe(Effect.map((result) => ({ slot, delay: Duration.toMillis(result.delay) })))
    }),
    Effect.mapError(storeFailure)
  )

// A bounded acquire takes its slot only if it may start at once: a slot that is spaced or busy is not reserved
// (only its ticket is spent, which skips the slot for this turn of the round-robin and keeps the limit: every
// start still uses a slot that was free for a window); it waits for the slot if that ends by the bound, or fails
// saying when the request could start.
const reserveBounded = (
  slots: Slots,
  key: string,
  limitNow: number,
  bound: number
): Effect.Effect<{ readonly slot: string; readonly freeAt: number }, WaitBeyondBound | StoreFailure> =>
  Effect.gen(function*() {
    const { holds, slotWindow, store } = slots
    const [ticket] = yield* Effect.mapError(
      store.fixedWindow({ key: ticketKey(key), tokens: 1, refillRate: slotWindow, limit: undefined }),
      storeFailure
    )
    const slot = slotKey(key, slotOf(ticket, limitNow))
    const now = yield* Clock.currentTimeMillis
    const busyUntil = yield* holds.get(slot)
    if (busyUntil > now) return { slot, freeAt: busyUntil }
    const [count, ttl] = yield* Effect.mapError(
      store.fixedWindow({ key: slot, tokens: 1, refillRate: slotWindow, limit: 1 }),
      storeFailure
    )
    // Over its limit of one, the counter was left as it was: the slot is free again when it expires.
    return { slot, freeAt: count > 1 ? now + ttl : now }
  }).pipe(
    Effect.flatMap((reserved) =>
      reserved.freeAt > bound
        ? Effect.fail(new WaitBeyondBound({ startsAt: reserved.freeAt }))
        : Effect.succeed(reserved)
    )
  )

/** Sits through the pauses set on `key` (the server's 429s), within the deadline and the bound; how long it sat. */
const waitForPause = (
  slots: Slots,
  key: string,
  deadline: number | undefined,
  bound: number | undefined
): Effect.Effect<number, PauseBeyondDeadline | WaitBeyondBound | StoreFailure> =>
  Effect.gen(function*() {
    let paused = 0
    // Each pause is capped by whoever set it; the deadline bounds how many we sit through.
    while (true) {
      const until = yield* slots.holds.get(key)
      const now = yield* Clock.currentTimeMillis
      if (until <= now) return paused
      if (bound !== undefined && until > bound) return yield* Effect.fail(new WaitBeyondBound({ startsAt: until }))
      if (deadline !== undefined && until > deadline) {
        return yield* Effect.fail(new PauseBeyondDeadline({ pausedUntil: until }))
      }
      yield* observe(slots, key, "server-pause", until)
      yield* Effect.logInfo(LimiterText.pause(until - now)).pipe(
        Effect.annotateLogs("erp.limiter_key", key)
      )
      yield* Effect.sleep(Duration.millis(until - now))
      paused += until - now
    }
  })

// With the stores in this process's memory, a request that need not wait takes its place in one synchronous step
// (`MemoryStore.acquireNow`: the same places the steps below would take); anything else takes the steps below from
// the start, having changed nothing.
const fastAcquire = (slots: Slots, state: Memory.State, key: string, now: number, bound: number | undefined) => {
  const windows = { windowMillis: slots.windowMillis, slotWindowMillis: slots.slotWindowMillis }
  const taken = Memory.acquireNow(state, key, { limit: slots.limit, ...windows }, now, bound)
  if (taken === undefined) return undefined
  const acquired: Acquired = {
    spacedMillis: 0,
    pausedMillis: 0,
    startedMillis: now,
    limit: taken.limit,
    learned: taken.learned,
    release: (endedMillis: number) =>
      Effect.sync(() => Memory.extendHold(state, taken.slot, busyFrom({ startedMillis: now, endedMillis }, windows)))
  }
  return acquired
}

/** Waits `delay` for our own spacing, said to the observer and in the log (at Info when it is long). */
const space = (slots: Slots, key: string, delay: number): Effect.Effect<void> =>
  Effect.gen(function*() {
    yield* observe(slots, key, "client-limit", (yield* Clock.currentTimeMillis) + delay)
    // A long wait is worth telling an operator about; the usual short spacing is not.
    yield* Effect.logWithLevel(
      LimiterText.spacingIsNews(delay) ? LogLevel.Info : LogLevel.Debug,
      LimiterText.spacing(delay)
    ).pipe(
      Effect.annotateLogs("erp.limiter_key", key)
    )
    yield* Effect.sleep(Duration.millis(delay))
  })

/** The acquire of stores outside this process (or a request that must wait): the steps, one store call each. */
const acquireSteps = (
  slots: Slots,
  key: string,
  deadline?: number,
  bound?: number
): Effect.Effect<Acquired, PauseBeyondDeadline | WaitBeyondBound | StoreFailure> =>
  Effect.gen(function*() {
    let pausedMillis = 0
    let spacedMillis = 0
    const spaced = (delay: number) =>
      Effect.map(space(slots, key, delay), () => {
        spacedMillis += delay
      })
    while (true) {
      pausedMillis += yield* waitForPause(slots, key, deadline, bound)
      // The limit learned from the server, if lower: requests go to that many slots only.
      const learned = yield* slots.holds.learned(key)
      const limitNow = learned?.limit ?? slots.limit
      let slot: string
      if (bound === undefined) {
        const reserved = yield* reserve(slots, key, limitNow)
        slot = reserved.slot
        if (reserved.delay > 0) yield* spaced(reserved.delay)
      } else {
        const reserved = yield* reserveBounded(slots, key, limitNow, bound)
        const wait = waitFor(reserved.freeAt, yield* Clock.currentTimeMillis)
        // A slot that frees within the bound is waited for, then asked for again (it was not reserved).
        if (wait > 0) {
          yield* spaced(wait)
          continue
        }
        slot = reserved.slot
      }
      yield* waitWhileBusy(slots, slot, spaced)
      const acquired = yield* startOn(slots, key, slot, { spacedMillis, pausedMillis, limit: limitNow, learned })
      if (acquired !== undefined) return acquired
    }
  })

// The slot's previous request may have ended (or started) late: it keeps the slot busy until a window after that.
const waitWhileBusy = (
  slots: Slots,
  slot: string,
  spaced: (delay: number) => Effect.Effect<void>
): Effect.Effect<void, StoreFailure> =>
  Effect.gen(function*() {
    while (true) {
      const busy = waitFor(yield* slots.holds.get(slot), yield* Clock.currentTimeMillis)
      if (busy === 0) return
      yield* spaced(busy)
    }
  })

// A pause set while we slept wins: starting late on a reserved slot could bring it closer than a window to that
// slot's next use, so the reservation is dropped (a wasted slot is safe, `undefined`) and we queue again. Else the
// slot is marked busy from now and the wait counted.
const startOn = (
  slots: Slots,
  key: string,
  slot: string,
  took: Pick<Acquired, "spacedMillis" | "pausedMillis" | "limit" | "learned">
): Effect.Effect<Acquired | undefined, StoreFailure> =>
  Effect.gen(function*() {
    const { holds } = slots
    const until = yield* holds.get(key)
    const now = yield* Clock.currentTimeMillis
    if (waitFor(until, now) !== 0) return undefined
    const windows = { windowMillis: slots.windowMillis, slotWindowMillis: slots.slotWindowMillis }
    yield* holds.extend(slot, busyFrom({ startedMillis: now }, windows))
    const { pausedMillis, spacedMillis } = took
    if (spacedMillis > 0 || pausedMillis > 0) {
      yield* Metric.increment(waits)
      yield* Metric.incrementBy(spacingWait, spacedMillis / 1000)
      yield* Metric.incrementBy(pauseWait, pausedMillis / 1000)
    }
    return {
      spacedMillis,
      pausedMillis,
      startedMillis: now,
      limit: took.limit,
      learned: took.learned,
      release: (endedMillis: number) => holds.extend(slot, busyFrom({ startedMillis: now, endedMillis }, windows))
    }
  })

// A slot is held until a window (and the margin) after its request started, or a window after it ended.
const inUse = (slots: Slots, key: string) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Effect.map(
      Effect.forEach(
        Array.from({ length: slots.limit }, (_, i) => slots.holds.get(slotKey(key, i))),
        (until) => until,
        { concurrency: "unbounded" }
      ),
      (marks) => marks.filter((until) => until > now).length
    ))

// What an answer said of the server's limit: a lower one is kept for the key (`ServerLimit.learn` decides), and
// said once by whoever changed it.
const learn = (
  slots: Slots,
  ...[key, acquired, heard]: Parameters<Service["learn"]>
): ReturnType<Service["learn"]> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => {
    const { limit, window, windowMillis } = slots
    const next = ServerLimit.learn(limit, acquired.learned, heard, now, windowMillis)
    if (next === undefined) return Effect.void
    // A limit that stays (a first 429 noted, a header's renewed) is not news.
    const note = LimiterText.learned({
      configured: limit,
      admittedUnder: acquired.limit,
      serverLimit: heard.serverLimit,
      window: Duration.format(window)
    }, next)
    return Effect.flatMap(slots.holds.setLearned(key, acquired.learned, next), (changed) =>
      !changed || note === undefined
        ? Effect.void
        : Effect.logInfo(note).pipe(Effect.annotateLogs("erp.limiter_key", key)))
  })
