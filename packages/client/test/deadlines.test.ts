import { describe, expect, it } from "@effect/vitest"
import { Chunk, Deferred, Effect, Either, Exit, Fiber, TestClock } from "effect"
import * as Deadlines from "../src/internal/deadlines.js"

// The attempts' timeouts of one client, watched together (internal/deadlines.ts).

// Effect's own clock, as a program without a TestClock runs on.
const liveClock = Effect.runSync(Effect.clock)

const timedOut = () => "timed out" as const

describe("deadlines: the rules", () => {
  it("expireDue expires what is due, in any order, and says the earliest left", () => {
    const book = Deadlines.makeBook()
    const expired: Array<string> = []
    const add = (name: string, at: number) => book.pending.set(book.nextId++, { at, expire: () => expired.push(name) })
    add("c", 300)
    add("a", 100)
    add("b", 200)
    add("d", 400)
    expect(Deadlines.expireDue(book, 50)).toBe(100)
    expect(expired).toEqual([])
    expect(Deadlines.expireDue(book, 200)).toBe(300)
    expect(expired.sort()).toEqual(["a", "b"])
    expect(Deadlines.expireDue(book, 1_000)).toBe(Number.POSITIVE_INFINITY)
    expect(expired.sort()).toEqual(["a", "b", "c", "d"])
    expect(book.pending.size).toBe(0)
  })
})

describe("deadlines: within", () => {
  it.effect("an attempt that ends in time is its own result, success or failure", () =>
    Effect.gen(function*() {
      const { within } = Deadlines.make()
      expect(yield* within(Effect.succeed(7), 1_000, timedOut)).toBe(7)
      expect(yield* Effect.flip(within(Effect.fail("refused" as const), 1_000, timedOut))).toBe("refused")
      const slow = yield* Effect.fork(
        within(Effect.as(Effect.sleep("900 millis"), "late but in time"), 1_000, timedOut)
      )
      yield* TestClock.adjust("900 millis")
      expect(yield* Fiber.join(slow)).toBe("late but in time")
    }))

  it.effect("an attempt past its deadline is interrupted and fails with the timeout, at the deadline exactly", () =>
    Effect.gen(function*() {
      const { within } = Deadlines.make()
      const stopped = yield* Deferred.make<void>()
      const hung = Effect.never.pipe(Effect.onInterrupt(() => Deferred.succeed(stopped, undefined)))
      const fiber = yield* Effect.fork(Effect.either(within(hung, 10_000, timedOut)))
      yield* TestClock.adjust("9999 millis")
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust("1 millis")
      expect(yield* Fiber.join(fiber)).toEqual(Either.left("timed out"))
      expect(yield* Deferred.isDone(stopped)).toBe(true)
    }))

  it.effect("a caller that cannot be interrupted still has its hung attempt stopped at the deadline", () =>
    Effect.gen(function*() {
      const { within } = Deadlines.make()
      const fiber = yield* Effect.fork(Effect.uninterruptible(Effect.either(within(Effect.never, 10_000, timedOut))))
      yield* TestClock.adjust("10 seconds")
      expect(yield* Fiber.join(fiber)).toEqual(Either.left("timed out"))
    }))

  it.effect("concurrent attempts: each meets its own deadline, the others are untouched", () =>
    Effect.gen(function*() {
      const { within } = Deadlines.make()
      // Started 1 s apart, each with 5 s; the first two hang, the third answers after 2 s.
      const first = yield* Effect.fork(Effect.either(within(Effect.never, 5_000, timedOut)))
      yield* TestClock.adjust("1 second")
      const second = yield* Effect.fork(Effect.either(within(Effect.never, 5_000, timedOut)))
      yield* TestClock.adjust("1 second")
      const third = yield* Effect.fork(
        Effect.either(within(Effect.as(Effect.sleep("2 seconds"), "ok"), 5_000, timedOut))
      )
      yield* TestClock.adjust("3 seconds") // t = 5 s: the first's deadline
      expect(yield* Fiber.join(first)).toEqual(Either.left("timed out"))
      expect(second.unsafePoll()).toBeNull()
      expect(third.unsafePoll()).toEqual(Exit.succeed(Either.right("ok")))
      yield* TestClock.adjust("1 second") // t = 6 s: the second's
      expect(yield* Fiber.join(second)).toEqual(Either.left("timed out"))
    }))

  it.effect("a caller interrupted while its attempt runs stops the attempt at once, and the deadline is dropped", () =>
    Effect.gen(function*() {
      const { book, within } = Deadlines.make()
      const stopped = yield* Deferred.make<void>()
      const caller = yield* Effect.fork(
        within(Effect.never.pipe(Effect.onInterrupt(() => Deferred.succeed(stopped, undefined))), 10_000, timedOut)
      )
      yield* TestClock.adjust("1 second")
      expect(book.pending.size).toBe(1)
      yield* Fiber.interrupt(caller)
      expect(yield* Deferred.isDone(stopped)).toBe(true)
      expect(book.pending.size).toBe(0)
    }))

  it.effect("on a TestClock, many quick attempts leave one sleep, not one each", () =>
    Effect.gen(function*() {
      const { within } = Deadlines.make()
      const before = Chunk.size(yield* TestClock.sleeps())
      yield* Effect.forEach(Array.from({ length: 50 }, (_, i) => i), (i) => within(Effect.succeed(i), 10_000, timedOut))
      // Effect.timeout would leave 50 interrupted sleeps here, each costing a scheduling round when the clock passes.
      expect(Chunk.size(yield* TestClock.sleeps()) - before).toBe(1)
      yield* TestClock.adjust("10 seconds")
      expect(Chunk.size(yield* TestClock.sleeps())).toBe(before)
    }))

  it.effect("a client's attempts under a TestClock, then on the live clock: the live deadline is watched live", () =>
    Effect.gen(function*() {
      const { book, within } = Deadlines.make()
      // Under the TestClock (time near 0), the watcher lingers to its deadline, 10 s of test time away.
      yield* within(Effect.void, 10_000, timedOut)
      expect(book.watchingUntil).toBe(10_000)
      // On the live clock (time near now) a hung attempt must still time out, in real milliseconds.
      const live = yield* Effect.either(within(Effect.never, 30, timedOut)).pipe(Effect.withClock(liveClock))
      expect(live).toEqual(Either.left("timed out"))
    }))

  it.live("on the live clock, the watcher stops with the last attempt: no timer of ours outlives the requests", () =>
    Effect.gen(function*() {
      const { book, within } = Deadlines.make()
      yield* Effect.forEach([1, 2, 3], (i) => within(Effect.as(Effect.sleep("5 millis"), i), 60_000, timedOut), {
        concurrency: 3
      })
      expect(book.pending.size).toBe(0)
      expect(book.watchingUntil).toBe(Number.POSITIVE_INFINITY)
      // And a real timeout still fires on the live clock.
      expect(yield* Effect.flip(within(Effect.never, 20, timedOut))).toBe("timed out")
      expect(book.watchingUntil).toBe(Number.POSITIVE_INFINITY)
    }))
})
