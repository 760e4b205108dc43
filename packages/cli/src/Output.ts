/**
 * Record formats of `erp partners list` and `erp api list`: NDJSON (every field as the server sent it), CSV (exact,
 * or safe to open in a spreadsheet), and a table for people.
 *
 * Given the records' texts as the server wrote them (`Page.json`), every format takes its numbers from there:
 * `12345678901234567890` and `1.10` stay so (parsed, they would be floats: `12345678901234567000`, `1.1`).
 *
 * @since 0.1.0
 */
import * as JsonText from "@erp-client/core/JsonText"
import type * as Resource from "@erp-client/streams/Resource"
import * as Either from "effect/Either"

/**
 * @since 0.1.0
 * @category Models
 */
export type Format = "ndjson" | "csv" | "table"

/**
 * @since 0.1.0
 * @category Models
 */
export const formats: ReadonlyArray<Format> = ["ndjson", "csv", "table"]

/**
 * What a format decided from the first page and a resumed export must go on with: the CSV header, or the columns and
 * widths of a table of any records.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Layout {
  readonly columns?: ReadonlyArray<string> | undefined
  readonly widths?: ReadonlyArray<number> | undefined
}

/**
 * Turns pages of raw records into text.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Encoder {
  /**
   * Text for one page; the first call also emits the header, if the format has one. `json`, index for index with
   * `records`, is each record's text exactly as the server wrote it: NDJSON writes it, CSV and tables take their cells
   * from it. Without it, records are written from their parsed values (`JSON.stringify`, `String`).
   */
  readonly page: (records: ReadonlyArray<unknown>, json?: ReadonlyArray<string> | undefined) => string
  /** The layout so far, for a resume (none for NDJSON and a resource's table, whose layout is fixed). */
  readonly layout: () => Layout | undefined
  /** CSV cells written as they are although a spreadsheet would read them as a formula (see `isFormulaLike`). */
  readonly formulaCells: () => number
}

/**
 * Options of `encoder`.
 *
 * @since 0.1.0
 * @category Models
 */
export interface EncoderOptions {
  /** Continue an output whose header is already written, with this layout. */
  readonly resumed?: Layout | undefined
  /** CSV: write formula-like cells as text for spreadsheets (a leading `'`, see `csvCell`). */
  readonly spreadsheet?: boolean | undefined
  /** Table columns: a resource's declared columns, or the first page's first fields (`"fields"`, the default). */
  readonly table?: ReadonlyArray<Resource.Column> | "fields" | undefined
  /** CSV: the fields the first columns are, in this order (a resource's declared fields); the rest as they come. */
  readonly fields?: ReadonlyArray<string> | undefined
  /**
   * The text goes to a terminal: NDJSON writes each record with JSON's `\u` escapes for the characters a terminal acts
   * on (`terminalJson`: the same JSON), CSV writes each cell escaped as a table does (`visible`). Without it (a file,
   * a pipe), every record is written exactly as the server sent it. A table is always escaped.
   */
  readonly terminal?: boolean | undefined
}

/**
 * The CSV column holding, as a JSON object, any field a later record has that the header (taken from the first
 * page) does not: so a record never loses a field.
 *
 * @since 0.1.0
 * @category Constants
 */
export const OTHER_FIELDS = "other_fields"

const asRecord = (u: unknown): Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null ? u as Record<string, unknown> : {}

const cellText = (value: unknown): string =>
  value === null || value === undefined ? "" : typeof value === "object" ? JSON.stringify(value) : String(value)

/** A record's keys in the order the server wrote them: from its text when given, else from the parsed value. */
const keysOf = (record: unknown, json: string | undefined): ReadonlyArray<string> => {
  const members = json === undefined ? undefined : JsonText.members(json)
  return members !== undefined && Either.isRight(members)
    ? members.right.map((m) => m.key)
    : Object.keys(asRecord(record))
}

/** Columns by name. */
const indexOf = (columns: ReadonlyArray<string>): ReadonlyMap<string, number> =>
  new Map(columns.map((column, i) => [column, i]))

