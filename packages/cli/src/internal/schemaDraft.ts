/**
 * A schema drafted from live samples (`erp api infer`): the records of an endpoint nobody has typed, read as the
 * server wrote them, become a shape (which fields every record has, of which types) and then the text of a
 * TypeScript module: an Effect Schema and a `Resource` declaration.
 *
 * Why not quicktype-core (26, whose `typescript-effect-schema` drafts Effect Schemas from sample JSON): it reads the
 * samples with `JSON.parse`, so `12345678901234567890` is already a float it cannot tell from its neighbours; it types
 * every number `S.Number` (its integer type is rendered as a Number too) and never makes literals of numbers; its
 * classes (`S.Class`) drop the fields the samples did not show, where this client keeps every field a server sends
 * (docs/ARCHITECTURE.md, "Records"); and it knows nothing of this API's envelope, paging and limit (one page is one
 * sample, the envelope typed as the record). Adapting its output would mean rewriting most of it, for 6 MB of
 * dependencies. The decisions here are few and plain: they are written out, and tested on their own.
 *
 * The records are read from their text (the kernel's `JsonScan`, the scanner `JsonText` uses), so a number's token is
 * seen as written: one a double does not hold (`12345678901234567890`, `0.1000000000000000000001`) is typed
 * `Schema.Number` with a note saying its exact text is the record's (`Page.json`), never `Schema.Int`, which would
 * refuse the rounded value. Nesting past `maxDepth` is typed `Schema.Unknown` (read without recursion).
 *
 * What a draft holds is bounded whatever the records (docs/infer.md, "Bounded, whatever the records"): a `drafter`
 * reads the samples one at a time and keeps counts and a few short values of each, never the samples; a struct
 * declares at most `maxFields` fields and the module `maxTotalFields` (past some thousands in one struct TypeScript
 * refuses the type, TS2859), the others kept by the index signature. The module it renders compiles: `nameProblem`
 * says why a name cannot be the schema's, and every name and value from the server is written with escapes for the
 * characters a reader would not see (bidi controls, as in Trojan Source; invisible and control characters).
 *
 * @since 0.1.0
 */
import * as Scan from "@erp-client/kernel/JsonScan"

/**
 * How the samples are judged.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Options {
  /** At most this many distinct values make a literal (default 8). */
  readonly maxLiterals?: number | undefined
  /** A literal needs at least this many values seen (default 20)… */
  readonly minLiteralSamples?: number | undefined
  /** …and at least this many values seen for each distinct one (default 5). */
  readonly minSamplesPerLiteral?: number | undefined
  /** Nesting deeper than this is typed `Schema.Unknown` (default 16). */
  readonly maxDepth?: number | undefined
  /**
   * At most this many fields are drafted in one struct (default 500): the first seen. Past it, the others are left to
   * the index signature (`otherFields`, kept as `unknown`): TypeScript refuses the type of a struct of some thousands
   * of fields as too complex (TS2859).
   */
  readonly maxFields?: number | undefined
  /** At most this many fields are drafted in the whole draft, at every depth (default 2,000), the first seen. */
  readonly maxTotalFields?: number | undefined
}

/**
 * The defaults of `Options`.
 *
 * @since 0.1.0
 * @category Constants
 */
export const defaults = {
  maxLiterals: 8,
  minLiteralSamples: 20,
  minSamplesPerLiteral: 5,
  maxDepth: 16,
  maxFields: 500,
  maxTotalFields: 2000
} as const

type Settings = { readonly [K in keyof typeof defaults]: number }

/**
 * A field of an object: whether every object seen had it, and the shape of its values.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Field {
  readonly name: string
  /** Absent from some of the objects seen. */
  readonly optional: boolean
  /** In how many of the objects seen it was present. */
  readonly present: number
  /** How many objects were seen where it could be. */
  readonly of: number
  readonly shape: Shape
}

/**
 * Fields the objects at one place had that the draft does not declare (past `maxFields` or `maxTotalFields`, or a
 * name longer than 1,000 characters): left to the index signature. `count` is how many distinct names, at least
 * (`atLeast`: more were not counted); `names` the first few.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Undeclared {
  readonly count: number
  readonly atLeast: boolean
  readonly names: ReadonlyArray<string>
  /** The bounds in force: `maxFields` and `maxTotalFields`. */
  readonly maxFields: number
  readonly maxTotalFields: number
}

/**
 * What the samples showed at one place. `Number` notes the values a double does not hold (`beyondDouble`: how many,
 * and the first as written, cut to 40 characters).
 *
 * @since 0.1.0
 * @category Models
 */
export type Shape =
  | { readonly _tag: "Unknown" }
  | { readonly _tag: "Null" }
  | { readonly _tag: "Boolean" }
  | { readonly _tag: "String" }
  | { readonly _tag: "Int" }
  | {
    readonly _tag: "Number"
    readonly beyondDouble?: { readonly count: number; readonly example: string } | undefined
  }
  | { readonly _tag: "Literal"; readonly values: ReadonlyArray<string | number> }
  | { readonly _tag: "Array"; readonly item: Shape }
  | {
    readonly _tag: "Struct"
    readonly fields: ReadonlyArray<Field>
    readonly undeclared?: Undeclared | undefined
  }
  | { readonly _tag: "Union"; readonly members: ReadonlyArray<Shape> }
  | { readonly _tag: "NullOr"; readonly shape: Shape }

