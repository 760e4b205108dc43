/**
 * A nightly CRM sync, as an application on Effect 4 writes it on the ERP client: every customer into the CRM (each
 * once, even while the ERP's list changes), and the partners a CRM user opened refreshed by id. The Effect 3 twin is
 * examples/crm-sync: the same service, other imports.
 */
import type { ErpClient } from "@erp-client/effect4-client"
import type { ErpError, Partner } from "@erp-client/effect4-core"
import { Partners } from "@erp-client/effect4-streams"
import { Context, Effect, Layer, Result, Stream } from "effect"

/** The CRM side: where partners go. */
export class Crm extends Context.Service<Crm, {
  readonly upsert: (partner: Partner.Partner) => Effect.Effect<void>
}>()("crm/Crm") {}

/** What a refresh did: partners written, and the ids the ERP does not know. */
export interface Refreshed {
  readonly updated: number
  readonly missing: ReadonlyArray<number>
}

export class CrmSync extends Context.Service<CrmSync, {
  /** Every customer into the CRM; how many. */
  readonly syncCustomers: Effect.Effect<number, ErpError.ErpError>
  /** The partners of `ids`, in the order given: each found one written once, the unknown ones named. */
  readonly refresh: (ids: ReadonlyArray<number>) => Effect.Effect<Refreshed, ErpClient.CallError>
}>()("crm/CrmSync") {}

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
      refresh: (ids: ReadonlyArray<number>) =>
        Partners.getMany(ids).pipe(
          Stream.runFoldEffect(
            (): Refreshed => ({ updated: 0, missing: [] }),
            (done, { result, value }): Effect.Effect<Refreshed, ErpClient.CallError> =>
              Result.isSuccess(result)
                ? Effect.as(crm.upsert(result.success), { ...done, updated: done.updated + 1 })
                : result.failure._tag === "NotFound"
                ? Effect.succeed({ ...done, missing: [...done.missing, Number(value)] })
                : Effect.fail(result.failure)
          ),
          Effect.provide(erp)
        )
    }
  })
)