/**
 * One record's cells for `columns` (`index` is `indexOf(columns)`) and, with `withOther`, the fields they do not name
 * as one JSON object (`""` when none): from the record's text when given (a number's cell is its token as written,
 * every value in the object as written), else from its parsed value. A repeated key counts once, with its last value,
 * as with `JSON.parse`.
 */
const cellsOf = (
  record: unknown,
  json: string | undefined,
  columns: ReadonlyArray<string>,
  index: ReadonlyMap<string, number>,
  withOther: boolean
): { readonly cells: Array<string>; readonly other: string } => {
  const members = json === undefined ? undefined : JsonText.members(json)
  if (members !== undefined && Either.isRight(members)) {
    const cells = new Array<string>(columns.length).fill("")
    let others: Map<string, string> | undefined
    for (const member of members.right) {
      const at = index.get(member.key)
      if (at !== undefined) cells[at] = member.cell ?? ""
      else if (withOther) (others ??= new Map()).set(member.key, member.json)
    }
    let other = ""
    if (others !== undefined) {
      for (const [key, text] of others) other += `${other === "" ? "{" : ","}${JSON.stringify(key)}:${text}`
    }
    return { cells, other: other === "" ? "" : `${other}}` }
  }
  const fields = asRecord(record)
  let other = ""
  if (withOther) {
    for (const key of Object.keys(fields)) {
      if (!index.has(key)) other += `${other === "" ? "{" : ","}${JSON.stringify(key)}:${JSON.stringify(fields[key])}`
    }
  }
  return { cells: columns.map((column) => cellText(fields[column])), other: other === "" ? "" : `${other}}` }
}

const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/

/**
 * Whether a spreadsheet program would read a cell as a formula (CSV injection): it starts with `=`, `+`, `-`, `@`, a
 * tab or a carriage return, and is not a plain number (`-12.5` is read as a number, and stays one).
 *
 * @example
 * ```ts
 * import { Output } from "@erp-client/cli"
 *
 * console.log(Output.isFormulaLike("=HYPERLINK(\"https://example.com\", \"Acme\")")) // => true
 * console.log(Output.isFormulaLike("+36 1 234 5678")) // => true
 * console.log(Output.isFormulaLike("-12.5")) // => false
 * ```
 *
 * @since 0.1.0
 * @category Encoding
 */
export const isFormulaLike = (text: string): boolean => /^[=+\-@\t\r]/.test(text) && !NUMBER.test(text)

/**
 * One CSV cell (RFC 4180): quoted when it holds a comma, quote, CR or LF or starts or ends with a space; objects and
 * arrays as JSON; null and absent as empty. With `spreadsheet`, a formula-like cell gets a leading `'`, which
 * spreadsheet programs take as "this is text" and do not show.
 *
 * @example
 * ```ts
 * import { Output } from "@erp-client/cli"
 *
 * console.log(Output.csvCell("Kovács & Társa, Kft.")) // => "Kovács & Társa, Kft."
 * console.log(Output.csvCell({ city: "Budapest" })) // => "{""city"":""Budapest""}"
 * console.log(Output.csvCell("=SUM(A1:A9)", { spreadsheet: true })) // => '=SUM(A1:A9)
 * ```
 *
 * @since 0.1.0
 * @category Encoding
 */
export const csvCell = (value: unknown, options?: { readonly spreadsheet?: boolean | undefined }): string =>
  csvText(cellText(value), options?.spreadsheet === true)

// A cell's text as CSV (see `csvCell`).
const csvText = (raw: string, spreadsheet: boolean): string => {
  const text = spreadsheet && isFormulaLike(raw) ? `'${raw}` : raw
  return /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replace(/"/g, "\"\"")}"` : text
}

