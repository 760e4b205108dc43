/**
 * The limiter's algorithm, on the `RateLimiterStore` (in memory, `memory.ts`, or Redis) and a `HoldStore`.
 * The arithmetic is `@erp-client/kernel/Slots`'s.
 *
 * Why not the store's algorithms as they are: its token bucket lets about 2L through in one window, and its
 * "fixed-window" is a spacing counter whose bursts can land L + 1 starts in one server window after an idle gap.
 * Neither keeps the limit in every window (docs/ARCHITECTURE.md, "Rate limit"). What this does instead, with the
 * store's primitives unchanged:
 *
 * - L slots per key. Each slot is the store's fixed-window counter with `limit: 1`, consumed through the store's
 *   `RateLimiter` ("fixed-window", "delay"): a zero-burst spacer, two uses of one slot at least `window + margin` apart.
 * - A shared ticket counter (also a store counter) deals requests to slots round-robin (`slotOf`).
 *
 * Any L + 1 starts put two on one slot (pigeonhole), and those are more than `window` apart, so no interval of
 * length `window` holds more than L starts, wherever the server's window sits. With the tickets in order this is
 * exactly a sliding-window log: request n starts at max(now, start(n - L) + window + margin), so a burst of L goes
 * at once and the next L one window later. A reservation that is not used (interrupted fiber) only wastes a slot.
 *
 * The server counts arrivals, not our starts. The margin covers the usual gap between the two; for the rest, each
 * slot also carries a "busy until" mark (kept in the `HoldStore`, so it is shared like the counters). A request takes
 * its slot in flight (`HoldStore.claim`, the mark `inFlightFrom`: its timeout, the window and the margin, the bound
 * for a holder that dies with it), and `release` sets the mark to `window + margin` after its start or `window` after
 * it ended, whichever is later (`busyFrom`). The next user of the slot waits for the mark. Since a request reaches the
 * server between its start and its end, two arrivals on one slot are at least `window` apart however late the first
 * one arrived. It costs nothing while requests end within the margin.
 *
 * A limit learned from the server (`ServerLimit.learn`: its limit and the window it counts in) is kept beside this, by
 * a log of the requests it counts (`HoldStore.admitLogged`, `Slots.logWindows`): a request takes its place there
 * first, then its slot. The log holds the times themselves, so a learned limit that changes applies at once to what
 * was already sent, and a request waiting for room plans again when this process changes it.
 */
import * as LimiterText from "@erp-client/kernel/LimiterText"
import * as MemoryStore from "@erp-client/kernel/MemoryStore"
import * as ServerLimit from "@erp-client/kernel/ServerLimit"
import {
  busyFrom,
  endpointOfKey,
  inFlightFrom,
  logEndedAt,
  logInFlightAt,
  logWindows,
  lookAgainIn,
  slotIndexOf,
  slotKey,
  slotOf,
  ticketKey,
  waitFor
} from "@erp-client/kernel/Slots"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Metric from "effect/Metric"
import type * as Option from "effect/Option"
import type { Acquired, Resolved, Service } from "../ErpRateLimiter.js"
import {
  completeDeferred,
  logAt,
  makeDeferred,
  nowMillis,
  RateLimiter,
  type ServiceOf,
  storeErrorMessage
} from "./edition.js"
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
    description: storeErrorMessage(error) ?? "unexpected rate limit rejection"
  })

/** What the limiter's steps share: the stores, the settings, and who is told of a wait. */
interface Slots {
  readonly store: ServiceOf<RateLimiter.RateLimiterStore>
  readonly holds: ServiceOf<HoldStore>
  readonly limiter: RateLimiter.RateLimiter
  readonly observer: Option.Option<ServiceOf<WaitObserver>>
  readonly limit: number
  readonly window: Duration.Duration
  /** A slot's spacing: the window and the margin. */
  readonly slotWindow: Duration.Duration
  readonly windows: { readonly windowMillis: number; readonly slotWindowMillis: number }
  readonly configured: ServerLimit.Configured
  /** The stores in this process's memory, if they are. */
  readonly memory: MemoryStore.State | undefined
  /** Done when this process changes a learned limit (then replaced): requests waiting for room plan again. */
  changed: Deferred.Deferred<void>
  /** The keys this process last knew to have a learned limit (set by it, or seen by an acquire). */
  readonly learning: Set<string>
}

