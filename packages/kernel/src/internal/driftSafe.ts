/**
 * Drift-safe paging's state and its decisions, behind `DriftSafe` (whose header says the rules), with `Recovery`, the
 * small state machine that steps back along the grid when a page overlaps nothing read.
 *
 * The state is one object with explicit fields, because one field cannot be anything else: the map of every id
 * emitted (the only thing that makes "at most once" hold whatever the list does) grows with the export and is far
 * too large to copy per page.
 */
import * as Changes from "../Changes.js"
import type * as Api from "../DriftSafe.js"
import type * as Pager from "../Pager.js"
import * as PageOrder from "./pageOrder.js"
import * as Judge from "./pagingJudge.js"

type Id = string | number

/** The page with only its records not emitted before, and how many those are; and what to tell. */
type Took<P> =
  | {
    readonly _tag: "Took"
    readonly taken: { readonly page: P; readonly fresh: number } | undefined
    readonly events: ReadonlyArray<Api.DriftEvent>
  }
  | Api.MissingId

export class DriftSafe<P extends Pager.Page> implements Api.DriftSafe<P> {
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
  /** Whether the last page taken held records, fewer than asked. */
  private lastShort = false
  /** The last page taken, as the server sent it. */
  private lastPage: P | undefined = undefined
  /** Whether the next page is the first of this run. */
  private first = true
  /** Doublings of the overlap so far: each lost anchor means the list moves faster than the overlap. */
  widened = 0
  /** The farthest any page taken reached (offset + records), and the look-back requests spent since it grew. */
  private farthest = 0
  private idle = 0
  /** The offset of an empty page past the records of a short page: the list ended before it (see `stepOf`). */
  private bound: number | undefined = undefined
  /** Whether a page past the records of a short page found more since the last full page (see `afterShort`). */
  chasing = false
  /** How far the last page taken reached past the one before it, per request between them. */
  private growth = 0
  /** The page size asked last, and the smallest a page moved paging on by so far (less the overlap). */
  private pageSize = 1
  private stride = Infinity
  /** Pages asked so far (each step and each look back), and how many when the last page was taken. */
  private requests = 0
  private takenAt = 0

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
        minSize: 2,
        afterShort: (page, plan) => this.afterShort(page, plan)
      },
      resumeAt: (page) => page.offset,
      resumeExtra: (size) => ({ overlap: this.overlap(size) }),
      // The end read again is judged afresh: not by a bound an earlier answer set.
      confirmEnd: options.confirmEnd === undefined ? undefined : () => {
        const again = options.confirmEnd!()
        if (again) this.bound = undefined
        return again
      }
    }
  }

  /**
   * Where the page after a short page goes (`PagingJudge.Rules.afterShort`). A page as long as the largest the server
   * has served, or of a length the server now seems to serve (`servesNow`), may be cut there: the next page overlaps
   * it, as plain paging follows it. Any other short page held the end of the list when it was answered, or was cut
   * short by records filtered out: the next page goes right after its records, where an empty page bounds the list
   * (see `step`). Once such a page found the list going on (`chasing`: records added at its end, or moved there), the
   * next one goes further, by as far as the list's end moved per request since the page taken before and one more,
   * but no further than a page on less the overlap (within the cut of a page that was short for records filtered out,
   * so that it overlaps it).
   */
  afterShort(page: Judge.Observation, plan: Judge.Plan): number | undefined {
    if (this.servesNow !== undefined || page.received >= plan.served) return undefined
    const overlap = this.overlap(plan.size)
    const end = page.offset + page.received
    const ahead = this.chasing ? Math.ceil(this.growth) + 1 : 0
    const far = page.offset + Math.min(page.count, plan.served) - overlap
    return Math.max(Judge.after(page, overlap), Math.min(end + ahead, Math.max(end, far)))
  }

  overlap(size: number): number {
    // Widened up to half a page (or the overlap asked, if larger), always leaving a page something new; an overlap asked
    // that no longer fits the page (the server serves fewer a page than that) gives way to half a page, so that every
    // full page still moves paging on by half a page at least.
    const base = this.baseOverlap ?? Math.max(1, Math.round(size / 10))
    const widest = Math.max(base, Math.floor(size / 2))
    const limit = base < size ? size - 1 : Math.floor(size / 2)
    return Math.max(1, Math.min(base * 2 ** this.widened, widest, limit))
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
    // A page past the records of a short page taken just before (see `afterShort`). Empty: the list ended before it, a
    // bound; holding nothing read: records the short page did not reach lie between (added at the end, a server that
    // now serves fewer a page, or the list moved). One page overlapping the short one goes on from either (`Retreat`).
    const short = this.lastShort ? this.lastPage : undefined
    const past = !this.first && !trusted && short !== undefined && page.offset >= (this.lastEnd ?? 0)
    if (past && page.received > 0) this.chasing = true
    this.first = false
    this.pageSize = plan.size
    const spent = this.spend(page.offset)
    if (spent !== undefined) return { _tag: "Failed", failure: spent }
    if (past && page.received === 0) {
      this.bound = page.offset
      return { _tag: "Lost", recovery: new Retreat(this, short, plan.size, plan.served), events: [] }
    }
    const took = this.take(page, trusted)
    if (took._tag === "MissingId") return { _tag: "Failed", failure: took }
    if (took.taken !== undefined) {
      return { _tag: "Taken", step: this.stepOf([took.taken.page], page, took.taken.fresh), events: took.events }
    }
    const recovery = past
      ? new Retreat(this, short, plan.size, Math.max(plan.served, page.received))
      : new Recovery(this, page, plan.size, plan.served)
    return { _tag: "Lost", recovery, events: took.events }
  }

  /**
   * A page length the server seems to serve now, below the largest it has served (a page right after a short page was
   * exactly as long): paging follows such pages one at a time while they keep that length.
   */
  servesNow: number | undefined = undefined

  /**
   * What the engine judges of `last`: its records not emitted before, and those it repeats beyond the overlap with the
   * page taken before it (which ended at `priorEnd`: by default the last page this state stepped). A short page whose
   * records reach the bound an empty page set (see `step`) ends the list: the list held nothing at the bound when
   * that page was answered, and this one, anchored by a record read, holds every record from it up to the list's end.
   * Reaching past it, such a page ends the list only once the list was found growing at its end (`chasing`).
   */
  stepOf(emit: ReadonlyArray<P>, last: P, fresh: number, priorEnd = this.lastEnd): Pager.Step<P> {
    const expected = priorEnd === undefined ? 0 : Math.max(0, Math.min(last.received, priorEnd - last.offset))
    // How far the list's end moved per request since the page taken before (a page ends where the list ended).
    const elapsed = Math.max(1, this.requests - this.takenAt)
    this.growth = priorEnd === undefined ? 0 : Math.max(0, last.offset + last.received - priorEnd) / elapsed
    this.takenAt = this.requests
    this.lastEnd = last.offset + last.received
    this.lastReceived = last.received
    this.lastShort = last.received > 0 && last.received < last.count
    this.lastPage = last
    if (last.received !== this.servesNow) this.servesNow = undefined
    if (last.received >= last.count) {
      this.bound = undefined
      this.chasing = false
    }
    // Past the bound, the list goes on beyond an empty page: it grew there (then the list ends with this page, once it
    // was found growing before) or that answer was empty for a moment (then paging goes on, as after a short page).
    const bounded = this.bound !== undefined && this.lastShort &&
      (this.lastEnd === this.bound || (this.chasing && this.lastEnd > this.bound))
    if (this.bound !== undefined && !bounded && this.lastEnd > this.bound) {
      this.bound = undefined
      this.chasing = true
    }
    const step = { emit, last, fresh, surplus: Math.max(0, last.received - fresh - expected) }
    return bounded ? { ...step, ends: true } : step
  }

  private idsOf(page: P): ReadonlyArray<Id> | Api.MissingId {
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
    // The last record shared with the page before, unchanged: where it is now against where it was.
    const before = this.previous
    let shift = 0
    if (before !== undefined) {
      for (let i = ids.length - 1; i >= 0; i--) {
        const at = before.get(ids[i])
        if (at === undefined || seen.differs(ids[i], PageOrder.textAt(page, i))) continue
        shift = page.offset + i - at
        if (shift !== 0) events.push({ _tag: "Shifted", offset: page.offset, by: shift })
        break
      }
    }
    this.previous = new Map(ids.map((id, i) => [id, page.offset + i]))
    // Records before the first one already emitted sit in the part of the list already read: the ones that were
    // there all along came out before, so any other is an insert behind the export, which it may leave out.
    const from = ids.findIndex((id) => seen.has(id)) + 1
    const fresh = new Set<number>()
    const inPage = new Set<Id>()
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]
      const again = inPage.has(id)
      inPage.add(id)
      if (!seen.has(id)) {
        if (i < from) continue
        seen.add(id, PageOrder.textAt(page, i))
        fresh.add(i)
        continue
      }
      // Seen before: the same record again (the overlap), or one that only shares its id.
      const text = PageOrder.textAt(page, i)
      if (!seen.differs(id, text)) continue
      // Read again within what was read before (shifted as the list moved): that record, updated since it was read.
      // Twice in one answer, or past what was read: a distinct record with the same id (a record is first read past
      // the pages before, so a distinct record with a read id is met there first).
      const updated = !again && page.offset + i < (this.lastEnd ?? 0) + Math.max(0, shift)
      const record = `${typeof id}\u0000${String(id)}\u0000${Judge.hash(text)}`
      if (this.dropped.has(record)) continue
      this.dropped.add(record)
      if (!updated) seen.duplicate(id)
      events.push({
        _tag: "Dropped",
        offset: page.offset + i,
        id: Changes.idValue(id),
        idJson: Changes.idJson(id),
        reason: updated ? "updated" : "duplicate"
      })
    }
    const taken = fresh.size === ids.length ? page : PageOrder.keepWhere(page, (position) => fresh.has(position))
    if (page.offset + page.received > this.farthest) {
      this.farthest = page.offset + page.received
      this.idle = 0
    }
    return { _tag: "Took", taken: { page: taken, fresh: fresh.size }, events }
  }

  /**
   * One request of a look back (a `Recovery` or a `Retreat`), or the failure when look backs have spent twice the
   * budget of one (8 at least: a `Retreat` is how the end of a list is found) since a page taken last reached farther
   * into the list than any before: the list moves on faster than paging finds its place again, and paging fails
   * rather than go round for ever.
   */
  lookBack(offset: number): Api.Drift | undefined {
    this.idle++
    if (this.idle > Math.max(8, 2 * this.maxRecoveryRequests)) {
      return { _tag: "Drift", endpoint: this.endpoint, offset, requests: this.idle - 1 }
    }
    return this.spend(offset)
  }

  /**
   * One request more, or the failure past the bound on them: 4 requests a page of positions reached (the farthest a
   * page taken reached, in the smallest step a page has moved paging on by: what the server serves, less the
   * overlap), and 4 look backs' budget and 8 more. A list that grows by less than a quarter page a request is read to
   * its end within it (the requests grow with the positions reached, four times slower); one that grows faster
   * outruns paging, which fails here instead of chasing it.
   */
  spend(offset: number): Api.Drift | undefined {
    this.requests++
    const page = Math.max(1, this.lastReceived > 0 ? this.lastReceived : this.pageSize)
    this.stride = Math.min(this.stride, Math.max(1, page - this.overlap(page)))
    const bound = 4 * Math.ceil(this.farthest / this.stride) + 4 * this.maxRecoveryRequests + 8
    return this.requests > bound
      ? { _tag: "Drift", endpoint: this.endpoint, offset, requests: this.requests }
      : undefined
  }
}