const csv = (
  resumed: Layout | undefined,
  spreadsheet: boolean,
  fields: ReadonlyArray<string>,
  terminal: boolean
): Encoder => {
  let columns = resumed?.columns
  let formulaCells = 0
  const cell = (raw: string) => {
    // On a terminal a cell is shown as a table shows it, then quoted as any other (still one CSV cell).
    const text = terminal ? visible(raw) : raw
    if (!spreadsheet && isFormulaLike(text)) formulaCells++
    return csvText(text, spreadsheet)
  }
  return {
    layout: () => columns === undefined ? undefined : { columns },
    formulaCells: () => formulaCells,
    page: (records, json) => {
      let out = ""
      if (columns === undefined) {
        const seen = new Set<string>(fields)
        for (let i = 0; i < records.length; i++) for (const key of keysOf(records[i], json?.[i])) seen.add(key)
        columns = [...seen, OTHER_FIELDS]
        out += columns.map(cell).join(",") + "\r\n"
      }
      const named = columns.slice(0, -1)
      const index = indexOf(named)
      for (let i = 0; i < records.length; i++) {
        // Fields the header (from the first page) does not name go to the last column, as one JSON object.
        const { cells, other } = cellsOf(records[i], json?.[i], named, index, true)
        out += cells.map(cell).join(",") + "," + cell(other) + "\r\n"
      }
      return out
    }
  }
}

// Characters a terminal acts on instead of showing: C0 controls (ESC starts the sequences that set the window title,
// clear the screen or colour what follows; newlines and CR break or overwrite lines), DEL, C1 controls (U+009B is a
// one-character CSI), the line and paragraph separators, and the bidi marks, embeddings, overrides and isolates that
// reorder what follows on the line (Trojan Source).
// eslint-disable-next-line no-control-regex
const UNSEEN = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g
const NAMED: Readonly<Record<string, string>> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" }

/**
 * Text from the server made safe to show on a terminal, on one line: control characters (C0, DEL, C1), line and
 * paragraph separators and bidi controls are written visibly escaped (`\x1b`, `\n`, `\u202e`), everything else as
 * it is. A backslash is left alone: this is for people to read (NDJSON and CSV keep the text exact), and an escape
 * that reads like one it is not does nothing to the terminal. Tables and every line on stderr go through it.
 *
 * @example
 * ```ts
 * import { Output } from "@erp-client/cli"
 *
 * console.log(Output.visible("Acme\u001b]0;pwned\u0007 Kft.\nline two \u202eevil"))
 * // => Acme\x1b]0;pwned\x07 Kft.\nline two \u202eevil
 * ```
 *
 * @since 0.1.0
 * @category Encoding
 */
export const visible = (text: string): string =>
  text.replace(UNSEEN, (c) => {
    const code = c.charCodeAt(0)
    return NAMED[c] ?? (code < 0x100
      ? `\\x${code.toString(16).padStart(2, "0")}`
      : `\\u${code.toString(16).padStart(4, "0")}`)
  })

/**
 * JSON text made safe to show on a terminal, and still the same JSON: every character `visible` escapes is written as
 * JSON's `\u` escape (`\u009b`, `\u202e`), but a line feed and the CR before one, which end lines. JSON lets a string
 * hold DEL, C1 controls and the bidi controls as they are; in compact JSON (every record the command line writes) such
 * a character can only be inside a string, where the escape is the same value: `JSON.parse` reads the same record.
 *
 * @example
 * ```ts
 * import { Output } from "@erp-client/cli"
 *
 * // A C1 CSI (clear the screen) and a right-to-left override, which JSON lets a string hold as they are
 * const record = `{"company_name":"Acme\u009b2J \u202eKft."}`
 * const line = Output.terminalJson(record)
 * console.log(line) // => {"company_name":"Acme\u009b2J \u202eKft."}
 * console.log(JSON.parse(line).company_name === JSON.parse(record).company_name) // => true
 * ```
 *
 * @since 0.1.0
 * @category Encoding
 */
export const terminalJson = (text: string): string =>
  text.replace(UNSEEN, (c, at: number) =>
    c === "\n" || (c === "\r" && text.charCodeAt(at + 1) === 10)
      ? c
      : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)

// A cell as shown: escaped (see `visible`), then cut or padded to `width` characters of the escaped text.
const fit = (text: string, width: number): string => {
  const shown = visible(text)
  const chars = Array.from(shown)
  return chars.length > width ? chars.slice(0, width - 1).join("") + "…" : shown + " ".repeat(width - chars.length)
}

const row = (cells: ReadonlyArray<string>, widths: ReadonlyArray<number>) =>
  cells.map((cell, i) => fit(cell, widths[i]!)).join("  ").trimEnd()

const rule = (widths: ReadonlyArray<number>) => widths.map((w) => "-".repeat(w)).join("  ")

