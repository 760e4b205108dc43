import type * as Seed from "../Seed.js"
import * as Hidden from "./hidden.js"
import * as Odd from "./oddRecords.js"
import * as Prng from "./prng.js"
import * as Seeded from "./seed.js"

/**
 * The partners the ERP serves, in list order. Until the first insert or delete the list is the initial one: the
 * seeded partners, of which nothing is kept in memory (partner `i` is generated on demand, id `i + 1`, strayed as
 * `oddRecords` says), or the partners given as records (`ErpRules.Options.partners`). The first change materializes
 * the order as an array of ids, so inserts land at any position and deletes close the gap, as in a table listed by a
 * key other than its id: that is what shifts offsets under a running export.
 *
 * Hidden partners (`Seed.HiddenRecords`) hold their positions in the list but are never served: a page is cut from
 * the list with them, then they are dropped; get does not find them.
 *
 * Ids: the store knows a partner by its own id (the seeded `index + 1`, a given partner's, or an inserted partner's),
 * which is what `ids`, `insert` and `remove` speak of. A partner may serve another id (`id-beyond-double`,
 * `duplicate-id`, a given partner whose `id` is not a positive safe integer of its own); `byId` looks up the id as
 * served.
 *
 * @internal
 */
export interface PartnerStore {
  readonly seed: number
  /** How many partners the list holds now, hidden ones included. */
  readonly size: () => number
  /**
   * The page cut at `[offset, offset + count)` of the list filtered by `conditions` (ANDed), hidden partners dropped
   * after the cut.
   */
  readonly page: (offset: number, count: number, conditions: ReadonlyArray<readonly [string, string]>) => Page
  /** The first partner in list order that serves this id (decimal digits), unless hidden. */
  readonly byId: (id: string) => Seed.ServedRecord | undefined
  readonly byName: (name: string) => Seed.ServedRecord | undefined
  /** Every partner the list serves, in list order (hidden ones left out). */
  readonly visible: () => ReadonlyArray<Seed.ServedRecord>
  /** Whether a served record may hold an `ExactNumber` (odd kinds that write exact numbers were asked for). */
  readonly mayHoldExact: boolean
  /** Inserts `count` new partners (fresh ids, never reused) before list position `at`; returns their ids. */
  readonly insert: (at: number, count: number) => ReadonlyArray<number>
  /** Deletes the partners with these ids; returns how many existed. */
  readonly remove: (ids: Iterable<number>) => number
  /** Renames the partners with these ids (` (renamed)` added to the company name); returns how many existed. */
  readonly rename: (ids: Iterable<number>) => number
  /** Deletes the partner at list position `at`, if any; returns its id. */
  readonly removeAt: (at: number) => number | undefined
  /** The ids in list order. */
  readonly ids: () => ReadonlyArray<number>
  /** Changes with every insert or delete: what was read from the store before is stale once it changed. */
  readonly version: () => number
}

/**
 * A page as served: the records, and how many partners of the cut were hidden and dropped.
 *
 * @internal
 */
export interface Page {
  readonly records: ReadonlyArray<Seed.ServedRecord>
  readonly hidden: number
}

// Matching indices are kept for the most recent condition sets only: an export repeats one set page after page.
const MAX_CACHED_CONDITION_SETS = 16

// Inserted partners are generated from their own derived seed, so they do not repeat a seeded partner's fields.
// They keep to the contract: `oddRecords` picks among the seeded partners only.
const INSERTED_STREAM = 0x1a5e47ed

// A server compares a condition with the value, not its JSON text: `true` is `1` and `false` is `0`, so a customer
// flag sent as a boolean (or a string, whose text is already "1") is selected as `1` is.
// An exact number is compared by its text, as written.
const conditionText = (value: unknown): string => typeof value === "boolean" ? (value ? "1" : "0") : String(value)

/**
 * Whether a record has every condition's field with that value (as a server compares them: see `conditionText`).
 *
 * @internal
 */
export const matchesAll = (record: object, conditions: ReadonlyArray<readonly [string, string]>): boolean => {
  for (const [field, value] of conditions) {
    // A field the record does not have never matches (not even the value "undefined"). The field is any name a
    // condition gives, so it is read as a property of the record, not as one of its typed fields.
    if (!Object.hasOwn(record, field) || conditionText(Reflect.get(record, field)) !== value) return false
  }
  return true
}

