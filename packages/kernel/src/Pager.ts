/**
 * The paging engine as a plain object (docs/ARCHITECTURE.md, "Paging"; docs/paging.md): which pages to fetch and at
 * which offsets, the window of pages in flight, what each page in offset order emits, where an export resumes after
 * it, which pages in flight are no longer wanted and why, and when the list has ended. Each page is judged by
 * `PagingJudge`. An edition drives it with its fibers and streams: it starts the fetches `launch` asks for and hands
 * each back its handle (`started`), awaits the oldest (`take`), turns the page into a `Step` (plain paging:
 * `plainStep`; drift-safe paging: `DriftSafe`), and applies what `judge` returns: cancel, fail, tell, emit.
 *
 * Pages in flight start at one and double with each full page, up to `concurrency`: a short list or a server that
 * serves short pages costs few requests on the wrong grid, a long list soon runs at full concurrency. When the grid
 * moves (after a short page), the pages in flight past it are no longer wanted.
 *
 * @since 0.1.0
 */
import * as Engine from "./internal/pager.js"
import type * as PagingJudge from "./internal/pagingJudge.js"

/**
 * A record that did not match the schema, as paging needs it: where it was and what the server sent. Each edition's
 * `Page.InvalidRecord` carries more (its error, its exact text) and is one of these.
 *
 * @since 0.1.0
 * @category Models
 */
export interface InvalidRecord {
  /** Position of the record in the whole list. */
  readonly offset: number
  /** The record as the server sent it, parsed. */
  readonly raw: unknown
}

/**
 * One page of an offset-paged list: the least paging's decisions need of it. Each edition's `Page.Page<A>` is one
 * (the fields have the same names and meanings), so the decisions take and give back the edition's own pages.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Page<A = unknown> {
  readonly offset: number
  /** The `list_count` that was asked for. */
  readonly count: number
  /** How many records the server sent, valid or not. */
  readonly received: number
  /** The valid records, decoded. */
  readonly records: ReadonlyArray<A>
  /** The valid records as the server sent them, parsed, index for index with `records`. */
  readonly raw: ReadonlyArray<unknown>
  /** When asked for: the text of each valid record exactly as the server wrote it, index for index with `raw`. */
  readonly json?: ReadonlyArray<string> | undefined
  /** The records that did not match the schema. */
  readonly invalid: ReadonlyArray<InvalidRecord>
}

/**
 * Where a resumed export starts, and what it had learned. Plain JSON: store it as is.
 *
 * @since 0.1.0
 * @category Models
 */
export interface ResumePoint {
  readonly offset: number
  readonly pageSize: number
  readonly served: number
  readonly overlap?: number | undefined
  /** The length of a short page not yet settled (see `Plan.suspect` in `internal/pagingJudge.ts`). */
  readonly suspect?: number | undefined
  /**
   * After a short page: hashes (`hash` of `internal/pagingJudge.ts`, of each record's JSON text) of the last records written, which a
   * server that filters after cutting may serve again right at `offset`.
   */
  readonly tail?: ReadonlyArray<number> | undefined
}

/**
 * A page as emitted: with where to resume after it, or `undefined` when it was the last one.
 *
 * @since 0.1.0
 * @category Models
 */
export type Emitted<P> = P & { readonly next: ResumePoint | undefined }

/**
 * A change of the page size: learned from the server (it clamps its pages), or halved after a response too large.
 *
 * @since 0.1.0
 * @category Models
 */
export interface SizeChange {
  readonly size: number
  readonly previous: number
  readonly reason: "served" | "too-large"
}

/**
 * Why pages in flight are no longer wanted: `list-ended` (past the end of the list), `paging-moved` (past a short
 * page, or sized for a response too large), `stream-ended` (the reader took what it wanted and stopped),
 * `stream-failed` (the export failed elsewhere). An edition cancels them as the client's own cancellation, so that
 * their spans do not end as errors.
 *
 * @since 0.1.0
 * @category Models
 */
export type CancelReason = "list-ended" | "paging-moved" | "stream-ended" | "stream-failed"

