import { describe, expect, it } from "@effect/vitest"
import { ErpTest, Fault, Sandbox } from "@erp-client/effect4-testing"
import { Context, Effect, Fiber, Layer, Ref } from "effect"
import { TestClock } from "effect/testing"
import { Crm, CrmSync, CrmSyncLive } from "./CrmSync.js"

// The sync against the in-memory ERP and a CRM kept in a Ref: no server, no port, the TestClock for every wait.
class Written extends Context.Service<Written, Ref.Ref<ReadonlyMap<number, string | null>>>()("test/Written") {}

const CrmInMemory = Layer.effect(
  Crm,
  Effect.gen(function*() {
    const written = yield* Written
    return {
      upsert: (partner: { readonly id: number; readonly company_name: string | null }) =>
        Ref.update(written, (map) => new Map(map).set(partner.id, partner.company_name))
    }
  })
).pipe(Layer.provideMerge(Layer.effect(Written, Ref.make<ReadonlyMap<number, string | null>>(new Map()))))

// A new service for each test: its own ERP (partners, windows, request log) and its own CRM.
const testLayer = (options?: ErpTest.Options) =>
  CrmSyncLive.pipe(Layer.provideMerge(CrmInMemory), Layer.provideMerge(ErpTest.layer(options)))

const writtenIds = Effect.gen(function*() {
  const written = yield* Ref.get(yield* Written)
  return [...written.keys()].sort((a, b) => a - b)
})

describe("CrmSync on Effect 4", () => {
  it.effect("writes every customer once, at the ERP's 10 requests a second", () =>
    Effect.gen(function*() {
      const sync = yield* CrmSync
      const sandbox = yield* Sandbox.Sandbox
      // The export waits for the limit between its pages: `advancing` moves the clock until it ends.
      const count = yield* ErpTest.advancing(sync.syncCustomers)
      const stats = yield* sandbox.stats
      expect(stats.tooManyRequests).toBe(0)
      expect(stats.maxObservedInWindow["/partner/list"]).toBeLessThanOrEqual(10)
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
      const refreshing = yield* Effect.forkChild(sync.refresh([1]))
      yield* TestClock.adjust("19 seconds")
      expect(refreshing.pollUnsafe()).toBeUndefined()
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
