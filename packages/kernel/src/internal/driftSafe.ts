/**
 * Drift-safe paging's state and its decisions (docs/ARCHITECTURE.md, "Paging"): for a list that gets inserts and
 * deletes while it is read, consecutive pages overlap, a page is taken only when it holds a record already emitted,
 * records already emitted are dropped by id, and a page that overlaps nothing read makes paging step back until one
 * does (`Recovery`, a small state machine the caller drives with fetches). What to tell the caller comes back as
 * events, what went wrong as plain data; each edition's `Paginate.safePages` wires all of it to fetches, callbacks and
 * its errors.
 *
 * The state is one object with explicit fields, because one field cannot be anything else: the map of every id
 * emitted (the only thing that makes "at most once" hold whatever the list does) grows with the export and is far
 * too large to copy per page.
 */
import * as Changes from "../Changes.js"
import type * as Api from "../DriftSafe.js"
import * as PageOrder from "../PageOrder.js"
import type * as Pager from "../Pager.js"
import * as Judge from "../PagingJudge.js"

type Id = string | number

/** The page with only its records not emitted before, and how many those are; and what to tell. */
type Took<P> =
  | {
    readonly _tag: "Took"
    readonly taken: { readonly page: P; readonly fresh: number } | undefined
    readonly events: ReadonlyArray<Api.DriftEvent>
  }
  | Api.MissingId

export class DriftSafe<P extends PageOrder.Page> implements Api.DriftSafe<P> {
  readonly endpoint: string
  readonly idField: string
  /** Records shared by consecutive pages, or `undefined` for a tenth of the page. */
  readonly baseOverlap: number | undefined
  readonly maxRecoveryRequests: number
  /** The first page's offset. */
  readonly start: number
  readonly mode: Pager.Mode
  /**
   * Every id emitted so far, with a digest of the record's text (none for ids a resumed run was handed): a record
   * dropped for its id is reported when its content differs. A table of typed arrays (`Changes.Table`), not a Map:
   * it holds every id of the export.
   */
  private readonly seen: Changes.Table
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

  constructor(options: Api.Options, start: number) {
    this.endpoint = options.endpoint ?? "list"
    this.idField = options.idField ?? "id"
    this.baseOverlap = options.resume?.overlap ?? options.overlap
    this.maxRecoveryRequests = Math.max(0, options.maxRecoveryRequests ?? 16)
    this.start = start
    this.seen = options.seen ?? Changes.makeTable()
    for (const id of options.resumeAfter ?? []) this.seen.add(id)
    this.mode = {
      // Under change, a full page that brings nothing new is the list moving under the export, and paging moves on;
      // a long run of them is a server that does not move through the list.
      rules: {
        overlap: (size) => this.overlap(size),
        maxQuiet: Math.max(100, this.maxRecoveryRequests),
        firstRecordsUnique: false,
        minSize: 2
      },
      resumeAt: (page) => page.offset,
      resumeExtra: (size) => ({ overlap: this.overlap(size) })
    }
  }

  overlap(size: number): number {
    const base = this.baseOverlap ?? Math.max(1, Math.round(size / 10))
    const widest = Math.max(base, Math.floor(size / 2))
    return Math.max(1, Math.min(base * 2 ** this.widened, widest, size - 1))
  }

  validate(size: number): Pager.Invalid | undefined {
    const overlap = this.baseOverlap
    if (size >= 2 && (overlap === undefined || (Number.isSafeInteger(overlap) && overlap >= 1 && overlap < size))) {
      return undefined
    }
    return {
      _tag: "Invalid",
      endpoint: this.endpoint,
      reason: `drift-safe paging needs 1 <= overlap < page size, got overlap ${overlap ?? "default"} with page ` +
        `size ${size}`
    }
  }

