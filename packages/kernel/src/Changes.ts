/**
 * The changes of a list since the last export (docs/changes.md): what is kept of each record (its id and a 64-bit
 * digest of its exact text), how that state is laid out in memory and in a store (sorted typed arrays, a compact
 * binary encoding), and how a record read now is judged against it (added, changed, unchanged; and, once the end of
 * the list is confirmed, the ids not read again: removed). Each edition's `Resource.changes` wires it to its paging,
 * its store and its Stream.
 *
 * 64 bits are enough because a digest is only compared with the digest of the same id in the state before (no
 * birthday bound). The hash is not cryptographic: records written on purpose to collide could hide a change of their
 * own (docs/changes.md, "The state"). Numeric ids live in typed arrays, not a Map of JS values, so a state of every
 * record of a list fits in memory; string ids are kept in a Map beside them.
 *
 * @since 0.1.0
 */
import { digestLanes, lanes } from "./internal/digest.js"
import * as JsonText from "./JsonText.js"
import * as ListQuery from "./ListQuery.js"

/**
 * What tells records apart: the record's id field, a string or a finite number; for a number beyond a double's exact
 * integers, a key of the digits the server wrote (`idOf`; `idValue` and `idJson` say it back).
 *
 * @since 0.1.0
 * @category Models
 */
export type Id = string | number

// An id written as a number beyond a double's exact integers is keyed by the digits the server wrote, behind this
// mark: no id a server sends starts with U+0000, so such a key meets neither a string id nor a number.
const EXACT = "\u0000"

/**
 * The id of a record as changes and drift-safe paging tell records apart: its `idField` (a string, or a finite
 * number), `undefined` when it has none. A number beyond a double's exact integers (above 2^53) is keyed by the digits
 * the server wrote, read from `text()` (the record's text as written), not by what `JSON.parse` made of it: two such
 * ids a few units apart round to one double, and keyed by it the second record would be taken for the first and left
 * out. `idValue` and `idJson` say such a key back as the server wrote it.
 *
 * @example
 * ```ts
 * import { Changes } from "@erp-client/kernel"
 *
 * const a = '{"id":12345678901234567890}'
 * const b = '{"id":12345678901234567891}'
 * const [ka, kb] = [a, b].map((text) => Changes.idOf(JSON.parse(text), "id", () => text))
 * console.log(ka === kb, Changes.idJson(ka!), Changes.idJson(kb!)) // => false 12345678901234567890 12345678901234567891
 * console.log(Changes.idOf({ id: 7 }, "id", () => '{"id":7}')) // => 7
 * ```
 *
 * @since 0.1.0
 * @category Ids
 */
export const idOf = (raw: unknown, idField: string, text: () => string | undefined): Id | undefined => {
  const id = typeof raw === "object" && raw !== null ? (raw as Record<string, unknown>)[idField] : undefined
  if (typeof id === "string") return id
  if (typeof id !== "number" || !Number.isFinite(id)) return undefined
  if (Math.abs(id) <= Number.MAX_SAFE_INTEGER) return id
  const written = text()
  const members = written === undefined ? undefined : JsonText.members(written)
  if (members === undefined || !members.ok) return id
  // JSON.parse keeps the last of a repeated key: so does this.
  let digits: string | undefined
  for (const member of members.value) if (member.key === idField) digits = member.json
  return digits === undefined ? id : EXACT + digits
}

/**
 * An id as a user reads it: the id itself, or for one beyond a double (see `idOf`) the digits the server wrote, as a
 * string.
 *
 * @example
 * ```ts
 * import { Changes } from "@erp-client/kernel"
 *
 * const text = '{"id":12345678901234567890}'
 * console.log(Changes.idValue(Changes.idOf(JSON.parse(text), "id", () => text)!)) // => 12345678901234567890
 * console.log(Changes.idValue(7), Changes.idValue("A-9")) // => 7 A-9
 * ```
 *
 * @since 0.1.0
 * @category Ids
 */
export const idValue = (id: Id): Id => typeof id === "string" && id.startsWith(EXACT) ? id.slice(EXACT.length) : id

/**
 * An id as JSON text, as the server wrote it: a number bare (one beyond a double with its own digits), a string
 * quoted.
 *
 * @example
 * ```ts
 * import { Changes } from "@erp-client/kernel"
 *
 * const text = '{"id":12345678901234567890}'
 * console.log(Changes.idJson(Changes.idOf(JSON.parse(text), "id", () => text)!)) // => 12345678901234567890
 * console.log(Changes.idJson(7), Changes.idJson("A-9")) // => 7 "A-9"
 * ```
 *
 * @since 0.1.0
 * @category Ids
 */
export const idJson = (id: Id): string =>
  typeof id === "string" && id.startsWith(EXACT) ? id.slice(EXACT.length) : JSON.stringify(id)

/**
 * The id an `idJson` text says: a quoted string, or a number (one beyond a double's exact integers keyed by its digits,
 * as `idOf` keys it); `undefined` for a text that is neither. What a store that keeps ids as text (`SyncTable`) reads
 * back.
 *
 * @example
 * ```ts
 * import { Changes } from "@erp-client/kernel"
 *
 * const text = '{"id":12345678901234567890}'
 * const id = Changes.idOf(JSON.parse(text), "id", () => text)!
 * console.log(Changes.idFromJson(Changes.idJson(id)) === id) // => true
 * console.log(Changes.idFromJson("7"), Changes.idFromJson('"A-9"'), Changes.idFromJson("x")) // => 7 A-9 undefined
 * ```
 *
 * @since 0.1.0
 * @category Ids
 */
export const idFromJson = (text: string): Id | undefined => {
  if (text.startsWith("\"")) {
    try {
      const value: unknown = JSON.parse(text)
      return typeof value === "string" ? value : undefined
    } catch {
      return undefined
    }
  }
  if (!/^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/.test(text)) return undefined
  const value = Number(text)
  if (!Number.isFinite(value)) return undefined
  return Math.abs(value) <= Number.MAX_SAFE_INTEGER ? value : EXACT + text
}

/**
 * The 64-bit digest of a record's text (the one a state keeps per id) as 16 hexadecimal digits: what a store that
 * keeps the state beside the records (`SyncTable`) writes in each row.
 *
 * @example
 * ```ts
 * import { Changes } from "@erp-client/kernel"
 *
 * const hex = Changes.digestHex('{"id":7}')
 * console.log(hex.length, Changes.digestHex('{"id":7}') === hex, Changes.digestHex('{"id":7 }') === hex) // => 16 true false
 * ```
 *
 * @since 0.1.0
 * @category Ids
 */
export const digestHex = (text: string): string => {
  digestLanes(text)
  return lanes[0].toString(16).padStart(8, "0") + lanes[1].toString(16).padStart(8, "0")
}