/**
 * Pages in flight to cancel (the handles the edition gave `started`), and why.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Cancel<H> {
  readonly reason: CancelReason
  readonly handles: ReadonlyArray<H>
}

/**
 * A page to fetch: `fetch(offset, count)`.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Ask {
  readonly offset: number
  readonly count: number
}

/**
 * A page in flight: what was asked, and the edition's handle on the fetch (a fiber).
 *
 * @since 0.1.0
 * @category Models
 */
export interface InFlight<H> extends Ask {
  readonly handle: H
}

/**
 * What a mode learns from one page: the pages to emit, holding only records not emitted before; the page that
 * decides what comes next (the page itself, or the last one a drift-safe look back fetched); how many of its records
 * were not emitted before; how many it repeats beyond the overlap asked for (see `Observation` in `internal/pagingJudge.ts`); and
 * whether the mode has seen the end of the list itself.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Step<P> {
  readonly emit: ReadonlyArray<P>
  readonly last: P
  readonly fresh: number
  readonly surplus: number
  /** The mode has seen the end of the list (drift-safe paging's end check): the engine ends after this step. */
  readonly ends?: boolean | undefined
}

/**
 * What a mode is handed with each page: the plan, the latest records emitted (hashes, oldest first) after a short
 * page, which the page may start with again, and the page judged before it.
 *
 * @since 0.1.0
 * @category Models
 */
export interface StepContext<P> {
  readonly plan: PagingJudge.Plan
  readonly tail: ReadonlyArray<number> | undefined
  readonly previous: P | undefined
}

/**
 * How plain and drift-safe paging differ, besides their step: how pages overlap and how long paging may see no
 * progress (`rules`), where a resume starts after a page, what else a resume must carry at a page size.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Mode {
  readonly rules: PagingJudge.Rules
  readonly resumeAt: (page: { readonly offset: number; readonly received: number }) => number
  readonly resumeExtra: (size: number) => Record<string, number>
  /**
   * Asked the first time the list seems to have ended: `true` asks the page that ended it again, and only a later end
   * is taken (a list whose end is read twice: an empty or cut short answer does not end it alone).
   */
  readonly confirmEnd?: (() => boolean) | undefined
}

/**
 * Options that are not what they must be (`InvalidRequest` in each edition).
 *
 * @since 0.1.0
 * @category Failures
 */
export interface Invalid {
  readonly _tag: "Invalid"
  readonly endpoint: string
  readonly reason: string
}

/**
 * The server does not move through the list (`PagingLoop` in each edition): it stopped at `offset`, `reason` says why.
 *
 * @since 0.1.0
 * @category Failures
 */
export interface Loop {
  readonly _tag: "Loop"
  readonly endpoint: string
  readonly offset: number
  readonly reason: string
}

/**
 * The paging options an edition takes that are plain data (its own options add callbacks).
 *
 * @since 0.1.0
 * @category Models
 */
export interface Options {
  /** Records asked per page, or `"auto"` (default) to ask for `maxPageSize` and keep what the server serves. */
  readonly pageSize?: number | "auto" | undefined
  /** The largest page `"auto"` asks for (default `DEFAULT_MAX_PAGE_SIZE`). */
  readonly maxPageSize?: number | undefined
  /** Pages in flight at once, at most (default 4). */
  readonly concurrency?: number | undefined
  /** First offset (default 0). */
  readonly startOffset?: number | undefined
  /** Where an interrupted export continues, with what it had learned. */
  readonly resume?: ResumePoint | undefined
  /** Names the source in failures (default `"list"`). */
  readonly endpoint?: string | undefined
}

