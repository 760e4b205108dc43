/**
 * A page of a list as paging's decisions see it, and its records in the order the server sent them: valid records
 * (`raw`) fill the positions invalid ones (`invalid`, each with its offset in the list) leave. Paging compares and
 * trims pages in that order, by each record's JSON text (docs/paging.md).
 */
import type { Page } from "../Pager.js"

/** The positions (0-based, within the page) of its invalid records. */
const invalidPositions = (page: Page): Map<number, unknown> =>
  new Map(page.invalid.map((record) => [record.offset - page.offset, record.raw]))

/**
 * Each record of the page as the server sent it (parsed), valid or not, in the server's order.
 *
 * @example
 * ```ts
 * import * as PageOrder from "./pageOrder.js"
 *
 * // Three records at offset 40; the second did not match the schema
 * const page = {
 *   offset: 40,
 *   count: 10,
 *   received: 3,
 *   records: [{ id: 41 }, { id: 43 }],
 *   raw: [{ id: 41 }, { id: 43 }],
 *   invalid: [{ offset: 41, raw: { id: "x" } }]
 * }
 * console.log(PageOrder.rawInOrder(page)) // => [ { id: 41 }, { id: 'x' }, { id: 43 } ]
 * ```
 *
 * @since 0.1.0
 * @category Reading
 */
export const rawInOrder = (page: Page): ReadonlyArray<unknown> => {
  if (page.invalid.length === 0) return page.raw
  const invalidAt = invalidPositions(page)
  const out: Array<unknown> = []
  let valid = 0
  for (let i = 0; i < page.received; i++) out.push(invalidAt.has(i) ? invalidAt.get(i) : page.raw[valid++])
  return out
}

/**
 * The JSON text of the record at `position` (server order): its exact text when the page carries it (`json`), else
 * its `JSON.stringify`. Paging compares records by this text, so two records are the same only when every field is.
 *
 * @example
 * ```ts
 * import * as PageOrder from "./pageOrder.js"
 *
 * const page = {
 *   offset: 0,
 *   count: 10,
 *   received: 2,
 *   records: [{ id: 1 }],
 *   raw: [{ id: 1 }],
 *   json: ['{"id":1.0}'],
 *   invalid: [{ offset: 1, raw: { id: null } }]
 * }
 * console.log(PageOrder.textAt(page, 0), PageOrder.textAt(page, 1)) // => {"id":1.0} {"id":null}
 * ```
 *
 * @since 0.1.0
 * @category Reading
 */
export const textAt = (page: Page, position: number): string => {
  if (page.invalid.length === 0) return page.json?.[position] ?? JSON.stringify(page.raw[position])
  const invalid = page.invalid.find((record) => record.offset - page.offset === position)
  if (invalid !== undefined) return JSON.stringify(invalid.raw)
  let valid = 0
  for (const record of page.invalid) if (record.offset - page.offset < position) valid++
  const index = position - valid
  return page.json?.[index] ?? JSON.stringify(page.raw[index])
}

/**
 * The page with only the records at the positions (server order) `keep` accepts: records, raw records, texts and
 * invalid records alike. `offset` and `received` stay the server's: paging goes on from them.
 *
 * @example
 * ```ts
 * import * as PageOrder from "./pageOrder.js"
 *
 * const page = { offset: 20, count: 3, received: 3, records: [21, 22, 23], raw: [21, 22, 23], invalid: [] }
 * const kept = PageOrder.keepWhere(page, (position) => position >= 1)
 * console.log(kept.records, kept.offset, kept.received) // => [ 22, 23 ] 20 3
 * ```
 *
 * @since 0.1.0
 * @category Combinators
 */
export const keepWhere = <P extends Page>(page: P, keep: (position: number) => boolean): P => {
  const invalidAt = invalidPositions(page)
  const records: Array<unknown> = []
  const raw: Array<unknown> = []
  const json: Array<string> = []
  let valid = 0
  for (let i = 0; i < page.received; i++) {
    if (invalidAt.has(i)) continue
    if (keep(i)) {
      records.push(page.records[valid])
      raw.push(page.raw[valid])
      if (page.json !== undefined) json.push(page.json[valid])
    }
    valid++
  }
  const invalid = page.invalid.filter((record) => keep(record.offset - page.offset))
  return { ...page, records, raw, invalid, ...(page.json === undefined ? {} : { json }) }
}

/**
 * Whether `page` holds exactly the records of `before` at a later offset, compared by their text (see `textAt`), the
 * first record first: a proper server never serves one record at two positions of an unchanged list, so that gate is
 * rarely passed and the whole comparison rarely paid. `false` for an empty page or when there is no page before.
 *
 * @example
 * ```ts
 * import * as PageOrder from "./pageOrder.js"
 *
 * // A server that ignores list_offset serves the first page again
 * const first = { offset: 0, count: 2, received: 2, records: [1, 2], raw: [1, 2], invalid: [] }
 * console.log(PageOrder.repeatsPage(first, { ...first, offset: 2 })) // => true
 * console.log(PageOrder.repeatsPage(first, { ...first, offset: 2, records: [3, 4], raw: [3, 4] })) // => false
 * ```
 *
 * @since 0.1.0
 * @category Reading
 */
export const repeatsPage = (before: Page | undefined, page: Page): boolean => {
  if (before === undefined || page.offset <= before.offset || page.received === 0) return false
  if (page.received !== before.received || page.invalid.length !== before.invalid.length) return false
  if (textAt(page, 0) !== textAt(before, 0)) return false
  for (let i = 1; i < page.received; i++) {
    if (textAt(page, i) !== textAt(before, i)) return false
  }
  return true
}
