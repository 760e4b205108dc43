import { describe, expect, it } from "@effect/vitest"
import { Fault, Sandbox } from "@erp-client/sandbox"
import { ErpTest } from "@erp-client/testing"
import { Context, Effect, Fiber, Layer, Option, Ref, TestClock } from "effect"
import { Crm, CrmSync, CrmSyncLive } from "./CrmSync.js"

// The sync against the in-memory ERP and a CRM kept in a Ref: no server, no port, the TestClock for every wait.
class Written extends Context.Tag("test/Written")<Written, Ref.Ref<ReadonlyMap<number, string | null>>>() {}

const CrmInMemory = Layer.effect(
  Crm,
  Effect.map(Written, (written) => ({
    upsert: (partner) => Ref.update(written, (map) => new Map(map).set(partner.id, partner.company_name))
  }))
).pipe(Layer.provideMerge(Layer.effect(Written, Ref.make<ReadonlyMap<number, string | null>>(new Map()))))

// A new service for each test: its own ERP (partners, windows, request log) and its own CRM.
const testLayer = (options?: ErpTest.Options) =>
  CrmSyncLive.pipe(Layer.provideMerge(CrmInMemory), Layer.provideMerge(ErpTest.layer(options)))

const writtenIds = Effect.map(Effect.flatMap(Written, Ref.get), (map) => [...map.keys()].sort((a, b) => a - b))

describe("CrmSync", () => {
  it.effect("writes every customer once, at the ERP's 10 requests a second", () =>
    Effect.gen(function*() {
      const sync = yield* CrmSync
      const sandbox = yield* Sandbox.Sandbox
      // The export waits for the limit between its pages: `advancing` moves the clock until it ends.
      const count = yield* ErpTest.advancing(sync.syncCustomers)
      const customers = (yield* sandbox.visiblePartners).filter((partner) => partner.is_customer === 1)
      expect(count).toBe(customers.length)
      expect(yield* writtenIds).toStrictEqual(customers.map((partner) => Number(partner.id)).sort((a, b) => a - b))
    }).pipe(Effect.provide(testLayer({
      sandbox: { partners: 1_500, maxListCount: 100, rateLimit: { limit: 10, window: "1 second" } }
    }))))

  it.effect("refresh: an id the ERP does not know is named, the others written, each id asked once", () =>
    Effect.gen(function*() {
      const sync = yield* CrmSync
      const sandbox = yield* Sandbox.Sandbox
      const refreshed = yield* ErpTest.advancing(sync.refresh([3, 99_999, 3, 7]))
      expect(refreshed).toStrictEqual({ updated: 3, missing: [99_999] })
      expect(yield* writtenIds).toStrictEqual([3, 7])
      expect((yield* sandbox.requests).length).toBe(3)
    }).pipe(Effect.provide(testLayer({ sandbox: { partners: 20 } }))))

  it.effect("waits out a 429 for as long as the server says", () =>
    Effect.gen(function*() {
      const sync = yield* CrmSync
      const sandbox = yield* Sandbox.Sandbox
      yield* sandbox.inject(Fault.Fault.TooManyRequests({ resetAfter: "20 seconds" }))
      const refreshing = yield* Effect.fork(sync.refresh([1]))
      yield* TestClock.adjust("19 seconds")
      expect(Option.isNone(yield* Fiber.poll(refreshing))).toBe(true)
      yield* TestClock.adjust("1 second")
      expect(yield* Fiber.join(refreshing)).toStrictEqual({ updated: 1, missing: [] })
    }).pipe(Effect.provide(testLayer({ sandbox: { partners: 20 } }))))

  it.effect("a key the ERP refuses is Unauthorized, typed, and nothing is written", () =>
    Effect.gen(function*() {
      const sync = yield* CrmSync
      const sandbox = yield* Sandbox.Sandbox
      yield* sandbox.inject(Fault.Fault.Unauthorized())
      const failed = yield* Effect.flip(ErpTest.advancing(sync.refresh([1, 2])))
      expect(failed._tag).toBe("Unauthorized")
      expect(yield* writtenIds).toStrictEqual([])
    }).pipe(Effect.provide(testLayer({ sandbox: { partners: 20 } }))))
})
