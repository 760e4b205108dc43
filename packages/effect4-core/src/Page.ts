/**
 * One page of a list endpoint, decoded record by record so a bad record is named (or set aside) on its own.
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import { catchThrows, decodeErrorFrom } from "./Envelope.js"
import { DecodeError } from "./ErpError.js"
import * as JsonText from "./JsonText.js"

/**
 * A record that did not match the schema, kept whole so a sync can report it and lose nothing.
 *
 * @since 0.1.0
 * @category Models
 */
export interface InvalidRecord {
  /** Position of the record in the whole list. */
  readonly offset: number
  /** The record as the server sent it, parsed (`JSON.parse`: numbers are floats, see `json`). */
  readonly raw: unknown
  /** With exact texts (`decodePage`'s `json`): the record's text exactly as the server wrote it, compact. */
  readonly json?: string | undefined
  readonly error: DecodeError
}

/**
 * What to do with a record that does not match the schema: fail the page with a `DecodeError` that names the
 * record (the default), or keep going and hand the record to the caller as an `InvalidRecord`.
 *
 * @since 0.1.0
 * @category Models
 */
export type InvalidRecordMode = "fail" | "collect"

/**
 * @since 0.1.0
 * @category Models
 */
export interface Page<A> {
  readonly offset: number
  /** The `list_count` that was asked for. */
  readonly count: number
  /** How many records the server sent, valid or not: paging advances by it and judges the end of the list by it. */
  readonly received: number
  readonly records: ReadonlyArray<A>
  /**
   * The valid records as the server sent them, parsed (same objects, same key order), index for index with
   * `records`. Parsed by `JSON.parse`: a number is a float (`12345678901234567890` reads as `12345678901234567000`,
   * `1.10` as `1.1`) and integer-like keys come first; for output that must reproduce the server's JSON, see `json`.
   */
  readonly raw: ReadonlyArray<unknown>
  /**
   * When asked for (the client's `exact` option): the text of each valid record exactly as the server wrote it,
   * compact (whitespace outside strings removed) but otherwise as sent (number tokens, key order, string escapes),
   * index for index with `records` and `raw`. See `JsonText`.
   */
  readonly json?: ReadonlyArray<string> | undefined
  readonly invalid: ReadonlyArray<InvalidRecord>
}

/**
 * Whether the server sent fewer records than asked. That is not by itself the end of the list: a server may clamp
 * its pages below the size asked (the contract does not give its largest page); `Paginate` decides.
 *
 * @example
 * ```ts
 * import { Decoder, Page, Partner } from "@erp-client/effect4-core"
 * import { Result } from "effect"
 *
 * // 25 records asked for at offset 50, 2 sent: a short page (the end of the list, or a server that clamps its pages)
 * const data = [{ id: 51, company_name: "Kovács Kft." }, { id: 52, company_name: "Nagy Építő Zrt." }]
 * const page = Page.decodePage("partner/list", Decoder.make(Partner.Partner), data, 50, 25, "fail")
 * console.log(Result.isSuccess(page) && Page.isShort(page.success)) // => true
 * ```
 *
 * @since 0.1.0
 * @category Accessors
 */
export const isShort = <A>(page: Page<A>): boolean => page.received < page.count

// The id of a record that does not decode, to name it in the error: as sent, when the parsed number is not the
// number sent (an id past 2^53 - 1 would otherwise be named by a neighbour's value) and the record's text is at hand.
const idOf = (raw: unknown, json: string | undefined): unknown => {
  const id = typeof raw === "object" && raw !== null && "id" in raw ? (raw as { readonly id: unknown }).id : undefined
  if (typeof id !== "number" || Number.isSafeInteger(id) || json === undefined) return id
  const members = JsonText.members(json)
  if (Result.isFailure(members)) return id
  let sent: string | null | undefined
  for (const member of members.success) if (member.key === "id") sent = member.cell
  return sent ?? id
}

/**
 * Decodes the `data` of a list response into a page. `decodeRecord` should be built once per schema
 * (`Decoder.make(schema)`), not per call: this runs for every record. `json`, when given, is the text of
 * each element of `data` as the server wrote it (`JsonText.dataText`): the page then carries the valid records' texts
 * (`Page.json`) and each invalid record's (`InvalidRecord.json`).
 *
 * @example
 * ```ts
 * import { Decoder, Page, Partner } from "@erp-client/effect4-core"
 * import { Result } from "effect"
 *
 * // The data of partner/list at offset 50: the record without an id is set aside, the others kept
 * const data = [
 *   { id: 51, company_name: "Kovács Kft.", tax_number: "12345678-2-42" },
 *   { company_name: "Szabó és Társa Bt." },
 *   { id: 53, company_name: "Nagy Építő Zrt." }
 * ]
 * const page = Page.decodePage("partner/list", Decoder.make(Partner.Partner), data, 50, 25, "collect")
 * if (Result.isSuccess(page)) {
 *   console.log(page.success.records.length) // => 2
 *   console.log(page.success.invalid[0]?.error.message)
 *   // => partner/list: cannot decode data[1].id (record at offset 51): Missing key
 * }
 * ```
 *
 * @since 0.1.0
 * @category Decoding
 */
export const decodePage = <A>(
  endpoint: string,
  decodeRecord: (u: unknown) => Result.Result<A, Schema.SchemaError>,
  data: unknown,
  offset: number,
  count: number,
  mode: InvalidRecordMode,
  json?: ReadonlyArray<string>
): Result.Result<Page<A>, DecodeError> => {
  if (!Array.isArray(data)) {
    return Result.fail(
      new DecodeError({ endpoint, path: "data", reason: `expected an array of records, got ${kindOf(data)}` })
    )
  }
  if (data.length > count) {
    // More records than asked for would make the next offset skip or repeat records: refuse the page.
    return Result.fail(
      new DecodeError({
        endpoint,
        path: "data",
        reason: `the page holds ${data.length} records but list_count was ${count}`,
        offset
      })
    )
  }
  if (json !== undefined && json.length !== data.length) {
    return Result.fail(
      new DecodeError({
        endpoint,
        path: "data",
        reason: `${json.length} record texts were given for ${data.length} records`,
        offset
      })
    )
  }
  const records: Array<A> = []
  const raws: Array<unknown> = []
  const texts: Array<string> | undefined = json === undefined ? undefined : []
  const invalid: Array<InvalidRecord> = []
  for (let i = 0; i < data.length; i++) {
    const raw: unknown = data[i]
    const decoded = catchThrows(
      endpoint,
      `data[${i}]`,
      () =>
        Result.mapError(
          decodeRecord(raw),
          (error) =>
            decodeErrorFrom(endpoint, `data[${i}]`, error, {
              offset: offset + i,
              recordId: idOf(raw, json?.[i])
            })
        )
    )
    if (Result.isSuccess(decoded)) {
      records.push(decoded.success)
      raws.push(raw)
      texts?.push(json![i])
      continue
    }
    const error = decoded.failure
    if (mode === "fail") return Result.fail(error)
    invalid.push(
      json === undefined ? { offset: offset + i, raw, error } : { offset: offset + i, raw, json: json[i], error }
    )
  }
  return Result.succeed({
    offset,
    count,
    received: data.length,
    records,
    raw: raws,
    ...(texts === undefined ? {} : { json: texts }),
    invalid
  })
}

const kindOf = (u: unknown): string => u === null ? "null" : Array.isArray(u) ? "an array" : typeof u