/**
 * Adds to `table` the id `id` with the digest `hex` that `digestHex` wrote; `false` (and nothing added) when `hex` is
 * not 16 hexadecimal digits.
 *
 * @example
 * ```ts
 * import { Changes } from "@erp-client/kernel"
 *
 * const table = Changes.makeTable()
 * console.log(Changes.addHex(table, 7, Changes.digestHex('{"id":7}')), Changes.addHex(table, 8, "zz")) // => true false
 * console.log(table.differs(7, '{"id":7}'), table.differs(7, '{"id":7,"x":1}'), table.has(8)) // => false true false
 * ```
 *
 * @since 0.1.0
 * @category Ids
 */
export const addHex = (table: Table, id: Id, hex: string): boolean => {
  if (!/^[0-9a-f]{16}$/.test(hex)) return false
  table.addDigest(id, parseInt(hex.slice(0, 8), 16), parseInt(hex.slice(8), 16))
  return true
}

/**
 * The ids read in one run, each with the digest of its record's text: what drift-safe paging asks ("was this id
 * emitted? with this content?") and what the next state is made of. Numbers in an open-addressed table of typed
 * arrays, strings in a Map. Make one per run.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Table {
  /** How many ids it holds. */
  readonly size: number
  readonly has: (id: Id) => boolean
  /** Adds `id` with the digest of `text`; without `text`, an id whose content is not known (a resumed run's). */
  readonly add: (id: Id, text?: string | undefined) => void
  /** Adds `id` with a digest kept from an earlier run (`hi, lo`, as `digestHex` writes them), not its text. */
  readonly addDigest: (id: Id, hi: number, lo: number) => void
  /** Whether `id` was added with content other than `text` (`false` when its content is not known, or it is absent). */
  readonly differs: (id: Id, text: string) => boolean
  /** The digest `id` was added with, into `out` at `at` (hi, lo); `false` when absent or its content is not known. */
  readonly digestInto: (id: Id, out: Uint32Array, at: number) => boolean
  /** The ids and digests, sorted: the state a complete run leaves. */
  readonly state: () => State
  /**
   * Notes a record read with the id of another, distinct record (drift-safe paging found it: two records in one answer,
   * or one past what was read). The table holds one digest per id, so such a record cannot be tracked.
   */
  readonly duplicate: (id: Id) => void
  /** The records noted by `duplicate`, and their ids (each once, in the order found). */
  readonly duplicates: () => Duplicates
}

/**
 * Records read with the id of another, distinct record (see `Table.duplicate`): how many, and their ids.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Duplicates {
  readonly records: number
  readonly ids: ReadonlyArray<Id>
}

/**
 * What one complete export left: its ids, sorted (numbers ascending, then strings by UTF-16 code units), each with the
 * digest of its record (`hi, lo` at `2 * i` in the digests).
 *
 * @since 0.1.0
 * @category Models
 */
export interface State {
  /** A `Uint32Array` when a decoded state's ids all fit in 32 bits (half the memory), else a `Float64Array`. */
  readonly numbers: Float64Array | Uint32Array
  readonly numberDigests: Uint32Array
  readonly strings: ReadonlyArray<string>
  readonly stringDigests: Uint32Array
}

/**
 * The state of no export: a first run, where every record is added.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const empty: State = {
  numbers: new Float64Array(0),
  numberDigests: new Uint32Array(0),
  strings: [],
  stringDigests: new Uint32Array(0)
}

/**
 * How many records a state holds.
 *
 * @example
 * ```ts
 * import { Changes } from "@erp-client/kernel"
 *
 * console.log(Changes.size(Changes.empty)) // => 0
 * ```
 *
 * @since 0.1.0
 * @category Accessors
 */
export const size = (state: State): number => state.numbers.length + state.strings.length

// One float64's bits, to hash a numeric id by them.
const bits = new Float64Array(1)
const bitsWords = new Uint32Array(bits.buffer)

const mix = (h: number): number => {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b)
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35)
  return (h ^ (h >>> 16)) >>> 0
}

const hashNumber = (id: number): number => {
  bits[0] = id
  return mix(bitsWords[0] ^ mix(bitsWords[1] ^ 0x9e3779b9))
}

// -0 and 0 are one id (as Map keys are).
const numberKey = (id: number): number => id === 0 ? 0 : id

