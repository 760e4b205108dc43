/**
 * Offset paging of any source as a Stream: ordered, bounded concurrency, the page size learned from the server,
 * the end taken only when the server says so, resumable, and drift-safe for lists that change while they are read.
 * Nothing here knows the ERP: `ListEndpoint` pages its list endpoints with it.
 *
 * @since 0.1.0
 */
import { InvalidRequest } from "@erp-client/core/ErpError"
import type { DecodeError, PagingDrift, PagingLoop } from "@erp-client/core/ErpError"
import type * as Page from "@erp-client/core/Page"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Predicate from "effect/Predicate"
import * as Stream from "effect/Stream"
import * as DriftSafe from "./internal/driftSafe.js"
import * as Judge from "./internal/judge.js"
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
export type ResumePoint = Pager.ResumePoint

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
export type PageSizeChange = Pager.SizeChange

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
}

/**
 * What drift-safe paging noticed: `Shifted` (the list moved under the export; nothing lost) and `Recovered` (it moved
 * past the overlap; paging looked back and found its place).
 *
 * @since 0.1.0
 * @category Models
 */
export type DriftEvent = DriftSafe.DriftEvent

/**
 * @since 0.1.0
 * @category Constructors
 */
export const DriftEvent = DriftSafe.DriftEvent

/**
 * The page size `"auto"` asks for first.
 *
 * @since 0.1.0
 * @category Constants
 */
export const DEFAULT_MAX_PAGE_SIZE = 1000

const invalid = (endpoint: string, reason: string) => Either.left(new InvalidRequest({ endpoint, reason }))

const isCount = (n: unknown): n is number => typeof n === "number" && Number.isSafeInteger(n) && n >= 1

// The engine's settings from the options, checked.
const settingsOf = <E>(options: PagingOptions): Either.Either<Pager.Setup<E>, InvalidRequest> => {
  const endpoint = options.endpoint ?? "list"
  const { resume } = options
  const pageSize = options.pageSize ?? "auto"
  const maxPageSize = options.maxPageSize ?? DEFAULT_MAX_PAGE_SIZE
  const concurrency = options.concurrency ?? 4
  const start = resume?.offset ?? options.startOffset ?? 0
  if (pageSize !== "auto" && !isCount(pageSize)) {
    return invalid(endpoint, `the page size must be an integer >= 1 or "auto"`)
  }
  if (!isCount(maxPageSize)) return invalid(endpoint, "maxPageSize must be an integer >= 1")
  if (!isCount(concurrency)) return invalid(endpoint, "concurrency must be an integer >= 1")
  if (!Number.isSafeInteger(start) || start < 0) return invalid(endpoint, "the start offset must be an integer >= 0")
  if (resume !== undefined && !(isCount(resume.pageSize) && Number.isSafeInteger(resume.served))) {
    return invalid(endpoint, "the resume point holds no valid page size")
  }
  const size = resume?.pageSize ?? (pageSize === "auto" ? maxPageSize : pageSize)
  return Either.right({
    endpoint,
    plan: { ...Judge.plan(size, resume?.served ?? 0), suspect: resume?.suspect },
    start,
    tail: resume?.tail,
    concurrency,
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
 * import { Chunk, Effect, Stream } from "effect"
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
 * console.log(Chunk.toArray(Effect.runSync(pages))) // => [ '0+10', '10+10', '20+5', '25+0' ]
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const pages = <A, E, R>(
  fetch: (offset: number, count: number) => Effect.Effect<Page.Page<A>, E, R>,
  options: PagingOptions = {}
): Stream.Stream<ResumablePage<A>, E | InvalidRequest | PagingLoop, R> =>
  Either.match(settingsOf<E>(options), {
    onLeft: Stream.fail,
    onRight: (settings) =>
      Pager.run(fetch, {
        rules: { overlap: () => 0, maxQuiet: 3, firstRecordsUnique: true, minSize: 1 },
        step: (page, { previous, tail }) => Effect.succeed(Pager.plainStep(page, tail, previous)),
        resumeAt: (page) => page.offset + page.received,
        resumeExtra: () => ({})
      }, settings)
  })

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
 * may or may not be. Cost: about `pageSize / (pageSize - overlap)` times the requests of plain paging, plus the
 * recoveries (reported by `onDrift`), and a set of the ids emitted so far (memory grows with the export).
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
  Either.match(settingsOf<E>(options), {
    onLeft: Stream.fail,
    onRight: (settings) => {
      const maxRecoveryRequests = Math.max(0, options.maxRecoveryRequests ?? 16)
      const safe = new DriftSafe.DriftSafe<A>({
        endpoint: settings.endpoint,
        idField: options.idField ?? "id",
        overlap: options.resume?.overlap ?? options.overlap,
        maxRecoveryRequests,
        resumeAfter: options.resumeAfter,
        start: settings.start
      })
      const onDrift = options.onDrift ?? (() => Effect.void)
      const tell = (events: ReadonlyArray<DriftEvent>) => Effect.forEach(events, onDrift, { discard: true })
      // Drives a recovery: fetch what it asks for until it is done.
      const recover = (
        recovery: DriftSafe.Recovery<A>
      ): Effect.Effect<Pager.Step<A>, E | DecodeError | PagingDrift, R> =>
        Effect.suspend(() => {
          const next = recovery.next()
          switch (next._tag) {
            case "Fetch":
              return Effect.flatMap(fetch(next.offset, next.count), (page) =>
                Effect.flatMap(recovery.feed(page), () => recover(recovery)))
            case "Done":
              return Effect.as(tell(next.events), next.step)
            case "Fail":
              return Effect.fail(next.error)
          }
        })
      const invalid = safe.validate(settings.plan.size)
      if (invalid !== undefined) return Stream.fail(invalid)
      return Pager.run(fetch, {
        // Under change, a full page that brings nothing new is the list moving under the export, and paging moves
        // on; a long run of them is a server that does not move through the list.
        rules: {
          overlap: (size) => safe.overlap(size),
          maxQuiet: Math.max(100, maxRecoveryRequests),
          firstRecordsUnique: false,
          minSize: 2
        },
        step: (page, { plan }) =>
          Effect.flatMap(Effect.suspend(() => safe.step(page, plan.size)), (taken) =>
            Effect.zipRight(
              tell(taken.events),
              taken._tag === "Taken" ? Effect.succeed(taken.step) : recover(taken.recovery)
            )),
        resumeAt: (page) => page.offset,
        resumeExtra: (size) => safe.resumeExtra(size)
      }, settings)
    }
  })

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
  Stream.mapConcat(self, (page) => page.records)
