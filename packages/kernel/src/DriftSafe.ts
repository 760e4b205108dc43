/**
 * Drift-safe paging's state machine (docs/paging.md, "Drift-safe paging"): for a list that gets inserts and deletes
 * while it is read, consecutive pages overlap, a page is taken only when it holds a record already emitted, records
 * already emitted are dropped by id, and a page that overlaps nothing read makes paging step back until one does and
 * walk forward again (a `Recovery`, within a budget of requests). What to tell comes back as events, what went wrong
 * as plain data; each edition's `Paginate.safePages` wires it to its fetches, callbacks and errors, and runs the pages
 * through `Pager` with this state's `mode`.
 *
 * Guarantees, when the list keeps one order (records move only by inserts and deletes): each id at most once, in list
 * order; every record present for the whole export is emitted.
 *
 * It always ends: an export ends, or fails with a `Drift`, within a bound of requests proportional to the positions
 * it reached (docs/paging.md, "Drift-safe paging"), so a list that grows faster than offset paging can read it fails
 * rather than be chased for ever.
 *
 * @since 0.1.0
 */
import type * as Changes from "./Changes.js"
import * as Internal from "./internal/driftSafe.js"
import type * as Pager from "./Pager.js"

/**
 * What drift-safe paging noticed.
 *
 * - `Shifted`: the page at `offset` found the records it shares with the page before `by` places from where they
 *   were (positive: inserted ahead of it since; negative: deleted). Repeated records were dropped, none skipped.
 * - `Recovered`: no record of the page at `offset` had been read before (the list moved by more than the overlap);
 *   paging stepped back until a page overlapped again and came forward, spending `requests` extra requests, and
 *   pages from then on overlap by `overlap` (doubled, up to half a page).
 * - `Dropped`: the record at `offset` has the id of a record already emitted but other content, and was not emitted:
 *   `reason` `"updated"`, read again within what was read before (shifted as the list moved), a record updated since
 *   it was read (its earlier version came out); `"duplicate"`, twice in one answer or past what was read, a distinct
 *   record that repeats another's id (ids are what drift-safe paging tells records apart by; noted in the
 *   table, `Changes.Table.duplicate`). `id` as `Changes.idValue` says it (the digits, as a string, of a number beyond a
 *   double), `idJson` as the server wrote it.
 *
 * @since 0.1.0
 * @category Models
 */
export type DriftEvent =
  | { readonly _tag: "Shifted"; readonly offset: number; readonly by: number }
  | { readonly _tag: "Recovered"; readonly offset: number; readonly requests: number; readonly overlap: number }
  | {
    readonly _tag: "Dropped"
    readonly offset: number
    readonly id: string | number
    readonly idJson: string
    readonly reason: "updated" | "duplicate"
  }

/**
 * Drift-safe paging's options, as an edition takes them (its own options add callbacks).
 *
 * @since 0.1.0
 * @category Models
 */
export interface Options {
  /** Names the source in failures (default `"list"`). */
  readonly endpoint?: string | undefined
  /** The field that identifies a record, read from the record as the server sent it (default `"id"`). */
  readonly idField?: string | undefined
  /** Records each page shares with the page before it (default a tenth of the page size, at least 1). */
  readonly overlap?: number | undefined
  /** Requests one recovery may spend before paging fails (default 16). */
  readonly maxRecoveryRequests?: number | undefined
  /** Ids an interrupted run emitted: none of them comes out again. */
  readonly resumeAfter?: Iterable<string | number> | undefined
  /** The resume point of an interrupted run: its overlap (reached by recoveries) wins over `overlap`. */
  readonly resume?: { readonly overlap?: number | undefined } | undefined
  /**
   * Where the ids emitted are kept, with a digest of each record's text (default: a fresh `Changes.makeTable()`).
   * Pass one to read it after the run: `Changes` makes the next state of a changes export of it.
   */
  readonly seen?: Changes.Table | undefined
  /**
   * Asked once, when the list seems to have ended: `true` reads the page that ended it once more, and the end is taken
   * only from that second answer (see `Pager.Mode.confirmEnd`). A changes export asks it when its last state holds
   * records not read (they would be reported removed): one empty or cut short answer then removes nothing.
   */
  readonly confirmEnd?: (() => boolean) | undefined
}

/**
 * A record without the id drift-safe paging tells records apart by (`DecodeError` in each edition): `path` into the
 * response's data, the record's `offset` in the list.
 *
 * @since 0.1.0
 * @category Failures
 */
export interface MissingId {
  readonly _tag: "MissingId"
  readonly endpoint: string
  readonly path: string
  readonly reason: string
  readonly offset: number
}

