/**
 * The changes of a list since the last export (docs/changes.md): what is kept of each record (its id and a 64-bit
 * digest of its exact text), how that state is laid out in memory and in a store (sorted typed arrays, a compact
 * binary encoding), and how a record read now is judged against it (added, changed, unchanged; and, once the end of
 * the list is confirmed, the ids not read again: removed). Each edition's `Resource.changes` wires it to its paging,
 * its store and its Stream.
 *
 * Why 64 bits are enough: a digest is only ever compared with the digest of the same id in the state before, never
 * with other records' (there is no set of digests where a birthday bound would apply). A change goes unnoticed only
 * when the record's old and new text have the same digest: about 1 in 2^64 per changed record for a well-mixed hash,
 * so never in practice. The hash is not cryptographic: someone who writes records on purpose to collide could hide
 * one change of their own record; state from such sources should be compared by value instead.
 *
 * Memory: ids that are numbers (every id of this ERP) live in typed arrays (8 bytes for the id, 8 for the digest;
 * the table of ids read during a run adds an index of 4 bytes a slot, at most twice as many slots as ids), not in a
 * Map of JS values: 1,000,000 records take about 16 MB as state and 25 to 34 MB in the table. Ids that are strings
 * are kept in a Map beside them.
 *
 * @since 0.1.0
 */
import * as JsonText from "./JsonText.js"

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
 * A 64-bit digest: its high and low 32 bits, unsigned.
 *
 * @since 0.1.0
 * @category Models
 */
export type Digest = readonly [hi: number, lo: number]

// The two 32-bit lanes of the last digest computed: `digestInto` writes here, so a run of a million records allocates
// nothing per record.
const lanes = new Uint32Array(2)

/** The two lanes of `text`'s digest into `lanes` (cyrb53's lanes and finish, both kept whole: 64 bits). */
const digestLanes = (text: string): void => {
  let h1 = 0xdeadbeef
  let h2 = 0x41c6ce57
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i)
    h1 = Math.imul(h1 ^ ch, 2654435761)
    h2 = Math.imul(h2 ^ ch, 1597334677)
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507)
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909)
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507)
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909)
  lanes[0] = h2
  lanes[1] = h1
}

/**
 * The 64-bit digest of a record's text exactly as the server wrote it (cyrb53's two 32-bit lanes, both kept whole):
 * any change of the text (a field, a digit, the order of fields) changes it.
 *
 * @example
 * ```ts
 * import { Changes } from "@erp-client/kernel"
 *
 * const [hi, lo] = Changes.digest('{"id":1,"credit_limit":1.10}')
 * const [hi2, lo2] = Changes.digest('{"id":1,"credit_limit":1.1}')
 * console.log(hi === hi2 && lo === lo2) // => false
 * ```
 *
 * @since 0.1.0
 * @category Digests
 */