/**
 * A table for one run (see `Table`), sized for `expected` ids (it grows past them).
 *
 * @example
 * ```ts
 * import { Changes } from "@erp-client/kernel"
 *
 * const table = Changes.makeTable()
 * table.add(2, '{"id":2}')
 * table.add("A-9", '{"id":"A-9"}')
 * table.add(1, '{"id":1}')
 * console.log(table.has(2), table.differs(2, '{"id":2,"x":1}'), table.size) // => true true 3
 * const state = table.state()
 * console.log([...state.numbers], state.strings) // => [ 1, 2 ] [ 'A-9' ]
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const makeTable = (expected = 0): Table => {
  // Numbers: the entries in the order added, dense (`ids`, and `hi, lo` at `2 * i` of `digests`), found through an
  // open-addressed index of entry numbers (-1: empty slot) with linear probing, grown at 3/4 full; the sorted state
  // is a sorted copy of the ids.
  // Sized for `expected` ids at once (a run that expects as many as the last state held grows nothing on the way).
  let entries = 512
  while (entries < expected) entries = Math.ceil(entries * 1.5)
  let slots = 1024
  while (3 * slots < 4 * entries) slots *= 2
  let index = new Int32Array(slots).fill(-1)
  let ids = new Float64Array(entries)
  let digests = new Uint32Array(2 * entries)
  let numbers = 0
  // Numeric ids added without their content (a resumed run's): rare, so a Set.
  const unknown = new Set<number>()
  const strings = new Map<string, readonly [number, number] | undefined>()

  /** The slot of `id` in the index: where it is, or the empty slot where it would go. */
  const slotOf = (id: number): number => {
    const mask = index.length - 1
    let slot = hashNumber(id) & mask
    for (;;) {
      const entry = index[slot]
      if (entry < 0 || ids[entry] === id) return slot
      slot = (slot + 1) & mask
    }
  }
  const entryOf = (id: number): number => index[slotOf(numberKey(id))]
  const growIndex = () => {
    index = new Int32Array(index.length * 2).fill(-1)
    for (let entry = 0; entry < numbers; entry++) index[slotOf(ids[entry])] = entry
  }
  const growEntries = () => {
    const moreIds = new Float64Array(Math.ceil(ids.length * 1.5))
    moreIds.set(ids)
    ids = moreIds
    const moreDigests = new Uint32Array(2 * moreIds.length)
    moreDigests.set(digests)
    digests = moreDigests
  }
  const sortedStrings = () => [...strings.keys()].sort(compareStrings)
  // Adds `id` with the digest in `lanes` (`known`), or as an id whose content is not known.
  const put = (id: Id, known: boolean): void => {
    if (typeof id === "string") {
      strings.set(id, known ? [lanes[0], lanes[1]] : undefined)
      return
    }
    const key = numberKey(id)
    let slot = slotOf(key)
    let entry = index[slot]
    if (entry < 0) {
      if (numbers === ids.length) growEntries()
      if (4 * (numbers + 1) > 3 * index.length) {
        growIndex()
        slot = slotOf(key)
      }
      entry = numbers++
      ids[entry] = key
      index[slot] = entry
    }
    if (!known) unknown.add(key)
    else if (unknown.size > 0) unknown.delete(key)
    digests[2 * entry] = known ? lanes[0] : 0
    digests[2 * entry + 1] = known ? lanes[1] : 0
  }
  let duplicateRecords = 0
  const duplicateIds = new Set<Id>()
  const table: Table & TableInternals = {
    get size() {
      return numbers + strings.size
    },
    has: (id) => typeof id === "string" ? strings.has(id) : entryOf(id) >= 0,
    add: (id, text) => {
      if (text !== undefined) digestLanes(text)
      put(id, text !== undefined)
    },
    addDigest: (id, hi, lo) => {
      lanes[0] = hi
      lanes[1] = lo
      put(id, true)
    },
    differs: (id, text) => {
      if (typeof id === "string") {
        const before = strings.get(id)
        if (before === undefined) return false
        digestLanes(text)
        return before[0] !== lanes[0] || before[1] !== lanes[1]
      }
      const entry = entryOf(id)
      if (entry < 0 || (unknown.size > 0 && unknown.has(numberKey(id)))) return false
      digestLanes(text)
      return digests[2 * entry] !== lanes[0] || digests[2 * entry + 1] !== lanes[1]
    },
    digestInto: (id, out, at) => {
      if (typeof id === "string") {
        const before = strings.get(id)
        if (before === undefined) return false
        out[at] = before[0]
        out[at + 1] = before[1]
        return true
      }
      const entry = entryOf(id)
      if (entry < 0 || (unknown.size > 0 && unknown.has(numberKey(id)))) return false
      out[at] = digests[2 * entry]
      out[at + 1] = digests[2 * entry + 1]
      return true
    },
    state: () => {
      const sorted = ids.slice(0, numbers).sort()
      const numberDigests = new Uint32Array(2 * numbers)
      for (let i = 0; i < numbers; i++) table.digestInto(sorted[i], numberDigests, 2 * i)
      const keys = sortedStrings()
      const stringDigests = new Uint32Array(2 * keys.length)
      keys.forEach((key, i) => table.digestInto(key, stringDigests, 2 * i))
      return { numbers: sorted, numberDigests, strings: keys, stringDigests }
    },
    duplicate: (id) => {
      duplicateRecords++
      duplicateIds.add(typeof id === "number" ? numberKey(id) : id)
    },
    duplicates: () => ({ records: duplicateRecords, ids: [...duplicateIds] }),
    sortInPlace: () => {
      // The entries themselves, ids and digests together, not a copy; the index is rebuilt in place, so the table
      // still answers as before.
      let ascending = true
      for (let i = 1; i < numbers && ascending; i++) ascending = ids[i - 1] < ids[i]
      if (!ascending) {
        sortEntries(ids, digests, numbers)
        index.fill(-1)
        for (let entry = 0; entry < numbers; entry++) index[slotOf(ids[entry])] = entry
      }
      return {
        numbers: ids.subarray(0, numbers),
        numberDigests: digests.subarray(0, 2 * numbers),
        strings: sortedStrings()
      }
    }
  }
  return table
}

/** What `encodeTable` reads of a table besides its public face. */
interface TableInternals {
  /** Sorts the numeric entries in place (the table answers as before) and views them; the strings, sorted. */
  readonly sortInPlace: () => {
    readonly numbers: Float64Array
    readonly numberDigests: Uint32Array
    readonly strings: ReadonlyArray<string>
  }
}

/** Sorts `ids[0, n)` ascending, moving each id's digest pair (`2 * i` of `digests`) with it: an in-place quicksort. */
const sortEntries = (ids: Float64Array, digests: Uint32Array, n: number): void => {
  const swap = (a: number, b: number) => {
    const id = ids[a]
    ids[a] = ids[b]
    ids[b] = id
    const hi = digests[2 * a]
    const lo = digests[2 * a + 1]
    digests[2 * a] = digests[2 * b]
    digests[2 * a + 1] = digests[2 * b + 1]
    digests[2 * b] = hi
    digests[2 * b + 1] = lo
  }
  const stack: Array<number> = [0, n - 1]
  while (stack.length > 0) {
    let hi = stack.pop()!
    let lo = stack.pop()!
    while (hi - lo > 16) {
      // Median of three as the pivot, moved to `hi`.
      const mid = (lo + hi) >>> 1
      if (ids[mid] < ids[lo]) swap(mid, lo)
      if (ids[hi] < ids[lo]) swap(hi, lo)
      if (ids[mid] < ids[hi]) swap(mid, hi)
      const pivot = ids[hi]
      let store = lo
      for (let i = lo; i < hi; i++) if (ids[i] < pivot) swap(i, store++)
      swap(store, hi)
      // The smaller side next, the larger one later: the stack stays short.
      if (store - lo < hi - store) {
        stack.push(store + 1, hi)
        hi = store - 1
      } else {
        stack.push(lo, store - 1)
        lo = store + 1
      }
    }
    for (let i = lo + 1; i <= hi; i++) for (let j = i; j > lo && ids[j] < ids[j - 1]; j--) swap(j, j - 1)
  }
}

// By UTF-16 code units, as `<` compares strings (not `localeCompare`: the order must not depend on a locale).
const compareStrings = (a: string, b: string): number => a < b ? -1 : a > b ? 1 : 0

/** The index of `id` in a sorted array, or -1. */
const search = <T extends number | string>(sorted: ArrayLike<T>, id: T): number => {
  let lo = 0
  let hi = sorted.length - 1
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1
    const at = sorted[mid]
    if (at === id) return mid
    if (at < id) lo = mid + 1
    else hi = mid - 1
  }
  return -1
}

/**
 * What became of a record read now: `Added` (its id is not in the state before), `Changed` (it is, with another
 * digest) or `Unchanged`.
 *
 * @since 0.1.0
 * @category Models
 */
export type Verdict = "Added" | "Changed" | "Unchanged"