/**
 * A column of the drafted table: a field and its width.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Column {
  readonly field: string
  readonly width: number
}

/**
 * What a set of samples drafts: the record's shape, the field that tells the samples apart, a table's columns.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Draft {
  readonly samples: number
  readonly shape: Shape
  /** A field present in every sample, a number or a string, different in each (`id` first), if there is one. */
  readonly idField: string | undefined
  /** Whether `idField` holds integers (a `get` selector of kind `integer`). */
  readonly idIsInteger: boolean
  /** The first sample's `idField` as a table cell (a number's token as written, a string's value), to look it up. */
  readonly firstId?: string | undefined
  readonly columns: ReadonlyArray<Column>
}

/**
 * Why a sample is not JSON (the sample's index, and where in its text).
 *
 * @since 0.1.0
 * @category Models
 */
export interface Failure {
  readonly sample: number
  readonly position: number
  readonly reason: string
}

// Memory is held to what the draft needs, whatever the records' size: a string longer than this is never a literal
// (and is not kept), an id longer than this is not told apart by its text, a number beyond a double is noted by its
// first characters, a name longer than MAX_NAME is not declared, and a few names of the undeclared fields are kept.
const MAX_LITERAL_CHARS = 100
const MAX_ID_CHARS = 100
const MAX_EXAMPLE_CHARS = 40
const MAX_NAME = 1000
const SHOWN_UNDECLARED = 3
const SHOWN_NAME_CHARS = 40
// Distinct names of undeclared fields counted, over the whole draft.
const MAX_UNDECLARED_COUNTED = 10_000
// Root fields of the first sample whose values are compared to find the id field, best ranked first.
const ID_CANDIDATES = 8

// What was seen at one place, over all the samples.
interface Seen {
  count: number
  nulls: number
  booleans: number
  deep: number
  strings: number
  stringValues: Map<string, number> | undefined
  numbers: number
  fractions: number
  unsafe: number
  beyond: number
  beyondExample: string | undefined
  numberValues: Map<string, number> | undefined
  objects: number
  fields: Map<string, { present: number; seen: Seen }>
  undeclared: Set<string> | undefined
  undeclaredMore: boolean
  arrays: number
  items: Seen | undefined
  // A candidate for the id field (a record's own field): each value's text while they all differ, and the first value.
  texts: Set<string> | undefined
  first: string | undefined
  width: number
}

const seen = (keepTexts: boolean): Seen => ({
  count: 0,
  nulls: 0,
  booleans: 0,
  deep: 0,
  strings: 0,
  stringValues: new Map(),
  numbers: 0,
  fractions: 0,
  unsafe: 0,
  beyond: 0,
  beyondExample: undefined,
  numberValues: new Map(),
  objects: 0,
  fields: new Map(),
  undeclared: undefined,
  undeclaredMore: false,
  arrays: 0,
  items: undefined,
  texts: keepTexts ? new Set() : undefined,
  first: undefined,
  width: 0
})

// A copy of a piece of a record's text that does not keep the record alive: a slice of a string may share its memory
// (V8 keeps the whole text for a slice of 13 characters or more), and a record may be megabytes.
const own = (text: string): string => text.length < 13 ? text : JSON.parse(JSON.stringify(text)) as string

// Counts a value toward a literal; past `limit` distinct values the count is dropped: no literal then.
const tally = (values: Map<string, number> | undefined, key: string, limit: number) => {
  if (values === undefined) return undefined
  const count = values.get(key)
  if (count !== undefined) values.set(key, count + 1)
  else values.set(own(key), 1)
  return values.size > limit ? undefined : values
}

// The significant digits of a number's token: `0.0012300e5` → `123`. Two tokens of the same value have the same digits
// and exponent; the digits of a double's shortest text differ from a token's when the double does not hold it.
const significand = (token: string): { readonly digits: string; readonly exponent: number } => {
  const [mantissa, exp = "0"] = token.replace(/^-/, "").toLowerCase().split("e") as [string, string?]
  const [whole, fraction = ""] = mantissa.split(".") as [string, string?]
  const all = whole + fraction
  const lead = all.length - all.replace(/^0+/, "").length
  const digits = all.slice(lead).replace(/0+$/, "")
  return { digits, exponent: Number(exp) + whole.length - lead }
}

/**
 * Whether a JSON number token is held exactly by the double `JSON.parse` makes of it: `1.10`, `1e2` and `-0.0` are;
 * `12345678901234567890` and `9007199254740993` are not.
 *
 * @example
 * ```ts
 * import * as SchemaDraft from "./schemaDraft.js"
 *
 * console.log(SchemaDraft.fitsDouble("1.10")) // => true
 * console.log(SchemaDraft.fitsDouble("12345678901234567890")) // => false
 * ```
 *
 * @since 0.1.0
 * @category Reading
 */
export const fitsDouble = (token: string): boolean => {
  const value = Number(token)
  if (!Number.isFinite(value)) return false
  const written = significand(token)
  if (written.digits === "") return true
  const held = significand(String(Math.abs(value)))
  return written.digits === held.digits && written.exponent === held.exponent
}

const QUOTE = 34
const COMMA = 44
const COLON = 58
const OPEN_BRACKET = 91
const CLOSE_BRACKET = 93
const OPEN_BRACE = 123
const CLOSE_BRACE = 125

// One draft's reading: its settings, and what it holds over all the places.
interface Reading {
  readonly settings: Settings
  /** Fields declared so far, at every place. */
  fields: number
  /** Names of undeclared fields counted so far, at every place. */
  undeclared: number
}

// A field the draft does not declare: counted at its place, while the count is bounded.
const leaveOut = (reading: Reading, at: Seen, key: string) => {
  const name = key.length > MAX_NAME ? `${key.slice(0, MAX_NAME)}…` : key
  if (at.undeclared?.has(name) === true) return
  if (reading.undeclared >= MAX_UNDECLARED_COUNTED) {
    at.undeclaredMore = true
    return
  }
  reading.undeclared++
  ;(at.undeclared ??= new Set()).add(own(name))
}