interface Matches {
  /** List positions of the matching partners, ascending. */
  readonly positions: Array<number>
  /** How many list positions have been tested so far: the scan only goes as far as the pages asked for. */
  scanned: number
}

/**
 * The partners the list starts with, by their index in it: seeded, or given as records.
 *
 * @internal
 */
export interface Initial {
  readonly count: number
  /** The own id of the partner at `index`. */
  readonly ownIdAt: (index: number) => number
  /** The index of the partner whose own id is `id`, if it is one of these. */
  readonly indexOf: (id: number) => number | undefined
  readonly recordAt: (index: number) => Seed.ServedRecord
  /** The indices, ascending, of the partners that may serve `id` (decimal digits); the first one served wins. */
  readonly withId: (id: string) => Iterable<number>
  /** The indices, ascending, of the partners that may be called `name`; the first one served by that name wins. */
  readonly named: (name: string) => Iterable<number>
  readonly mayHoldExact: boolean
}

/**
 * The seeded partners: `count` of `seed`, strayed as `oddRecords` says; partner `i` has the own id `i + 1`.
 *
 * @internal
 */
export const seeded = (seed: number, count: number, oddRecords?: Seed.OddRecords): Initial => {
  const kindIs = (index: number, kind: Seed.OddKind) =>
    oddRecords !== undefined && Seeded.oddKindAt(seed, index, oddRecords) === kind
  // The seeded index whose partner serves `id` under its own name (not as a duplicate of another), if any.
  const headOf = (id: string): number | undefined => {
    const n = Number(id)
    if (Number.isSafeInteger(n) && n >= 1 && n <= count) {
      const index = n - 1
      if (oddRecords === undefined) return index
      return (index === 0 || !kindIs(index, "duplicate-id")) && !kindIs(index, "id-beyond-double") ? index : undefined
    }
    const big = oddRecords === undefined ? undefined : Odd.indexOfBigId(id)
    return big !== undefined && big < count && kindIs(big, "id-beyond-double") ? big : undefined
  }
  return {
    count,
    ownIdAt: (index) => index + 1,
    indexOf: (id) => Number.isSafeInteger(id) && id >= 1 && id <= count ? id - 1 : undefined,
    recordAt: (index) => Seeded.servedPartnerAt(seed, index, oddRecords),
    *withId(id) {
      const head = headOf(id)
      if (head === undefined) return
      // The head, then the duplicates that repeat its id right after it, in list order.
      yield head
      for (let index = head + 1; index < count && kindIs(index, "duplicate-id"); index++) yield index
    },
    named: (name) => {
      const index = Seeded.indexOfName(seed, count, name)
      return index === undefined ? [] : [index]
    },
    mayHoldExact: Odd.mayHoldExact(oddRecords)
  }
}

// The text `partner/get?id=` finds a given id by: decimal digits without leading zeros, or none.
const idKey = (id: unknown): string | undefined => {
  if (typeof id === "number") return Number.isInteger(id) && id >= 0 ? BigInt(id).toString() : undefined
  if (typeof id === "string") return /^\d+$/.test(id) ? BigInt(id).toString() : undefined
  return undefined
}

const push = <K>(map: Map<K, Array<number>>, key: K, index: number) => {
  const indices = map.get(key)
  if (indices === undefined) map.set(key, [index])
  else indices.push(index)
}

/**
 * Partners given as records, served as `JSON.stringify` writes them. A partner's own id is its `id` when that is a
 * positive safe integer no earlier partner has; the others get fresh ones past the largest.
 *
 * @internal
 */
