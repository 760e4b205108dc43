/**
 * Drift-safe paging's state and its step (docs/ARCHITECTURE.md, "Paging"): for a list that gets inserts and deletes
 * while it is read, consecutive pages overlap, a page is taken only when it holds a record already emitted, records
 * already emitted are dropped by id, and a page that overlaps nothing read makes paging step back until one does.
 *
 * The state is one object with explicit fields, because one field cannot be anything else: the set of every id
 * emitted (the only thing that makes "at most once" hold whatever the list does) grows with the export and is far
 * too large to copy per page.
 */
import { DecodeError, InvalidRequest, PagingDrift } from "@erp-client/core/ErpError"
import type * as Page from "@erp-client/core/Page"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
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

export interface GuardOptions {
  readonly endpoint: string
  readonly idField: string
  /** Records shared by consecutive pages, or `undefined` for a tenth of the page. */
  readonly overlap: number | undefined
  readonly maxRecoveryRequests: number
  /** Ids an interrupted run emitted: none of them comes out again. */
  readonly resumeAfter: Iterable<string | number> | undefined
  /** The first page's offset. */
  readonly start: number
  readonly onDrift: (event: DriftEvent) => Effect.Effect<void>
}

type Id = string | number

export class DriftGuard<A, E, R> {
  /**
   * Every id emitted so far, with a hash of the record's text (`undefined` for ids a resumed run was handed): a
   * record dropped for its id is reported when its content differs.
   */
  private readonly seen: Map<unknown, number | undefined>
  /** The last page taken, by absolute position of each id, to measure shifts. */
  private previous: Map<unknown, number> | undefined = undefined
  /** Where the records of the last page taken end (offset + received): what the next page is expected to repeat. */
  private lastEnd: number | undefined = undefined
  /** How many records the last page taken held. */
  private lastReceived = 0
  /** Whether the next page is the first of this run. */
  private first = true
  /** Doublings of the overlap so far: each lost anchor means the list moves faster than the overlap. */
  private widened = 0