// The id field's candidates keep each value's text while every one differs: a longer one, another kind of value, or a
// text seen twice ends the candidacy (and frees what it held).
const candidate = (at: Seen, text: string, scalar: boolean, cell: () => string) => {
  if (at.texts === undefined) return
  if (!scalar || text.length > MAX_ID_CHARS || at.texts.has(text)) {
    at.texts = undefined
    return
  }
  at.texts.add(own(text))
  at.first ??= own(cell())
}

// Reads one value at the scanner's position into `at`. Recursion is bounded by `maxDepth`: deeper values are read by
// the scanner's own loop, without recursion, and counted as `deep`. Nothing of the record's text is kept but a few
// short pieces (literal values, names, an id's text), copied: see `own`.
const observe = (s: Scan.Scanner, at: Seen, depth: number, reading: Reading): boolean => {
  const options = reading.settings
  s.space()
  const text = s.text
  const start = s.pos
  const c = text.charCodeAt(start)
  at.count++
  if (depth > options.maxDepth) {
    at.deep++
    return s.value()
  }
  if (c === OPEN_BRACE) {
    at.objects++
    if (at.texts !== undefined) at.texts = undefined
    s.pos++
    s.space()
    if (text.charCodeAt(s.pos) === CLOSE_BRACE) {
      s.pos++
      return true
    }
    const keys = new Set<string>()
    for (;;) {
      s.space()
      if (text.charCodeAt(s.pos) !== QUOTE) return s.unexpected("a string key")
      const keyStart = s.pos
      if (!s.string()) return false
      const key = Scan.stringValue(text, keyStart, s.pos, s.escaped)
      if (!s.expect(COLON, "\":\" after a key")) return false
      let field = at.fields.get(key)
      // Within the bounds, a field is declared where it is first seen; a record's `id` always is (the id field).
      if (
        field === undefined && key.length <= MAX_NAME &&
        ((at.fields.size < options.maxFields && reading.fields < options.maxTotalFields) ||
          (depth === 0 && key === "id"))
      ) {
        field = { present: 0, seen: seen(depth === 0 && at.objects === 1) }
        at.fields.set(own(key), field)
        reading.fields++
      }
      if (field === undefined) {
        // Not declared: its value is read over, and kept on decode by the index signature.
        leaveOut(reading, at, key)
        s.space()
        if (!s.value()) return false
      } else {
        // A repeated key is present once (`JSON.parse` keeps the last; both values are seen).
        if (!keys.has(key)) {
          keys.add(key)
          field.present++
        }
        if (!observe(s, field.seen, depth + 1, reading)) return false
      }
      s.space()
      const next = text.charCodeAt(s.pos)
      s.pos++
      if (next === CLOSE_BRACE) break
      if (next !== COMMA) return s.at(s.pos - 1, "\",\" or \"}\" in an object")
    }
    return true
  }
  if (c === OPEN_BRACKET) {
    at.arrays++
    if (at.texts !== undefined) at.texts = undefined
    s.pos++
    s.space()
    if (text.charCodeAt(s.pos) === CLOSE_BRACKET) {
      s.pos++
      return true
    }
    at.items ??= seen(false)
    for (;;) {
      if (!observe(s, at.items, depth + 1, reading)) return false
      s.space()
      const next = text.charCodeAt(s.pos)
      s.pos++
      if (next === CLOSE_BRACKET) break
      if (next !== COMMA) return s.at(s.pos - 1, "\",\" or \"]\" in an array")
    }
    return true
  }
  if (c === QUOTE) {
    if (!s.string()) return false
    at.strings++
    // A long string is measured, not read: it is never a literal, and its width is past any column's.
    if (s.pos - start - 2 > MAX_LITERAL_CHARS) {
      at.stringValues = undefined
      at.width = Math.max(at.width, s.pos - start - 2)
      candidate(at, "", false, () => "")
      return true
    }
    const value = Scan.stringValue(text, start, s.pos, s.escaped)
    at.stringValues = tally(at.stringValues, value, options.maxLiterals)
    at.width = Math.max(at.width, value.length)
    candidate(at, text.slice(start, s.pos), true, () => value)
    return true
  }
  if (c === 45 || (c >= 48 && c <= 57)) {
    if (!s.number()) return false
    const token = text.slice(start, s.pos)
    const value = Number(token)
    at.numbers++
    at.width = Math.max(at.width, token.length)
    if (!fitsDouble(token)) {
      at.beyond++
      at.beyondExample ??= own(
        token.length > MAX_EXAMPLE_CHARS ? `${token.slice(0, MAX_EXAMPLE_CHARS - 1)}…` : token
      )
    }
    if (!Number.isInteger(value)) at.fractions++
    else if (!Number.isSafeInteger(value)) at.unsafe++
    at.numberValues = tally(at.numberValues, String(value), options.maxLiterals)
    candidate(at, token, true, () => token)
    return true
  }
  if (c === 116 || c === 102) {
    if (!s.literal(c === 116 ? "true" : "false")) return false
    at.booleans++
    at.width = Math.max(at.width, 5)
    candidate(at, "", false, () => "")
    return true
  }
  if (c === 110) {
    if (!s.literal("null")) return false
    at.nulls++
    candidate(at, "", false, () => "")
    return true
  }
  return s.unexpected("a value")
}

const literalOf = (values: Map<string, number> | undefined, count: number, options: Settings) =>
  values !== undefined && values.size <= options.maxLiterals && count >= options.minLiteralSamples &&
    count >= options.minSamplesPerLiteral * values.size
    ? [...values.keys()]
    : undefined

