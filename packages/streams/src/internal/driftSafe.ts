/**
 * Drift-safe paging's state and its decisions, with no Effect in them (docs/ARCHITECTURE.md, "Paging"): for a list
 * that gets inserts and deletes while it is read, consecutive pages overlap, a page is taken only when it holds a
 * record already emitted, records already emitted are dropped by id, and a page that overlaps nothing read makes
 * paging step back until one does (`Recovery`, a small state machine the caller drives with fetches). What to tell
 * the caller comes back as events; `Paginate.safePages` wires all of it to fetches and callbacks.
 *
 * The state is one object with explicit fields, because one field cannot be anything else: the map of every id
 * emitted (the only thing that makes "at most once" hold whatever the list does) grows with the export and is far
 * too large to copy per page.
 */
import { DecodeError, InvalidRequest, PagingDrift } from "@erp-client/core/ErpError"
import type * as Page from "@erp-client/core/Page"
import * as Data from "effect/Data"
import * as Either from "effect/Either"
import * as Judge from "./judge.js"
import * as PageOrder from "./pageOrder.js"
import type { Step } from "./pager.js"

/**
 * What drift-safe paging noticed.
 *
 * - `Shifted`: the page at `offset` found the records it shares with the page before `by` places from where they
 *   were (positive: inserted ahead of it since; negative: deleted). Repeated records were dropped, none skipped.
 * - `Recovered`: no record of the page at `offset` had been read before (the list moved by more than the overlap);
 *   paging stepped back until a page overlapped again and came forward, spending `requests` extra requests, and
 *   pages from then on overlap by `overlap` (doubled, up to half a page).
 * - `Dropped`: the record at `offset` has the id of a record already emitted but other content, and was not emitted:
 *   a record updated during the export (its earlier version came out), or a distinct record that repeats another's
 *   id (ids are what drift-safe paging tells records apart by).
 */
export type DriftEvent = Data.TaggedEnum<{
  Shifted: { readonly offset: number; readonly by: number }
  Recovered: { readonly offset: number; readonly requests: number; readonly overlap: number }
  Dropped: { readonly offset: number; readonly id: string | number }
}>

export const DriftEvent = Data.taggedEnum<DriftEvent>()

export interface Options {
  readonly endpoint: string
  readonly idField: string
  /** Records shared by consecutive pages, or `undefined` for a tenth of the page. */
  readonly overlap: number | undefined
  readonly maxRecoveryRequests: number
  /** Ids an interrupted run emitted: none of them comes out again. */
  readonly resumeAfter: Iterable<string | number> | undefined
  /** The first page's offset. */
  readonly start: number
}

type Id = string | number

/** A page judged: taken (its records not emitted before, what to tell), or lost (no record read before in it). */
export type Taken<A> =
  | { readonly _tag: "Taken"; readonly step: Step<A>; readonly events: ReadonlyArray<DriftEvent> }
  | { readonly _tag: "Lost"; readonly recovery: Recovery<A>; readonly events: ReadonlyArray<DriftEvent> }

/** What a recovery needs next. */
export type Next<A> =
  | { readonly _tag: "Fetch"; readonly offset: number; readonly count: number }
  | { readonly _tag: "Done"; readonly step: Step<A>; readonly events: ReadonlyArray<DriftEvent> }
  | { readonly _tag: "Fail"; readonly error: PagingDrift | DecodeError }

export class DriftSafe<A> {
  /**
   * Every id emitted so far, with a hash of the record's text (`undefined` for ids a resumed run was handed): a
   * record dropped for its id is reported when its content differs.
   */
  private readonly seen: Map<unknown, number | undefined>
  /**
   * The records reported as dropped, by id and hash of their text: one read again in the overlap of the next page is
   * the same record, and is reported once.
   */
  private readonly dropped = new Set<string>()
  /** The last page taken, by absolute position of each id, to measure shifts. */
  private previous: Map<unknown, number> | undefined = undefined
  /** Where the records of the last page taken end (offset + received): what the next page is expected to repeat. */
  private lastEnd: number | undefined = undefined
  /** How many records the last page taken held. */
  private lastReceived = 0
  /** Whether the next page is the first of this run. */
  private first = true
  /** Doublings of the overlap so far: each lost anchor means the list moves faster than the overlap. */
  widened = 0

  constructor(readonly options: Options) {
    this.seen = new Map<unknown, number | undefined>()
    for (const id of options.resumeAfter ?? []) this.seen.set(id, undefined)
  }