export const given = (records: ReadonlyArray<Readonly<Record<string, unknown>>>): Initial => {
  // Copied as JSON: what is served is what a client gets, whatever the caller does with its objects later.
  const copies: ReadonlyArray<Seed.ServedRecord> = records.map((record) => JSON.parse(JSON.stringify(record)))
  const ownIds: Array<number> = []
  const indexOfOwn = new Map<number, number>()
  copies.forEach((record, index) => {
    const id: unknown = record.id
    if (typeof id === "number" && Number.isSafeInteger(id) && id >= 1 && !indexOfOwn.has(id)) {
      ownIds[index] = id
      indexOfOwn.set(id, index)
    }
  })
  let next = 1
  for (const id of indexOfOwn.keys()) if (id >= next) next = id + 1
  for (let index = 0; index < copies.length; index++) {
    if (ownIds[index] === undefined) {
      ownIds[index] = next
      indexOfOwn.set(next++, index)
    }
  }
  const byId = new Map<string, Array<number>>()
  const byName = new Map<string, Array<number>>()
  copies.forEach((record, index) => {
    const key = idKey(record.id)
    if (key !== undefined) push(byId, key, index)
    if (typeof record.company_name === "string") push(byName, record.company_name, index)
  })
  return {
    count: copies.length,
    ownIdAt: (index) => ownIds[index],
    indexOf: (id) => indexOfOwn.get(id),
    recordAt: (index) => copies[index],
    withId: (id) => byId.get(idKey(id) ?? "") ?? [],
    named: (name) => byName.get(name) ?? [],
    mayHoldExact: false
  }
}

/**
 * A store of the seeded partners of `seed` (`partners` of them), or of the partners given as records.
 *
 * @internal
 */
export const make = (
  seed: number,
  partners: number | ReadonlyArray<Readonly<Record<string, unknown>>>,
  oddRecords?: Seed.OddRecords,
  hiddenRecords?: Seed.HiddenRecords
): PartnerStore =>
  fromInitial(
    seed,
    typeof partners === "number" ? seeded(seed, partners, oddRecords) : given(partners),
    hiddenRecords
  )

/**
 * A store that starts with `initial`, hidden as `hiddenRecords` says; inserted partners are generated from `seed`.
 *
 * @internal
 */
