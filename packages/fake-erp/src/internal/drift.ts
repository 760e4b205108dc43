import type * as ErpRules from "../ErpRules.js"
import type * as PartnerStore from "./partnerStore.js"
import * as Prng from "./prng.js"
import type * as RequestLog from "./requestLog.js"

/**
 * One round of `ErpRules.Options.drift`: inserts, then deletes, each at a seeded random position of the list, counted
 * in the stats. Run right before each list answer, so the list moves between the pages of a running export.
 *
 * @internal
 */
export const make = (
  options: ErpRules.Options["drift"],
  seed: number,
  store: PartnerStore.PartnerStore,
  log: RequestLog.RequestLog
): () => void => {
  const inserts = Math.max(0, Math.floor(options?.inserts ?? 0))
  const deletes = Math.max(0, Math.floor(options?.deletes ?? 0))
  const prng = Prng.mulberry32(options?.seed ?? seed)
  return () => {
    for (let i = 0; i < inserts; i++) {
      log.countChanges(store.insert(Math.floor(prng() * (store.size() + 1)), 1).length, 0)
    }
    for (let i = 0; i < deletes && store.size() > 0; i++) {
      if (store.removeAt(Math.floor(prng() * store.size())) !== undefined) log.countChanges(0, 1)
    }
  }
}