// The shape of what was seen at one place: each kind of value seen is a member; null makes it `NullOr`.
const shapeOf = (at: Seen, options: Settings): Shape => {
  const members: Array<Shape> = []
  if (at.deep > 0) return { _tag: "Unknown" }
  if (at.booleans > 0) members.push({ _tag: "Boolean" })
  if (at.numbers > 0) {
    const exact = at.fractions === 0 && at.unsafe === 0 && at.beyond === 0
    const literal = exact ? literalOf(at.numberValues, at.numbers, options) : undefined
    members.push(
      literal !== undefined
        ? { _tag: "Literal", values: literal.map(Number).sort((a, b) => a - b) }
        : exact
        ? { _tag: "Int" }
        : {
          _tag: "Number",
          ...(at.beyond > 0 ? { beyondDouble: { count: at.beyond, example: at.beyondExample! } } : {})
        }
    )
  }
  if (at.strings > 0) {
    const literal = literalOf(at.stringValues, at.strings, options)
    members.push(literal !== undefined ? { _tag: "Literal", values: literal.sort() } : { _tag: "String" })
  }
  if (at.arrays > 0) {
    members.push({ _tag: "Array", item: at.items === undefined ? { _tag: "Unknown" } : shapeOf(at.items, options) })
  }
  if (at.objects > 0) {
    const undeclared = at.undeclared ?? (at.undeclaredMore ? new Set<string>() : undefined)
    members.push({
      _tag: "Struct",
      fields: [...at.fields].map(([name, field]) => ({
        name,
        optional: field.present < at.objects,
        present: field.present,
        of: at.objects,
        shape: shapeOf(field.seen, options)
      })),
      ...(undeclared === undefined ? {} : {
        undeclared: {
          count: undeclared.size,
          atLeast: at.undeclaredMore,
          names: [...undeclared].slice(0, SHOWN_UNDECLARED),
          maxFields: options.maxFields,
          maxTotalFields: options.maxTotalFields
        }
      })
    })
  }
  const shape: Shape = members.length === 0
    ? (at.nulls > 0 ? { _tag: "Null" } : { _tag: "Unknown" })
    : members.length === 1
    ? members[0]!
    : { _tag: "Union", members }
  return at.nulls > 0 && members.length > 0 ? { _tag: "NullOr", shape } : shape
}

const ID_NAME = /(?:^|_)id$|[a-z]Id$/

// How likely a field is the id by its name: `id`, then `…_id` or `…Id`, then any other.
const idRank = (name: string): number => name === "id" ? 0 : ID_NAME.test(name) ? 1 : 2

// After the first sample: only the best ranked candidates go on being compared.
const keepCandidates = (root: Seen) => {
  const ranked = [...root.fields].filter(([, { seen: at }]) => at.texts !== undefined)
    .map(([name, field], order) => ({ field, rank: idRank(name), order }))
    .sort((a, b) => a.rank - b.rank || a.order - b.order)
  for (const { field } of ranked.slice(ID_CANDIDATES)) field.seen.texts = undefined
}

// The id field: `id`, else a field named `…_id` or `…Id`, else any field; present in every sample, a number or a
// string (never null), different in each.
const idFieldOf = (
  root: Seen,
  samples: number
): { readonly name: string; readonly integer: boolean; readonly first: string | undefined } | undefined => {
  const candidates = [...root.fields].filter(([, { present, seen: at }]) =>
    present === samples && at.texts !== undefined && at.texts.size === samples && at.nulls === 0 &&
    at.objects === 0 && at.arrays === 0 && at.booleans === 0 && at.deep === 0
  )
  const found = candidates.map(([name, field], order) => ({ name, field, rank: idRank(name), order }))
    .sort((a, b) => a.rank - b.rank || a.order - b.order)[0]
  if (found === undefined) return undefined
  const at = found.field.seen
  return {
    name: found.name,
    integer: at.strings === 0 && at.fractions === 0 && at.unsafe === 0 && at.beyond === 0,
    first: at.first
  }
}

const MAX_COLUMNS = 5
const MAX_WIDTH = 24

// The table: the id field, then the first fields every sample has that hold a number, a string or a flag.
const columnsOf = (root: Seen, samples: number, idField: string | undefined): ReadonlyArray<Column> => {
  const scalar = ([name, { present, seen: at }]: [string, { present: number; seen: Seen }]) =>
    present === samples && at.objects === 0 && at.arrays === 0 && at.deep === 0 && name !== idField
  const column = (name: string, at: Seen): Column => ({
    field: name,
    width: Math.min(MAX_WIDTH, Math.max(4, name.length, at.width))
  })
  const id = idField === undefined ? undefined : root.fields.get(idField)
  return [
    ...(id === undefined ? [] : [column(idField!, id.seen)]),
    ...[...root.fields].filter(scalar).map(([name, { seen: at }]) => column(name, at))
  ].slice(0, MAX_COLUMNS)
}

/**
 * Drafts a shape sample by sample (see `draft`): each sample is read as it comes and let go, so memory holds the
 * shape, never the samples: counts and up to a few short values per field (a literal's values, an id's texts while
 * they all differ), at most `maxFields` fields a struct and `maxTotalFields` in all, whatever the records' size.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Drafter {
  /**
   * Reads one sample (one record's JSON text). Text that is not JSON is a `Failure`, and ends the drafting: what was
   * read of that sample is in the draft by then, so every later `add` gives the same failure.
   */
  readonly add: (text: string) => Failure | undefined
  /** How many samples were read. */
  readonly samples: () => number
  /** The draft of the samples read so far. */
  readonly result: () => Draft
}

