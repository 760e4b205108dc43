import { describe, expect, it } from "@effect/vitest"
import type { ErpClient } from "@erp-client/client"
import { type ErpError, Partner } from "@erp-client/core"
import { Fault, Sandbox } from "@erp-client/sandbox"
import { Partners } from "@erp-client/streams"
import { ErpTest } from "@erp-client/testing"
import { Chunk, Context, Effect, Fiber, Layer, Option, Stream, TestClock } from "effect"

// The service under test: what a web shop asks the ERP at checkout, and what the nightly CRM sync exports.
class Checkout extends Context.Tag("shop/Checkout")<Checkout, {
  /** Whether the partner may buy on account: a customer the ERP knows. */
  readonly mayBuyOnAccount: (partnerId: number) => Effect.Effect<boolean, ErpClient.CallError>
  /** The ids of every customer, for the CRM. */
  readonly customerIds: Effect.Effect<ReadonlyArray<number>, ErpError.ErpError>
}>() {}

const CheckoutLive = Layer.effect(
  Checkout,
  Effect.gen(function*() {
    const erp = yield* Effect.context<ErpClient.ErpClient>()
    return {
      mayBuyOnAccount: (partnerId) =>
        Partners.get(partnerId).pipe(
          Effect.map(Partner.isCustomer),
          Effect.catchTag("NotFound", () => Effect.succeed(false)),
          Effect.provide(erp)
        ),
      customerIds: Partners.stream({ where: { is_customer: 1 } }).pipe(
        Stream.map((partner) => partner.id),
        Stream.runCollect,
        Effect.map(Chunk.toReadonlyArray),
        Effect.provide(erp)
      )
    }
  })
)

// The service on the in-memory ERP; a new one for each test (its own partners, windows and request log).
const testLayer = (options?: ErpTest.Options) => CheckoutLive.pipe(Layer.provideMerge(ErpTest.layer(options)))

describe("Checkout", () => {
  it.effect("lists every customer, at 10 requests per second", () =>
    Effect.gen(function*() {
      const checkout = yield* Checkout
      const sandbox = yield* Sandbox.Sandbox
      // The export waits for the limit between its pages: `advancing` moves the clock until it ends (in milliseconds).
      const ids = yield* ErpTest.advancing(checkout.customerIds)
      const customers = (yield* sandbox.visiblePartners).filter((partner) => partner.is_customer === 1)
      expect(ids).toStrictEqual(customers.map((partner) => partner.id))
      expect((yield* sandbox.stats).tooManyRequests).toBe(0)
    }).pipe(
      Effect.provide(testLayer({
        sandbox: { partners: 2_500, maxListCount: 100, rateLimit: { limit: 10, window: "1 second" } }
      }))
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
      const answer = yield* Effect.fork(checkout.mayBuyOnAccount(1))
      yield* TestClock.adjust("19 seconds")
      expect(Option.isNone(yield* Fiber.poll(answer))).toBe(true)
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
