// Per edition: Effect 3's TestClock keeps every cancelled sleep, so its attempts share one hand-written watcher.
/**
 * The attempts' timeouts of one client, watched together: one watcher waits for the earliest deadline, instead of a
 * sleeping fiber per attempt (`Effect.timeout` races the attempt against its own `sleep`).
 *
 * Written by hand because the per-attempt sleep costs where the client is used most. Each attempt forked a second
 * fiber and set a timer that it almost always cancels. And under a `TestClock` a cancelled sleep is never forgotten:
 * Effect 3's `TestClock` keeps it and, when a test moves the clock past it, spends a scheduling round on it (three
 * `setTimeout(0)` turns) as for a live one, so a test of a few dozen requests paid for each of them again.
 *
 * The rules, as plain data (`Book`) so another edition can share them: an attempt adds its deadline and removes it
 * when it ends; the watcher, woken at the earliest deadline, expires what is due and sleeps until the next one, and
 * ends when nothing is pending. An attempt whose deadline is earlier than the one the watcher sleeps to (a clock that
 * moved back) wakes it. On Effect's own clock the watcher is a plain timer (no fiber), cleared as soon as nothing is
 * pending, so no timer of ours keeps the process alive after its last request; on another clock it is a fiber
 * sleeping on that clock, stopped the same way, except on a `TestClock`, where a stopped sleep would be kept anyway:
 * there it sleeps on to its deadline, once for many attempts.
 */
import type * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Predicate from "effect/Predicate"

/** The pending deadlines of one client: what the watcher decides from. */
export interface Book {
  readonly pending: Map<number, { readonly at: number; readonly expire: () => void }>
  nextId: number
  /** The deadline the watcher sleeps until, `Infinity` without a watcher. */
  watchingUntil: number
}

export const makeBook = (): Book => ({ pending: new Map(), nextId: 0, watchingUntil: Number.POSITIVE_INFINITY })

/** Expires every deadline due at `now`; what is left's earliest deadline (`Infinity`: none). */
export const expireDue = (book: Book, now: number): number => {
  let earliest = Number.POSITIVE_INFINITY
  for (const [id, entry] of book.pending) {
    if (entry.at <= now) {
      book.pending.delete(id)
      entry.expire()
    } else if (entry.at < earliest) {
      earliest = entry.at
    }
  }
  return earliest
}

// A TestClock is told by its `adjust` (as `ErpTest.advancing` does). `effect/TestClock` exports its class, but an
// `instanceof` would load the test services into every program that makes a client, for one check.
const isTestClock = (clock: Clock.Clock): boolean =>
  Predicate.hasProperty(clock, "adjust") && Predicate.isFunction(clock.adjust)

// Effect's own clock, the one every runtime has unless a program provides another: its time is `Date.now()` and its
// sleeps are `setTimeout`s, so its deadlines are watched by a timer of ours, with no fiber at all.
const liveClock: Clock.Clock = Effect.runSync(Effect.clock)

// The longest delay `setTimeout` keeps (about 24.8 days); a deadline beyond it is looked at again then.
const maxTimerMillis = 2_147_483_647

/** Who watches a client's deadlines: a timer on Effect's own clock, else a fiber sleeping on the attempts' clock. */
interface Watch {
  readonly book: Book
  watchedOn: Clock.Clock | undefined
  watcher: Fiber.RuntimeFiber<void> | undefined
  timer: ReturnType<typeof setTimeout> | undefined
  /** Which watcher is the current one: a stopped fiber that had already woken must not touch what its successor keeps. */
  generation: number
}