/**
 * One run's comparison against the state before: `judge` each record as it is read (each id once), then, only once
 * the end of the list is confirmed, `removed` lists the ids of the state before that were not read. Counts as it
 * goes.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Comparison {
  /** The record with this id and text, read now. */
  readonly judge: (id: Id, text: string) => Verdict
  /** The ids of the state before not judged in this run, in the state's order (call once, after the end). */
  readonly removed: () => ReadonlyArray<Id>
  readonly counts: () => { readonly added: number; readonly changed: number; readonly unchanged: number }
}

/**
 * A comparison of what is read now against `before`.
 *
 * @example
 * ```ts
 * import { Changes } from "@erp-client/kernel"
 *
 * const last = Changes.makeTable()
 * for (const id of [1, 2, 3]) last.add(id, `{"id":${id}}`)
 * const comparison = Changes.compare(last.state())
 * console.log(comparison.judge(1, '{"id":1}'), comparison.judge(2, '{"id":2,"name":"x"}'), comparison.judge(4, '{"id":4}'))
 * // => Unchanged Changed Added
 * console.log(comparison.removed()) // => [ 3 ]
 * ```
 *
 * @since 0.1.0
 * @category Comparing
 */
export const compare = (before: State): Comparison => {
  const seenNumbers = new Uint8Array(before.numbers.length)
  const seenStrings = new Uint8Array(before.strings.length)
  let added = 0
  let changed = 0
  let unchanged = 0
  return {
    judge: (id, text) => {
      const isString = typeof id === "string"
      const at = isString ? search(before.strings, id) : search(before.numbers, numberKey(id))
      if (at < 0) {
        added++
        return "Added"
      }
      ;(isString ? seenStrings : seenNumbers)[at] = 1
      const digests = isString ? before.stringDigests : before.numberDigests
      digestLanes(text)
      if (digests[2 * at] === lanes[0] && digests[2 * at + 1] === lanes[1]) {
        unchanged++
        return "Unchanged"
      }
      changed++
      return "Changed"
    },
    removed: () => {
      const out: Array<Id> = []
      for (let i = 0; i < seenNumbers.length; i++) if (seenNumbers[i] === 0) out.push(before.numbers[i])
      for (let i = 0; i < seenStrings.length; i++) if (seenStrings[i] === 0) out.push(before.strings[i])
      return out
    },
    counts: () => ({ added, changed, unchanged })
  }
}

/**
 * A record judged against the state before: its place in the page, its id (as `idValue` and `idJson` say it) and its
 * text as the server wrote it.
 *
 * @since 0.1.0
 * @category Comparing
 */
export interface Judged {
  readonly _tag: "Added" | "Changed"
  /** Its position in the page's records. */
  readonly index: number
  readonly id: Id
  readonly idJson: string
  readonly json: string
}

/**
 * A page of records read now, judged against the state before: the added and changed ones, in page order (unchanged
 * ones are only counted). Each is keyed as drift-safe paging keys it (`idOf`: an id beyond a double by its digits),
 * its text the page's own (`json`, when it pairs one for one with `raw`) or else `JSON.stringify` of the record.
 * With `report` false (a run that only writes the state) each is judged and counted, and none returned.
 *
 * @example
 * ```ts
 * import { Changes } from "@erp-client/kernel"
 *
 * const before = Changes.makeTable()
 * before.add(1, '{"id":1,"name":"a"}')
 * before.add(2, '{"id":2,"name":"b"}')
 * const comparison = Changes.compare(before.state())
 * const json = ['{"id":1,"name":"a"}', '{"id":2,"name":"B"}', '{"id":3,"name":"c"}']
 * const judged = Changes.judgePage(comparison, { raw: json.map((text) => JSON.parse(text)), json }, "id")
 * console.log(judged.map((change) => `${change._tag} ${change.idJson}`)) // => [ 'Changed 2', 'Added 3' ]
 * ```
 *
 * @since 0.1.0
 * @category Comparing
 */
export const judgePage = (
  comparison: Comparison,
  page: { readonly raw: ReadonlyArray<unknown>; readonly json?: ReadonlyArray<string> | undefined },
  idField: string,
  report = true
): Array<Judged> => {
  const out: Array<Judged> = []
  const texts = page.json !== undefined && page.json.length === page.raw.length ? page.json : undefined
  for (let index = 0; index < page.raw.length; index++) {
    const json = texts?.[index] ?? JSON.stringify(page.raw[index])
    const id = idOf(page.raw[index], idField, () => json)!
    const verdict = comparison.judge(id, json)
    if (report && verdict !== "Unchanged") out.push({ _tag: verdict, index, id: idValue(id), idJson: idJson(id), json })
  }
  return out
}

/**
 * How many records of the state before a run has not read (yet): the removals the run would report if its list ended
 * now. A run asks it when its list seems to have ended (`DriftSafe.Options.confirmEnd`): any, and the end is read
 * again before it counts.
 *
 * @example
 * ```ts
 * import { Changes } from "@erp-client/kernel"
 *
 * const last = Changes.makeTable()
 * for (const id of [1, 2, 3]) last.add(id, `{"id":${id}}`)
 * const now = Changes.makeTable()
 * now.add(2, '{"id":2}')
 * console.log(Changes.notRead(last.state(), now)) // => 2
 * ```
 *
 * @since 0.1.0
 * @category Comparing
 */
export const notRead = (before: State, table: Table): number => {
  let missing = 0
  for (let i = 0; i < before.numbers.length; i++) if (!table.has(before.numbers[i])) missing++
  for (let i = 0; i < before.strings.length; i++) if (!table.has(before.strings[i])) missing++
  return missing
}

// The end of a run ------------------------------------------------------------------------------------------------

/**
 * The share of the last state's records a run may report removed before it is refused (`Refusal`), by default: half.
 *
 * @since 0.1.0
 * @category Decisions
 */
export const DEFAULT_MAX_REMOVED_RATIO = 0.5

/**
 * Why a run that read the whole list does not replace the state (and reports no removal):
 *
 * - `DuplicateIds`: `records` records had the id of another, distinct record (`ids`, each once; `read` records were
 *   read in all). The state keeps one record per id, so those cannot be tracked: a change of one would go unreported.
 * - `TooManyRemovals`: it would report `removed` of the `held` records of the last state removed, more than
 *   `maxRemovedRatio` of them: what a list that answers empty, or cut short, for a while looks like.
 *
 * @since 0.1.0
 * @category Decisions
 */
export type Refusal =
  | {
    readonly _tag: "DuplicateIds"
    readonly records: number
    readonly ids: ReadonlyArray<Id>
    readonly read: number
  }
  | {
    readonly _tag: "TooManyRemovals"
    readonly removed: number
    readonly held: number
    readonly maxRemovedRatio: number
  }

