import { describe, expect, it } from "@effect/vitest"
import { ErpClient } from "@erp-client/effect4-client"
import { Partner } from "@erp-client/effect4-core"
import { ErpTest, Fault, Sandbox } from "@erp-client/effect4-testing"
import { Context, Effect, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"

// The service under test: what a web shop asks the ERP at checkout, and at night, for a batch of accounts.
class Checkout extends Context.Service<Checkout, {
  /** Whether the partner may buy on account: a customer the ERP knows. */
  readonly mayBuyOnAccount: (partnerId: number) => Effect.Effect<boolean, ErpClient.CallError>
  /** Which of these partners may buy on account, four lookups at a time. */
  readonly onAccount: (partnerIds: ReadonlyArray<number>) => Effect.Effect<Array<number>, ErpClient.CallError>
}>()("shop/Checkout") {}

const CheckoutLive = Layer.effect(
  Checkout,
  Effect.gen(function*() {
    const erp = yield* ErpClient.ErpClient
    const mayBuyOnAccount = (partnerId: number) =>
      erp.get("partner/get", Partner.Partner, { params: [["id", String(partnerId)]], selector: `id=${partnerId}` })
        .pipe(
          Effect.map(Partner.isCustomer),
          Effect.catchTag("NotFound", () => Effect.succeed(false))
        )
    return {
      mayBuyOnAccount,
      onAccount: (partnerIds) =>
        Effect.forEach(partnerIds, (id) => Effect.map(mayBuyOnAccount(id), (may) => may ? [id] : []), {
          concurrency: 4
        }).pipe(Effect.map((ids) => ids.flat()))
    }
  })
)

// The service on the in-memory ERP; a new one for each test (its own partners, windows and request log).
const testLayer = (options?: ErpTest.Options) => CheckoutLive.pipe(Layer.provideMerge(ErpTest.layer(options)))

describe("Checkout", () => {
  it.effect("checks 30 accounts at 10 requests per second", () =>
    Effect.gen(function*() {
      const checkout = yield* Checkout
      const sandbox = yield* Sandbox.Sandbox
      const ids = Array.from({ length: 30 }, (_, i) => i + 1)
      // The batch waits for the limit: `advancing` moves the clock until it ends (in milliseconds).
      const checked = yield* ErpTest.advancing(checkout.onAccount(ids))
      const customers = (yield* sandbox.visiblePartners).filter((partner) => partner.is_customer === 1)
      expect(checked).toStrictEqual(customers.map((partner) => partner.id))
      expect((yield* sandbox.stats).tooManyRequests).toBe(0)
    }).pipe(
      Effect.provide(testLayer({ sandbox: { partners: 30, rateLimit: { limit: 10, window: "1 second" } } }))
    ))

  it.effect("a partner the ERP does not know may not buy on account", () =>
    Effect.gen(function*() {
      const checkout = yield* Checkout
      expect(yield* checkout.mayBuyOnAccount(42)).toBe(true)
      expect(yield* checkout.mayBuyOnAccount(7)).toBe(false)
    }).pipe(
      Effect.provide(testLayer({
        sandbox: { partners: [{ id: 42, company_name: "Acme Kft.", tax_number: "12345678-2-42", is_customer: 1 }] }
      }))
    ))

  it.effect("waits out a 429 for as long as the server says", () =>
    Effect.gen(function*() {
      const checkout = yield* Checkout
      const sandbox = yield* Sandbox.Sandbox
      yield* sandbox.inject(Fault.Fault.TooManyRequests({ resetAfter: "20 seconds" }))
      const answer = yield* Effect.forkChild(checkout.mayBuyOnAccount(1))
      yield* TestClock.adjust("19 seconds")
      expect(answer.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(answer)
      expect((yield* sandbox.requests).map((request) => request.status)).toStrictEqual([429, 200])
    }).pipe(Effect.provide(testLayer())))

  it.effect("rides out an outage", () =>
    Effect.gen(function*() {
      const checkout = yield* Checkout
      const sandbox = yield* Sandbox.Sandbox
      yield* sandbox.inject(Fault.Fault.Outage({ duration: "5 seconds" }))
      // `advancing` moves the clock until the call ends, however many retries that takes.
      yield* ErpTest.advancing(checkout.mayBuyOnAccount(1))
      const statuses = (yield* sandbox.requests).map((request) => request.status)
      expect(statuses[0]).toBe(503)
      expect(statuses[statuses.length - 1]).toBe(200)
    }).pipe(Effect.provide(testLayer())))
})