/**
 * After a short page (`short`), the page placed past its records was empty further on (the list ended before it: a
 * bound, see `DriftSafe.stepOf`) or held nothing read (records the short page did not reach lie between: added at the
 * end, a server that now serves fewer a page, or the list moved). Paging goes on from one page right after the short
 * page's records, sharing the overlap. Exactly as long as the short page, as a server that now serves that many a
 * page answers, it makes paging follow pages one at a time while they keep that length (`DriftSafe.servesNow`). A page
 * that overlaps nothing read means the list moved meanwhile: a `Recovery` from it.
 */
export class Retreat<P extends Pager.Page> implements Api.Recovery<P> {
  private answer: Api.Next<P> | undefined = undefined
  private recovery: Recovery<P> | undefined = undefined

  constructor(
    private readonly state: DriftSafe<P>,
    private readonly short: P,
    private readonly size: number,
    private readonly served: number
  ) {}

  next(): Api.Next<P> {
    if (this.recovery !== undefined) return this.recovery.next()
    if (this.answer !== undefined) return this.answer
    const offset = Judge.after(this.short, this.state.overlap(this.size))
    const idle = this.state.lookBack(offset)
    if (idle !== undefined) {
      this.answer = { _tag: "Fail", failure: idle }
      return this.answer
    }
    return { _tag: "Fetch", offset, count: this.size }
  }

