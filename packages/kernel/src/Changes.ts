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
 * the table of ids read during a run has at most twice as many slots), not in a Map of JS values: 1,000,000
 * records take about 16 MB as state and 34 MB in the table. Ids that are strings are kept in a Map beside them.
 *
 * @since 0.1.0
 */

/**
 * What tells records apart: the record's id field, a string or a finite number.
 *
 * @since 0.1.0
 * @category Models
 */
export type Id = string | number

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
  readonly numbers: Float64Array
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
 * A table for one run (see `Table`).
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
export const makeTable = (): Table => {
  // Open addressing with linear probing; an empty slot holds NaN (never an id: ids are finite). Grown at 3/4 full.
  let capacity = 1024
  let keys = new Float64Array(capacity).fill(NaN)
  let digests = new Uint32Array(2 * capacity)
  // 1 where the content is known.
  let known = new Uint8Array(capacity)
  let numbers = 0
  const strings = new Map<string, readonly [number, number] | undefined>()

  const slotOf = (id: number): number => {
    const mask = capacity - 1
    let slot = hashNumber(id) & mask
    for (;;) {
      const key = keys[slot]
      if (key === id || key !== key) return slot
      slot = (slot + 1) & mask
    }
  }
  const grow = () => {
    const oldKeys = keys
    const oldDigests = digests
    const oldKnown = known
    capacity *= 2
    keys = new Float64Array(capacity).fill(NaN)
    digests = new Uint32Array(2 * capacity)
    known = new Uint8Array(capacity)
    for (let i = 0; i < oldKeys.length; i++) {
      const key = oldKeys[i]
      if (key !== key) continue
      const slot = slotOf(key)
      keys[slot] = key
      digests[2 * slot] = oldDigests[2 * i]
      digests[2 * slot + 1] = oldDigests[2 * i + 1]
      known[slot] = oldKnown[i]
    }
  }
  const table: Table = {
    get size() {
      return numbers + strings.size
    },
    has: (id) => {
      if (typeof id === "string") return strings.has(id)
      const key = numberKey(id)
      return keys[slotOf(key)] === key
    },
    add: (id, text) => {
      if (text !== undefined) digestLanes(text)
      if (typeof id === "string") {
        strings.set(id, text === undefined ? undefined : [lanes[0], lanes[1]])
        return
      }
      const key = numberKey(id)
      let slot = slotOf(key)
      if (keys[slot] !== key) {
        if (4 * (numbers + 1) > 3 * capacity) {
          grow()
          slot = slotOf(key)
        }
        keys[slot] = key
        numbers++
      }
      known[slot] = text === undefined ? 0 : 1
      digests[2 * slot] = text === undefined ? 0 : lanes[0]
      digests[2 * slot + 1] = text === undefined ? 0 : lanes[1]
    },
    differs: (id, text) => {
      if (typeof id === "string") {
        const before = strings.get(id)
        if (before === undefined) return false
        digestLanes(text)
        return before[0] !== lanes[0] || before[1] !== lanes[1]
      }
      const key = numberKey(id)
      const slot = slotOf(key)
      if (keys[slot] !== key || known[slot] === 0) return false
      digestLanes(text)
      return digests[2 * slot] !== lanes[0] || digests[2 * slot + 1] !== lanes[1]
    },
    digestInto: (id, out, at) => {
      if (typeof id === "string") {
        const before = strings.get(id)
        if (before === undefined) return false
        out[at] = before[0]
        out[at + 1] = before[1]
        return true
      }
      const key = numberKey(id)
      const slot = slotOf(key)
      if (keys[slot] !== key || known[slot] === 0) return false
      out[at] = digests[2 * slot]
      out[at + 1] = digests[2 * slot + 1]
      return true
    },
    state: () => {
      const ids = new Float64Array(numbers)
      let n = 0
      for (let i = 0; i < capacity; i++) {
        const key = keys[i]
        if (key === key) ids[n++] = key
      }
      ids.sort()
      const numberDigests = new Uint32Array(2 * numbers)
      for (let i = 0; i < numbers; i++) table.digestInto(ids[i], numberDigests, 2 * i)
      const sorted = [...strings.keys()].sort(compareStrings)
      const stringDigests = new Uint32Array(2 * sorted.length)
      sorted.forEach((id, i) => table.digestInto(id, stringDigests, 2 * i))
      return { numbers: ids, numberDigests, strings: sorted, stringDigests }
    }
  }
  return table
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
//   u8 mode                            0: numbers as ascending deltas, LEB128 (all non-negative safe integers);
//                                      1: numbers as float64, little-endian
//   varuint count, the numbers, then count * 8 bytes of digests (hi, lo, each u32 little-endian)
//   varuint count, each string as varuint byte length + UTF-8, then count * 8 bytes of digests
//
// Sorted ids as deltas cost about one byte each for a dense list: 1,000,000 records in about 9 MB.

const MAGIC = [0x45, 0x52, 0x50, 0x43, 0x48, 0x47, 0x00, 0x01]

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
 * console.log(bytes.length) // => 9012
 * const back = Changes.decode(bytes)
 * console.log(back.ok && Changes.size(back.state)) // => 1000
 * ```
 *
 * @since 0.1.0
 * @category Encoding
 */
export const encode = (state: State): Uint8Array => {
  const { numbers, strings } = state
  let dense = true
  for (let i = 0; i < numbers.length && dense; i++) dense = Number.isSafeInteger(numbers[i]) && numbers[i] >= 0
  const utf8 = strings.map((s) => new TextEncoder().encode(s))
  const stringBytes = utf8.reduce((n, b) => n + b.length + 5, 0)
  const out = new Uint8Array(MAGIC.length + 1 + 2 * 10 + numbers.length * 16 + stringBytes + strings.length * 8)
  const view = new DataView(out.buffer)
  let at = 0
  for (const byte of MAGIC) out[at++] = byte
  out[at++] = dense ? 0 : 1
  const varuint = (n: number) => {
    while (n >= 0x80) {
      out[at++] = (n % 0x80) | 0x80
      n = Math.floor(n / 0x80)
    }
    out[at++] = n
  }
  const digests = (words: Uint32Array) => {
    for (let i = 0; i < words.length; i++) {
      view.setUint32(at, words[i], true)
      at += 4
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
  digests(state.numberDigests)
  varuint(strings.length)
  for (const bytes of utf8) {
    varuint(bytes.length)
    out.set(bytes, at)
    at += bytes.length
  }
  digests(state.stringDigests)
  return out.slice(0, at)
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
  if (mode !== 0 && mode !== 1) return fail(`unknown id encoding ${mode}`)
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
    if (at + count * 8 > bytes.length) return undefined
    const words = new Uint32Array(2 * count)
    for (let i = 0; i < words.length; i++) {
      words[i] = view.getUint32(at, true)
      at += 4
    }
    return words
  }
  const count = varuint()
  if (count === undefined || count > bytes.length) return truncated()
  const numbers = new Float64Array(count)
  let last = 0
  for (let i = 0; i < count; i++) {
    if (mode === 0) {
      const delta = varuint()
      if (delta === undefined) return truncated()
      last += delta
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
