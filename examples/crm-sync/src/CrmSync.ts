/**
 * A nightly CRM sync, as an application writes it on the ERP client: every customer into the CRM (each once, even
 * while the ERP's list changes), and the partners a CRM user opened refreshed by id.
 */
import type { ErpClient } from "@erp-client/client"
import type { ErpError, Partner } from "@erp-client/core"
import { Partners } from "@erp-client/streams"
import { Context, Effect, Either, Layer, Stream } from "effect"

/** The CRM side: where partners go. */
export class Crm extends Context.Tag("crm/Crm")<Crm, {
  readonly upsert: (partner: Partner.Partner) => Effect.Effect<void>
}>() {}

/** What a refresh did: partners written, and the ids the ERP does not know. */
export interface Refreshed {
  readonly updated: number
  readonly missing: ReadonlyArray<number>
}

export class CrmSync extends Context.Tag("crm/CrmSync")<CrmSync, {
  /** Every customer into the CRM; how many. */
  readonly syncCustomers: Effect.Effect<number, ErpError.ErpError>
  /** The partners of `ids`, in the order given: each found one written once, the unknown ones named. */
  readonly refresh: (ids: ReadonlyArray<number>) => Effect.Effect<Refreshed, ErpClient.CallError>
}>() {}

export const CrmSyncLive = Layer.effect(
  CrmSync,
  Effect.gen(function*() {
    const crm = yield* Crm
    const erp = yield* Effect.context<ErpClient.ErpClient>()
    return {
      syncCustomers: Partners.stream({ where: { is_customer: 1 }, safe: true }).pipe(
        Stream.mapEffect(crm.upsert),
        Stream.runCount,
        Effect.provide(erp)
      ),
      refresh: (ids) =>
        Partners.getMany(ids).pipe(
          Stream.runFoldEffect({ updated: 0, missing: [] } as Refreshed, (done, { result, value }) =>
            Either.match(result, {
              onRight: (partner) =>
                Effect.as(crm.upsert(partner), { ...done, updated: done.updated + 1 }),
              onLeft: (error) =>
                error._tag === "NotFound"
                  ? Effect.succeed({ ...done, missing: [...done.missing, Number(value)] })
                  : Effect.fail(error)
            })),
          Effect.provide(erp)
        )
    }
  })
)