  constructor(
    private readonly options: GuardOptions,
    private readonly fetch: (offset: number, count: number) => Effect.Effect<Page.Page<A>, E, R>
  ) {
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
  validate(size: number): Effect.Effect<void, InvalidRequest> {
    const overlap = this.options.overlap
    if (size >= 2 && (overlap === undefined || (Number.isSafeInteger(overlap) && overlap >= 1 && overlap < size))) {
      return Effect.void
    }
    return Effect.fail(
      new InvalidRequest({
        endpoint: this.options.endpoint,
        reason: `drift-safe paging needs 1 <= overlap < page size, got overlap ${overlap ?? "default"} with page ` +
          `size ${size}`
      })
    )
  }

  /** One page in offset order: the pages to emit, the last page looked at and what it brought (see pager.ts). */
  step(page: Page.Page<A>, size: number): Effect.Effect<Step<A>, E | DecodeError | InvalidRequest | PagingDrift, R> {
    return Effect.gen(this, function*() {
      // The first page of a fresh run is anchored by the start of the list. A page right after a page of one record
      // cannot share a record with it (an overlap must leave a position new): it is taken as plain paging takes it.
      const trusted = (this.first && page.offset === this.options.start && this.seen.size === 0) ||
        (page.offset === this.lastEnd && this.lastReceived === 1)
      this.first = false
      const accepted = yield* this.take(page, trusted)
      if (Option.isSome(accepted)) return this.stepOf([accepted.value.page], page, accepted.value.fresh)
      return yield* this.recover(page, size)
    })
  }

  // What the engine judges: the records of `last` not emitted before, and those it repeats beyond the ones it was
  // placed to share with the page before (a server that filters after cutting serves more of them again).
  private stepOf(emit: ReadonlyArray<Page.Page<A>>, last: Page.Page<A>, fresh: number): Step<A> {
    const expected = this.lastEnd === undefined ? 0 : Math.max(0, Math.min(last.received, this.lastEnd - last.offset))
    this.lastEnd = last.offset + last.received
    this.lastReceived = last.received
    return { emit, last, fresh, surplus: Math.max(0, last.received - fresh - expected) }
  }

  private idsOf(page: Page.Page<A>): Effect.Effect<ReadonlyArray<Id>, DecodeError> {
    return Effect.suspend(() => {
      // The records in the order the server sent them: valid ones fill the positions the invalid ones leave.
      const invalidAt = new Map(page.invalid.map((record) => [record.offset - page.offset, record.raw]))
      const ids: Array<Id> = []
      let valid = 0
      for (let i = 0; i < page.received; i++) {
        const raw = invalidAt.has(i) ? invalidAt.get(i) : page.raw[valid++]
        const id = typeof raw === "object" && raw !== null
          ? (raw as Record<string, unknown>)[this.options.idField]
          : undefined
        if (!(typeof id === "string" || (typeof id === "number" && Number.isFinite(id)))) {
          return Effect.fail(
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
      return Effect.succeed(ids)
    })
  }

  /**
   * The page with only its records not emitted before, and how many those are, if it overlaps what was read (or is
   * anchored by the start).
   */
  private take(
    page: Page.Page<A>,
    trusted: boolean
  ): Effect.Effect<Option.Option<{ readonly page: Page.Page<A>; readonly fresh: number }>, DecodeError> {
    return Effect.gen(this, function*() {
      const ids = yield* this.idsOf(page)
      const seen = this.seen
      if (!(trusted || page.offset === 0 || ids.some((id) => seen.has(id)))) {
        return Option.none<{ readonly page: Page.Page<A>; readonly fresh: number }>()
      }
      if (this.previous !== undefined) {
        // The last record shared with the page before: where it is now against where it was.
        for (let i = ids.length - 1; i >= 0; i--) {
          const before = this.previous.get(ids[i])
          if (before === undefined) continue
          const by = page.offset + i - before
          if (by !== 0) yield* this.options.onDrift(DriftEvent.Shifted({ offset: page.offset, by }))
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
          yield* this.options.onDrift(DriftEvent.Dropped({ offset: page.offset + i, id: ids[i] }))
        }
      }
      if (fresh.size === ids.length) return Option.some({ page, fresh: fresh.size })
      return Option.some({ page: PageOrder.keepWhere(page, (position) => fresh.has(position)), fresh: fresh.size })
    })
  }

  /**
   * The page at `lost.offset` overlapped nothing read: step back along the grid until a fresh page overlaps, then
   * walk forward to `lost.offset` (trying its first answer again before asking anew).
   */
  private recover(lost: Page.Page<A>, size: number) {
    return Effect.gen(this, function*() {
      const target = lost.offset
      this.widened += 1
      const stride = size - this.overlap(size)
      const taken: Array<Page.Page<A>> = []
      let requests = 0
      const fresh = (offset: number) =>
        requests >= this.options.maxRecoveryRequests
          ? Effect.fail(new PagingDrift({ endpoint: this.options.endpoint, offset: target, requests }))
          : Effect.suspend(() => {
            requests++
            return this.fetch(offset, size)
          })
      let cursor = Math.max(0, target - stride)
      let lostTried = false
      let last = lost
      let lastFresh = 0
      for (;;) {
        const useLost = cursor === target && !lostTried
        if (useLost) lostTried = true
        const page = useLost ? lost : yield* fresh(cursor)
        last = page
        // A fresh empty page on the way forward (or at the start of the list) is where the list now ends; the lost
        // page's own answer may be older than the pages read since, so it is asked again.
        if (page.received === 0 && !useLost && (taken.length > 0 || cursor === 0)) break
        const accepted = yield* this.take(page, false)
        if (Option.isNone(accepted)) {
          // A first answer may just be older than the pages read since: ask again there. A fresh page that
          // overlaps nothing means the list moved again: step back once more.
          if (!useLost) cursor = Math.max(0, cursor - stride)
          continue
        }
        taken.push(accepted.value.page)
        lastFresh = accepted.value.fresh
        // Forward by what the page held (a server may serve fewer than asked), overlapping it, up to the lost page;
        // an empty page ends the walk (the engine judges it: the end of the list).
        if (cursor >= target || page.received === 0) break
        cursor = Math.min(target, Judge.after(page, this.overlap(size)))
      }
      yield* this.options.onDrift(DriftEvent.Recovered({ offset: target, requests, overlap: this.overlap(size) }))
      return this.stepOf(taken, last, lastFresh)
    })
  }

  /** What a resume must carry besides the ids: the overlap reached. */
  resumeExtra(size: number): Record<string, number> {
    return { overlap: this.overlap(size) }
  }
}