/**
 * Whether a run that read the whole list may replace the state: `undefined`, or why not (`Refusal`). Records that share
 * an id are refused unless `allowDuplicateIds`; removing more than `maxRemovedRatio` of the last state's records
 * (`held`) is refused, unless the run only sets the baseline (`init`).
 *
 * @example
 * ```ts
 * import { Changes } from "@erp-client/kernel"
 *
 * const none = { records: 0, ids: [] }
 * const run = { held: 2000, read: 0, duplicates: none, init: false, allowDuplicateIds: false, maxRemovedRatio: 0.5 }
 * console.log(Changes.refusal({ ...run, removed: 2000 }))
 * // => {
 * //   _tag: 'TooManyRemovals',
 * //   removed: 2000,
 * //   held: 2000,
 * //   maxRemovedRatio: 0.5
 * // }
 * console.log(Changes.refusal({ ...run, read: 1990, removed: 10 })) // => undefined
 * ```
 *
 * @since 0.1.0
 * @category Decisions
 */
export const refusal = (run: {
  readonly held: number
  readonly removed: number
  readonly read: number
  readonly duplicates: Duplicates
  readonly init: boolean
  readonly allowDuplicateIds: boolean
  readonly maxRemovedRatio: number
}): Refusal | undefined => {
  if (run.duplicates.records > 0 && !run.allowDuplicateIds) {
    return {
      _tag: "DuplicateIds",
      records: run.duplicates.records,
      ids: run.duplicates.ids,
      read: run.read + run.duplicates.records
    }
  }
  if (!run.init && run.held > 0 && run.removed > run.maxRemovedRatio * run.held) {
    return { _tag: "TooManyRemovals", removed: run.removed, held: run.held, maxRemovedRatio: run.maxRemovedRatio }
  }
  return undefined
}

/**
 * How a refusal's line says what to do, in the words of where it is read: the library's options or the command's
 * flags.
 *
 * @since 0.1.0
 * @category Messages
 */
export interface Words {
  /** Starts over with a new state (`--init`). */
  readonly startOver: string
  /** Reads into another state instead (`give another --since`). */
  readonly otherState: string
  /** Accepts records that share an id (`--allow-duplicate-ids`). */
  readonly allowDuplicateIds: string
  /** Accepts the removals (`--allow-removals`). */
  readonly allowRemovals: string
  /** Chooses the field that tells records apart (`--id-field`), where the user may. */
  readonly idField?: string | undefined
}

