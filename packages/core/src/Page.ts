/**
 * One page of a list endpoint, decoded record by record so a bad record is named (or set aside) on its own. What a page
 * must look like and which records it keeps are `@erp-client/kernel/Page`'s; this module decodes each record with its
 * schema and names what does not match in a `DecodeError`.
 *
 * @since 0.1.0
 */
import * as Kernel from "@erp-client/kernel/Page"
import { catchThrows, decodeErrorFrom } from "./Envelope.js"
import { DecodeError } from "./ErpError.js"
import * as Edition from "./internal/edition.js"

/**
 * A record that did not match the schema, kept whole so a sync can report it and lose nothing.
 *
 * @since 0.1.0
 * @category Models
 */
export type InvalidRecord = Kernel.InvalidRecord<DecodeError>

/**
 * What to do with a record that does not match the schema: fail the page with a `DecodeError` that names the
 * record (the default), or keep going and hand the record to the caller as an `InvalidRecord`.
 *
 * @since 0.1.0
 * @category Models
 */
export type InvalidRecordMode = Kernel.InvalidRecordMode

/**
 * @since 0.1.0
 * @category Models
 */
export type Page<A> = Kernel.Page<A, DecodeError>

/**
 * Whether the server sent fewer records than asked. That is not by itself the end of the list: a server may clamp
 * its pages below the size asked (the contract does not give its largest page); `Paginate` decides.
 *
 * @example
 * ```ts
 * import { Decoder, Page, Partner } from "@erp-client/core"
 * import { Either } from "effect"
 *
 * // 25 records asked for at offset 50, 2 sent: a short page (the end of the list, or a server that clamps its pages)
 * const data = [{ id: 51, company_name: "Kovács Kft." }, { id: 52, company_name: "Nagy Építő Zrt." }]
 * const page = Page.decodePage({
 *   endpoint: "partner/list",
 *   decodeRecord: Decoder.make(Partner.Partner),
 *   data,
 *   offset: 50,
 *   count: 25,
 *   mode: "fail"
 * })
 * console.log(Either.isRight(page) && Page.isShort(page.right)) // => true
 * ```
 *
 * @since 0.1.0
 * @category Accessors
 */
export const isShort = <A>(page: Page<A>): boolean => Kernel.isShort(page)

/**
 * What `decodePage` decodes: the `data` of a list response, where it was asked for, and how each record is decoded.
 *
 * @since 0.1.0
 * @category Models
 */
export interface DecodePageOptions<A> {
  /** The list endpoint the page came from, named in a `DecodeError`. */
  readonly endpoint: string
  /** Decodes one record: built once per schema (`Decoder.make(schema)`), not per call, as it runs for every record. */
  readonly decodeRecord: (u: unknown) => Edition.Result<A, Edition.SchemaError>
  /** The `data` of the list response. */
  readonly data: unknown
  /** The offset the page was asked at (`list_offset`): each record is named by its own offset. */
  readonly offset: number
  /** The number of records asked for (`list_count`): a page holding more is refused. */
  readonly count: number
  /** Fail the page on a record that does not match (`fail`), or set it aside (`collect`). */
  readonly mode: InvalidRecordMode
  /**
   * The text of each element of `data` as the server wrote it (`JsonText.dataText`), when given: the page then
   * carries the valid records' texts (`Page.json`) and each invalid record's (`InvalidRecord.json`).
   */
  readonly json?: ReadonlyArray<string> | undefined
}

/**
 * Decodes the `data` of a list response into a page. `decodeRecord` should be built once per schema
 * (`Decoder.make(schema)`), not per call: this runs for every record. `json`, when given, is the text of
 * each element of `data` as the server wrote it (`JsonText.dataText`): the page then carries the valid records' texts
 * (`Page.json`) and each invalid record's (`InvalidRecord.json`).
 *
 * @example
 * ```ts
 * import { Decoder, Page, Partner } from "@erp-client/core"
 * import { Either } from "effect"
 *
 * // The data of partner/list at offset 50: the record without an id is set aside, the others kept
 * const data = [
 *   { id: 51, company_name: "Kovács Kft.", tax_number: "12345678-2-42" },
 *   { company_name: "Szabó és Társa Bt." },
 *   { id: 53, company_name: "Nagy Építő Zrt." }
 * ]
 * const page = Page.decodePage({
 *   endpoint: "partner/list",
 *   decodeRecord: Decoder.make(Partner.Partner),
 *   data,
 *   offset: 50,
 *   count: 25,
 *   mode: "collect"
 * })
 * if (Either.isRight(page)) {
 *   console.log(page.right.records.length) // => 2
 *   console.log(page.right.invalid[0]?.error.path) // => data[1].id
 * }
 * ```
 *
 * @since 0.1.0
 * @category Decoding
 */
export const decodePage = <A>(options: DecodePageOptions<A>): Edition.Result<Page<A>, DecodeError> => {
  const { count, data, decodeRecord, endpoint, json, mode, offset } = options
  const page = Kernel.decodePage<A, DecodeError>({
    data,
    offset,
    count,
    mode,
    json,
    decodeRecord: (raw, i, recordId) => {
      const decoded = catchThrows(
        endpoint,
        `data[${i}]`,
        () =>
          Edition.Result.mapError(
            decodeRecord(raw),
            (error) => decodeErrorFrom(endpoint, `data[${i}]`, error, { offset: offset + i, recordId: recordId() })
          )
      )
      return Edition.Result.match(decoded, {
        onSuccess: (value) => ({ ok: true as const, value }),
        onFailure: (error) => ({ ok: false as const, error })
      })
    }
  })
  if (page.ok) return Edition.Result.succeed(page.value)
  const { refusal } = page
  return Edition.Result.fail(
    refusal._tag === "Record"
      ? refusal.error
      : new DecodeError({
        endpoint,
        path: "data",
        reason: refusal.reason,
        ...(refusal.offset === undefined ? {} : { offset: refusal.offset })
      })
  )
}