/**
 * A drafter: samples in one by one, then the draft (see `draft`).
 *
 * @example
 * ```ts
 * import * as SchemaDraft from "./schemaDraft.js"
 *
 * const drafter = SchemaDraft.drafter()
 * for (const text of [`{"id":1,"name":"Kovács Kft."}`, `{"id":2,"name":"Nagy Bt."}`]) drafter.add(text)
 * const { firstId, idField, samples } = drafter.result()
 * console.log(samples, idField, firstId) // => 2 id 1
 * ```
 *
 * @since 0.1.0
 * @category Drafting
 */
export const drafter = (options: Options = {}): Drafter => {
  const reading: Reading = {
    settings: {
      maxLiterals: options.maxLiterals ?? defaults.maxLiterals,
      minLiteralSamples: options.minLiteralSamples ?? defaults.minLiteralSamples,
      minSamplesPerLiteral: options.minSamplesPerLiteral ?? defaults.minSamplesPerLiteral,
      maxDepth: options.maxDepth ?? defaults.maxDepth,
      maxFields: options.maxFields ?? defaults.maxFields,
      maxTotalFields: options.maxTotalFields ?? defaults.maxTotalFields
    },
    fields: 0,
    undeclared: 0
  }
  const root = seen(false)
  let samples = 0
  let failed: Failure | undefined
  return {
    add: (text) => {
      if (failed !== undefined) return failed
      const scanner = new Scan.Scanner(text)
      const read = observe(scanner, root, 0, reading)
      scanner.space()
      if (!read || scanner.pos < text.length) {
        if (read) scanner.unexpected("the end of the text after the value")
        failed = { sample: samples, ...scanner.failure! }
        return failed
      }
      if (samples === 0) keepCandidates(root)
      samples++
      return undefined
    },
    samples: () => samples,
    result: () => {
      const id = root.objects === samples && samples > 0 ? idFieldOf(root, samples) : undefined
      return {
        samples,
        shape: shapeOf(root, reading.settings),
        idField: id?.name,
        idIsInteger: id?.integer ?? false,
        ...(id?.first === undefined ? {} : { firstId: id.first }),
        columns: root.objects === samples ? columnsOf(root, samples, id?.name) : []
      }
    }
  }
}

/**
 * Drafts the shape of records from their JSON texts (each sample one record, as the server wrote it): a field present
 * in every object at its place is required, others optional; `null` seen makes `NullOr`; numbers that are all safe
 * integers are `Int`; a small closed set of strings or integers seen many times is a literal (see `Options`); values
 * of several kinds make a `Union`; the items of every array at one place are drafted together. Text that is not JSON is
 * a `Failure`. A struct declares at most `maxFields` fields (and the draft `maxTotalFields`): the others are
 * `undeclared`, left to the index signature.
 *
 * @example
 * ```ts
 * import * as SchemaDraft from "./schemaDraft.js"
 *
 * // Two records as the server wrote them: `fax` is in one only, `limit` is beyond a double in one
 * const read = SchemaDraft.draft([`{"id":1,"fax":null,"limit":12345678901234567890}`, `{"id":2,"limit":5}`])
 * if (read.ok && read.value.shape._tag === "Struct") {
 *   for (const field of read.value.shape.fields) console.log(field.name, field.optional, JSON.stringify(field.shape))
 * }
 * // => id false {"_tag":"Int"}
 * // => fax true {"_tag":"Null"}
 * // => limit false {"_tag":"Number","beyondDouble":{"count":1,"example":"12345678901234567890"}}
 * ```
 *
 * @since 0.1.0
 * @category Drafting
 */
export const draft = (
  texts: Iterable<string>,
  options: Options = {}
): { readonly ok: true; readonly value: Draft } | { readonly ok: false; readonly failure: Failure } => {
  const drafting = drafter(options)
  for (const text of texts) {
    const failure = drafting.add(text)
    if (failure !== undefined) return { ok: false, failure }
  }
  return { ok: true, value: drafting.result() }
}

/**
 * The edition of the client a module is written for: `3`, Effect 3's Schema (`Schema.Struct({…}, record)`,
 * `Schema.Literal(a, b)`, `Schema.Union(a, b)`); `4`, Effect 4's (`Schema.StructWithRest`, `Schema.Literals([a, b])`,
 * `Schema.Union([a, b])`). Both import `effect/Schema`.
 *
 * @since 0.1.0
 * @category Models
 */
export type Edition = 3 | 4

/**
 * What the module is to be called, where its records come from, and what it is written for.
 *
 * @since 0.1.0
 * @category Models
 */
export interface RenderOptions {
  /** The schema's name, a TypeScript identifier (`Invoice`). */
  readonly name: string
  /** The edition whose Schema API the module is written in. */
  readonly edition: Edition
  /**
   * The package whose `Resource` module declares the records (`@erp-client/streams` for edition 3,
   * `@erp-client/effect4-streams` for 4): the module imports `${resourcePackage}/Resource`.
   */
  readonly resourcePackage: string
  /** The sample size asked (`--sample N`), said in the command that drafts the module again; absent for the default. */
  readonly sample?: number | undefined
  /** The list endpoint the samples came from (`invoice/list`). */
  readonly endpoint: string
  /** The query parameters of the samples' list, as given (`-p NAME=VALUE`), said in the module's comment. */
  readonly params?: ReadonlyArray<string> | undefined
  /** The list's conditions, as given (`--where FIELD=VALUE`), said in the module's comment. */
  readonly where?: ReadonlyArray<string> | undefined
  /** The single-record endpoint (`invoice/get`), if there is one. */
  readonly get?: string | undefined
  /** Why there is no `get`, said in the module when `get` is absent. */
  readonly noGet?: string | undefined
}