  step(page: P, plan: { readonly size: number; readonly served: number }): Api.Taken<P> {
    // The first page of a fresh run is anchored by the start of the list. A page right after a page of one record
    // cannot share a record with it (an overlap must leave a position new): it is taken as plain paging takes it.
    const trusted = (this.first && page.offset === this.start && this.seen.size === 0) ||
      (page.offset === this.lastEnd && this.lastReceived === 1)
    this.first = false
    const took = this.take(page, trusted)
    if (took._tag === "MissingId") return { _tag: "Failed", failure: took }
    return took.taken === undefined
      ? { _tag: "Lost", recovery: new Recovery(this, page, plan.size, plan.served), events: took.events }
      : { _tag: "Taken", step: this.stepOf([took.taken.page], page, took.taken.fresh), events: took.events }
  }

  /** What the engine judges of `last`: its records not emitted before, and those it repeats beyond the overlap. */
  stepOf(emit: ReadonlyArray<P>, last: P, fresh: number): Pager.Step<P> {
    const expected = this.lastEnd === undefined ? 0 : Math.max(0, Math.min(last.received, this.lastEnd - last.offset))
    this.lastEnd = last.offset + last.received
    this.lastReceived = last.received
    return { emit, last, fresh, surplus: Math.max(0, last.received - fresh - expected) }
  }

  private idsOf(page: P): ReadonlyArray<Id> | Api.MissingId {
    // The records in the order the server sent them.
    const all = PageOrder.rawInOrder(page)
    const ids: Array<Id> = []
    for (let i = 0; i < all.length; i++) {
      const id = Changes.idOf(all[i], this.idField, () => PageOrder.textAt(page, i))
      if (id === undefined) {
        return {
          _tag: "MissingId",
          endpoint: this.endpoint,
          path: `data[${i}].${this.idField}`,
          reason: "drift-safe paging needs an id (a string or a number) on every record",
          offset: page.offset + i
        }
      }
      ids.push(id)
    }
    return ids
  }

  /**
   * The page with only its records not emitted before, and how many those are, if it overlaps what was read (or is
   * anchored by the start); and what to tell.
   */
  take(page: P, trusted: boolean): Took<P> {
    const ids = this.idsOf(page)
    if ("_tag" in ids) return ids
    const seen = this.seen
    const events: Array<Api.DriftEvent> = []
    if (!(trusted || page.offset === 0 || ids.some((id) => seen.has(id)))) {
      return { _tag: "Took", taken: undefined, events }
    }
    if (this.previous !== undefined) {
      // The last record shared with the page before: where it is now against where it was.
      for (let i = ids.length - 1; i >= 0; i--) {
        const before = this.previous.get(ids[i])
        if (before === undefined) continue
        const by = page.offset + i - before
        if (by !== 0) events.push({ _tag: "Shifted", offset: page.offset, by })
        break
      }
    }
    this.previous = new Map(ids.map((id, i) => [id, page.offset + i]))
    // Records before the first one already emitted sit in the part of the list already read: the ones that were
    // there all along came out before, so any other is an insert behind the export, which it may leave out.
    const from = ids.findIndex((id) => seen.has(id)) + 1
    const fresh = new Set<number>()
    for (let i = 0; i < ids.length; i++) {
      if (!seen.has(ids[i])) {
        if (i < from) continue
        seen.add(ids[i], PageOrder.textAt(page, i))
        fresh.add(i)
        continue
      }
      // Seen before: the same record again (the overlap), or one that only shares its id.
      const text = PageOrder.textAt(page, i)
      if (seen.differs(ids[i], text)) {
        const record = `${typeof ids[i]}\u0000${String(ids[i])}\u0000${Judge.hash(text)}`
        if (!this.dropped.has(record)) {
          this.dropped.add(record)
          events.push({
            _tag: "Dropped",
            offset: page.offset + i,
            id: Changes.idValue(ids[i]),
            idJson: Changes.idJson(ids[i])
          })
        }
      }
    }
    const taken = fresh.size === ids.length ? page : PageOrder.keepWhere(page, (position) => fresh.has(position))
    return { _tag: "Took", taken: { page: taken, fresh: fresh.size }, events }
  }
}

