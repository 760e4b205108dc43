import * as Option from "effect/Option"
import * as Seed from "../Seed.js"

/** @internal */
export interface PartnerStore {
  readonly seed: number
  readonly count: number
  /** The records at `[offset, offset + count)` of the list filtered by `conditions` (ANDed). */
  readonly page: (
    offset: number,
    count: number,
    conditions: ReadonlyArray<readonly [string, string]>
  ) => ReadonlyArray<Seed.PartnerRecord>
  readonly byId: (id: number) => Option.Option<Seed.PartnerRecord>
  readonly byName: (name: string) => Option.Option<Seed.PartnerRecord>
}

// Matching indices are kept for the most recent condition sets only: an export repeats one set page after page.
const MAX_CACHED_CONDITION_SETS = 16

const matchesAll = (record: Seed.PartnerRecord, conditions: ReadonlyArray<readonly [string, string]>): boolean => {
  const fields = record as unknown as Readonly<Record<string, unknown>>
  for (const [field, value] of conditions) {
    // A field the record does not have never matches (not even the value "undefined").
    if (!Object.hasOwn(fields, field) || String(fields[field]) !== value) return false
  }
  return true
}

interface Matches {
  readonly indices: Array<number>
  /** How many partners have been tested so far: the scan only goes as far as the pages asked for. */
  scanned: number
}

/** @internal */
export const make = (seed: number, count: number): PartnerStore => {
  const cache = new Map<string, Matches>()
  const matchesFor = (conditions: ReadonlyArray<readonly [string, string]>): Matches => {
    const key = JSON.stringify([...conditions].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    const cached = cache.get(key)
    if (cached !== undefined) {
      // Re-insert to keep the map in least-recently-used order.
      cache.delete(key)
      cache.set(key, cached)
      return cached
    }
    const fresh: Matches = { indices: [], scanned: 0 }
    cache.set(key, fresh)
    if (cache.size > MAX_CACHED_CONDITION_SETS) {
      const oldest = cache.keys().next()
      if (oldest.done !== true) cache.delete(oldest.value)
    }
    return fresh
  }
  // Extends the scan until `wanted` matches are known (or the set is exhausted). Each partner is tested once per
  // condition set, so an export that pages through the filtered list is linear, and its first page is fast.
  const scanUntil = (matches: Matches, wanted: number, conditions: ReadonlyArray<readonly [string, string]>) => {
    while (matches.indices.length < wanted && matches.scanned < count) {
      const index = matches.scanned
      if (matchesAll(Seed.partnerAt(seed, index), conditions)) matches.indices.push(index)
      matches.scanned = index + 1
    }
  }
  return {
    seed,
    count,
    page: (offset, pageCount, conditions) => {
      const out: Array<Seed.PartnerRecord> = []
      if (conditions.length === 0) {
        const end = Math.min(count, offset + pageCount)
        for (let index = offset; index < end; index++) out.push(Seed.partnerAt(seed, index))
        return out
      }
      const matches = matchesFor(conditions)
      scanUntil(matches, offset + pageCount, conditions)
      const end = Math.min(matches.indices.length, offset + pageCount)
      for (let i = offset; i < end; i++) out.push(Seed.partnerAt(seed, matches.indices[i]))
      return out
    },
    byId: (id) =>
      Number.isSafeInteger(id) && id >= 1 && id <= count ? Option.some(Seed.partnerAt(seed, id - 1)) : Option.none(),
    byName: (name) => Option.map(Seed.indexOfName(seed, count, name), (index) => Seed.partnerAt(seed, index))
  }
}
