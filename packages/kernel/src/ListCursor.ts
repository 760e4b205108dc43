/**
 * Going on with a list where an earlier read left off, minutes later, by drift-safe paging's rule (docs/paging.md)
 * applied across reads: `erp mcp`'s list tools give it to assistants as their cursors.
 *
 * A position is where the read left off (just past the last record returned) and a key of each of the last `KEYS`
 * records returned (of the record's id as the server wrote it, or of its whole text when it has none). The next read
 * starts `MARGIN` records before that offset and looks for those records: the offset is only where to look, the keys
 * decide.
 *
 * - The last record returned, found anywhere in the first page read (the list shifted by inserts or deletes before
 *   it), is where the list goes on. When it is gone (deleted), the last of the others found is. Records found before
 *   it are not returned again; one of the position's records met after it (read again as the list moved back) is left
 *   out and counted (`repeated`).
 * - When none is found in the first page (more than `MARGIN - 1` records deleted before them, more than `MARGIN - 1`
 *   inserted, or all of them deleted), going on could skip records: the read is lost (`finish` gives
 *   `undefined`), and the caller starts again from the list's start. Never a record silently skipped, or one of the
 *   last returned repeated.
 * - Records inserted behind the position while the list is read may or may not come (as in any drift-safe export).
 *
 * @since 0.1.0
 */
import { idJson, idOf } from "./Changes.js"
import { digest } from "./internal/digest.js"

/**
 * Where a read left off.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Position {
  /** The list position just past the last record returned. */
  readonly offset: number
  /** A key (`recordKey`) of each of the last records returned, in list order, at most `KEYS`. */
  readonly keys: ReadonlyArray<string>
}

/**
 * How many of the last records returned a position keeps.
 *
 * @since 0.1.0
 * @category Constants
 */
export const KEYS = 10

/**
 * How far before a position's offset the next read starts looking for its records.
 *
 * @since 0.1.0
 * @category Constants
 */
export const MARGIN = 100

/**
 * A record's key in a position: 48 bits of the digest of its id as the server wrote it (or of its whole text, when it
 * has no id), in hex. A position compares a few hundred records: 48 bits tell them apart, and keep it short.
 *
 * @example
 * ```ts
 * import { ListCursor } from "@erp-client/kernel"
 *
 * const a = ListCursor.recordKey("id", { id: 7 }, `{"id":7,"name":"A"}`)
 * const b = ListCursor.recordKey("id", { id: 7 }, `{"id":7,"name":"B"}`)
 * console.log(a === b, a.length) // => true 12
 * ```
 *
 * @since 0.1.0
 * @category Keys
 */
export const recordKey = (idField: string, raw: unknown, text: string): string => {
  const id = idOf(raw, idField, () => text)
  const [hi, lo] = digest(id === undefined ? `text:${text}` : `id:${idJson(id)}`)
  return (hi.toString(16).padStart(8, "0") + lo.toString(16).padStart(8, "0")).slice(0, 12)
}

/**
 * Where the read going on from `after` starts: `MARGIN` records before its offset (0 without a position).
 *
 * @example
 * ```ts
 * import { ListCursor } from "@erp-client/kernel"
 *
 * console.log(ListCursor.startOf(undefined), ListCursor.startOf({ offset: 40, keys: [] })) // => 0 0
 * console.log(ListCursor.startOf({ offset: 1000, keys: [] })) // => 900
 * ```
 *
 * @since 0.1.0
 * @category Reading
 */
export const startOf = (after: Position | undefined): number =>
  after === undefined ? 0 : Math.max(0, after.offset - MARGIN)

/**
 * How many records the first page of a read going on from `after` asks for: the margin before its offset, and as many
 * past it (records inserted before the position move its records later), or `limit + 1` when that is more.
 *
 * @example
 * ```ts
 * import { ListCursor } from "@erp-client/kernel"
 *
 * console.log(ListCursor.firstPage(undefined, 50), ListCursor.firstPage({ offset: 1000, keys: [] }, 50)) // => 51 200
 * ```
 *
 * @since 0.1.0
 * @category Reading
 */
export const firstPage = (after: Position | undefined, limit: number): number =>
  after === undefined ? limit + 1 : after.offset - startOf(after) + Math.max(limit + 1, MARGIN)

