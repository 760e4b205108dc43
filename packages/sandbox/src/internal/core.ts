/**
 * The sandbox without a transport: the in-memory ERP's rules (`@erp-client/fake-erp`'s `ErpRules`: a request arrives,
 * the rate limit and the fault queue give their verdict, and the answer comes out as a plan) wired to Effect: the
 * time of each step is the Effect `Clock` of the fiber handling the request, so under `TestClock` the windows,
 * latency, outages and `Delay` follow the test's clock; the plan's waits are slept on it; and the request is in flight
 * for the scope of its handling. A transport carries the reply out: the in-memory HttpClient (`memoryClient.ts`), or
 * in the Effect 3 sandbox also the Node HTTP server (`nodeServer.ts`).
 */
import * as ErpRules from "@erp-client/fake-erp/ErpRules"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Sandbox from "../Sandbox.js"
import * as Edition from "./edition.js"

/**
 * A request as the core sees it, whatever carried it.
 *
 * @internal
 */
export type Incoming = ErpRules.Incoming

/**
 * The service without its address, which the adapter adds.
 *
 * @internal
 */
export type Controls = Omit<Sandbox.Service, "baseUrl" | "port">

/**
 * @internal
 */
export interface Core {
  readonly controls: Controls
  /**
   * Handles one request: `deliver` carries the reply out (a response, a failed connection, or never an answer). The
   * request is in flight until `deliver` ends, fails or is interrupted; the log records it then.
   */
  readonly handle: <A, E, R>(
    incoming: Incoming,
    deliver: (reply: ErpRules.Reply) => Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E, R>
}

/**
 * Carries out a plan: sleeps each wait on the Effect clock, then takes the next step (computed then), until the reply.
 */
const carryOut = <A, E, R>(
  next: () => ErpRules.Plan,
  deliver: (reply: ErpRules.Reply) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.suspend(() => {
    const plan = next()
    return plan._tag === "Delay"
      ? Effect.andThen(Effect.sleep(Duration.millis(plan.millis)), carryOut(plan.next, deliver))
      : deliver(plan)
  })

/** @internal */
export const make = (options: Sandbox.Options = {}): Core => {
  // All mutable state lives in the rules and is only touched inside `Effect.sync` / `Effect.suspend`, so each step is
  // atomic.
  const rules = ErpRules.make(options, Edition.toMillis)
  const erp = rules.controls

  const handle = <A, E, R>(
    incoming: Incoming,
    deliver: (reply: ErpRules.Reply) => Effect.Effect<A, E, R>
  ): Effect.Effect<A, E, R> =>
    Effect.acquireUseRelease(
      Clock.clockWith((clock) => Effect.sync(() => rules.arrive(incoming, Edition.nowMillis(clock)))),
      (arrival) => carryOut(arrival.plan, deliver),
      (arrival) => Clock.clockWith((clock) => Effect.sync(() => arrival.finish(Edition.nowMillis(clock))))
    )

  const controls: Controls = {
    apiKey: erp.apiKey,
    seed: erp.seed,
    partnerCount: erp.partnerCount,
    maxListCount: erp.maxListCount,
    rateLimit: erp.rateLimit,
    partnerAt: erp.partnerAt,
    invoiceAt: erp.invoiceAt,
    recordsOf: erp.recordsOf,
    oddKindAt: (index) => {
      const kind = erp.oddKindAt(index)
      return kind === undefined ? Option.none() : Option.some(kind)
    },
    hiddenAt: erp.hiddenAt,
    visiblePartners: Effect.sync(erp.visiblePartners),
    inject: (fault, options) => Effect.sync(() => erp.inject(fault, options)),
    clearFaults: Effect.sync(erp.clearFaults),
    stats: Effect.sync(erp.stats),
    requests: Effect.sync(erp.requests),
    resetStats: Effect.sync(erp.resetStats),
    resetRateLimits: Effect.sync(erp.resetRateLimits),
    revokeKey: (key) => Effect.sync(() => erp.revokeKey(key)),
    setKeys: (next) => Effect.sync(() => erp.setKeys(next)),
    size: Effect.sync(erp.size),
    partnerIds: Effect.sync(erp.partnerIds),
    insertPartners: (count, at) => Effect.sync(() => erp.insertPartners(count, at)),
    deletePartners: (ids) => Effect.sync(() => erp.deletePartners(ids)),
    renamePartners: (ids) => Effect.sync(() => erp.renamePartners(ids))
  }

  return { controls, handle }
}