/**
 * The engine's settings, checked: the endpoint's name, the first plan, the first offset, a resumed export's tail (see
 * `ResumePoint.tail`), the most pages in flight.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Settings {
  readonly endpoint: string
  readonly plan: PagingJudge.Plan
  readonly start: number
  readonly tail: ReadonlyArray<number> | undefined
  readonly concurrency: number
}

/**
 * What `judge` makes of a page: the pages in flight to cancel first (if any), the failure (if the server does not
 * move through the list), the page size learned (to tell), and the pages to emit, each with its resume point.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Judged<P, H> {
  readonly cancel: Cancel<H> | undefined
  readonly failure: Loop | undefined
  readonly learned: SizeChange | undefined
  readonly emit: ReadonlyArray<Emitted<P>>
}

/**
 * The engine of one run of an export. Not safe to share between runs: make one per run.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Pager<P extends Page, H> {
  /** The list has ended: nothing more to pull. */
  readonly done: boolean
  /** What paging knows of the server's pages now. */
  readonly plan: PagingJudge.Plan
  /**
   * The pages to start now (the window is not full), oldest first, each taken as in flight: start each (fork its
   * fetch) and hand its handle to `started`, before anything else is asked of the engine.
   */
  readonly launch: () => ReadonlyArray<Ask>
  /** The handle of a page `launch` asked for (`ask` is the object `launch` returned). */
  readonly started: (ask: Ask, handle: H) => void
  /** The oldest page in flight, no longer in flight: await it. `launch` first, so there is one. */
  readonly take: () => InFlight<H>
  /**
   * The page at `offset` failed with a response too large to accept: half the page and page again from `offset`
   * (cancel the pages in flight, tell the change), or `undefined` when the page is already one record (fail).
   */
  readonly tooLarge: (offset: number) => { readonly change: SizeChange; readonly cancel: Cancel<H> } | undefined
  /** What the mode's step is handed with the page just taken. */
  readonly context: () => StepContext<P>
  /**
   * Before `judge`: the page far further on to fetch when the step's page holds nothing new and exactly the records
   * of the page before it at a later offset. A server that ignores `list_offset` serves them again there; a list that
   * moved by exactly the distance between two pages does not (that far is past the end of most lists, and farther
   * than any list moves between two requests). `undefined`: nothing to fetch.
   */
  readonly repeatCheck: (step: Step<P>) => Ask | undefined
  /** Judges the page of `step` (with the far page `repeatCheck` asked for, fetched) and moves the engine on. */
  readonly judge: (step: Step<P>, far: P | undefined) => Judged<P, H>
  /** The stream ended (its reader stopped) or failed: every page still in flight, to cancel with `reason`. */
  readonly stop: (reason: CancelReason) => Cancel<H>
}

/**
 * The page size `"auto"` asks for first.
 *
 * @since 0.1.0
 * @category Constants
 */
export const DEFAULT_MAX_PAGE_SIZE = 1000

const isCount = (n: unknown): n is number => typeof n === "number" && Number.isSafeInteger(n) && n >= 1

/**
 * The settings, or why the options are not what they must be.
 *
 * @since 0.1.0
 * @category Models
 */
export type Checked = { readonly ok: true; readonly value: Settings } | {
  readonly ok: false
  readonly failure: Invalid
}

/**
 * The engine's settings from an edition's options, with their defaults, checked.
 *
 * @example
 * ```ts
 * import { Pager } from "@erp-client/kernel"
 *
 * const checked = Pager.settings({ pageSize: 100, endpoint: "partner/list" })
 * console.log(checked.ok && checked.value.plan) // => { size: 100, served: 0, suspect: undefined, quiet: 0 }
 * console.log(Pager.settings({ concurrency: 0 }))
 * // => { ok: false, failure: { _tag: 'Invalid', endpoint: 'list', reason: 'concurrency must be an integer >= 1' } }
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const settings = (options: Options): Checked => {
  const endpoint = options.endpoint ?? "list"
  const invalid = (reason: string): Checked => ({ ok: false, failure: { _tag: "Invalid", endpoint, reason } })
  const { resume } = options
  const pageSize = options.pageSize ?? "auto"
  const maxPageSize = options.maxPageSize ?? DEFAULT_MAX_PAGE_SIZE
  const concurrency = options.concurrency ?? 4
  const start = resume?.offset ?? options.startOffset ?? 0
  if (pageSize !== "auto" && !isCount(pageSize)) return invalid(`the page size must be an integer >= 1 or "auto"`)
  if (!isCount(maxPageSize)) return invalid("maxPageSize must be an integer >= 1")
  if (!isCount(concurrency)) return invalid("concurrency must be an integer >= 1")
  if (!Number.isSafeInteger(start) || start < 0) return invalid("the start offset must be an integer >= 0")
  if (resume !== undefined && !(isCount(resume.pageSize) && Number.isSafeInteger(resume.served))) {
    return invalid("the resume point holds no valid page size")
  }
  const size = resume?.pageSize ?? (pageSize === "auto" ? maxPageSize : pageSize)
  return {
    ok: true,
    value: {
      endpoint,
      plan: { size, served: resume?.served ?? 0, suspect: resume?.suspect, quiet: 0 },
      start,
      tail: resume?.tail,
      concurrency
    }
  }
}

/**
 * Plain paging: pages do not overlap, three pages in a row that bring nothing new are a loop, a record served at two
 * offsets is a loop (an unchanged list never does that, and plain paging does not tell records apart by id), any page
 * size may be learned; a resume starts right after the page's records.
 *
 * @since 0.1.0
 * @category Modes
 */