const count = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`

const NAMED_IDS = 5

/** The first few ids (as the server wrote them), and how many more. */
const namedIds = (idsJson: ReadonlyArray<string>): string => {
  const named = idsJson.slice(0, NAMED_IDS).join(", ")
  const more = idsJson.length - Math.min(idsJson.length, NAMED_IDS)
  return `${idsJson.length === 1 ? "id" : "ids"} ${named}${more > 0 ? ` and ${more.toLocaleString("en-US")} more` : ""}`
}

/**
 * The line of a run refused for removing too many records (see `Refusal`).
 *
 * @example
 * ```ts
 * import { Changes } from "@erp-client/kernel"
 *
 * const words = { startOver: "init", otherState: "another key", allowDuplicateIds: "", allowRemovals: "maxRemovedRatio: 1" }
 * console.log(Changes.removalsText("partners", { removed: 300, held: 300, maxRemovedRatio: 0.5 }, words))
 * // => the run would remove 300 of the 300 records of the state partners (more than half), as a list answering empty or cut short for a while would: nothing was removed and the state was left as it was (maxRemovedRatio: 1 commits them, if the list really lost them)
 * ```
 *
 * @since 0.1.0
 * @category Messages
 */
export const removalsText = (
  key: string,
  refused: { readonly removed: number; readonly held: number; readonly maxRemovedRatio: number },
  words: Words
): string =>
  `the run would remove ${refused.removed.toLocaleString("en-US")} of the ${count(refused.held, "record")} of the ` +
  `state ${key} (more than ` +
  `${refused.maxRemovedRatio === 0.5 ? "half" : `${Math.round(refused.maxRemovedRatio * 100)}%`}), as a list ` +
  "answering empty or cut short for a while would: nothing was removed and the state was left as it was " +
  `(${words.allowRemovals} commits them, if the list really lost them)`

/**
 * The line of a run refused for records that share an id (see `Refusal`), their ids as the server wrote them.
 *
 * @example
 * ```ts
 * import { Changes } from "@erp-client/kernel"
 *
 * const words = {
 *   startOver: "--init",
 *   otherState: "give another --since",
 *   allowDuplicateIds: "--allow-duplicate-ids",
 *   allowRemovals: "--allow-removals",
 *   idField: "choose it with --id-field"
 * }
 * const refused = { records: 1998, idsJson: ["1", "0"], read: 2000 }
 * console.log(Changes.duplicateIdsText("c.state", refused, "is_customer", words).slice(0, 85))
 * // => 1,998 records have the id of another, distinct record (ids 1, 0): the state keeps one
 * ```
 *
 * @since 0.1.0
 * @category Messages
 */
export const duplicateIdsText = (
  key: string,
  refused: { readonly records: number; readonly idsJson: ReadonlyArray<string>; readonly read: number },
  idField: string,
  words: Words
): string => {
  const mostly = 2 * refused.records >= refused.read
  const hint = !mostly ?
    "" :
    `; ${count(refused.records, "record")} of ${refused.read.toLocaleString("en-US")} share ` +
    `an id: ${idField} is probably not the field that tells these records apart` +
    (words.idField === undefined ? "" : ` (${words.idField})`)
  const one = refused.records === 1
  return `${count(refused.records, "record has", "records have")} the id of another, distinct record ` +
    `(${namedIds(refused.idsJson)}): the state keeps one record per id, so ${one ? "it" : "they"} cannot be tracked ` +
    `(a change of ${one ? "it" : "them"} would go unreported)${hint}; the state ${key} was left as it was and ` +
    `nothing was removed (${words.allowDuplicateIds} keeps the first record of each id and reports the others on ` +
    "stderr)"
}

/**
 * The line of a state that is not the state of this list: `differences` as `sourceDifferences` says them.
 *
 * @example
 * ```ts
 * import { Changes } from "@erp-client/kernel"
 *
 * const words = { startOver: "--init", otherState: "give another --since", allowDuplicateIds: "", allowRemovals: "" }
 * console.log(Changes.mismatchText("p.state", ["the endpoint: partner/list in the state, invoice/list now"], words))
 * // => the state p.state was made for another list (the endpoint: partner/list in the state, invoice/list now): refused and left as it was (--init starts a new state of this list there, or give another --since)
 * ```
 *
 * @since 0.1.0
 * @category Messages
 */
export const mismatchText = (key: string, differences: ReadonlyArray<string>, words: Words): string =>
  `the state ${key} was made for another list (${differences.join("; ")}): refused and left as it was ` +
  `(${words.startOver} starts a new state of this list there, or ${words.otherState})`

/**
 * The line of a state that cannot be read (`decode`'s reason): a state of erp changes (damaged, or of an earlier
 * format) may be started over, any other file is never overwritten.
 *
 * @example
 * ```ts
 * import { Changes } from "@erp-client/kernel"
 *
 * const words = { startOver: "--init", otherState: "give another --since", allowDuplicateIds: "", allowRemovals: "" }
 * console.log(Changes.unreadableText("notes.txt", "not a state file of erp changes", false, words))
 * // => the state notes.txt cannot be read: not a state file of erp changes; refused and left as it was (give another --since)
 * ```
 *
 * @since 0.1.0
 * @category Messages
 */
export const unreadableText = (key: string, reason: string, ours: boolean, words: Words): string =>
  `the state ${key} cannot be read: ${reason}; refused and left as it was (` +
  (ours ? `${words.startOver} starts a new state there, or ${words.otherState})` : `${words.otherState})`)

/**
 * The line of records left out of the state for sharing an id, when that was allowed (`allowDuplicateIds`).
 *
 * @example
 * ```ts
 * import { Changes } from "@erp-client/kernel"
 *
 * console.log(Changes.duplicatesNote({ records: 1, ids: [119] }))
 * // => 1 record was left out of the state (id 119): it has the id of another, distinct record (the state keeps one record per id: changes of these go unreported)
 * ```
 *
 * @since 0.1.0
 * @category Messages
 */
export const duplicatesNote = (duplicates: Duplicates): string =>
  `${count(duplicates.records, "record was", "records were")} left out of the state ` +
  `(${namedIds(duplicates.ids.map(idJson))}): ` +
  `${duplicates.records === 1 ? "it has" : "each has"} the id of another, distinct record (the state keeps one ` +
  "record per id: changes of these go unreported)"

// The encoding ---------------------------------------------------------------------------------------------------------
//
//   "ERPCHG" 0x00 0x02                 magic and version 2
//   varuint length, then the header: what the state is of (`Source`, or null), as JSON text in UTF-8
//   u8 mode                            0: numbers as ascending deltas, LEB128, all below 2^32;
//                                      2: the same, any non-negative safe integers;
//                                      1: numbers as float64, little-endian
//   varuint count, the numbers, zeros to a multiple of 4 bytes, then count * 8 bytes of digests (hi, lo, each u32
//   little-endian: read in place, without a copy, where the platform is little-endian)
//   varuint count, each string as varuint byte length + UTF-8, zeros to a multiple of 4, count * 8 bytes of digests
//   u32 little-endian: the CRC-32 of every byte before it
//
// Sorted ids as deltas cost about one byte each for a dense list. The CRC-32 finds
// every change of up to 32 bits in a row, so any one byte changed (a flipped bit, a disk's or a copy's error) is
// refused, never read as another state.

const MAGIC = [0x45, 0x52, 0x50, 0x43, 0x48, 0x47, 0x00, 0x02]
// The states of version 1 (no header, no checksum) start the same but for the version.
const MAGIC_PREFIX = MAGIC.length - 1

/**
 * What a state is of: the server (`serverOf` its base URL: scheme, host, port and path, never a key or credentials),
 * the list endpoint, the field that tells records apart, and the list's filters (conditions and other parameters,
 * sorted). A run refuses a state of another source (`sourceDifferences`): its records would be reported as added and
 * removed, and the state overwritten.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Source {
  readonly server: string
  readonly endpoint: string
  readonly idField: string
  /** Each condition as sent, `list_condition[field]` and its value, sorted. */
  readonly conditions: ReadonlyArray<readonly [string, string]>
  /** The other query parameters, sorted. */
  readonly params: ReadonlyArray<readonly [string, string]>
}

const byPair = (a: readonly [string, string], b: readonly [string, string]): number =>
  compareStrings(a[0], b[0]) || compareStrings(a[1], b[1])

/**
 * The server a base URL names, as a state records it: scheme, host, port (written even when it is the scheme's
 * default) and path; never credentials, a query or a fragment.
 */
const serverOf = (baseUrl: string): string => {
  let url: URL
  try {
    url = new URL(baseUrl)
  } catch {
    return baseUrl.replace(/[?#].*$/s, "").replace(/\/\/[^/@]*@/, "//")
  }
  const port = url.port !== "" ? url.port : url.protocol === "https:" ? "443" : url.protocol === "http:" ? "80" : ""
  return `${url.protocol}//${url.hostname}${port === "" ? "" : `:${port}`}${url.pathname}`
}

/**
 * The `Source` of a list: its server's base URL, endpoint, id field, conditions (as they are sent) and other
 * parameters, in a form that compares equal for the same list however the filters were ordered.
 *
 * @example
 * ```ts
 * import { Changes } from "@erp-client/kernel"
 *
 * const source = Changes.sourceOf({
 *   baseUrl: "https://erp.example.com/api/",
 *   endpoint: "partner/list",
 *   idField: "id",
 *   where: { is_customer: true }
 * })
 * console.log(source.server, source.conditions) // => https://erp.example.com:443/api/ [ [ 'list_condition[is_customer]', '1' ] ]
 * ```
 *
 * @since 0.1.0
 * @category Sources
 */
export const sourceOf = (options: {
  readonly baseUrl: string
  readonly endpoint: string
  readonly idField: string
  readonly where?: ListQuery.Conditions | undefined
  readonly params?: ReadonlyArray<readonly [string, string]> | undefined
}): Source => {
  const conditions: Array<readonly [string, string]> = []
  for (const [field, value] of Object.entries(options.where ?? {})) {
    conditions.push([`list_condition[${field}]`, ListQuery.conditionValue(value)])
  }
  return {
    server: serverOf(options.baseUrl),
    endpoint: options.endpoint,
    idField: options.idField,
    conditions: conditions.sort(byPair),
    params: [...(options.params ?? [])].map(([name, value]): readonly [string, string] => [name, value]).sort(byPair)
  }
}

const pairsText = (pairs: ReadonlyArray<readonly [string, string]>): string =>
  pairs.length === 0 ? "none" : pairs.map(([name, value]) => `${name}=${value}`).join("&")

