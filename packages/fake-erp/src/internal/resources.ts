/**
 * Declared kinds of record the ERP serves besides partners and invoices (`ErpRules.Options.resources`): a list
 * endpoint and a get endpoint over records given (a fixture) or made on demand (a seed), in the same envelope,
 * paging (`list_offset`, `list_count`, `list_condition`, `maxListCount`), rate limit and faults as partners. The
 * records do not change, drift or hide.
 */
import type * as ErpRules from "../ErpRules.js"
import * as PartnerStore from "./partnerStore.js"

type Row = Readonly<Record<string, unknown>>

/**
 * One declared kind of record, resolved: its endpoints as paths, its records.
 *
 * @internal
 */
export interface Table {
  /** `/product/list`. */
  readonly list: string
  /** `/product/get`, if there is one. */
  readonly get: string | undefined
  readonly idField: string
  /** The query parameters `get` finds a record by, the id field's first. */
  readonly lookups: ReadonlyArray<string>
  readonly count: number
  readonly at: (index: number) => Row
  /** The page at `[offset, offset + count)` of the records matching `conditions` (ANDed). */
  readonly page: (offset: number, count: number, conditions: ReadonlyArray<readonly [string, string]>) => Array<Row>
  /**
   * The record every lookup parameter given finds (each a field compared as text, as a condition is); `undefined`
   * when none does; `"missing"` when the request names none of them.
   */
  readonly find: (params: URLSearchParams) => Row | undefined | "missing"
}

/** `product/list` or `/product/list`: the path. */
const path = (endpoint: string): string => endpoint.startsWith("/") ? endpoint : `/${endpoint}`

const BUILT_IN: ReadonlyArray<string> = ["/partner/list", "/partner/get", "/invoice/list", "/invoice/get"]

/**
 * The tables of `declared`. A declaration that names a built-in endpoint, or an endpoint another declaration
 * already serves, is a `TypeError`: two answers for one path would be a guess.
 *
 * @internal
 */
export const make = (
  declared: ReadonlyArray<ErpRules.ResourceOptions> | undefined,
  seed: number
): ReadonlyArray<Table> => {
  const taken = new Set(BUILT_IN)
  return (declared ?? []).map((resource) => {
    const list = path(resource.list)
    const get = resource.get === undefined ? undefined : path(resource.get)
    for (const endpoint of get === undefined ? [list] : [list, get]) {
      if (taken.has(endpoint)) throw new TypeError(`the ERP already serves ${endpoint}`)
      taken.add(endpoint)
    }
    const idField = resource.idField ?? "id"
    const records = resource.records
    const count = "record" in records ? Math.max(0, Math.floor(records.count)) : records.length
    // A made record is a pure function of (seed, index): made again each time it is served, as seeded partners are.
    const at = "record" in records
      ? (index: number) => records.record(index, seed)
      : (index: number) => records[index]!
    const lookups = [idField, ...(resource.lookups ?? []).filter((field) => field !== idField)]
    return {
      list,
      get,
      idField,
      lookups,
      count,
      at,
      page: (offset, pageCount, conditions) => {
        const page: Array<Row> = []
        // Without conditions the page is the records at its offsets: none before it is made (a made record may be
        // megabytes: `Seed.largeRecordAt`).
        if (conditions.length === 0) {
          for (let index = offset; index < count && page.length < pageCount; index++) page.push(at(index))
          return page
        }
        // A plain scan: a declared table is a test's or a demo's, and a page scans only as far as it reaches.
        let matched = 0
        for (let index = 0; index < count && page.length < pageCount; index++) {
          const record = at(index)
          if (conditions.length > 0 && !PartnerStore.matchesAll(record, conditions)) continue
          if (matched++ >= offset) page.push(record)
        }
        return page
      },
      find: (params) => {
        const asked = lookups.flatMap((field) => {
          const value = params.get(field)
          return value === null ? [] : [[field, value] as const]
        })
        if (asked.length === 0) return "missing"
        // Every parameter given must match (both `id` and `number`: the record of that number, if it has that id).
        // Records are often numbered from 1 in list order: the record at `id - 1` is tried first, then all of them.
        const id = params.get(idField)
        const guess = id !== null && /^\d{1,15}$/.test(id) ? Number(id) - 1 : -1
        if (guess >= 0 && guess < count && PartnerStore.matchesAll(at(guess), asked)) return at(guess)
        for (let index = 0; index < count; index++) {
          const record = at(index)
          if (PartnerStore.matchesAll(record, asked)) return record
        }
        return undefined
      }
    }
  })
}