// Why a name cannot be the schema's: each word is refused by the compiler as `export const NAME` or `export type NAME`
// in a strict module, or is a name the module itself declares or imports.
const REFUSED: ReadonlyArray<readonly [string, string]> = [
  [
    "break case catch class const continue debugger default delete do else enum export extends false finally for " +
    "function if import in instanceof new null return super switch this throw true try typeof var void while with " +
    "yield let static implements interface package private protected public await",
    "a reserved word of JavaScript"
  ],
  ["eval arguments", "a name strict mode (every module) does not let a declaration take"],
  [
    "any boolean number string symbol bigint object undefined never unknown",
    "a type of TypeScript's own, which a type alias cannot be named"
  ],
  ["as", "a word TypeScript reads as part of the declaration in `export type as = …`"],
  ["Schema Resource otherFields resource", "a name the module declares or imports itself"]
]
const REFUSED_NAMES: ReadonlyMap<string, string> = new Map(
  REFUSED.flatMap(([names, why]) => names.split(" ").map((name) => [name, why] as const))
)

/**
 * Why `name` cannot name the schema, or `undefined` when it can: it must be an ASCII TypeScript identifier that a
 * strict module can declare both as a value (`export const NAME`) and as a type (`export type NAME`), and not a name
 * the module itself uses (`Schema`, `Resource`, `otherFields`, `resource`).
 *
 * @example
 * ```ts
 * import * as SchemaDraft from "./schemaDraft.js"
 *
 * console.log(SchemaDraft.nameProblem("Invoice")) // => undefined
 * console.log(SchemaDraft.nameProblem("eval")) // => a name strict mode (every module) does not let a declaration take
 * ```
 *
 * @since 0.1.0
 * @category Rendering
 */
export const nameProblem = (name: string): string | undefined =>
  !/^[A-Za-z_$][\w$]*$/.test(name)
    ? "not a TypeScript identifier (ASCII letters, digits, _ and $, not starting with a digit)"
    : REFUSED_NAMES.get(name)

/**
 * Whether `name` can name the schema (see `nameProblem`).
 *
 * @example
 * ```ts
 * import * as SchemaDraft from "./schemaDraft.js"
 *
 * console.log(SchemaDraft.isIdentifier("Invoice"), SchemaDraft.isIdentifier("class")) // => true false
 * ```
 *
 * @since 0.1.0
 * @category Rendering
 */
export const isIdentifier = (name: string): boolean => nameProblem(name) === undefined

/**
 * The schema's name drafted from an endpoint: `invoice/list` → `Invoice`, `stock-item/list` → `StockItem`.
 *
 * @example
 * ```ts
 * import * as SchemaDraft from "./schemaDraft.js"
 *
 * console.log(SchemaDraft.nameOf("stock-item/list")) // => StockItem
 * ```
 *
 * @since 0.1.0
 * @category Rendering
 */
export const nameOf = (endpoint: string): string => {
  const segment = endpoint.split("/")[0] ?? ""
  const name = segment.split(/[^A-Za-z0-9]+/).filter((word) => word !== "")
    .map((word) => word[0]!.toUpperCase() + word.slice(1)).join("")
  return isIdentifier(name) ? name : `Record${name}`
}

// The command's name for the records: `invoice/list` → `invoices`, `stock-item/list` → `stock-items`.
const resourceNameOf = (endpoint: string): string => {
  const segment = (endpoint.split("/")[0] ?? "records").toLowerCase().replace(/[^a-z0-9-]+/g, "-")
  return segment.endsWith("s") ? segment : `${segment}s`
}

const INDENT = "  "

// Characters a reader of the module does not see as they are: controls (C0, DEL, C1), format characters (the bidi
// marks, embeddings, overrides and isolates that reorder a line, as in Trojan Source; zero-width spaces and joiners,
// the byte order mark, tags), line and paragraph separators, spaces other than U+0020, default-ignorable characters
// (fillers, variation selectors), private-use, unassigned and lone surrogate code points.
const HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Zs}\p{Co}\p{Cn}\p{Cs}\p{Default_Ignorable_Code_Point}]/gu

const escapeOf = (c: string): string => {
  const code = c.codePointAt(0)!
  return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, "0")}`
}

// A string literal holding exactly `value`, with every hidden character written as an escape (the same value).
const literal = (value: string | number): string =>
  typeof value === "number"
    ? JSON.stringify(value)
    : JSON.stringify(value).replace(HIDDEN, (c) => c === " " ? c : escapeOf(c))

// Text from outside (a parameter, a server's message, a field's name) in a block comment: one line, never the
// comment's end, and every hidden character written as its escape (a comment has no escapes: the text is shown).
// eslint-disable-next-line no-control-regex
const LINE_BREAKING = /[\u0000-\u001f\u007f\u2028\u2029]+/g
const commentText = (text: string): string =>
  text.replace(LINE_BREAKING, " ").replace(HIDDEN, (c) => c === " " ? c : escapeOf(c)).replace(/\*\//g, "*\\/")

// The command line's flag for the id field: its name with hyphens, or `id` when it is not a plain name.
const flagOf = (field: string): string => /^[A-Za-z][A-Za-z0-9_]*$/.test(field) ? field.replace(/_/g, "-") : "id"

const key = (name: string): string =>
  name === "__proto__" ? `["__proto__"]` : /^[A-Za-z_$][\w$]*$/.test(name) ? name : literal(name)

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`