/**
 * The limiter on its stores. `acquire` takes these steps: `waitForPause` (a pause the server asked for), then its
 * place under a learned limit (`admitLearned`), a slot (`reserve`, or `reserveBounded` under the caller's bound),
 * `waitWhileBusy` (its previous request's mark), and `startOn` (the slot taken in flight, unless a pause came
 * meanwhile or another request took it first); with the stores in memory, `fastAcquire` first.
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
      windows: { windowMillis: Duration.toMillis(window), slotWindowMillis: Duration.toMillis(slotWindow) },
      configured: { limit, windowMillis: Duration.toMillis(window) },
      memory: memory._tag === "Some" ? memory.value : undefined,
      changed: makeDeferred<void>(),
      learning: new Set()
    }
    const acquire: Service["acquire"] = memory._tag === "None" ?
      (key, deadline, bound, timeoutMillis) => acquireSteps(slots, key, deadline, bound, timeoutMillis) :
      (key, deadline, bound, timeoutMillis) =>
        Effect.clockWith((clock) =>
          Effect.suspend(() => {
            const now = nowMillis(clock)
            const acquired = fastAcquire(slots, memory.value, key, now, bound, timeoutMillis)
            return acquired === undefined
              ? acquireSteps(slots, key, deadline, bound, timeoutMillis)
              : Effect.succeed(acquired)
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
  slots.observer._tag === "Some" ? slots.observer.value.onWait({ key, reason, untilMillis }) : Effect.void

/** The next ticket of `key`: it deals the slot (round-robin). */
const takeTicket = (slots: Slots, key: string) =>
  Effect.mapError(
    slots.store.fixedWindow({ key: ticketKey(key), tokens: 1, refillRate: slots.slotWindow, limit: undefined }),
    storeFailure
  )