  /**
   * Records consecutive pages share at this page size: the option (or a tenth of the page), doubled per recovery up
   * to half a page (or the option, if larger), and always leaving each page at least one record that is new.
   */
  overlap(size: number): number {
    const base = this.options.overlap ?? Math.max(1, Math.round(size / 10))
    const widest = Math.max(base, Math.floor(size / 2))
    return Math.max(1, Math.min(base * 2 ** this.widened, widest, size - 1))
  }

  /** Checks the options against the first page size: an overlap must leave each page something new. */
  validate(size: number): InvalidRequest | undefined {
    const overlap = this.options.overlap
    if (size >= 2 && (overlap === undefined || (Number.isSafeInteger(overlap) && overlap >= 1 && overlap < size))) {
      return undefined
    }
    return new InvalidRequest({
      endpoint: this.options.endpoint,
      reason: `drift-safe paging needs 1 <= overlap < page size, got overlap ${overlap ?? "default"} with page ` +
        `size ${size}`
    })
  }

  /** One page in offset order, asked at page size `size` (see `Mode.step` in pager.ts). */
  step(page: Page.Page<A>, size: number): Either.Either<Taken<A>, DecodeError> {
    // The first page of a fresh run is anchored by the start of the list. A page right after a page of one record
    // cannot share a record with it (an overlap must leave a position new): it is taken as plain paging takes it.
    const trusted = (this.first && page.offset === this.options.start && this.seen.size === 0) ||
      (page.offset === this.lastEnd && this.lastReceived === 1)
    this.first = false
    return Either.map(this.take(page, trusted), (taken): Taken<A> =>
      taken.taken === undefined
        ? { _tag: "Lost", recovery: new Recovery(this, page, size), events: taken.events }
        : {
          _tag: "Taken",
          step: this.stepOf([taken.taken.page], page, taken.taken.fresh),
          events: taken.events
        })
  }

  /** What the engine judges of `last`: its records not emitted before, and those it repeats beyond the overlap. */
  stepOf(emit: ReadonlyArray<Page.Page<A>>, last: Page.Page<A>, fresh: number): Step<A> {
    const expected = this.lastEnd === undefined ? 0 : Math.max(0, Math.min(last.received, this.lastEnd - last.offset))
    this.lastEnd = last.offset + last.received
    this.lastReceived = last.received
    return { emit, last, fresh, surplus: Math.max(0, last.received - fresh - expected) }
  }

  private idsOf(page: Page.Page<A>): Either.Either<ReadonlyArray<Id>, DecodeError> {
    // The records in the order the server sent them.
    const all = PageOrder.rawInOrder(page)
    const ids: Array<Id> = []
    for (let i = 0; i < all.length; i++) {
      const raw = all[i]
      const id = typeof raw === "object" && raw !== null
        ? (raw as Record<string, unknown>)[this.options.idField]
        : undefined
      if (!(typeof id === "string" || (typeof id === "number" && Number.isFinite(id)))) {
        return Either.left(
          new DecodeError({
            endpoint: this.options.endpoint,
            path: `data[${i}].${this.options.idField}`,
            reason: "drift-safe paging needs an id (a string or a number) on every record",
            offset: page.offset + i
          })
        )
      }
      ids.push(id)
    }
    return Either.right(ids)
  }

  /**
   * The page with only its records not emitted before, and how many those are, if it overlaps what was read (or is
   * anchored by the start); and what to tell.
   */
  take(
    page: Page.Page<A>,
    trusted: boolean
  ): Either.Either<
    {
      readonly taken: { readonly page: Page.Page<A>; readonly fresh: number } | undefined
      readonly events: ReadonlyArray<DriftEvent>
    },
    DecodeError
  > {
    return Either.map(this.idsOf(page), (ids) => {
      const seen = this.seen
      const events: Array<DriftEvent> = []
      if (!(trusted || page.offset === 0 || ids.some((id) => seen.has(id)))) return { taken: undefined, events }
      if (this.previous !== undefined) {
        // The last record shared with the page before: where it is now against where it was.
        for (let i = ids.length - 1; i >= 0; i--) {
          const before = this.previous.get(ids[i])
          if (before === undefined) continue
          const by = page.offset + i - before
          if (by !== 0) events.push(DriftEvent.Shifted({ offset: page.offset, by }))
          break
        }
      }
      this.previous = new Map(ids.map((id, i) => [id, page.offset + i]))
      // Records before the first one already emitted sit in the part of the list already read: the ones that were
      // there all along came out before, so any other is an insert behind the export, which it may leave out.
      const from = ids.findIndex((id) => seen.has(id)) + 1
      const fresh = new Set<number>()
      for (let i = 0; i < ids.length; i++) {
        const text = Judge.hash(PageOrder.textAt(page, i))
        if (!seen.has(ids[i])) {
          if (i < from) continue
          seen.set(ids[i], text)
          fresh.add(i)
          continue
        }
        // Seen before: the same record again (the overlap), or one that only shares its id.
        const before = seen.get(ids[i])
        if (before !== undefined && before !== text) {
          const record = `${String(ids[i])}\u0000${text}`
          if (!this.dropped.has(record)) {
            this.dropped.add(record)
            events.push(DriftEvent.Dropped({ offset: page.offset + i, id: ids[i] }))
          }
        }
      }
      const taken = fresh.size === ids.length ? page : PageOrder.keepWhere(page, (position) => fresh.has(position))
      return { taken: { page: taken, fresh: fresh.size }, events }
    })
  }

