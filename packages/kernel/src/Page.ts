/**
 * One page of a list endpoint, decoded record by record so a bad record is named (or set aside) on its own
 * (docs/ARCHITECTURE.md, "Records"): what a page must look like, which records it keeps, and how a record that does not
 * match is named. Each edition's `Page.decodePage` gives it the record decoder of its own `Schema` and turns a refusal
 * into its `DecodeError`.
 *
 * @since 0.1.0
 */
import { recordIdOf } from "./internal/recordId.js"

/**
 * What to do with a record that does not match the schema: fail the page with an error that names the record (the
 * default), or keep going and hand the record to the caller as an `InvalidRecord`.
 *
 * @since 0.1.0
 * @category Models
 */
export type InvalidRecordMode = "fail" | "collect"

/**
 * A record that did not match the schema, kept whole so a sync can report it and lose nothing.
 *
 * @since 0.1.0
 * @category Models
 */
export interface InvalidRecord<E> {
  /** Position of the record in the whole list. */
  readonly offset: number
  /** The record as the server sent it, parsed (`JSON.parse`: numbers are floats, see `json`). */
  readonly raw: unknown
  /** With exact texts (`decodePage`'s `json`): the record's text exactly as the server wrote it, compact. */
  readonly json?: string | undefined
  readonly error: E
}

/**
 * @since 0.1.0
 * @category Models
 */
export interface Page<A, E> {
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
   * index for index with `records` and `raw`.
   */
  readonly json?: ReadonlyArray<string> | undefined
  readonly invalid: ReadonlyArray<InvalidRecord<E>>
}

/**
 * Why a page was refused: its data is not a page (`reason`, at `data`, `offset` when the page's own), or one of its
 * records did not match and the mode is `fail` (`error`, the record decoder's).
 *
 * @since 0.1.0
 * @category Models
 */
export type Refusal<E> =
  | { readonly _tag: "Data"; readonly reason: string; readonly offset?: number | undefined }
  | { readonly _tag: "Record"; readonly error: E }

/**
 * Whether the server sent fewer records than asked. That is not by itself the end of the list: a server may clamp its
 * pages below the size asked (the contract does not give its largest page); the pager decides.
 *
 * @example
 * ```ts
 * import { Page } from "@erp-client/kernel"
 *
 * console.log(Page.isShort({ received: 2, count: 25 })) // => true
 * ```
 *
 * @since 0.1.0
 * @category Accessors
 */
export const isShort = (page: { readonly received: number; readonly count: number }): boolean =>
  page.received < page.count

const kindOf = (u: unknown): string => u === null ? "null" : Array.isArray(u) ? "an array" : typeof u

/**
 * What `decodePage` decodes: the `data` of a list response, where it was asked for, and how each record is decoded.
 *
 * @since 0.1.0
 * @category Models
 */
export interface DecodePageOptions<A, E> {
  /** The `data` of the list response. */
  readonly data: unknown
  /** The offset the page was asked at (`list_offset`): each record is named by its own offset. */
  readonly offset: number
  /** The number of records asked for (`list_count`): a page holding more is refused. */
  readonly count: number
  /** Refuse the page on a record that does not match (`fail`), or set it aside (`collect`). */
  readonly mode: InvalidRecordMode
  /** The text of each element of `data` as the server wrote it, when given. */
  readonly json?: ReadonlyArray<string> | undefined
  /** Decodes one record, given the record, its index in the page and its id for naming (`recordIdOf`). */
  readonly decodeRecord: (
    raw: unknown,
    index: number,
    recordId: () => unknown
  ) => { readonly ok: true; readonly value: A } | { readonly ok: false; readonly error: E }
}

/**
 * Decodes the `data` of a list response into a page: an array of at most `count` records (more would make the next
 * offset skip or repeat records), each decoded by `decodeRecord` (given the record, its index in the page and its id
 * for naming, `recordIdOf`); a record that does not match fails the page (`fail`) or is set aside (`collect`). `json`,
 * when given, is the text of each element as the server wrote it: the page then carries the valid records' texts and
 * each invalid record's.
 *
 * @example
 * ```ts
 * import { Page } from "@erp-client/kernel"
 *
 * const decodeRecord = (raw: unknown) =>
 *   typeof raw === "object" && raw !== null && "id" in raw
 *     ? { ok: true as const, value: raw }
 *     : { ok: false as const, error: "is missing" }
 * const decoded = Page.decodePage({
 *   data: [{ id: 51 }, { company_name: "Szabó és Társa Bt." }],
 *   offset: 50,
 *   count: 25,
 *   mode: "collect",
 *   decodeRecord
 * })
 * console.log(decoded.ok && [decoded.value.records.length, decoded.value.invalid[0]?.offset]) // => [ 1, 51 ]
 * ```
 *
 * @since 0.1.0
 * @category Decoding
 */
export const decodePage = <A, E>(
  options: DecodePageOptions<A, E>
): { readonly ok: true; readonly value: Page<A, E> } | { readonly ok: false; readonly refusal: Refusal<E> } => {
  const { count, data, decodeRecord, json, mode, offset } = options
  if (!Array.isArray(data)) {
    return { ok: false, refusal: { _tag: "Data", reason: `expected an array of records, got ${kindOf(data)}` } }
  }
  if (data.length > count) {
    return {
      ok: false,
      refusal: { _tag: "Data", reason: `the page holds ${data.length} records but list_count was ${count}`, offset }
    }
  }
  if (json !== undefined && json.length !== data.length) {
    return {
      ok: false,
      refusal: { _tag: "Data", reason: `${json.length} record texts were given for ${data.length} records`, offset }
    }
  }
  const records: Array<A> = []
  const raws: Array<unknown> = []
  const texts: Array<string> | undefined = json === undefined ? undefined : []
  const invalid: Array<InvalidRecord<E>> = []
  for (let i = 0; i < data.length; i++) {
    const raw: unknown = data[i]
    const decoded = decodeRecord(raw, i, () => recordIdOf(raw, json?.[i]))
    if (decoded.ok) {
      records.push(decoded.value)
      raws.push(raw)
      texts?.push(json![i]!)
      continue
    }
    if (mode === "fail") return { ok: false, refusal: { _tag: "Record", error: decoded.error } }
    invalid.push(
      json === undefined
        ? { offset: offset + i, raw, error: decoded.error }
        : { offset: offset + i, raw, json: json[i], error: decoded.error }
    )
  }
  return {
    ok: true,
    value: {
      offset,
      count,
      received: data.length,
      records,
      raw: raws,
      ...(texts === undefined ? {} : { json: texts }),
      invalid
    }
  }
}