/**
 * The list changed faster than paging could follow (`PagingDrift` in each edition): near `offset`, no page overlapped
 * the records read after `requests` extra requests (one look back's budget, or twice it in look backs that took paging
 * no farther), or the export spent `requests` requests, past its bound (see the module's description).
 *
 * @since 0.1.0
 * @category Failures
 */
export interface Drift {
  readonly _tag: "Drift"
  readonly endpoint: string
  readonly offset: number
  readonly requests: number
}

/**
 * A page judged: taken (its step for the engine, what to tell), lost (no record read before in it: drive the
 * recovery, after telling the events), or failed.
 *
 * @since 0.1.0
 * @category Models
 */
export type Taken<P> =
  | { readonly _tag: "Taken"; readonly step: Pager.Step<P>; readonly events: ReadonlyArray<DriftEvent> }
  | { readonly _tag: "Lost"; readonly recovery: Recovery<P>; readonly events: ReadonlyArray<DriftEvent> }
  | { readonly _tag: "Failed"; readonly failure: MissingId | Drift }

/**
 * What a recovery needs next: a page fetched, or nothing more (its step for the engine, what to tell), or it failed.
 *
 * @since 0.1.0
 * @category Models
 */
export type Next<P> =
  | { readonly _tag: "Fetch"; readonly offset: number; readonly count: number }
  | { readonly _tag: "Done"; readonly step: Pager.Step<P>; readonly events: ReadonlyArray<DriftEvent> }
  | { readonly _tag: "Fail"; readonly failure: Drift | MissingId }

/**
 * A lost page's recovery: step back along the grid until a fresh page overlaps what was read, then walk forward to
 * the lost page's offset (trying its first answer again before asking anew). Drive it: `next()` says what to fetch
 * (or that it is done, or failed), `feed(page)` hands the fetched page in.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Recovery<P> {
  readonly next: () => Next<P>
  readonly feed: (page: P) => void
}

/**
 * The state of one run of a drift-safe export: every id emitted so far (it grows with the export), the last page
 * taken, the overlap reached. Make one per run.
 *
 * @since 0.1.0
 * @category Models
 */
export interface DriftSafe<P> {
  /** How the engine pages in this mode (overlap, quiet pages, sizes, resume points): `Pager.make`'s mode. */
  readonly mode: Pager.Mode
  /**
   * Records consecutive pages share at this page size: the option (or a tenth of the page), doubled per recovery up
   * to half a page (or the option, if larger), and always leaving each page at least one record that is new; an
   * option as large as the page the server now serves gives way to half of it.
   */
  readonly overlap: (size: number) => number
  /** The options checked against the first page size: an overlap must leave each page something new. */
  readonly validate: (size: number) => Pager.Invalid | undefined
  /**
   * One page in offset order: the mode's step (see `Pager.Step`), with the engine's plan (its page size, and the most
   * records the server has served in one page, which tells a page cut short by the server from the end of the list).
   */
  readonly step: (page: P, plan: { readonly size: number; readonly served: number }) => Taken<P>
}

/**
 * The state of one run of a drift-safe export starting at offset `start`.
 *
 * @example
 * ```ts
 * import { DriftSafe, type Pager } from "@erp-client/kernel"
 *
 * const page = (offset: number, ids: ReadonlyArray<number>) => {
 *   const records = ids.map((id) => ({ id }))
 *   return { offset, count: 4, received: records.length, records, raw: records, invalid: [] }
 * }
 * const safe = DriftSafe.make<Pager.Page<{ id: number }>>({ overlap: 1 }, 0)
 * console.log(safe.validate(4), safe.overlap(4)) // => undefined 1
 * const plan = { size: 4, served: 4 }
 * // The first page is anchored by the start of the list
 * safe.step(page(0, [1, 2, 3, 4]), plan)
 * // A record was inserted ahead meanwhile: the page at 3, meant to share record 4, holds 3 and 4 again
 * const shifted = safe.step(page(3, [3, 4, 5, 6]), plan)
 * if (shifted._tag === "Taken") console.log(shifted.step.emit[0]?.records, shifted.events)
 * // => [ { id: 5 }, { id: 6 } ] [ { _tag: 'Shifted', offset: 3, by: 1 } ]
 * // Many records were deleted ahead meanwhile: the page at 6 holds nothing read before, paging looks back
 * const lost = safe.step(page(6, [10, 11, 12, 13]), plan)
 * if (lost._tag === "Lost") console.log(lost.recovery.next()) // => { _tag: 'Fetch', offset: 4, count: 4 }
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const make = <P extends Pager.Page>(options: Options, start: number): DriftSafe<P> =>
  new Internal.DriftSafe<P>(options, start)