  feed(page: P): void {
    if (this.recovery !== undefined) return this.recovery.feed(page)
    // Empty right after the short page's records (a page of one record shares none): the end, as after any short page.
    if (page.received === 0 && page.offset >= this.short.offset + this.short.received) {
      this.answer = { _tag: "Done", step: { ...this.state.stepOf([page], page, 0), ends: true }, events: [] }
      return
    }
    const took = this.state.take(page, false)
    if (took._tag === "MissingId") {
      this.answer = { _tag: "Fail", failure: took }
      return
    }
    if (took.taken === undefined) {
      this.recovery = new Recovery(this.state, page, this.size, this.served)
      return
    }
    const step = this.state.stepOf([took.taken.page], page, took.taken.fresh)
    if (page.received < page.count && page.received === this.short.received) this.state.servesNow = page.received
    this.answer = { _tag: "Done", step, events: took.events }
  }
}

/**
 * The page at `lost.offset` overlapped nothing read: step back along the grid until a fresh page overlaps, then walk
 * forward to `lost.offset` (trying its first answer again before asking anew). Driven by `next()` and `feed(page)`.
 */
export class Recovery<P extends Pager.Page> implements Api.Recovery<P> {
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
  /** Where the last page taken on the walk ends, and the one before it (what the last one was placed to repeat). */
  private takenEnd: number | undefined = undefined
  private priorEnd: number | undefined = undefined
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
    // Back by a page of what the server serves (it may serve fewer than asked), less the overlap.
    const page = served > 0 ? Math.min(size, served) : size
    this.stride = Math.max(1, page - state.overlap(page))
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
        const idle = this.state.lookBack(this.target)
        if (idle !== undefined) return { _tag: "Fail", failure: idle }
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
    return {
      _tag: "Done",
      step: this.state.stepOf(this.taken, this.last, this.lastFresh, this.priorEnd),
      events: this.events
    }
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
    this.priorEnd = this.takenEnd
    this.takenEnd = page.offset + page.received
    // Forward by what the page held (a server may serve fewer than asked), overlapping it, up to the lost page.
    if (this.cursor >= this.target) this.done = true
    else this.cursor = Math.min(this.target, Judge.after(page, this.state.overlap(this.size)))
  }
}
