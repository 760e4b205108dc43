/**
 * One page of a list endpoint, decoded record by record so a bad record is named (or set aside) on its own.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import type * as ParseResult from "effect/ParseResult"
import { decodeErrorFrom, guard } from "./Envelope.js"
import { DecodeError } from "./ErpError.js"

/**
 * A record that did not match the schema, kept whole so a sync can report it and lose nothing.
 *
 * @since 0.1.0
 * @category Models
 */
export interface InvalidRecord {
  /** Position of the record in the whole list. */
  readonly offset: number
  /** The record exactly as the server sent it. */
  readonly raw: unknown
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
   * The valid records exactly as the server sent them (same objects, same key order), index for index with
   * `records`: for output that must reproduce the server's JSON.
   */
  readonly raw: ReadonlyArray<unknown>
  /** The exact JSON text of each valid record, index for index with `raw`, when the call asked for it. */
  readonly json?: ReadonlyArray<string> | undefined
  readonly invalid: ReadonlyArray<InvalidRecord>
}

/**
 * Whether the server sent fewer records than asked. That is not by itself the end of the list: a server may clamp
 * its pages below the size asked (the contract does not give its largest page); `Paginate` decides.
 *
 * @since 0.1.0
 * @category Accessors
 */
export const isShort = <A>(page: Page<A>): boolean => page.received < page.count

const idOf = (raw: unknown): unknown =>
  typeof raw === "object" && raw !== null && "id" in raw ? (raw as { readonly id: unknown }).id : undefined

/**
 * Decodes the `data` of a list response into a page. `decodeRecord` should be built once per schema
 * (`Schema.decodeUnknownEither(schema)`), not per call: this runs for every record.
 *
 * @since 0.1.0
 * @category Decoding
 */
export const decodePage = <A>(
  endpoint: string,
  decodeRecord: (u: unknown) => Either.Either<A, ParseResult.ParseError>,
  data: unknown,
  offset: number,
  count: number,
  mode: InvalidRecordMode
): Either.Either<Page<A>, DecodeError> => {
  if (!Array.isArray(data)) {
    return Either.left(
      new DecodeError({ endpoint, path: "data", reason: `expected an array of records, got ${kindOf(data)}` })
    )
  }
  if (data.length > count) {
    // More records than asked for would make the next offset skip or repeat records: refuse the page.
    return Either.left(
      new DecodeError({
        endpoint,
        path: "data",
        reason: `the page holds ${data.length} records but list_count was ${count}`,
        offset
      })
    )
  }
  const records: Array<A> = []
  const raws: Array<unknown> = []
  const invalid: Array<InvalidRecord> = []
  for (let i = 0; i < data.length; i++) {
    const raw: unknown = data[i]
    const decoded = guard(
      endpoint,
      `data[${i}]`,
      () =>
        Either.mapLeft(
          decodeRecord(raw),
          (error) => decodeErrorFrom(endpoint, `data[${i}]`, error, { offset: offset + i, recordId: idOf(raw) })
        )
    )
    if (Either.isRight(decoded)) {
      records.push(decoded.right)
      raws.push(raw)
      continue
    }
    const error = decoded.left
    if (mode === "fail") return Either.left(error)
    invalid.push({ offset: offset + i, raw, error })
  }
  return Either.right({ offset, count, received: data.length, records, raw: raws, invalid })
}

const kindOf = (u: unknown): string => u === null ? "null" : Array.isArray(u) ? "an array" : typeof u