/**
 * The page at `lost.offset` overlapped nothing read: step back along the grid until a fresh page overlaps, then walk
 * forward to `lost.offset` (trying its first answer again before asking anew). Driven by `next()` and `feed(page)`.
 */
export class Recovery<P extends PageOrder.Page> implements Api.Recovery<P> {
  private readonly target: number
  private readonly stride: number
  private readonly taken: Array<P> = []
  private readonly events: Array<Api.DriftEvent> = []
  private requests = 0
  private cursor: number
  private lostTried = false
  private last: P
  private lastFresh = 0
  private done = false
  /** A page fed (or the lost page) without the ids drift-safe paging needs: the recovery fails with it. */
  private failure: Api.MissingId | undefined = undefined

  constructor(
    private readonly state: DriftSafe<P>,
    private readonly lost: P,
    private readonly size: number,
    /** The most records the server has served in one page (see `consider`). */
    private served: number
  ) {
    this.target = lost.offset
    state.widened += 1
    this.stride = size - state.overlap(size)
    this.cursor = Math.max(0, this.target - this.stride)
    this.last = lost
  }

  next(): Api.Next<P> {
    while (!this.done) {
      if (this.failure !== undefined) return { _tag: "Fail", failure: this.failure }
      const useLost = this.cursor === this.target && !this.lostTried
      if (!useLost) {
        if (this.requests >= this.state.maxRecoveryRequests) {
          const failure: Api.Drift = {
            _tag: "Drift",
            endpoint: this.state.endpoint,
            offset: this.target,
            requests: this.requests
          }
          return { _tag: "Fail", failure }
        }
        this.requests++
        return { _tag: "Fetch", offset: this.cursor, count: this.size }
      }
      this.lostTried = true
      this.consider(this.lost, true)
    }
    this.events.push({
      _tag: "Recovered",
      offset: this.target,
      requests: this.requests,
      overlap: this.state.overlap(this.size)
    })
    return { _tag: "Done", step: this.state.stepOf(this.taken, this.last, this.lastFresh), events: this.events }
  }

  feed(page: P): void {
    this.consider(page, false)
  }

  private consider(page: P, useLost: boolean): void {
    const before = this.taken[this.taken.length - 1]
    this.served = Math.max(this.served, page.received)
    this.last = page
    // A fresh empty page (the lost page's own answer may be older than the pages read since: it is asked again) says
    // the list now ends at or before it. That is the end of the export only at the start of the list (the list is
    // empty), or after a page taken on the way that held the end of the list, so that every record present all along
    // was read: a short page, and either shorter than the server has served a page (a page cut short by a server that
    // clamps its pages is followed by more) or followed by this empty page right after its records (as a list that
    // does not change ends). After any other page, the list shrank under the walk by more than the walk advanced, and
    // records not read yet may now sit behind it: step back, as from a page that overlaps nothing. The empty page is
    // what the engine judges, and it brought nothing new: the end.
    if (page.received === 0 && !useLost) {
      const heldTheEnd = before !== undefined && before.received < before.count &&
        (before.received < this.served || page.offset >= before.offset + before.received)
      if (this.cursor === 0 || heldTheEnd) {
        this.done = true
        this.lastFresh = 0
      } else {
        this.cursor = Math.max(0, this.cursor - this.stride)
      }
      return
    }
    const took = this.state.take(page, false)
    if (took._tag === "MissingId") {
      this.failure = took
      return
    }
    this.events.push(...took.events)
    if (took.taken === undefined) {
      // A first answer may just be older than the pages read since: ask again there. A fresh page that overlaps
      // nothing means the list moved again: step back once more.
      if (!useLost) this.cursor = Math.max(0, this.cursor - this.stride)
      return
    }
    this.taken.push(took.taken.page)
    this.lastFresh = took.taken.fresh
    // Forward by what the page held (a server may serve fewer than asked), overlapping it, up to the lost page.
    if (this.cursor >= this.target) this.done = true
    else this.cursor = Math.min(this.target, Judge.after(page, this.state.overlap(this.size)))
  }
}