export const fromInitial = (
  seed: number,
  initial: Initial,
  hiddenRecords: Seed.HiddenRecords | undefined
): PartnerStore => {
  const count = initial.count
  // `undefined` while the list is the initial one; then the own ids in list order.
  let order: Array<number> | undefined
  const deleted = new Set<number>()
  const inserted = new Map<number, Seed.PartnerRecord>()
  // Partners renamed since the start, as they are served now; and by their new names.
  const renamed = new Map<number, Seed.ServedRecord>()
  const renamedByName = new Map<string, number>()
  const insertedByName = new Map<string, number>()
  let nextId = 1
  for (let index = 0; index < count; index++) nextId = Math.max(nextId, initial.ownIdAt(index) + 1)

  const size = () => order === undefined ? count : order.length
  const idAt = (position: number) => order === undefined ? initial.ownIdAt(position) : order[position]
  const record = (id: number): Seed.ServedRecord => {
    const changed = renamed.get(id)
    if (changed !== undefined) return changed
    const index = initial.indexOf(id)
    return index === undefined ? inserted.get(id)! : initial.recordAt(index)
  }
  const hiddenIndex = Hidden.make(seed, hiddenRecords)
  const isHidden = hiddenIndex === undefined ? () => false : (id: number) => {
    const index = initial.indexOf(id)
    return index !== undefined && hiddenIndex(index)
  }

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
    const fresh: Matches = { positions: [], scanned: 0 }
    cache.set(key, fresh)
    if (cache.size > MAX_CACHED_CONDITION_SETS) {
      const oldest = cache.keys().next()
      if (oldest.done !== true) cache.delete(oldest.value)
    }
    return fresh
  }
  // Extends the scan until `wanted` matches are known (or the list is exhausted). Each position is tested once per
  // condition set (until the list changes), so an export that pages through the filtered list is linear.
  const scanUntil = (matches: Matches, wanted: number, conditions: ReadonlyArray<readonly [string, string]>) => {
    const end = size()
    while (matches.positions.length < wanted && matches.scanned < end) {
      const position = matches.scanned
      if (matchesAll(record(idAt(position)), conditions)) matches.positions.push(position)
      matches.scanned = position + 1
    }
  }
  let version = 0
  const materialize = (): Array<number> => {
    version++
    if (order === undefined) order = Array.from({ length: count }, (_, index) => initial.ownIdAt(index))
    // Any change moves positions: the filtered scans start over.
    cache.clear()
    return order
  }
  const live = (id: number) =>
    Number.isSafeInteger(id) && (initial.indexOf(id) !== undefined ? !deleted.has(id) : inserted.has(id))
  const served = (id: number) => live(id) && !isHidden(id)
  const forget = (id: number) => {
    const changed = renamed.get(id)
    if (changed !== undefined) {
      renamedByName.delete(String(changed.company_name))
      renamed.delete(id)
    }
    if (initial.indexOf(id) !== undefined) deleted.add(id)
    else {
      insertedByName.delete(inserted.get(id)!.company_name)
      inserted.delete(id)
    }
  }

  return {
    seed,
    size,
    page: (offset, pageCount, conditions) => {
      const records: Array<Seed.ServedRecord> = []
      let hidden = 0
      // The cut counts hidden partners; they are dropped after it.
      const take = (id: number) => {
        if (isHidden(id)) hidden++
        else records.push(record(id))
      }
      if (conditions.length === 0) {
        const end = Math.min(size(), offset + pageCount)
        for (let position = offset; position < end; position++) take(idAt(position))
        return { records, hidden }
      }
      // Hidden partners are filtered by the condition like any other, then dropped from the cut.
      const matches = matchesFor(conditions)
      scanUntil(matches, offset + pageCount, conditions)
      const end = Math.min(matches.positions.length, offset + pageCount)
      for (let i = offset; i < end; i++) take(idAt(matches.positions[i]))
      return { records, hidden }
    },
    byId: (id) => {
      for (const index of initial.withId(id)) {
        const own = initial.ownIdAt(index)
        if (served(own)) return record(own)
      }
      const n = Number(id)
      return Number.isSafeInteger(n) && inserted.has(n) ? record(n) : undefined
    },
    byName: (name) => {
      const renamedId = renamedByName.get(name)
      if (renamedId !== undefined && served(renamedId)) return record(renamedId)
      const insertedId = insertedByName.get(name)
      if (insertedId !== undefined && inserted.has(insertedId)) return record(insertedId)
      for (const index of initial.named(name)) {
        const own = initial.ownIdAt(index)
        if (!served(own)) continue
        // The seeded name may have strayed (`company-name-null`, `company-name-empty`): look up what is served.
        const found = record(own)
        if (found.company_name === name) return found
      }
      return undefined
    },
    insert: (at, howMany) => {
      const list = materialize()
      const position = Math.max(0, Math.min(list.length, Math.floor(at)))
      const ids: Array<number> = []
      for (let i = 0; i < howMany; i++) {
        const id = nextId++
        const base = Seeded.partnerAt(Prng.derive(seed, INSERTED_STREAM), id - 1)
        // The seeded generator writes the id into the name and e-mail; an inserted partner keeps its own id there.
        const partner: Seed.PartnerRecord = {
          ...base,
          id,
          company_name: `${base.company_name} (new)`,
          email: `partner${id}@example.net`
        }
        inserted.set(id, partner)
        insertedByName.set(partner.company_name, id)
        ids.push(id)
      }
      list.splice(position, 0, ...ids)
      return ids
    },
    remove: (ids) => {
      const gone = new Set<number>()
      for (const id of ids) if (live(id)) gone.add(id)
      if (gone.size === 0) return 0
      const list = materialize()
      order = list.filter((id) => !gone.has(id))
      for (const id of gone) forget(id)
      return gone.size
    },
    rename: (ids) => {
      let count = 0
      for (const id of new Set(ids)) {
        if (!live(id)) continue
        const before = record(id)
        const name = `${String(before.company_name)} (renamed)`
        if (typeof before.company_name === "string") renamedByName.delete(before.company_name)
        renamed.set(id, { ...before, company_name: name })
        renamedByName.set(name, id)
        count++
      }
      if (count > 0) {
        version++
        cache.clear()
      }
      return count
    },
    removeAt: (at) => {
      if (!(at >= 0 && at < size())) return undefined
      const list = materialize()
      const [id] = list.splice(Math.floor(at), 1)
      forget(id)
      return id
    },
    visible: () => {
      const out: Array<Seed.ServedRecord> = []
      for (let position = 0; position < size(); position++) {
        const id = idAt(position)
        if (!isHidden(id)) out.push(record(id))
      }
      return out
    },
    mayHoldExact: initial.mayHoldExact,
    ids: () => order === undefined ? Array.from({ length: count }, (_, index) => initial.ownIdAt(index)) : [...order],
    version: () => version
  }
}
