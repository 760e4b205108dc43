/**
 * Record formats of `erp partners list`: NDJSON (every field as the server sent it), CSV, and a table for people.
 *
 * @since 0.1.0
 */
import * as Partner from "@erp-client/core/Partner"

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
 * Turns pages of raw records into text. `columns` is what a resumed export needs to go on with the same CSV header.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Encoder {
  /** Text for one page; the first call also emits the header, if the format has one. */
  readonly page: (records: ReadonlyArray<unknown>) => string
  readonly columns: () => ReadonlyArray<string> | undefined
}

const KNOWN = ["id", "company_name", "tax_number", "is_customer"]

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

/**
 * One CSV cell (RFC 4180): quoted when it holds a comma, quote, CR or LF or starts or ends with a space; objects and
 * arrays as JSON; null and absent as empty.
 *
 * @since 0.1.0
 * @category Encoding
 */
export const csvCell = (value: unknown): string => {
  const text = value === null || value === undefined
    ? ""
    : typeof value === "object"
    ? JSON.stringify(value)
    : String(value)
  return /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replace(/"/g, "\"\"")}"` : text
}

const csv = (resumeColumns: ReadonlyArray<string> | undefined): Encoder => {
  let columns = resumeColumns
  return {
    columns: () => columns,
    page: (records) => {
      let out = ""
      if (columns === undefined) {
        const seen = new Set<string>(KNOWN)
        for (const record of records) for (const key of Object.keys(asRecord(record))) seen.add(key)
        columns = [...seen, OTHER_FIELDS]
        out += columns.map(csvCell).join(",") + "\r\n"
      }
      const named = new Set(columns)
      for (const record of records) {
        const fields = asRecord(record)
        const other: Record<string, unknown> = {}
        let hasOther = false
        for (const key of Object.keys(fields)) {
          if (!named.has(key)) {
            other[key] = fields[key]
            hasOther = true
          }
        }
        out += columns.map((c) => c === OTHER_FIELDS ? (hasOther ? csvCell(other) : "") : csvCell(fields[c])).join(",")
        out += "\r\n"
      }
      return out
    }
  }
}

const WIDTHS = [10, 48, 16, 8] as const

const fit = (text: string, width: number): string => {
  const chars = Array.from(text.replace(/[\r\n\t]+/g, " "))
  return chars.length > width ? chars.slice(0, width - 1).join("") + "…" : text + " ".repeat(width - chars.length)
}

const table = (started: boolean): Encoder => {
  const row = (cells: ReadonlyArray<string>) => cells.map((cell, i) => fit(cell, WIDTHS[i]!)).join("  ").trimEnd()
  return {
    columns: () => undefined,
    page: (records) => {
      let out = ""
      if (!started) {
        started = true
        out += row(["id", "company_name", "tax_number", "customer"]) + "\n"
        out += WIDTHS.map((w) => "-".repeat(w)).join("  ") + "\n"
      }
      for (const record of records) {
        const r = asRecord(record)
        out += row([
          String(r.id ?? ""),
          String(r.company_name ?? ""),
          String(r.tax_number ?? ""),
          Partner.isCustomer(r as Partner.Partner) ? "yes" : "no"
        ]) + "\n"
      }
      return out
    }
  }
}

const ndjson = (): Encoder => ({
  columns: () => undefined,
  page: (records) => {
    let out = ""
    for (const record of records) out += JSON.stringify(record) + "\n"
    return out
  }
})

/**
 * An encoder; `resumed` continues an output whose header is already written (with these CSV columns).
 *
 * @since 0.1.0
 * @category Constructors
 */
export const encoder = (
  format: Format,
  resumed?: { readonly columns: ReadonlyArray<string> | undefined }
): Encoder => format === "csv" ? csv(resumed?.columns) : format === "table" ? table(resumed !== undefined) : ndjson()