/**
 * A record the read keeps: its text as the server wrote it, its key, and its position in the list.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Kept {
  readonly text: string
  readonly key: string
  readonly position: number
}

/**
 * What a read found: up to `limit` records, whether more follow, how many of the position's records it met again and
 * left out, how far the last record returned moved since (`undefined`: it is gone, and the last of the others found
 * was used), and the position to go on from.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Read {
  readonly records: ReadonlyArray<Kept>
  readonly more: boolean
  readonly repeated: number
  readonly shift: number | undefined
  readonly next: () => Position
}

/**
 * A reader of the pages of one read from `start` (`startOf(after)`): fed page by page, it looks for where `after` left
 * off, then keeps up to `limit + 1` records (the one past `limit` says more follow). `done` once enough is read;
 * `finish` at the end of what was read (`undefined`: where `after` left off is not to be found).
 *
 * @example
 * ```ts
 * import { ListCursor } from "@erp-client/kernel"
 *
 * const page = (ids: ReadonlyArray<number>) => ({ raw: ids.map((id) => ({ id })) })
 * const first = ListCursor.makeReader({ limit: 3, idField: "id", start: 0, after: undefined })
 * first.feed(page([1, 2, 3, 4]))
 * const position = first.finish()!.next()
 * // Record 1 is deleted before the next read: the list moved back by one, and the read goes on after record 3.
 * const next = ListCursor.makeReader({ limit: 3, idField: "id", start: ListCursor.startOf(position), after: position })
 * next.feed(page([2, 3, 4, 5, 6, 7]))
 * const read = next.finish()!
 * console.log(read.records.map((record) => record.text), read.shift) // => [ '{"id":4}', '{"id":5}', '{"id":6}' ] -1
 * ```
 *
 * @since 0.1.0
 * @category Reading
 */
export const makeReader = (options: {
  readonly limit: number
  readonly idField: string
  readonly start: number
  readonly after: Position | undefined
}) => {
  const { after, idField, limit, start } = options
  const carried = new Set(after?.keys ?? [])
  const last = after?.keys[after.keys.length - 1]
  // Where the position's records are looked for: the first page read (`firstPage`).
  const searchBound = firstPage(after, limit)
  let phase: "seeking" | "reading" | "lost" = after === undefined ? "reading" : "seeking"
  let read = 0
  let anchor: number | undefined
  let anchoredOnLast = false
  let pending: Array<Kept> = []
  const kept: Array<Kept> = []
  let repeated = 0
  const settle = () => {
    if (anchor === undefined) {
      phase = "lost"
    } else {
      phase = "reading"
      kept.push(...pending.slice(0, limit + 1))
      pending = []
    }
  }
  return {
    feed: (page: { readonly raw: ReadonlyArray<unknown>; readonly json?: ReadonlyArray<string> | undefined }) => {
      for (let i = 0; i < page.raw.length && phase !== "lost" && kept.length <= limit; i++) {
        const raw = page.raw[i]
        const text = page.json?.[i] ?? JSON.stringify(raw)
        const key = recordKey(idField, raw, text)
        const position = start + read
        read++
        if (phase === "reading") {
          if (carried.has(key)) repeated++
          else kept.push({ text, key, position })
          continue
        }
        if (carried.has(key)) {
          anchor = position
          pending = []
          if (key === last) {
            anchoredOnLast = true
            phase = "reading"
          }
        } else if (anchor !== undefined) {
          pending.push({ text, key, position })
        }
        if (phase === "seeking" && read >= searchBound) settle()
      }
    },
    /** Enough read: `limit + 1` records kept, or where the position left off is not to be found. */
    done: (): boolean => phase === "lost" || kept.length > limit,
    /** The records kept so far, at most `limit`. */
    kept: (): number => Math.min(kept.length, limit),
    finish: (): Read | undefined => {
      if (phase === "seeking") settle()
      if (phase === "lost") return undefined
      const records = kept.slice(0, limit)
      return {
        records,
        more: kept.length > limit,
        repeated,
        shift: after === undefined ? 0 : anchoredOnLast ? anchor! - (after.offset - 1) : undefined,
        next: () => ({
          offset: records[records.length - 1]!.position + 1,
          keys: [...(after?.keys ?? []), ...records.map((record) => record.key)].slice(-KEYS)
        })
      }
    }
  }
}