/**
 * What differs between the source a run reads (`now`) and the one its state was made of (`state`), one phrase each
 * (empty: the same list).
 *
 * @example
 * ```ts
 * import { Changes } from "@erp-client/kernel"
 *
 * const now = Changes.sourceOf({ baseUrl: "http://127.0.0.1:8080/", endpoint: "partner/list", idField: "id" })
 * const state = Changes.sourceOf({ baseUrl: "http://127.0.0.1:9090/", endpoint: "invoice/list", idField: "id" })
 * console.log(Changes.sourceDifferences(now, state))
 * // => [
 * //   'the server: http://127.0.0.1:9090/ in the state, http://127.0.0.1:8080/ now',
 * //   'the endpoint: invoice/list in the state, partner/list now'
 * // ]
 * ```
 *
 * @since 0.1.0
 * @category Sources
 */
export const sourceDifferences = (now: Source, state: Source): ReadonlyArray<string> => {
  const out: Array<string> = []
  const differ = (what: string, before: string, after: string) => {
    if (before !== after) out.push(`${what}: ${before} in the state, ${after} now`)
  }
  differ("the server", state.server, now.server)
  differ("the endpoint", state.endpoint, now.endpoint)
  differ("the id field", state.idField, now.idField)
  differ("the conditions", pairsText(state.conditions), pairsText(now.conditions))
  differ("the parameters", pairsText(state.params), pairsText(now.params))
  return out
}

const sourceJson = (source: Source | undefined): string =>
  source === undefined ? "null" : JSON.stringify({
    server: source.server,
    endpoint: source.endpoint,
    idField: source.idField,
    conditions: source.conditions,
    params: source.params
  })

const isPairs = (value: unknown): value is ReadonlyArray<readonly [string, string]> =>
  Array.isArray(value) &&
  value.every((pair) => Array.isArray(pair) && pair.length === 2 && pair.every((part) => typeof part === "string"))

const sourceFromJson = (text: string): { readonly ok: true; readonly source: Source | undefined } | undefined => {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return undefined
  }
  if (value === null) return { ok: true, source: undefined }
  if (typeof value !== "object") return undefined
  const { conditions, endpoint, idField, params, server } = value as Record<string, unknown>
  if (typeof server !== "string" || typeof endpoint !== "string" || typeof idField !== "string") return undefined
  if (!isPairs(conditions) || !isPairs(params)) return undefined
  return { ok: true, source: { server, endpoint, idField, conditions, params } }
}

// CRC-32 (the polynomial of zip and PNG), a byte at a time from a table of 256.
const crcTable = (() => {
  const table = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    table[n] = c >>> 0
  }
  return table
})()

const crc32 = (bytes: Uint8Array, end: number): number => {
  let crc = 0xffffffff
  for (let i = 0; i < end; i++) crc = crcTable[(crc ^ bytes[i]) & 0xff] ^ (crc >>> 8)
  return (crc ^ 0xffffffff) >>> 0
}

/**
 * A state as bytes, to keep in a store, with what it is of (`source`: written in its header, and checked by a run
 * that reads it) and a checksum (see the layout above).
 *
 * @example
 * ```ts
 * import { Changes } from "@erp-client/kernel"
 *
 * const table = Changes.makeTable()
 * for (let id = 1; id <= 1000; id++) table.add(id, `{"id":${id}}`)
 * const bytes = Changes.encode(table.state())
 * console.log(bytes.length) // => 9024
 * const back = Changes.decode(bytes)
 * console.log(back.ok && Changes.size(back.state)) // => 1000
 * ```
 *
 * @since 0.1.0
 * @category Encoding
 */
export const encode = (state: State, source?: Source | undefined): Uint8Array =>
  encodeWith(source, state.numbers, state.strings, (i, out, at) => {
    out[at] = state.numberDigests[2 * i]
    out[at + 1] = state.numberDigests[2 * i + 1]
  }, (i, out, at) => {
    out[at] = state.stringDigests[2 * i]
    out[at + 1] = state.stringDigests[2 * i + 1]
  })

/**
 * The state a run's table holds, as `encode` writes it, without making the state first: the table's entries are sorted
 * where they are (it answers as before), so the end of a run needs only the bytes beside the table, not a second copy
 * of the state.
 *
 * @example
 * ```ts
 * import { Changes } from "@erp-client/kernel"
 *
 * const table = Changes.makeTable()
 * for (const id of [3, 1, 2]) table.add(id, `{"id":${id}}`)
 * const same = Changes.encodeTable(table).join() === Changes.encode(table.state()).join()
 * console.log(same) // => true
 * ```
 *
 * @since 0.1.0
 * @category Encoding
 */
export const encodeTable = (table: Table, source?: Source | undefined): Uint8Array => {
  const internals = table as Table & Partial<TableInternals>
  if (internals.sortInPlace === undefined) return encode(table.state(), source)
  const { numberDigests, numbers, strings } = internals.sortInPlace()
  return encodeWith(source, numbers, strings, (i, out, at) => {
    out[at] = numberDigests[2 * i]
    out[at + 1] = numberDigests[2 * i + 1]
  }, (i, out, at) => table.digestInto(strings[i], out, at))
}

// The next multiple of 4: digests start there, so a decoded state reads them in place.
const align = (at: number): number => (at + 3) & ~3

const littleEndian = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1

const varuintLength = (n: number): number => {
  let length = 1
  while (n >= 0x80) {
    n = Math.floor(n / 0x80)
    length++
  }
  return length
}

const encodeWith = (
  source: Source | undefined,
  numbers: Float64Array | Uint32Array,
  strings: ReadonlyArray<string>,
  numberDigest: (i: number, out: Uint32Array, at: number) => void,
  stringDigest: (i: number, out: Uint32Array, at: number) => void
): Uint8Array => {
  let dense = true
  for (let i = 0; i < numbers.length && dense; i++) dense = Number.isSafeInteger(numbers[i]) && numbers[i] >= 0
  const mode = !dense ? 1 : numbers.length === 0 || numbers[numbers.length - 1] < 2 ** 32 ? 0 : 2
  const encoder = new TextEncoder()
  const header = encoder.encode(sourceJson(source))
  const utf8 = strings.map((s) => encoder.encode(s))
  // The exact size first: the bytes are allocated once, at their size.
  let size = MAGIC.length + varuintLength(header.length) + header.length + 1 + varuintLength(numbers.length)
  if (dense) {
    let last = 0
    for (let i = 0; i < numbers.length; i++) {
      size += varuintLength(numbers[i] - last)
      last = numbers[i]
    }
  } else {
    size += 8 * numbers.length
  }
  size = align(size) + 8 * numbers.length + varuintLength(strings.length)
  for (const bytes of utf8) size += varuintLength(bytes.length) + bytes.length
  size = align(size) + 8 * strings.length + 4
  const out = new Uint8Array(size)
  const view = new DataView(out.buffer)
  const pair = new Uint32Array(2)
  let at = 0
  for (const byte of MAGIC) out[at++] = byte
  const varuint = (n: number) => {
    while (n >= 0x80) {
      out[at++] = (n % 0x80) | 0x80
      n = Math.floor(n / 0x80)
    }
    out[at++] = n
  }
  varuint(header.length)
  out.set(header, at)
  at += header.length
  out[at++] = mode
  const digests = (count: number, digest: (i: number, out: Uint32Array, at: number) => void) => {
    for (let i = 0; i < count; i++) {
      digest(i, pair, 0)
      view.setUint32(at, pair[0], true)
      view.setUint32(at + 4, pair[1], true)
      at += 8
    }
  }
  varuint(numbers.length)
  let last = 0
  for (let i = 0; i < numbers.length; i++) {
    if (dense) {
      varuint(numbers[i] - last)
      last = numbers[i]
    } else {
      view.setFloat64(at, numbers[i], true)
      at += 8
    }
  }
  at = align(at)
  digests(numbers.length, numberDigest)
  varuint(strings.length)
  for (const bytes of utf8) {
    varuint(bytes.length)
    out.set(bytes, at)
    at += bytes.length
  }
  at = align(at)
  digests(strings.length, stringDigest)
  view.setUint32(at, crc32(out, at), true)
  return out
}