// A shape as a Schema expression of the edition, nested objects indented under `indent`. The editions' Schema APIs
// differ in three places: several literals (`Literal(a, b)` and `Literals([a, b])`), a union's members (arguments and
// an array), and a struct that keeps its other fields (see `struct`).
const expression = (shape: Shape, indent: string, edition: Edition): string => {
  switch (shape._tag) {
    case "Unknown":
      return "Schema.Unknown"
    case "Null":
      return "Schema.Null"
    case "Boolean":
      return "Schema.Boolean"
    case "String":
      return "Schema.String"
    case "Int":
      return "Schema.Int"
    case "Number":
      return "Schema.Number"
    case "Literal": {
      const values = shape.values.map(literal).join(", ")
      return edition === 3 || shape.values.length === 1 ? `Schema.Literal(${values})` : `Schema.Literals([${values}])`
    }
    case "Array":
      return `Schema.Array(${expression(shape.item, indent, edition)})`
    case "NullOr":
      return `Schema.NullOr(${expression(shape.shape, indent, edition)})`
    case "Union": {
      const members = shape.members.map((member) => expression(member, indent, edition)).join(", ")
      return edition === 3 ? `Schema.Union(${members})` : `Schema.Union([${members}])`
    }
    case "Struct":
      return struct(shape, indent, edition)
  }
}

// Whether a shape holds a struct anywhere: then the module declares `otherFields`, which every struct uses.
const hasStruct = (shape: Shape): boolean => {
  switch (shape._tag) {
    case "Struct":
      return true
    case "Array":
      return hasStruct(shape.item)
    case "NullOr":
      return hasStruct(shape.shape)
    case "Union":
      return shape.members.some(hasStruct)
    default:
      return false
  }
}

const noteOf = (field: Field): ReadonlyArray<string> => {
  const notes: Array<string> = []
  if (field.optional) notes.push(`absent from ${field.of - field.present} of ${field.of}`)
  const number = field.shape._tag === "NullOr" ? field.shape.shape : field.shape
  const numbers = number._tag === "Union" ? number.members : [number]
  for (const member of numbers) {
    if (member._tag === "Number" && member.beyondDouble !== undefined) {
      notes.push(
        `${plural(member.beyondDouble.count, "value")} beyond a double (${member.beyondDouble.example}): a parsed ` +
          "record holds the nearest double; the exact text is the record's as sent (exact: true, Page.json)"
      )
    }
  }
  return notes
}

const WIDTH = 120

// The lines of a comment's text at `indent` (` * ` before each), wrapped at WIDTH.
const commentLines = (text: string, indent: string): ReadonlyArray<string> => {
  const lines: Array<string> = []
  let line = ""
  for (const word of text.split(" ")) {
    if (line !== "" && indent.length + 3 + line.length + 1 + word.length > WIDTH) {
      lines.push(line)
      line = word
    } else {
      line = line === "" ? word : `${line} ${word}`
    }
  }
  lines.push(line)
  return lines.map((l) => `${indent} * ${l}`)
}

// A doc comment at `indent`, on one line when it fits, else wrapped at WIDTH.
const docComment = (text: string, indent: string): string =>
  indent.length + text.length + 7 <= WIDTH
    ? `${indent}/** ${text} */\n`
    : `${indent}/**\n${commentLines(text, indent).map((l) => `${l}\n`).join("")}${indent} */\n`

// What a struct says of the fields it does not declare.
const undeclaredNote = (undeclared: Undeclared): string => {
  const count = `${undeclared.atLeast ? "more than " : ""}${plural(undeclared.count, "more field")}`
  const names = undeclared.names.map((name) =>
    commentText(literal(name.length > SHOWN_NAME_CHARS ? `${name.slice(0, SHOWN_NAME_CHARS - 1)}…` : name))
  ).join(", ")
  return `${count} seen here (${names}${undeclared.count > undeclared.names.length ? ", …" : ""}) ` +
    `${undeclared.count === 1 && !undeclared.atLeast ? "is" : "are"} not declared: a draft declares the first ` +
    `${undeclared.maxFields} fields of a struct and ${undeclared.maxTotalFields} in all (past some thousands in one ` +
    "struct, TypeScript refuses its type as too complex, TS2859), and otherFields keeps the others on decode, as unknown"
}

// A struct whose fields the samples showed; every other field is kept (`otherFields`): Effect 3 takes the index
// signature as `Schema.Struct`'s second argument, Effect 4 as `Schema.StructWithRest`'s rest.
const struct = (shape: Extract<Shape, { _tag: "Struct" }>, indent: string, edition: Edition): string => {
  const { fields, undeclared } = shape
  const inner = indent + INDENT
  const note = undeclared === undefined ? "" : docComment(undeclaredNote(undeclared), inner)
  const wrap = (body: string) =>
    edition === 3
      ? `Schema.Struct(${body}, otherFields)`
      : `Schema.StructWithRest(Schema.Struct(${body}), [otherFields])`
  if (fields.length === 0) return wrap(note === "" ? "{}" : `{\n${note}${indent}}`)
  const lines = fields.map((field) => {
    const value = expression(field.shape, inner, edition)
    const notes = noteOf(field)
    const comment = notes.length === 0 ? "" : docComment(notes.join("; "), inner)
    return `${comment}${inner}${key(field.name)}: ${field.optional ? `Schema.optional(${value})` : value}`
  })
  return wrap(`{\n${lines.join(",\n")}\n${note}${indent}}`)
}

