/**
 * Whether the records a list served under `list_condition[field]=value` satisfy it (docs/paging.md, "Conditions
 * checked against the records"): a server that does not know a condition, or does not apply it, answers with the
 * whole list, which would otherwise pass for the filtered one. Each edition's `ListEndpoint` fails the list with its
 * `ConditionIgnored` at the first record that does not.
 *
 * The contract does not say how a server compares a value, so the check is meant to catch a condition left
 * unapplied, not to judge how a server matches: a record fails only when its value clearly differs from the text sent
 * (`ListQuery.conditionValue`); a field the record does not carry fails. The comparison of each kind of value is the
 * table of docs/paging.md, "Conditions checked against the records".
 *
 * @since 0.1.0
 */
import { checkPrepared, prepare } from "./internal/conditionCheck.js"
import { recordIdOf } from "./internal/recordId.js"
import type { Conditions } from "./ListQuery.js"

/**
 * A record that does not satisfy a condition it was served under.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Mismatch {
  /** The condition's field. */
  readonly field: string
  /** The value asked, as it was sent (`ListQuery.conditionValue`: `true` is `1`). */
  readonly asked: string
  /**
   * The record's value of the field as the server wrote it (JSON text: a string quoted), cut to `HAD_MAX` characters;
   * `undefined` when the record has no such field.
   */
  readonly had: string | undefined
}

/**
 * A mismatch in a page: where the record was in the whole list, and its `id` when it has one (as the server wrote it
 * when a double would name it by a neighbour's value).
 *
 * @since 0.1.0
 * @category Models
 */
export interface PageMismatch extends Mismatch {
  readonly offset: number
  readonly recordId: unknown
}

/**
 * A page as the check reads it: each edition's `Page.Page` is one. Valid records (`raw`, with `json` when exact) fill
 * the positions the invalid ones (each with its offset) leave.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Page {
  readonly offset: number
  readonly received: number
  readonly raw: ReadonlyArray<unknown>
  readonly json?: ReadonlyArray<string> | undefined
  readonly invalid: ReadonlyArray<
    { readonly offset: number; readonly raw: unknown; readonly json?: string | undefined }
  >
}

/**
 * The first record of a page (in the server's order, valid or not) that does not satisfy `where`, with its offset and
 * id; `undefined` when every record does, or there is no condition. One pass; a record's text is scanned only for a
 * number a double cannot settle, or to quote the value of the record that fails.
 *
 * @example
 * ```ts
 * import { ConditionCheck } from "@erp-client/kernel"
 *
 * // A server that ignored list_condition[is_customer]=1 answered the page at offset 100 with the whole list
 * const page = { offset: 100, received: 2, raw: [{ id: 101, is_customer: 1 }, { id: 102, is_customer: 0 }], invalid: [] }
 * console.log(ConditionCheck.checkPage({ is_customer: 1 }, page))
 * // => {
 * //   field: 'is_customer',
 * //   asked: '1',
 * //   had: '0',
 * //   offset: 101,
 * //   recordId: 102
 * // }
 * ```
 *
 * @since 0.1.0
 * @category Checks
 */
export const checkPage = (where: Conditions | undefined, page: Page): PageMismatch | undefined => {
  if (where === undefined) return undefined
  const conditions = prepare(where)
  if (conditions.length === 0) return undefined
  const invalidAt = new Map(page.invalid.map((record) => [record.offset - page.offset, record]))
  let valid = 0
  for (let position = 0; position < page.received; position++) {
    const invalid = invalidAt.get(position)
    let raw: unknown
    let json: string | undefined
    if (invalid === undefined) {
      raw = page.raw[valid]
      json = page.json?.[valid]
      valid++
    } else {
      raw = invalid.raw
      json = invalid.json
    }
    const mismatch = checkPrepared(conditions, raw, json)
    if (mismatch !== undefined) {
      return { ...mismatch, offset: page.offset + position, recordId: recordIdOf(raw, json) }
    }
  }
  return undefined
}