// A resource's declared columns: a field's cell as the server wrote it, or a value shown from the record.
const columnsTable = (declared: ReadonlyArray<Resource.Column>, started: boolean): Encoder => {
  const widths = declared.map((column) => column.width)
  const fields = declared.flatMap((column) => column.field === undefined ? [] : [column.field])
  const index = indexOf(fields)
  return {
    layout: () => undefined,
    formulaCells: () => 0,
    page: (records, json) => {
      let out = ""
      if (!started) {
        started = true
        out += row(declared.map((column) => column.header), widths) + "\n"
        out += rule(widths) + "\n"
      }
      for (let i = 0; i < records.length; i++) {
        const { cells } = cellsOf(records[i], json?.[i], fields, index, false)
        let f = 0
        const shown = declared.map((column) =>
          column.field === undefined ? column.show?.(asRecord(records[i])) ?? "" : cells[f++]!
        )
        out += row(shown, widths) + "\n"
      }
      return out
    }
  }
}

const MAX_COLUMNS = 6
const MIN_WIDTH = 8
const MAX_WIDTH = 40

// Any records: the first fields of the first page's records (in the order they appear), each as wide as its widest
// value on that page, within bounds (at least 8, so growing ids fit). Later fields are left out: a table is for
// reading, NDJSON and CSV keep everything.
const fieldsTable = (resumed: Layout | undefined): Encoder => {
  let layout = resumed?.columns === undefined || resumed.widths === undefined ? undefined : {
    columns: resumed.columns,
    widths: resumed.widths
  }
  return {
    layout: () => layout,
    formulaCells: () => 0,
    page: (records, json) => {
      let out = ""
      let rows: Array<Array<string>> | undefined
      if (layout === undefined) {
        if (records.length === 0) return ""
        const columns: Array<string> = []
        for (let i = 0; i < records.length; i++) {
          for (const key of keysOf(records[i], json?.[i])) {
            if (columns.length < MAX_COLUMNS && !columns.includes(key)) columns.push(key)
          }
        }
        const index = indexOf(columns)
        rows = records.map((record, i) => cellsOf(record, json?.[i], columns, index, false).cells)
        const widths = columns.map((column, c) => {
          let width = Math.max(MIN_WIDTH, Array.from(visible(column)).length)
          for (const cells of rows!) width = Math.max(width, Array.from(visible(cells[c]!)).length)
          return Math.min(MAX_WIDTH, width)
        })
        layout = { columns, widths }
        out += row(columns, widths) + "\n" + rule(widths) + "\n"
      }
      const { columns, widths } = layout
      const index = indexOf(columns)
      rows ??= records.map((record, i) => cellsOf(record, json?.[i], columns, index, false).cells)
      for (const cells of rows) out += row(cells, widths) + "\n"
      return out
    }
  }
}

const ndjson = (terminal: boolean): Encoder => {
  const line = terminal ? terminalJson : (text: string) => text
  return {
    layout: () => undefined,
    formulaCells: () => 0,
    page: (records, json) => {
      let out = ""
      if (json !== undefined) { for (const text of json) out += line(text) + "\n" }
      else for (const record of records) out += line(JSON.stringify(record)) + "\n"
      return out
    }
  }
}

/**
 * An encoder for `format`.
 *
 * @example
 * ```ts
 * import { Output } from "@erp-client/cli"
 *
 * // CSV from the records' texts as the server wrote them: the id keeps every digit (parsed, it would not)
 * const csv = Output.encoder("csv", { fields: ["id", "company_name"] })
 * const text = '{"id":12345678901234567890,"company_name":"Acme GmbH","city":"Wien"}'
 * process.stdout.write(csv.page([JSON.parse(text)], [text]))
 * // => id,company_name,city,other_fields
 * //    12345678901234567890,Acme GmbH,Wien,
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const encoder = (format: Format, options: EncoderOptions = {}): Encoder =>
  format === "csv"
    ? csv(options.resumed, options.spreadsheet === true, options.fields ?? [], options.terminal === true)
    : format === "table"
    ? options.table === undefined || options.table === "fields"
      ? fieldsTable(options.resumed)
      : columnsTable(options.table, options.resumed !== undefined)
    : ndjson(options.terminal === true)