/** A ticket, and the slot it deals, reserved: `delay` is how long until the slot may start again. */
const reserve = (slots: Slots, key: string) =>
  Effect.flatMap(takeTicket(slots, key), ([ticket]) => {
    const slot = slotKey(key, slotOf(ticket, slots.limit))
    return slots.limiter.consume({
      key: slot,
      limit: 1,
      window: slots.slotWindow,
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
const reserveBounded = Effect.fnUntraced(function*(slots: Slots, key: string, bound: number) {
  const [ticket] = yield* takeTicket(slots, key)
  const slot = slotKey(key, slotOf(ticket, slots.limit))
  const now = yield* Clock.currentTimeMillis
  const busyUntil = yield* slots.holds.get(slot)
  // A mark of a request in flight may end sooner than it says (`lookAgainIn`).
  let freeAt = now + lookAgainIn(busyUntil - now, slots.windows.slotWindowMillis)
  if (busyUntil <= now) {
    const [count, ttl] = yield* Effect.mapError(
      slots.store.fixedWindow({ key: slot, tokens: 1, refillRate: slots.slotWindow, limit: 1 }),
      storeFailure
    )
    // Over its limit of one, the counter was left as it was: the slot is free again when it expires.
    freeAt = count > 1 ? now + ttl : now
  }
  if (freeAt > bound) return yield* new WaitBeyondBound({ startsAt: freeAt })
  return { slot, freeAt }
})

/** Sits through the pauses set on `key` (the server's 429s), within the deadline and the bound; how long it sat. */
const waitForPause = Effect.fnUntraced(function*(
  slots: Slots,
  key: string,
  deadline: number | undefined,
  bound: number | undefined
) {
  let paused = 0
  // Each pause is capped by whoever set it; the deadline bounds how many we sit through.
  while (true) {
    const until = yield* slots.holds.get(key)
    const now = yield* Clock.currentTimeMillis
    if (until <= now) return paused
    if (bound !== undefined && until > bound) return yield* new WaitBeyondBound({ startsAt: until })
    if (deadline !== undefined && until > deadline) return yield* new PauseBeyondDeadline({ pausedUntil: until })
    yield* observe(slots, key, "server-pause", until)
    yield* Effect.logInfo(LimiterText.pause(until - now)).pipe(Effect.annotateLogs("erp.endpoint", endpointOfKey(key)))
    yield* Effect.sleep(Duration.millis(until - now))
    paused += until - now
  }
})

// With the stores in this process's memory, a request that need not wait takes its place in one synchronous step
// (`MemoryStore.acquireNow`: the same places the steps below would take); anything else takes the steps from the
// start, having changed nothing.
const fastAcquire = (
  slots: Slots,
  state: MemoryStore.State,
  key: string,
  now: number,
  bound: number | undefined,
  timeoutMillis: number | undefined
): Acquired | undefined => {
  const { windows } = slots
  const taken = MemoryStore.acquireNow(state, key, { limit: slots.limit, ...windows, timeoutMillis }, now, bound)
  if (taken === undefined) return undefined
  const { entry, learned } = taken
  noteLearning(slots, key, learned)
  return {
    spacedMillis: 0,
    pausedMillis: 0,
    startedMillis: now,
    limit: learned?.limit ?? slots.limit,
    windowMillis: learned?.windowMillis ?? windows.windowMillis,
    learned,
    release: (endedMillis: number) =>
      Effect.sync(() => {
        const busy = busyFrom({ startedMillis: now, endedMillis }, windows)
        MemoryStore.settleHold(state, taken.slot, taken.heldUntil, busy, endedMillis, windows.windowMillis)
        if (entry !== undefined) {
          const ended = logEndedAt({ startedMillis: now, endedMillis }, logWindows(learned!, windows.windowMillis))
          MemoryStore.settleLogged(state, key, entry, ended)
        }
      })
  }
}

/**
 * Waits `delay` for our own spacing, said to the observer and in the log (at Info when it is long), or until `wake` is
 * done (a learned limit changed): how long it waited.
 */
const space = Effect.fnUntraced(function*(slots: Slots, key: string, delay: number, wake?: Deferred.Deferred<void>) {
  const start = yield* Clock.currentTimeMillis
  yield* observe(slots, key, "client-limit", start + delay)
  // A long wait is worth telling an operator about; the usual short spacing is not.
  yield* logAt(LimiterText.spacingIsNews(delay) ? "Info" : "Debug", LimiterText.spacing(delay))
    .pipe(Effect.annotateLogs("erp.endpoint", endpointOfKey(key)))
  const sleep = Effect.sleep(Duration.millis(delay))
  yield* wake === undefined ? sleep : Effect.raceFirst(sleep, Deferred.await(wake))
  return (yield* Clock.currentTimeMillis) - start
})

/** A place under the learned limit, if there is one: its log entry, taken when the log has room. */
interface Logged {
  readonly learned: ServerLimit.Learned
  readonly entry: string
  /** When the entry was taken (epoch ms). */
  readonly atMillis: number
}

// The learned limit's place comes first: a wait for it (the log full) is planned again whenever this process changes
// what it learned, so a limit that rises lets the requests already queued go at once.
const admitLearned = Effect.fnUntraced(function*(
  slots: Slots,
  key: string,
  bound: number | undefined,
  timeoutMillis: number | undefined,
  spaced: (delay: number, wake?: Deferred.Deferred<void>) => Effect.Effect<void>
) {
  while (true) {
    const wake = slots.changed
    const learned = yield* slots.holds.learned(key)
    noteLearning(slots, key, learned)
    if (learned === undefined) return undefined
    const windows = logWindows(learned, slots.windows.windowMillis)
    const admission = yield* slots.holds.admitLogged(key, windows, timeoutMillis)
    const now = yield* Clock.currentTimeMillis
    if ("entry" in admission) return { learned, entry: admission.entry, atMillis: now } satisfies Logged
    // An entry of a request in flight leaves when the request ends: looked at again a learned window after that.
    const wait = lookAgainIn(admission.waitMillis, windows.windowMillis + windows.marginMillis)
    if (bound !== undefined && now + wait > bound) return yield* new WaitBeyondBound({ startsAt: now + wait })
    yield* spaced(wait, wake)
  }
})

/** Gives back a place in the log that was not used. */
const dropLogged = (slots: Slots, key: string, logged: Logged | undefined): Effect.Effect<void> =>
  logged === undefined ? Effect.void : Effect.ignore(slots.holds.dropLogged(key, logged.entry))

/** The acquire of stores outside this process (or a request that must wait): the steps, one store call each. */
const acquireSteps = Effect.fnUntraced(function*(
  slots: Slots,
  key: string,
  deadline?: number,
  bound?: number,
  timeoutMillis?: number
) {
  let pausedMillis = 0
  let spacedMillis = 0
  let skipped = 0
  const spaced = (delay: number, wake?: Deferred.Deferred<void>) =>
    Effect.map(space(slots, key, delay, wake), (waited) => {
      spacedMillis += waited
    })
  while (true) {
    pausedMillis += yield* waitForPause(slots, key, deadline, bound)
    const logged = yield* admitLearned(slots, key, bound, timeoutMillis, spaced)
    let slot: string
    if (bound === undefined) {
      const reserved = yield* Effect.tapError(reserve(slots, key), () => dropLogged(slots, key, logged))
      slot = reserved.slot
      if (reserved.delay > 0) yield* spaced(reserved.delay)
    } else {
      const reserved = yield* Effect.tapError(reserveBounded(slots, key, bound), () => dropLogged(slots, key, logged))
      const wait = waitFor(reserved.freeAt, yield* Clock.currentTimeMillis)
      // A slot that frees within the bound is waited for, then asked for again (it was not reserved).
      if (wait > 0) {
        yield* dropLogged(slots, key, logged)
        yield* spaced(wait)
        continue
      }
      slot = reserved.slot
    }
    // A slot held by a request still in flight may stay so until that request's timeout (or a window after it, for a
    // holder that died): the next ticket's slot is taken instead, at most once for each other slot, then it is waited for.
    if (!(yield* waitWhileBusy(slots, slot, spaced, skipped < slots.limit - 1))) {
      skipped++
      yield* dropLogged(slots, key, logged)
      continue
    }
    const acquired = yield* startOn(slots, key, slot, { spacedMillis, pausedMillis, timeoutMillis }, logged)
    if (acquired !== undefined) return acquired
    yield* dropLogged(slots, key, logged)
  }
})

// The slot's previous request may still be in flight, or have ended (or started) late: it keeps the slot busy until a
// window after that. A request in flight may end before its mark says: looked at again at most a slot window apart.
// Whether the slot is free now; with `mayLeave`, a slot whose first look finds it held in flight (its mark more than a
// slot window ahead: a request that ended is never marked further) is left at once instead (`false`).
const waitWhileBusy = Effect.fnUntraced(function*(
  slots: Slots,
  slot: string,
  spaced: (delay: number) => Effect.Effect<void>,
  mayLeave: boolean
) {
  let first = mayLeave
  while (true) {
    const busy = waitFor(yield* slots.holds.get(slot), yield* Clock.currentTimeMillis)
    if (busy === 0) return true
    if (first && busy > slots.windows.slotWindowMillis) return false
    first = false
    yield* spaced(lookAgainIn(busy, slots.windows.slotWindowMillis))
  }
})

// A pause set while we slept wins: starting late on a reserved slot could bring it closer than a window to that
// slot's next use, so the reservation is dropped (a wasted slot is safe, `undefined`) and we queue again; so it is when
// another request took the slot first (two waited for one mark). Else the slot is taken in flight from now, the
// learned limit's entry counted from now if it was taken earlier, and the wait counted.
const startOn = Effect.fnUntraced(function*(
  slots: Slots,
  key: string,
  slot: string,
  took: Pick<Acquired, "spacedMillis" | "pausedMillis"> & { readonly timeoutMillis: number | undefined },
  logged: Logged | undefined
) {
  const { holds, windows } = slots
  const until = yield* holds.get(key)
  const now = yield* Clock.currentTimeMillis
  if (waitFor(until, now) !== 0) return undefined
  const claimed = yield* holds.claim(
    slot,
    inFlightFrom({ startedMillis: now, timeoutMillis: took.timeoutMillis }, windows)
  )
  if (!("claim" in claimed)) return undefined
  const learned = logged?.learned
  const learnedWindow = learned === undefined ? undefined : logWindows(learned, windows.windowMillis)
  if (logged !== undefined && now > logged.atMillis) {
    const inFlight = logInFlightAt({ startedMillis: now, timeoutMillis: took.timeoutMillis }, learnedWindow!)
    yield* holds.markLogged(key, logged.entry, learnedWindow!.keepMillis, inFlight)
  }
  const { pausedMillis, spacedMillis } = took
  if (spacedMillis > 0 || pausedMillis > 0) {
    yield* Metric.update(waits, 1)
    yield* Metric.update(spacingWait, spacedMillis / 1000)
    yield* Metric.update(pauseWait, pausedMillis / 1000)
  }
  const acquired: Acquired = {
    spacedMillis,
    pausedMillis,
    startedMillis: now,
    limit: learned?.limit ?? slots.limit,
    windowMillis: learned?.windowMillis ?? windows.windowMillis,
    learned,
    release: (endedMillis: number) => {
      const busy = holds.settle(
        slot,
        claimed.claim,
        busyFrom({ startedMillis: now, endedMillis }, windows),
        windows.windowMillis
      )
      return logged === undefined
        ? busy
        : Effect.andThen(
          busy,
          holds.settleLogged(
            key,
            logged.entry,
            learnedWindow!.keepMillis,
            logEndedAt({ startedMillis: now, endedMillis }, learnedWindow!)
          )
        )
    }
  }
  return acquired
})

// Under a learned limit, the requests its log counts in its window; else the slots held: while their request is in
// flight, then until a window (and the margin) after it started, or a window after it ended. In memory the holds are read as they are (as many
// as one window holds), not slot by slot (as many as the limit).
const inUse = (slots: Slots, key: string): Effect.Effect<number, StoreFailure> =>
  Effect.flatMap(slots.holds.learned(key), (learned) => {
    if (learned !== undefined) return slots.holds.countLogged(key, learned.windowMillis)
    return Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const { memory } = slots
      if (memory !== undefined) {
        let held = 0
        for (const [storeKey, until] of memory.holds) {
          if (until > now && slotIndexOf(key, storeKey) !== undefined) held++
        }
        return Effect.succeed(held)
      }
      return Effect.map(
        Effect.forEach(Array.from({ length: slots.limit }, (_, i) => slotKey(key, i)), slots.holds.get, {
          concurrency: "unbounded"
        }),
        (marks) => marks.filter((until) => until > now).length
      )
    })
  })

/** Wakes the requests of this process that wait for room under a learned limit: it changed. */
const wake = (slots: Slots): void => {
  const changed = slots.changed
  slots.changed = makeDeferred<void>()
  completeDeferred(changed, Exit.void)
}

const noteLearning = (slots: Slots, key: string, learned: ServerLimit.Learned | null | undefined): void => {
  if (learned === undefined || learned === null) slots.learning.delete(key)
  else slots.learning.add(key)
}

// What an answer said of the server's limit: `ServerLimit.learn` decides what to keep for the key, against the limit
// the request was admitted under, and the store changes it if that is still what it holds. An answer that says the
// server's limit is judged again against what the store holds now when that differs (another answer changed it
// meanwhile, or the request was admitted before a limit was learned that this answer makes moot): the server's word
// is its latest, whichever request it answers. A first limit's log starts with what the slots count (before it is set:
// whoever reads it finds its log ready). Whoever changed it says so once, and wakes the requests waiting for room when
// it eased.
const learn = (
  slots: Slots,
  ...[key, acquired, heard]: Parameters<Service["learn"]>
): ReturnType<Service["learn"]> =>
  Effect.gen(function*() {
    const { configured, holds } = slots
    const now = yield* Clock.currentTimeMillis
    const decide = (before: ServerLimit.Learned | undefined) =>
      Effect.map(
        before === undefined && heard.tooManyRequests && heard.serverLimit === undefined
          ? inUse(slots, key)
          : Effect.succeed(undefined),
        (counted) => ServerLimit.learn(configured, before, counted === undefined ? heard : { ...heard, counted }, now)
      )
    const change = (before: ServerLimit.Learned | undefined, next: ServerLimit.Learned | null) =>
      Effect.andThen(
        before === undefined && next !== null
          ? holds.seedLogged(key, configured)
          : Effect.void,
        holds.setLearned(key, before, next)
      )
    let before = acquired.learned
    let next = yield* decide(before)
    // Admitted before a limit this process knows of: an answer that says the server's limit is judged against it.
    if (next === undefined && before === undefined && heard.serverLimit !== undefined && slots.learning.has(key)) {
      before = yield* holds.learned(key)
      if (before !== undefined) next = yield* decide(before)
    }
    if (next === undefined) return
    let changed = yield* change(before, next)
    if (!changed && heard.serverLimit !== undefined) {
      // Changed meanwhile: an answer that says the server's limit is judged once more against what there is now.
      before = yield* holds.learned(key)
      next = yield* decide(before)
      if (next === undefined) return
      changed = yield* change(before, next)
    }
    if (!changed) return
    noteLearning(slots, key, next)
    // Only a limit that eases can let a waiting request go sooner; one that tightens is met when it wakes.
    if (
      next === null || (before !== undefined && (next.limit > before.limit || next.windowMillis < before.windowMillis))
    ) {
      wake(slots)
    }
    const note = LimiterText.learned({ configured, before }, next)
    if (note !== undefined) yield* Effect.logInfo(note).pipe(Effect.annotateLogs("erp.endpoint", endpointOfKey(key)))
  })
