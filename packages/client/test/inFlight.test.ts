import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import * as InFlight from "../src/internal/inFlight.js"

// The places for requests in flight: at most `max` held, the waiting served oldest call first, and a place never lost
// to an interruption, whether the waiter was still queued or had just been handed one.

describe("InFlight", () => {
  it.effect("holds at most max places, and serves the waiting by their call's start, not their arrival", () =>
    Effect.gen(function*() {
      const places = InFlight.make(2)
      const order: Array<string> = []
      const gates = yield* Effect.all(Array.from({ length: 2 }, () => Deferred.make<void>()))
      let held = 0
      let most = 0
      const use = (name: string, priority: number, gate?: Deferred.Deferred<void>) =>
        places.withPlace(
          priority,
          Effect.gen(function*() {
            held++
            most = Math.max(most, held)
            order.push(name)
            if (gate !== undefined) yield* Deferred.await(gate)
            held--
          })
        )
      const first = yield* Effect.fork(use("a", 10, gates[0]))
      const second = yield* Effect.fork(use("b", 11, gates[1]))
      yield* Effect.yieldNow()
      // Three arrive in the order young, younger, old: the old one (a retry) goes first.
      const young = yield* Effect.fork(use("young", 20))
      const younger = yield* Effect.fork(use("younger", 30))
      const old = yield* Effect.fork(use("old", 5))
      yield* Effect.yieldNow()
      expect(order).toEqual(["a", "b"])
      yield* Deferred.succeed(gates[0]!, undefined)
      yield* Deferred.succeed(gates[1]!, undefined)
      yield* Fiber.join(Fiber.zip(Fiber.zip(first, second), Fiber.zip(Fiber.zip(young, younger), old)))
      expect(order).toEqual(["a", "b", "old", "young", "younger"])
      expect(most).toBe(2)
    }))

  it.effect("a waiter interrupted in the queue leaves it; one interrupted as it is handed a place passes it on", () =>
    Effect.gen(function*() {
      const places = InFlight.make(1)
      const gate = yield* Deferred.make<void>()
      const holder = yield* Effect.fork(places.withPlace(1, Deferred.await(gate)))
      yield* Effect.yieldNow()
      const queued = yield* Effect.fork(places.withPlace(2, Effect.void))
      const last = yield* Effect.fork(places.withPlace(3, Effect.succeed("ran")))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(queued)
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(holder)
      expect(yield* Fiber.join(last)).toBe("ran")
      // The place is free again: a new caller gets it at once.
      expect(yield* places.withPlace(4, Effect.succeed("again"))).toBe("again")

      // Handed a place and interrupted before it goes on: the place is not lost.
      const gate2 = yield* Deferred.make<void>()
      const holder2 = yield* Effect.fork(places.withPlace(1, Deferred.await(gate2)))
      yield* Effect.yieldNow()
      const handed = yield* Effect.fork(places.withPlace(2, Effect.never))
      yield* Effect.yieldNow()
      yield* Deferred.succeed(gate2, undefined)
      yield* Fiber.join(holder2)
      yield* Fiber.interrupt(handed)
      expect(yield* places.withPlace(5, Effect.succeed("free"))).toBe("free")
    }))
})
