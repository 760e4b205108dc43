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

/**
 * What drift-safe paging noticed.
 *
 * - `Shifted`: the page at `offset` found the records it shares with the page before `by` places from where they
 *   were (positive: inserted ahead of it since; negative: deleted). Repeated records were dropped, none skipped.
 * - `Recovered`: no record of the page at `offset` had been read before (the list moved by more than the overlap);
 *   paging stepped back until a page overlapped again and came forward, spending `requests` extra requests, and
 *   pages from then on overlap by `overlap` (doubled, up to half a page).
 */
export type DriftEvent = Data.TaggedEnum<{
  Shifted: { readonly offset: number; readonly by: number }
  Recovered: { readonly offset: number; readonly requests: number; readonly overlap: number }
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
  /** Every id emitted so far. */
  private readonly seen: Set<unknown>
  /** The last page taken, by absolute position of each id, to measure shifts. */
  private previous: Map<unknown, number> | undefined = undefined
  /** Whether the next page is the first of this run. */
  private first = true
  /** Doublings of the overlap so far: each lost anchor means the list moves faster than the overlap. */
  private widened = 0

  constructor(
    private readonly options: GuardOptions,
    private readonly fetch: (offset: number, count: number) => Effect.Effect<Page.Page<A>, E, R>
  ) {
    this.seen = new Set<unknown>(options.resumeAfter)
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

  /**
   * One page in offset order: the pages to emit, and the last page looked at (see `Mode.step` in pager.ts).
   * `served` is the most records the server has served in one page so far.
   */
  step(
    page: Page.Page<A>,
    size: number,
    served: number
  ): Effect.Effect<
    { readonly emit: ReadonlyArray<Page.Page<A>>; readonly last: Page.Page<A> },
    E | DecodeError | InvalidRequest | PagingDrift,
    R
  > {
    return Effect.gen(this, function*() {
      const trusted = this.first && page.offset === this.options.start && this.seen.size === 0
      this.first = false
      const accepted = yield* this.take(page, trusted)
      if (Option.isSome(accepted)) return { emit: [accepted.value], last: page }
      return yield* this.recover(page, size, served)
    })
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

  /** The page with only its records not emitted before, if it overlaps what was read (or is anchored by the start). */
  private take(page: Page.Page<A>, trusted: boolean): Effect.Effect<Option.Option<Page.Page<A>>, DecodeError> {
    return Effect.gen(this, function*() {
      const ids = yield* this.idsOf(page)
      const seen = this.seen
      if (!(trusted || page.offset === 0 || ids.some((id) => seen.has(id)))) return Option.none<Page.Page<A>>()
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
      for (let i = from; i < ids.length; i++) {
        if (!seen.has(ids[i])) {
          seen.add(ids[i])
          fresh.add(i)
        }
      }
      if (fresh.size === ids.length) return Option.some(page)
      const invalidAt = new Set(page.invalid.map((record) => record.offset - page.offset))
      // Valid records fill the positions the invalid ones leave, as in `idsOf`.
      const records: Array<A> = []
      const raw: Array<unknown> = []
      let valid = 0
      for (let i = 0; i < ids.length; i++) {
        if (invalidAt.has(i)) continue
        if (fresh.has(i)) {
          records.push(page.records[valid])
          raw.push(page.raw[valid])
        }
        valid++
      }
      const invalid = page.invalid.filter((record) => fresh.has(record.offset - page.offset))
      return Option.some({ ...page, records, raw, invalid })
    })
  }

  /**
   * The page at `lost.offset` overlapped nothing read: step back along the grid until a fresh page overlaps, then
   * walk forward to `lost.offset` (trying its first answer again before asking anew).
   */
  private recover(lost: Page.Page<A>, size: number, served: number) {
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
      for (;;) {
        const useLost = cursor === target && !lostTried
        if (useLost) lostTried = true
        const page = useLost ? lost : yield* fresh(cursor)
        last = page
        const accepted = yield* this.take(page, false)
        if (Option.isNone(accepted)) {
          // A first answer may just be older than the pages read since: ask again there. A fresh page that
          // overlaps nothing means the list moved again: step back once more.
          if (!useLost) cursor = Math.max(0, cursor - stride)
          continue
        }
        taken.push(accepted.value)
        // A page shorter than one the server has served is the end of the list (see pager.ts); otherwise forward by
        // what the page held (a server may serve fewer than asked), overlapping it.
        const end = page.received === 0 || (page.received < page.count && page.received < served)
        if (cursor >= target || end) break
        cursor = Math.min(target, page.offset + page.received - Math.min(this.overlap(size), page.received - 1))
      }
      yield* this.options.onDrift(DriftEvent.Recovered({ offset: target, requests, overlap: this.overlap(size) }))
      return { emit: taken, last }
    })
  }

  /** What a resume must carry besides the ids: the overlap reached. */
  resumeExtra(size: number): Record<string, number> {
    return { overlap: this.overlap(size) }
  }
}