/** A client's deadlines: `within` runs an attempt that fails with `onTimeout()` once `millis` have passed. */
export const make = () => {
  const watch: Watch = {
    book: makeBook(),
    watchedOn: undefined,
    watcher: undefined,
    timer: undefined,
    generation: 0
  }
  /**
   * `self` in a fiber of its own, interrupted at the deadline and then failing with `onTimeout()`. The attempt can be
   * stopped at its deadline even when its caller cannot be interrupted (`Effect.timeout` would wait for it): the
   * deadline is the client's own, not an interruption of the caller. What `self` sets on its fiber (its fiber refs)
   * stays there: it is not joined back into the caller's fiber.
   */
  const within = <A, E, E2>(
    self: Effect.Effect<A, E>,
    millis: number,
    onTimeout: () => E2
  ): Effect.Effect<A, E | E2> =>
    Effect.clockWith((clock) =>
      Effect.flatMap(Effect.fork(Effect.interruptible(self)), (fiber) => {
        let timedOut = false
        const id = add(watch, clock, clock.unsafeCurrentTimeMillis() + millis, () => {
          timedOut = true
          fiber.unsafeInterruptAsFork(FiberId.none)
        })
        return Fiber.await(fiber).pipe(
          // Interrupted while it waits (a race lost, a stopped stream): the attempt is stopped with it, at once.
          Effect.onInterrupt(() => Fiber.interrupt(fiber)),
          Effect.ensuring(Effect.sync(() => remove(watch, id))),
          Effect.flatMap((exit): Effect.Effect<A, E | E2> =>
            timedOut && Exit.isFailure(exit) ? Effect.fail(onTimeout()) : exit
          )
        )
      })
    )
  return { within, book: watch.book }
}

/** Stops the watcher, timer or fiber: nobody watches. */
const stop = (watch: Watch): void => {
  watch.generation += 1
  if (watch.watcher !== undefined) watch.watcher.unsafeInterruptAsFork(FiberId.none)
  if (watch.timer !== undefined) clearTimeout(watch.timer)
  watch.watcher = undefined
  watch.timer = undefined
  watch.watchedOn = undefined
  watch.book.watchingUntil = Number.POSITIVE_INFINITY
}

/** The timer's turn: expires what is due, and sets itself for the next deadline, if any. */
const onTimer = (watch: Watch): void => {
  watch.timer = undefined
  const now = liveClock.unsafeCurrentTimeMillis()
  const earliest = expireDue(watch.book, now)
  watch.book.watchingUntil = earliest
  if (earliest === Number.POSITIVE_INFINITY) watch.watchedOn = undefined
  else watch.timer = setTimeout(() => onTimer(watch), Math.min(earliest - now, maxTimerMillis))
}

/** The watcher fiber of generation `own`: expires what is due, then sleeps on `clock` until the next deadline. */
const watchOn = (watch: Watch, clock: Clock.Clock, own: number): Effect.Effect<void> =>
  Effect.suspend(() => {
    if (own !== watch.generation) return Effect.void
    const now = clock.unsafeCurrentTimeMillis()
    const earliest = expireDue(watch.book, now)
    watch.book.watchingUntil = earliest
    if (earliest === Number.POSITIVE_INFINITY) {
      watch.watcher = undefined
      watch.watchedOn = undefined
      return Effect.void
    }
    return Effect.zipRight(clock.sleep(Duration.millis(earliest - now)), watchOn(watch, clock, own))
  })

/** Adds a deadline, (re)starting the watcher when it would not wake in time; its id, for `remove`. */
const add = (watch: Watch, clock: Clock.Clock, at: number, expire: () => void): number => {
  const { book } = watch
  const id = book.nextId++
  book.pending.set(id, { at, expire })
  // Nobody watching, a watcher on another clock (a client used under a TestClock, then live), or one sleeping past
  // this deadline: (re)start it.
  if (clock !== watch.watchedOn || at < book.watchingUntil) {
    stop(watch)
    watch.watchedOn = clock
    book.watchingUntil = at
    if (clock === liveClock) {
      watch.timer = setTimeout(
        () => onTimer(watch),
        Math.min(Math.max(0, at - clock.unsafeCurrentTimeMillis()), maxTimerMillis)
      )
    } else {
      // Its own root fiber, sleeping on the attempts' clock.
      watch.watcher = Effect.runFork(watchOn(watch, clock, watch.generation))
    }
  }
  return id
}

/** Removes a deadline; with none left, the watcher stops (but on a TestClock, see the module's comment). */
const remove = (watch: Watch, id: number): void => {
  watch.book.pending.delete(id)
  if (watch.book.pending.size === 0 && !(watch.watchedOn !== undefined && isTestClock(watch.watchedOn))) stop(watch)
}