/**
 * What `decode` made of bytes: a state and its source (`undefined` for a state written without one), or why not.
 * `ours` says whether the bytes are a state of erp changes at all (one of an earlier version, or damaged): starting
 * over may replace such a file, never any other.
 *
 * @since 0.1.0
 * @category Encoding
 */
export type Decoded =
  | { readonly ok: true; readonly state: State; readonly source: Source | undefined }
  | { readonly ok: false; readonly reason: string; readonly ours: boolean }

/**
 * A state from bytes `encode` wrote, with its source; anything else is refused with a reason, never read as a state:
 * another file, one of an earlier version (which said nothing of its source), or a damaged one (its checksum does not
 * match: a byte changed, or it was cut short).
 *
 * @example
 * ```ts
 * import { Changes } from "@erp-client/kernel"
 *
 * console.log(Changes.decode(new TextEncoder().encode('{"id":1}')))
 * // => { ok: false, reason: 'not a state file of erp changes', ours: false }
 * const bytes = Changes.encode(Changes.empty)
 * bytes[9] ^= 1
 * console.log(Changes.decode(bytes))
 * // => {
 * //   ok: false,
 * //   reason: 'the state is damaged: its checksum does not match its contents',
 * //   ours: true
 * // }
 * ```
 *
 * @since 0.1.0
 * @category Encoding
 */
export const decode = (bytes: Uint8Array): Decoded => {
  if (bytes.length < MAGIC.length || MAGIC.slice(0, MAGIC_PREFIX).some((byte, i) => bytes[i] !== byte)) {
    return { ok: false, reason: "not a state file of erp changes", ours: false }
  }
  const version = bytes[MAGIC_PREFIX]
  if (version !== MAGIC[MAGIC_PREFIX]) {
    return {
      ok: false,
      reason: version === 1
        ? "a state of an earlier format (version 1), which does not say which list and server it was made for"
        : `a state of an unknown format (version ${version})`,
      ours: true
    }
  }
  const damaged = (reason: string): Decoded => ({ ok: false, reason: `the state is damaged: ${reason}`, ours: true })
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (bytes.length < MAGIC.length + 4 || view.getUint32(bytes.length - 4, true) !== crc32(bytes, bytes.length - 4)) {
    return damaged("its checksum does not match its contents")
  }
  const end = bytes.length - 4
  let at = MAGIC.length
  const varuint = (): number | undefined => {
    let n = 0
    let scale = 1
    for (;;) {
      if (at >= end || scale > 2 ** 56) return undefined
      const byte = bytes[at++]
      n += (byte & 0x7f) * scale
      if (byte < 0x80) return n
      scale *= 0x80
    }
  }
  const decoder = new TextDecoder("utf-8", { fatal: true })
  const utf8 = (length: number): string | undefined => {
    try {
      return decoder.decode(bytes.subarray(at, at + length))
    } catch {
      return undefined
    }
  }
  const truncated = () => damaged("it ends early")
  const headerLength = varuint()
  if (headerLength === undefined || at + headerLength > end) return truncated()
  const headerText = utf8(headerLength)
  const header = headerText === undefined ? undefined : sourceFromJson(headerText)
  if (header === undefined) return damaged("its header is not a source")
  at += headerLength
  const mode = bytes[at++]
  if (mode !== 0 && mode !== 1 && mode !== 2) return damaged(`unknown id encoding ${mode}`)
  const digests = (count: number): Uint32Array | undefined => {
    for (; at % 4 !== 0; at++) if (at >= end || bytes[at] !== 0) return undefined
    if (at + count * 8 > end) return undefined
    const start = at
    at += count * 8
    // In place where it can be, not copied; the bytes stay alive with the state.
    if (littleEndian && (bytes.byteOffset + start) % 4 === 0) {
      return new Uint32Array(bytes.buffer, bytes.byteOffset + start, 2 * count)
    }
    const words = new Uint32Array(2 * count)
    for (let i = 0; i < words.length; i++) words[i] = view.getUint32(start + 4 * i, true)
    return words
  }
  const count = varuint()
  if (count === undefined || count > end) return truncated()
  const numbers = mode === 0 ? new Uint32Array(count) : new Float64Array(count)
  let last = 0
  for (let i = 0; i < count; i++) {
    if (mode !== 1) {
      const delta = varuint()
      if (delta === undefined) return truncated()
      last += delta
      if (mode === 0 && last >= 2 ** 32) return damaged("an id is out of its encoding's range")
      numbers[i] = last
    } else {
      if (at + 8 > end) return truncated()
      numbers[i] = view.getFloat64(at, true)
      at += 8
    }
    if (i > 0 && !(numbers[i] > numbers[i - 1])) return damaged("the ids are not in ascending order")
  }
  const numberDigests = digests(count)
  if (numberDigests === undefined) return truncated()
  const stringCount = varuint()
  if (stringCount === undefined || stringCount > end) return truncated()
  const strings: Array<string> = []
  for (let i = 0; i < stringCount; i++) {
    const length = varuint()
    if (length === undefined || at + length > end) return truncated()
    const text = utf8(length)
    if (text === undefined) return damaged("an id is not UTF-8")
    at += length
    if (i > 0 && !(text > strings[i - 1])) return damaged("the ids are not in ascending order")
    strings.push(text)
  }
  const stringDigests = digests(stringCount)
  if (stringDigests === undefined) return truncated()
  if (at !== end) return damaged("it has bytes after its end")
  return { ok: true, state: { numbers, numberDigests, strings, stringDigests }, source: header.source }
}
