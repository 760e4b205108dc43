/**
 * Offset paging of any source as a Stream: ordered, bounded concurrency, the page size learned from the server,
 * the end taken only when the server says so, resumable, and drift-safe for lists that change while they are read.
 * Nothing here knows the ERP: `ListEndpoint` pages its list endpoints with it.
 *
 * @since 0.1.0
 */
import { DecodeError, InvalidRequest, PagingDrift } from "@erp-client/core/ErpError"
import type { PagingLoop } from "@erp-client/core/ErpError"
import type * as Page from "@erp-client/core/Page"
import * as DriftSafe from "@erp-client/kernel/DriftSafe"
import * as KernelPager from "@erp-client/kernel/Pager"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as Stream from "effect/Stream"
import type * as Changes from "./Changes.js"
import { mapConcat } from "./internal/edition.js"
import * as Pager from "./internal/pager.js"

/**
 * `list_count` of the pages: a number, or `"auto"` to use the largest page the server serves (up to `maxPageSize`).
 *
 * @since 0.1.0
 * @category Models
 */
export type PageSize = number | "auto"

/**
 * @since 0.1.0
 * @category Models
 */
export interface PagingOptions {
  /**
   * Records asked per page (default `"auto"`). The server's largest page is not given by the contract: a server
   * that serves fewer than asked is followed (the size drops to what it serves, nothing is skipped), so a number
   * only bounds the page. `"auto"` asks for `maxPageSize` and keeps what the server serves: the rate limit counts
   * requests, so records per request is the throughput.
   */
  readonly pageSize?: PageSize | undefined
  /** The largest page `"auto"` asks for (default 1000). */
  readonly maxPageSize?: number | undefined
  /** Pages in flight at once, at most (default 4). They start at one and double with each full page. */
  readonly concurrency?: number | undefined
  /** First offset (default 0). To continue an interrupted export, prefer `resume`. */
  readonly startOffset?: number | undefined
  /** Continue an interrupted export where its last emitted page said (`page.next`), with what it had learned. */
  readonly resume?: ResumePoint | undefined
  /**
   * Told when the page size changes: learned from the server (once a page of that size has come back full: the
   * server clamps its pages), or halved after `ResponseTooLarge` (at once).
   */
  readonly onPageSize?: ((change: PageSizeChange) => Effect.Effect<void>) | undefined
  /** Names the source in errors (default `"list"`). */
  readonly endpoint?: string | undefined
}

/**
 * Where an interrupted export continues: the offset, the page size learned and the largest page served so far (so
 * the resumed run does not learn again), what a short last page left to settle (its length, and hashes of its last
 * records, which a server that filters after cutting serves again), and for drift-safe paging the overlap reached.
 * Plain JSON: store it as is.
 *
 * @since 0.1.0
 * @category Models
 */
export type ResumePoint = KernelPager.ResumePoint

/**
 * A page as emitted: the server's page (`offset`, `count` asked, `received`, its records) and `next`, where an
 * export resumed after it starts, or `undefined` when it was the last page of the list.
 *
 * @since 0.1.0
 * @category Models
 */
export type ResumablePage<A> = Pager.Emitted<A>

/**
 * The page size changed: `"served"`, the server served the same number fewer than asked twice in a row, repeating
 * nothing (it clamps its pages: `size` is what it serves); `"too-large"`, a response was over the client's body cap
 * and the page halved.
 *
 * @since 0.1.0
 * @category Models
 */
export type PageSizeChange = KernelPager.SizeChange

/**
 * @since 0.1.0
 * @category Models
 */