/**
 * The text of a TypeScript module (strict, NodeNext) for a draft, in the Schema API of `options.edition`: the schema
 * (`export const NAME`, every field the samples did not show kept on decode, as the hand-written schemas do), its
 * type, and a `Resource` declaration of `options.resourcePackage` (`resource`: endpoint, id field, fields, a selector
 * for `get`, table columns) that gives an application the library's streams and lookups of the records. Its header
 * says the edition and the command that drafts it again. The module imports `effect/Schema` and
 * `${resourcePackage}/Resource`, no other package.
 *
 * @example
 * ```ts
 * import * as SchemaDraft from "./schemaDraft.js"
 *
 * const read = SchemaDraft.draft([`{"id":1,"name":"Kovács Kft."}`, `{"id":2,"name":"Nagy Bt."}`])
 * if (read.ok) {
 *   const text = SchemaDraft.render(read.value, {
 *     name: "Customer",
 *     edition: 4,
 *     resourcePackage: "@erp-client/effect4-streams",
 *     endpoint: "customer/list",
 *     get: "customer/get"
 *   })
 *   console.log(text.includes("export const Customer = Schema.StructWithRest(Schema.Struct({")) // => true
 * }
 * ```
 *
 * @since 0.1.0
 * @category Rendering
 */
export const render = (draft: Draft, options: RenderOptions): string => {
  const { edition, name } = options
  const resourcePackage = commentText(options.resourcePackage)
  const isStruct = draft.shape._tag === "Struct"
  // The command that drafts the module again: the edition always (the default edition may change), the name and the
  // sample size when they are not the defaults.
  const command = [
    `erp api infer ${options.endpoint} --edition ${edition}`,
    ...(options.params ?? []).map((p) => ` -p ${commentText(literal(p))}`),
    ...(options.where ?? []).map((w) => ` --where ${commentText(literal(w))}`),
    name === nameOf(options.endpoint) ? "" : ` --name ${name}`,
    options.sample === undefined ? "" : ` --sample ${options.sample}`
  ].join("")
  const body = expression(draft.shape, "", edition)
  const keepsOthers = hasStruct(draft.shape)
  const lines = [
    "/**",
    ...commentLines(
      `${name}: the records of ${options.endpoint}, drafted from ${plural(draft.samples, "record")} for the ` +
        `client's Effect ${edition} edition: the Schema of \`effect\` ${edition}` +
        (isStruct ? ` and the \`Resource\` module of ${resourcePackage}.` : ".") + " To draft it again, run:",
      ""
    ),
    " *",
    ` *   ${command}`,
    " *",
    " * A draft says what the samples held, not what the endpoint promises: a field every sample had is required, others",
    " * optional; a literal is a closed set of values seen many times. Read it, and loosen what the samples cannot show.",
    ...(keepsOthers
      ? [
        " * Fields the samples did not show are kept on decode (`otherFields`), as the client keeps every field a server sends."
      ]
      : []),
    " */",
    ...(isStruct ? [`import * as Resource from ${literal(`${options.resourcePackage}/Resource`)}`] : []),
    `import * as Schema from "effect/Schema"`,
    "",
    // Declared where a struct uses it: a strict build refuses an unused declaration.
    ...(keepsOthers
      ? [
        "// Decoding keeps every field the samples did not show, as the server sent it.",
        edition === 3
          ? "const otherFields = Schema.Record({ key: Schema.String, value: Schema.Unknown })"
          : "const otherFields = Schema.Record(Schema.String, Schema.Unknown)",
        ""
      ]
      : []),
    `/** A record of ${options.endpoint} as the samples showed it. */`,
    `export const ${name} = ${body}`,
    "",
    `export type ${name} = typeof ${name}.Type`
  ]
  if (isStruct) {
    const shape = draft.shape as Extract<Shape, { _tag: "Struct" }>
    const resourceName = resourceNameOf(options.endpoint)
    const idField = draft.idField
    const fields = shape.fields.filter((field) => !field.optional).map((field) => literal(field.name))
    const get = idField === undefined ? undefined : options.get
    // What a reader can do with it, in an application: the module may be read where no clone of the client's source is.
    lines.push(
      "",
      "/**",
      ...commentLines(
        `In your application (\`Resource\` of ${resourcePackage}), \`Resource.stream(resource)\` streams every ` +
          `record of ${commentText(options.endpoint)}${
            get === undefined ? "." : ", and `Resource.get(resource, resource.selectors[0]!, id)` looks one up."
          }`,
        ""
      ),
      ...(idField === undefined
        ? [" * No field had a different value in every sample: `idField` is a guess, and there is no `get`."]
        : get === undefined && options.noGet !== undefined
        ? [` * No \`get\`: ${commentText(options.noGet)}.`]
        : []),
      " */",
      "export const resource = Resource.make({",
      `  name: ${literal(resourceName)},`,
      `  description: ${
        literal(`Export${get === undefined ? "" : " and look up"} the records of ${options.endpoint} (drafted)`)
      },`,
      `  list: ${literal(options.endpoint)},`,
      ...(get === undefined ? [] : [`  get: ${literal(get)},`]),
      `  schema: ${name},`,
      `  idField: ${literal(idField ?? "id")},`,
      `  fields: [${fields.join(", ")}],`.length <= WIDTH
        ? `  fields: [${fields.join(", ")}],`
        : `  fields: [\n${fields.map((field) => `    ${field}`).join(",\n")}\n  ],`,
      ...(get === undefined || idField === undefined ? [] : [
        "  selectors: [",
        `    { param: ${literal(idField)}, kind: ${literal(draft.idIsInteger ? "integer" : "text")}, ` +
        `flag: ${literal(flagOf(idField))}, description: ${literal(`A record's ${idField}.`)} }`,
        "  ],"
      ]),
      "  columns: [",
      draft.columns.map((column) =>
        `    { header: ${literal(column.field)}, width: ${column.width}, field: ${literal(column.field)} }`
      ).join(",\n"),
      "  ]",
      "})"
    )
  }
  return lines.join("\n") + "\n"
}
