/**
 * A page's records in the order the server sent them: its valid records (`raw`) fill the positions its invalid ones
 * (`invalid`, each with its offset in the list) leave. Paging compares and trims pages in that order.
 */
import type * as Page from "@erp-client/core/Page"

/** The positions (0-based, within the page) of its invalid records. */
const invalidPositions = <A>(page: Page.Page<A>): Map<number, unknown> =>
  new Map(page.invalid.map((record) => [record.offset - page.offset, record.raw]))

/** Each record of the page as the server sent it, in its order. */
export const rawInOrder = <A>(page: Page.Page<A>): ReadonlyArray<unknown> => {
  if (page.invalid.length === 0) return page.raw
  const invalidAt = invalidPositions(page)
  const out: Array<unknown> = []
  let valid = 0
  for (let i = 0; i < page.received; i++) out.push(invalidAt.has(i) ? invalidAt.get(i) : page.raw[valid++])
  return out
}

/**
 * The JSON text of the record at `position` (server order): its exact text when the page carries it, else its JSON.
 * Records are compared by this text, so two records are the same only when every field is.
 */
export const textAt = <A>(page: Page.Page<A>, position: number): string => {
  if (page.invalid.length === 0) return page.json?.[position] ?? JSON.stringify(page.raw[position])
  const invalid = page.invalid.find((record) => record.offset - page.offset === position)
  if (invalid !== undefined) return JSON.stringify(invalid.raw)
  let valid = 0
  for (const record of page.invalid) if (record.offset - page.offset < position) valid++
  const index = position - valid
  return page.json?.[index] ?? JSON.stringify(page.raw[index])
}

/** The page with only the records at the positions `keep` accepts; `offset` and `received` stay the server's. */
export const keepWhere = <A>(page: Page.Page<A>, keep: (position: number) => boolean): Page.Page<A> => {
  const invalidAt = invalidPositions(page)
  const records: Array<A> = []
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