export interface SafeOptions {
  /** The field that identifies a record, read from the record as the server sent it (default `"id"`). */
  readonly idField?: string | undefined
  /**
   * Records each page shares with the page before it (default a tenth of the page size, at least 1). Inserts or
   * deletes ahead of the export between two page requests shift the list; up to `overlap - 1` deletes are absorbed
   * without extra requests, a larger shift costs a short look back. Each page advances by `pageSize - overlap`.
   */
  readonly overlap?: number | undefined
  /** Requests spent finding the way back after the list shifted past the overlap, before failing (default 16). */
  readonly maxRecoveryRequests?: number | undefined
  /**
   * Resume: every id an earlier, interrupted run of this export emitted (all of them: "at most once" across the
   * resume rests on it), with `resume` (or `startOffset`) from the last page it emitted. Nothing it emitted comes out
   * again, and the first page must overlap it (or paging steps back until a page does).
   */
  readonly resumeAfter?: Iterable<string | number> | undefined
  /** Told of every shift and every recovery, e.g. to log them. */
  readonly onDrift?: ((event: DriftEvent) => Effect.Effect<void>) | undefined
  /**
   * Where the ids emitted are kept, each with a digest of its record's text (default: a fresh table per run). Pass a
   * `Changes.makeTable()` to read it after the run (what `Changes.make` does).
   */
  readonly seen?: Changes.Table | undefined
  /**
   * Asked once, when the list seems to have ended: `true` reads the page that ended it once more, and the end is taken
   * only from that second answer (`Changes.make` asks it when its last state holds records not read: one empty or
   * cut short answer then removes nothing).
   */
  readonly confirmEnd?: (() => boolean) | undefined
}

/**
 * What drift-safe paging noticed: `Shifted` (the list moved under the export; nothing lost), `Recovered` (it moved
 * past the overlap; paging looked back and found its place) and `Dropped` (a record with the id of one already
 * emitted but other content, not emitted: updated meanwhile, or a duplicate id).
 *
 * @since 0.1.0
 * @category Models
 */
export type DriftEvent = Data.TaggedEnum<{
  Shifted: { readonly offset: number; readonly by: number }
  Recovered: { readonly offset: number; readonly requests: number; readonly overlap: number }
  /**
   * `id` as a user reads it (the digits, as a string, of a number beyond a double); `idJson` as the server wrote it;
   * `reason`: `"updated"` (read again within what was read before, with other content: updated since it was read) or
   * `"duplicate"` (a distinct record with the id of another: twice in one answer, or past what was read).
   */
  Dropped: {
    readonly offset: number
    readonly id: string | number
    readonly idJson: string
    readonly reason: "updated" | "duplicate"
  }
}>

/**
 * @since 0.1.0
 * @category Constructors
 */
export const DriftEvent = Data.taggedEnum<DriftEvent>()

// The kernel's events as values of this edition (structural equality).
const driftEvent = (event: DriftSafe.DriftEvent): DriftEvent => {
  switch (event._tag) {
    case "Shifted":
      return DriftEvent.Shifted({ offset: event.offset, by: event.by })
    case "Recovered":
      return DriftEvent.Recovered({ offset: event.offset, requests: event.requests, overlap: event.overlap })
    case "Dropped":
      return DriftEvent.Dropped({ offset: event.offset, id: event.id, idJson: event.idJson, reason: event.reason })
  }
}

/**
 * The page size `"auto"` asks for first.
 *
 * @since 0.1.0
 * @category Constants
 */
export const DEFAULT_MAX_PAGE_SIZE = KernelPager.DEFAULT_MAX_PAGE_SIZE

const invalidRequest = (invalid: KernelPager.Invalid) =>
  new InvalidRequest({ endpoint: invalid.endpoint, reason: invalid.reason })

// The engine's settings from the options (checked by the kernel), and how this edition meets them.
const withSettings = <E, A, E2, R>(
  options: PagingOptions,
  f: (settings: Pager.Setup<E>) => Stream.Stream<A, E2, R>
): Stream.Stream<A, E2 | InvalidRequest, R> => {
  const checked = KernelPager.settings(options)
  if (!checked.ok) return Stream.fail(invalidRequest(checked.failure))
  return f({
    ...checked.value,
    isTooLarge: (error: E) => Predicate.isTagged(error, "ResponseTooLarge"),
    onSizeChange: options.onPageSize ?? (() => Effect.void)
  })
}

