import { describe, expect, it } from "@effect/vitest"
import { ErpClient, ErpRateLimiter } from "@erp-client/client"
import { Deferred, Effect, Exit, Fiber, Layer, Redacted, Schema } from "effect"
import * as InFlight from "../src/internal/inFlight.js"
import { fork, HttpClient, HttpClientResponse, TestClock, yieldNow } from "./kit.js"

// The places for requests in flight: at most `max` held, the waiting served oldest call first, and a place never lost
// to an interruption, whether the waiter was still queued or had just been handed one. One suite, run against both
// editions (TEST_PAIRS in scripts/editions.ts).

describe("InFlight", () => {
  it.effect("holds at most max places, and serves the waiting by their call's start, not their arrival", () =>
    Effect.gen(function*() {
      const places = InFlight.make(2)
      const order: Array<string> = []
      const gates = [yield* Deferred.make<void>(), yield* Deferred.make<void>()]
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
      const first = yield* fork(use("a", 10, gates[0]))
      const second = yield* fork(use("b", 11, gates[1]))
      yield* yieldNow
      // Three arrive in the order young, younger, old: the old one (a retry) goes first.
      const young = yield* fork(use("young", 20))
      const younger = yield* fork(use("younger", 30))
      const old = yield* fork(use("old", 5))
      yield* yieldNow
      expect(order).toEqual(["a", "b"])
      yield* Deferred.succeed(gates[0]!, undefined)
      yield* Deferred.succeed(gates[1]!, undefined)
      yield* Fiber.joinAll([first, second, young, younger, old])
      expect(order).toEqual(["a", "b", "old", "young", "younger"])
      expect(most).toBe(2)
    }))

  it.effect("a waiter interrupted in the queue leaves it; one interrupted as it is handed a place passes it on", () =>
    Effect.gen(function*() {
      const places = InFlight.make(1)
      const gate = yield* Deferred.make<void>()
      const holder = yield* fork(places.withPlace(1, Deferred.await(gate)))
      yield* yieldNow
      const queued = yield* fork(places.withPlace(2, Effect.void))
      const last = yield* fork(places.withPlace(3, Effect.succeed("ran")))
      yield* yieldNow
      yield* Fiber.interrupt(queued)
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(holder)
      expect(yield* Fiber.join(last)).toBe("ran")
      // The place is free again: a new caller gets it at once.
      expect(yield* places.withPlace(4, Effect.succeed("again"))).toBe("again")

      // Handed a place and interrupted before it goes on: the place is not lost.
      const gate2 = yield* Deferred.make<void>()
      const holder2 = yield* fork(places.withPlace(1, Deferred.await(gate2)))
      yield* yieldNow
      const handed = yield* fork(places.withPlace(2, Effect.never))
      yield* yieldNow
      yield* Deferred.succeed(gate2, undefined)
      yield* Fiber.join(holder2)
      yield* Fiber.interrupt(handed)
      expect(yield* places.withPlace(5, Effect.succeed("free"))).toBe("free")
    }))

  it.effect("withMaxInFlight through the client: a failing lookup retries beside the others, never more than max", () => {
    let inFlight = 0
    let most = 0
    const fake = Layer.succeed(
      HttpClient.HttpClient,
      HttpClient.make((request, url) =>
        Effect.gen(function*() {
          inFlight++
          most = Math.max(most, inFlight)
          yield* Effect.sleep("100 millis")
          inFlight--
          const id = url.searchParams.get("id")
          return HttpClientResponse.fromWeb(
            request,
            id === "1"
              ? new Response("", { status: 503 })
              : new Response(JSON.stringify({ result: { code: 1, message: null }, data: Number(id) }))
          )
        })
      )
    )
    return Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      const ids = Array.from({ length: 20 }, (_, i) => i + 1)
      const lookups = yield* fork(
        Effect.forEach(ids, (id) => Effect.exit(client.get("p/get", Schema.Number, { params: [["id", `${id}`]] })), {
          concurrency: "unbounded"
        }).pipe(ErpClient.withMaxInFlight(3))
      )
      yield* TestClock.adjust("2 minutes")
      const results = yield* Fiber.join(lookups)
      expect(results.filter(Exit.isSuccess)).toHaveLength(19)
      expect(most).toBe(3)
    }).pipe(
      Effect.provide(
        ErpClient.layer({ baseUrl: "https://erp.example.com/", apiKey: Redacted.make("k"), retries: 2 }).pipe(
          Layer.provide(ErpRateLimiter.layer()),
          Layer.provide(fake)
        )
      )
    )
  })
})