export const digest = (text: string): Digest => {
  digestLanes(text)
  return [lanes[0], lanes[1]]
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
  /** Whether `id` was added with content other than `text` (`false` when its content is not known, or it is absent). */
  readonly differs: (id: Id, text: string) => boolean
  /** The digest `id` was added with, into `out` at `at` (hi, lo); `false` when absent or its content is not known. */
  readonly digestInto: (id: Id, out: Uint32Array, at: number) => boolean
  /** The ids and digests, sorted: the state a complete run leaves. */
  readonly state: () => State
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
  // open-addressed index of entry numbers (-1: empty slot) with linear probing, grown at 3/4 full. 1,000,000 ids take
  // 8 MB of ids, 8 MB of digests and 8 MB of index, and the sorted state is a sorted copy of the ids.
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
  const table: Table & TableInternals = {
    get size() {
      return numbers + strings.size
    },
    has: (id) => typeof id === "string" ? strings.has(id) : entryOf(id) >= 0,
    add: (id, text) => {
      if (text !== undefined) digestLanes(text)
      if (typeof id === "string") {
        strings.set(id, text === undefined ? undefined : [lanes[0], lanes[1]])
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
      if (text === undefined) unknown.add(key)
      else if (unknown.size > 0) unknown.delete(key)
      digests[2 * entry] = text === undefined ? 0 : lanes[0]
      digests[2 * entry + 1] = text === undefined ? 0 : lanes[1]
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
    sortInPlace: () => {
      // The entries themselves, ids and digests together: no copy of a million ids at the end of a run. The index is
      // rebuilt in place, so the table still answers as before.
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

// The encoding ---------------------------------------------------------------------------------------------------------
//
//   "ERPCHG" 0x00 0x01                 magic and version 1
//   u8 mode                            0: numbers as ascending deltas, LEB128, all below 2^32;
//                                      2: the same, any non-negative safe integers;
//                                      1: numbers as float64, little-endian
//   varuint count, the numbers, zeros to a multiple of 4 bytes, then count * 8 bytes of digests (hi, lo, each u32
//   little-endian: read in place, without a copy, where the platform is little-endian)
//   varuint count, each string as varuint byte length + UTF-8, zeros to a multiple of 4, count * 8 bytes of digests
//
// Sorted ids as deltas cost about one byte each for a dense list: 1,000,000 records in about 9 MB.

const MAGIC = [0x45, 0x52, 0x50, 0x43, 0x48, 0x47, 0x00, 0x01]

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
 * A state as bytes, to keep in a store (see the layout above; a dense list costs about 9 bytes a record).
 *
 * @example
 * ```ts
 * import { Changes } from "@erp-client/kernel"
 *
 * const table = Changes.makeTable()
 * for (let id = 1; id <= 1000; id++) table.add(id, `{"id":${id}}`)
 * const bytes = Changes.encode(table.state())
 * console.log(bytes.length) // => 9016
 * const back = Changes.decode(bytes)
 * console.log(back.ok && Changes.size(back.state)) // => 1000
 * ```
 *
 * @since 0.1.0
 * @category Encoding
 */
export const encode = (state: State): Uint8Array =>
  encodeWith(state.numbers, state.strings, (i, out, at) => {
    out[at] = state.numberDigests[2 * i]
    out[at + 1] = state.numberDigests[2 * i + 1]
  }, (i, out, at) => {
    out[at] = state.stringDigests[2 * i]
    out[at + 1] = state.stringDigests[2 * i + 1]
  })

/**
 * The state a run's table holds, as `encode` writes it, without making the state first: the table's entries are sorted
 * where they are (it answers as before), so the end of a run of 1,000,000 records needs only the bytes (about 9 MB)
 * beside the table, not 16 MB of state more.
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
export const encodeTable = (table: Table): Uint8Array => {
  const internals = table as Table & Partial<TableInternals>
  if (internals.sortInPlace === undefined) return encode(table.state())
  const { numberDigests, numbers, strings } = internals.sortInPlace()
  return encodeWith(numbers, strings, (i, out, at) => {
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
  numbers: Float64Array | Uint32Array,
  strings: ReadonlyArray<string>,
  numberDigest: (i: number, out: Uint32Array, at: number) => void,
  stringDigest: (i: number, out: Uint32Array, at: number) => void
): Uint8Array => {
  let dense = true
  for (let i = 0; i < numbers.length && dense; i++) dense = Number.isSafeInteger(numbers[i]) && numbers[i] >= 0
  const mode = !dense ? 1 : numbers.length === 0 || numbers[numbers.length - 1] < 2 ** 32 ? 0 : 2
  const encoder = new TextEncoder()
  const utf8 = strings.map((s) => encoder.encode(s))
  // The exact size first: the bytes are allocated once, at their size.
  let size = MAGIC.length + 1 + varuintLength(numbers.length)
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
  size = align(size) + 8 * strings.length
  const out = new Uint8Array(size)
  const view = new DataView(out.buffer)
  const pair = new Uint32Array(2)
  let at = 0
  for (const byte of MAGIC) out[at++] = byte
  out[at++] = mode
  const varuint = (n: number) => {
    while (n >= 0x80) {
      out[at++] = (n % 0x80) | 0x80
      n = Math.floor(n / 0x80)
    }
    out[at++] = n
  }
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
  return out
}

/**
 * A state from bytes `encode` wrote; anything else (another file, a truncated one, ids out of order) is refused with
 * a reason, never read as a state.
 *
 * @example
 * ```ts
 * import { Changes } from "@erp-client/kernel"
 *
 * console.log(Changes.decode(new TextEncoder().encode('{"id":1}')))
 * // => { ok: false, reason: 'not a state file of erp changes (version 1)' }
 * ```
 *
 * @since 0.1.0
 * @category Encoding
 */
export const decode = (
  bytes: Uint8Array
): { readonly ok: true; readonly state: State } | { readonly ok: false; readonly reason: string } => {
  const fail = (reason: string) => ({ ok: false as const, reason })
  if (bytes.length < MAGIC.length + 1 || MAGIC.some((byte, i) => bytes[i] !== byte)) {
    return fail("not a state file of erp changes (version 1)")
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let at = MAGIC.length
  const mode = bytes[at++]
  if (mode !== 0 && mode !== 1 && mode !== 2) return fail(`unknown id encoding ${mode}`)
  const truncated = () => fail("the state is truncated")
  const varuint = (): number | undefined => {
    let n = 0
    let scale = 1
    for (;;) {
      if (at >= bytes.length || scale > 2 ** 56) return undefined
      const byte = bytes[at++]
      n += (byte & 0x7f) * scale
      if (byte < 0x80) return n
      scale *= 0x80
    }
  }
  const digests = (count: number): Uint32Array | undefined => {
    for (; at % 4 !== 0; at++) if (bytes[at] !== 0) return undefined
    if (at + count * 8 > bytes.length) return undefined
    const start = at
    at += count * 8
    // In place where it can be (a million records: 8 MB not copied); the bytes stay alive with the state.
    if (littleEndian && (bytes.byteOffset + start) % 4 === 0) {
      return new Uint32Array(bytes.buffer, bytes.byteOffset + start, 2 * count)
    }
    const words = new Uint32Array(2 * count)
    for (let i = 0; i < words.length; i++) words[i] = view.getUint32(start + 4 * i, true)
    return words
  }
  const count = varuint()
  if (count === undefined || count > bytes.length) return truncated()
  const numbers = mode === 0 ? new Uint32Array(count) : new Float64Array(count)
  let last = 0
  for (let i = 0; i < count; i++) {
    if (mode !== 1) {
      const delta = varuint()
      if (delta === undefined) return truncated()
      last += delta
      if (mode === 0 && last >= 2 ** 32) return fail("an id is out of its encoding's range")
      numbers[i] = last
    } else {
      if (at + 8 > bytes.length) return truncated()
      numbers[i] = view.getFloat64(at, true)
      at += 8
    }
    if (i > 0 && !(numbers[i] > numbers[i - 1])) return fail("the ids are not in ascending order")
  }
  const numberDigests = digests(count)
  if (numberDigests === undefined) return truncated()
  const stringCount = varuint()
  if (stringCount === undefined || stringCount > bytes.length) return truncated()
  const strings: Array<string> = []
  const decoder = new TextDecoder("utf-8", { fatal: true })
  for (let i = 0; i < stringCount; i++) {
    const length = varuint()
    if (length === undefined || at + length > bytes.length) return truncated()
    let text: string
    try {
      text = decoder.decode(bytes.subarray(at, at + length))
    } catch {
      return fail("an id is not UTF-8")
    }
    at += length
    if (i > 0 && !(text > strings[i - 1])) return fail("the ids are not in ascending order")
    strings.push(text)
  }
  const stringDigests = digests(stringCount)
  if (stringDigests === undefined) return truncated()
  if (at !== bytes.length) return fail("the state has bytes after its end")
  return { ok: true, state: { numbers, numberDigests, strings, stringDigests } }
}