/**
 * Pages of any offset-paged source, in offset order, each record exactly once while the list does not change.
 * `fetch(offset, count)` must fetch exactly that page; a failed page is retried by the fetcher (the client's
 * transient retries), always at its own offset, so nothing is skipped or repeated.
 *
 * The end of the list (docs/ARCHITECTURE.md, "Paging"): a page that brings nothing new. A page shorter than asked
 * does not end it (a server clamps its pages, or filters records out after cutting the page, and the contract
 * shows neither): paging goes on right after the records received and the next page settles it. Records that page
 * repeats from the short one (the filtering server) are dropped; the same short length again with nothing repeated
 * makes it the page size (the clamping server). A page that holds exactly the records of the page before it fails
 * with `PagingLoop` (the server ignores the offset). Cost: one request past the list's last record (the page that
 * brings nothing), and one more for each short page mid-list. Pages in flight start at one and double with each
 * full page up to `concurrency`; after a short page and at the end, those in flight past it are cancelled.
 *
 * Records are compared by their JSON text (`page.json` when the fetcher gives it): two records are the same only
 * when every field is.
 *
 * @example
 * ```ts
 * import { Paginate } from "@erp-client/streams"
 * import { Effect, Stream } from "effect"
 *
 * // Any offset-paged source: here 25 company names in memory, 10 a page
 * const names = Array.from({ length: 25 }, (_, i) => `Partner ${i + 1} Kft.`)
 * const fetch = (offset: number, count: number) => {
 *   const records = names.slice(offset, offset + count)
 *   return Effect.succeed({ offset, count, received: records.length, records, raw: records, invalid: [] })
 * }
 * const pages = Paginate.pages(fetch, { pageSize: 10 }).pipe(
 *   Stream.map((page) => `${page.offset}+${page.records.length}`),
 *   Stream.runCollect
 * )
 * // The short page at 20 does not end the list: the empty one at 25 does
 * console.log(Array.from(Effect.runSync(pages))) // => [ '0+10', '10+10', '20+5', '25+0' ]
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const pages = <A, E, R>(
  fetch: (offset: number, count: number) => Effect.Effect<Page.Page<A>, E, R>,
  options: PagingOptions = {}
): Stream.Stream<ResumablePage<A>, E | InvalidRequest | PagingLoop, R> =>
  withSettings<E, ResumablePage<A>, E | PagingLoop, R>(options, (settings) =>
    Pager.run(fetch, {
      ...KernelPager.plainMode,
      step: (page, { previous, tail }) => Effect.succeed(KernelPager.plainStep(page, tail, previous))
    }, settings))

/**
 * Drift-safe pages of any offset-paged source whose records carry an id: for a list that gets inserts and deletes
 * while it is read, where plain offset paging repeats records (inserts ahead of it) or skips them (deletes).
 *
 * Consecutive pages overlap by `overlap` records, and a page is only taken when it holds a record already emitted
 * (the first page, and any page at offset 0, are anchored by the start of the list). Records already emitted are
 * dropped by id. A page that holds none (the list moved by more than the overlap) is not taken: paging steps back
 * until a fresh page overlaps what was read, walks forward again, doubles the overlap (up to half a page) and goes
 * on; `PagingDrift` when one recovery takes more than `maxRecoveryRequests`. The page size is learned and the end
 * confirmed as in `pages`. A record dropped because its id was emitted before with other content (updated during the
 * export, or a distinct record that repeats another's id) is reported to `onDrift` as `Dropped`.
 *
 * Guarantees, when the list keeps one order (records move only by inserts and deletes): each id is emitted at most
 * once, in list order; every record present for the whole export is emitted; records inserted or deleted during it
 * may or may not be. It always ends: after a short page it looks past the records for where the list ends (so records
 * added at the end while it reads are not chased one request after another), and it ends or fails with
 * `PagingDrift` within 4 requests a page of positions it reached plus 4 look backs' budget (docs/paging.md). Cost:
 * about `pageSize / (pageSize - overlap)` times the requests of plain paging, plus the recoveries (reported by
 * `onDrift`), and a set of the ids emitted so far (memory grows with the export).
 *
 * Emitted pages keep the server's `offset` and `received` and hold only records not emitted before. To resume an
 * interrupted export, keep the ids it emitted and the last page's `next` (see `resumeAfter`).
 *
 * @example
 * ```ts
 * import { Paginate } from "@erp-client/streams"
 * import { Effect, Stream } from "effect"
 *
 * // 25 partners; partner 3 is deleted once the first page is read. Plain paging would skip partner 11.
 * let partners = Array.from({ length: 25 }, (_, i) => ({ id: i + 1, company_name: `Partner ${i + 1} Kft.` }))
 * const fetch = (offset: number, count: number) =>
 *   Effect.sync(() => {
 *     const records = partners.slice(offset, offset + count)
 *     if (offset === 0) partners = partners.filter((partner) => partner.id !== 3)
 *     return { offset, count, received: records.length, records, raw: records, invalid: [] }
 *   })
 * const ids = Paginate.safePages(fetch, { pageSize: 10, idField: "id" }).pipe(
 *   Paginate.records,
 *   Stream.map((partner) => partner.id),
 *   Stream.runCollect
 * )
 * console.log(Effect.runSync(ids).length) // => 25
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const safePages = <A, E, R>(
  fetch: (offset: number, count: number) => Effect.Effect<Page.Page<A>, E, R>,
  options: PagingOptions & SafeOptions = {}
): Stream.Stream<ResumablePage<A>, E | DecodeError | InvalidRequest | PagingDrift | PagingLoop, R> =>
  // Suspended: each run of the stream gets its own state (its own map of ids emitted).
  Stream.suspend(() => safeRun(fetch, options))

const safeRun = <A, E, R>(
  fetch: (offset: number, count: number) => Effect.Effect<Page.Page<A>, E, R>,
  options: PagingOptions & SafeOptions
): Stream.Stream<ResumablePage<A>, E | DecodeError | InvalidRequest | PagingDrift | PagingLoop, R> =>
  withSettings<E, ResumablePage<A>, E | DecodeError | InvalidRequest | PagingDrift | PagingLoop, R>(
    options,
    (settings) => {
      const safe = DriftSafe.make<Page.Page<A>>({ ...options, endpoint: settings.endpoint }, settings.start)
      const onDrift = options.onDrift ?? (() => Effect.void)
      const tell = (events: ReadonlyArray<DriftSafe.DriftEvent>) =>
        Effect.forEach(events, (event) => onDrift(driftEvent(event)), { discard: true })
      const failure = (failure: DriftSafe.MissingId | DriftSafe.Drift) =>
        failure._tag === "MissingId"
          ? new DecodeError({
            endpoint: failure.endpoint,
            path: failure.path,
            reason: failure.reason,
            offset: failure.offset
          })
          : new PagingDrift({ endpoint: failure.endpoint, offset: failure.offset, requests: failure.requests })
      // Drives a recovery: fetch what it asks for until it is done.
      const recover = (
        recovery: DriftSafe.Recovery<Page.Page<A>>
      ): Effect.Effect<Pager.Step<A>, E | DecodeError | PagingDrift, R> =>
        Effect.suspend(() => {
          const next = recovery.next()
          switch (next._tag) {
            case "Fetch":
              return Effect.flatMap(fetch(next.offset, next.count), (page) => {
                recovery.feed(page)
                return recover(recovery)
              })
            case "Done":
              return Effect.as(tell(next.events), next.step)
            case "Fail":
              return Effect.fail(failure(next.failure))
          }
        })
      const invalid = safe.validate(settings.plan.size)
      if (invalid !== undefined) return Stream.fail(invalidRequest(invalid))
      return Pager.run(fetch, {
        ...safe.mode,
        step: (page, { plan }) =>
          Effect.flatMap(Effect.sync(() => safe.step(page, plan)), (taken) =>
            taken._tag === "Failed"
              ? Effect.fail(failure(taken.failure))
              : Effect.andThen(
                tell(taken.events),
                taken._tag === "Taken" ? Effect.succeed(taken.step) : recover(taken.recovery)
              ))
      }, settings)
    }
  )

/**
 * The records of a stream of pages, in order.
 *
 * @example
 * ```ts
 * import { Paginate, Partners } from "@erp-client/streams"
 * import { Console, Stream } from "effect"
 *
 * // Log each page as it comes, then go on with its partners one by one
 * const partners = Partners.pages().pipe(
 *   Stream.tap((page) => Console.log(`page at ${page.offset}: ${page.records.length} partners`)),
 *   Paginate.records
 * )
 * ```
 *
 * @since 0.1.0
 * @category Combinators
 */
export const records = <A, E, R>(self: Stream.Stream<Page.Page<A>, E, R>): Stream.Stream<A, E, R> =>
  mapConcat(self, (page) => page.records)