export const plainMode: Mode = {
  rules: { overlap: () => 0, maxQuiet: 3, firstRecordsUnique: true, minSize: 1 },
  resumeAt: (page) => page.offset + page.received,
  resumeExtra: () => ({})
}

/**
 * Plain paging's step: a page right after a short one may start with records already emitted (`tail`: a server
 * that filters after cutting serves them again); those are dropped, the rest emitted. A page that holds exactly the
 * records of the page before it (`previous`) emits nothing (see `Pager.repeatCheck`).
 *
 * @example
 * ```ts
 * import { Pager } from "@erp-client/kernel"
 *
 * const page = (offset: number, names: ReadonlyArray<string>) => {
 *   const raw = names.map((name) => ({ name }))
 *   return { offset, count: 3, received: raw.length, records: raw, raw, invalid: [] }
 * }
 * // No short page before it: every record is emitted
 * const first = Pager.plainStep(page(0, ["a", "b", "c"]), undefined, undefined)
 * console.log(first.emit[0]?.records, first.fresh) // => [ { name: 'a' }, { name: 'b' }, { name: 'c' } ] 3
 * // A server that ignores list_offset serves the same records at 3: nothing is emitted
 * const again = Pager.plainStep(page(3, ["a", "b", "c"]), undefined, page(0, ["a", "b", "c"]))
 * console.log(again.emit.length, again.fresh) // => 0 0
 * ```
 *
 * @since 0.1.0
 * @category Modes
 */
export const plainStep = <P extends Page>(
  page: P,
  tail: ReadonlyArray<number> | undefined,
  previous: P | undefined
): Step<P> => Engine.plainStep(page, tail, previous)

/**
 * The engine of one run, from checked settings and a mode (`plainMode`, or a `DriftSafe`'s `mode`). `H` is the
 * edition's handle on a fetch in flight (a fiber).
 *
 * @example
 * ```ts
 * import { Pager } from "@erp-client/kernel"
 *
 * // 25 records in memory, 10 a page, one in flight: fetched and judged by hand, the handles are the asks themselves
 * const records = Array.from({ length: 25 }, (_, i) => i + 1)
 * const settings = Pager.settings({ pageSize: 10, concurrency: 1 })
 * if (!settings.ok) throw new Error(settings.failure.reason)
 * const pager = Pager.make<Pager.Page<number>, Pager.Ask>(settings.value, Pager.plainMode)
 * const emitted: Array<string> = []
 * while (!pager.done) {
 *   for (const ask of pager.launch()) pager.started(ask, ask)
 *   const { count, offset } = pager.take()
 *   const slice = records.slice(offset, offset + count)
 *   const page: Pager.Page<number> = { offset, count, received: slice.length, records: slice, raw: slice, invalid: [] }
 *   const context = pager.context()
 *   const step = Pager.plainStep(page, context.tail, context.previous)
 *   const judged = pager.judge(step, undefined)
 *   for (const out of judged.emit) emitted.push(`${out.offset}+${out.records.length}`)
 * }
 * // The short page at 20 does not end the list: the empty one at 25 does
 * console.log(emitted) // => [ '0+10', '10+10', '20+5', '25+0' ]
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const make = <P extends Page, H>(settings: Settings, mode: Mode): Pager<P, H> =>
  new Engine.Engine<P, H>(settings, mode)