  /** What a resume must carry besides the ids: the overlap reached. */
  resumeExtra(size: number): Record<string, number> {
    return { overlap: this.overlap(size) }
  }
}

/**
 * The page at `lost.offset` overlapped nothing read: step back along the grid until a fresh page overlaps, then walk
 * forward to `lost.offset` (trying its first answer again before asking anew). Drive it: `next()` says what to fetch
 * (or that it is done, or has failed), `feed(page)` hands the fetched page in.
 */
export class Recovery<A> {
  private readonly target: number
  private readonly stride: number
  private readonly taken: Array<Page.Page<A>> = []
  private readonly events: Array<DriftEvent> = []
  private requests = 0
  private cursor: number
  private lostTried = false
  private last: Page.Page<A>
  private lastFresh = 0
  private done = false

  constructor(
    private readonly state: DriftSafe<A>,
    private readonly lost: Page.Page<A>,
    private readonly size: number
  ) {
    this.target = lost.offset
    state.widened += 1
    this.stride = size - state.overlap(size)
    this.cursor = Math.max(0, this.target - this.stride)
    this.last = lost
  }

  /** The next thing to do: a page to fetch, or the end of the recovery. */
  next(): Next<A> {
    while (!this.done) {
      const useLost = this.cursor === this.target && !this.lostTried
      if (!useLost) {
        if (this.requests >= this.state.options.maxRecoveryRequests) {
          return {
            _tag: "Fail",
            error: new PagingDrift({
              endpoint: this.state.options.endpoint,
              offset: this.target,
              requests: this.requests
            })
          }
        }
        this.requests++
        return { _tag: "Fetch", offset: this.cursor, count: this.size }
      }
      this.lostTried = true
      const fed = this.consider(this.lost, true)
      if (Either.isLeft(fed)) return { _tag: "Fail", error: fed.left }
    }
    this.events.push(
      DriftEvent.Recovered({ offset: this.target, requests: this.requests, overlap: this.state.overlap(this.size) })
    )
    return { _tag: "Done", step: this.state.stepOf(this.taken, this.last, this.lastFresh), events: this.events }
  }

  /** The page `next()` asked for. */
  feed(page: Page.Page<A>): Either.Either<void, DecodeError> {
    return this.consider(page, false)
  }

  private consider(page: Page.Page<A>, useLost: boolean): Either.Either<void, DecodeError> {
    this.last = page
    // A fresh empty page on the way forward (or at the start of the list) is where the list now ends; the lost
    // page's own answer may be older than the pages read since, so it is asked again.
    if (page.received === 0 && !useLost && (this.taken.length > 0 || this.cursor === 0)) {
      this.done = true
      return Either.void
    }
    return Either.map(this.state.take(page, false), ({ events, taken }) => {
      this.events.push(...events)
      if (taken === undefined) {
        // A first answer may just be older than the pages read since: ask again there. A fresh page that overlaps
        // nothing means the list moved again: step back once more.
        if (!useLost) this.cursor = Math.max(0, this.cursor - this.stride)
        return
      }
      this.taken.push(taken.page)
      this.lastFresh = taken.fresh
      // Forward by what the page held (a server may serve fewer than asked), overlapping it, up to the lost page.
      if (this.cursor >= this.target) this.done = true
      else this.cursor = Math.min(this.target, Judge.after(page, this.state.overlap(this.size)))
    })
  }
}
