/**
 * Offset paging as a Stream: ordered, bounded concurrency, resumable, for any list endpoint and schema.
 *
 * @since 0.1.0
 */
import { type CallError, ErpClient } from "@erp-client/client/ErpClient"
import { DecodeError, InvalidRequest, PagingDrift } from "@erp-client/core/ErpError"
import type * as ListQuery from "@erp-client/core/ListQuery"
import * as Page from "@erp-client/core/Page"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import type * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"

/**
 * @since 0.1.0
 * @category Models
 */
export interface PagingOptions {
  /** `list_count` of every page (default 100). Keep it within the server's largest page. */
  readonly pageSize?: number | undefined
  /** Pages in flight at once (default 4). Records still come out in offset order. */
  readonly concurrency?: number | undefined
  /** First offset (default 0): resume an export from the offset after its last complete page. */
  readonly startOffset?: number | undefined
}

/**
 * @since 0.1.0
 * @category Models
 */
export interface ListOptions extends PagingOptions {
  /** Conditions sent as `list_condition[field]=value`, e.g. `{ is_customer: 1 }`. */
  readonly where?: ListQuery.Conditions | undefined
  /**
   * Records that do not match the schema: without this, the stream fails with a `DecodeError` naming the first one.
   * With it, each is handed here (whole, with its offset and error) and the stream goes on.
   */
  readonly onInvalidRecord?: ((record: Page.InvalidRecord) => Effect.Effect<void>) | undefined
  /**
   * Drift-safe paging for a list that may change while it is read (see `safePages`): each id at most once, and no
   * record that stays in the list is skipped. `true` for the defaults. Costs extra requests (the overlap).
   */
  readonly safe?: SafeOptions | true | undefined
}

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
   * resume rests on it), with `startOffset` at the offset of the last page it emitted. Nothing it emitted comes out
   * again, and the first page must overlap it (or paging steps back until a page does).
   */
  readonly resumeAfter?: Iterable<string | number> | undefined
  /** Told of every shift and every recovery, e.g. to log them. */
  readonly onDrift?: ((event: DriftEvent) => Effect.Effect<void>) | undefined
}

/**
 * What drift-safe paging noticed.
 *
 * - `Shifted`: the page at `offset` found the records it shares with the page before `by` places from where they
 *   were (positive: inserted ahead of it since; negative: deleted). Repeated records were dropped, none skipped.
 * - `Recovered`: no record of the page at `offset` had been read before (the list moved by more than the overlap);
 *   paging stepped back until a page overlapped again and came forward, spending `requests` extra requests, and
 *   pages from then on overlap by `overlap` (doubled, up to half a page).
 *
 * @since 0.1.0
 * @category Models
 */
export type DriftEvent = Data.TaggedEnum<{
  Shifted: { readonly offset: number; readonly by: number }
  Recovered: { readonly offset: number; readonly requests: number; readonly overlap: number }
}>

/**
 * @since 0.1.0
 * @category Constructors
 */
export const DriftEvent = Data.taggedEnum<DriftEvent>()

/**
 * Pages of any offset-paged source. `fetch(offset, count)` must fetch exactly that page; a failed page is retried
 * by the fetcher (the client's transient retries), always at its own offset, so nothing is skipped or repeated.
 *
 * Pages start at `startOffset` and advance by the page size (paging rule 2). Up to `concurrency` pages are fetched
 * at once, and emitted in offset order. The stream ends after the first page shorter than the page size. Once a
 * short page has been seen, no page past it is requested; pages already started past the end (at most two per unit
 * of concurrency: those in flight and those finished and queued) are interrupted or dropped.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const pages = <A, E, R>(
  fetch: (offset: number, count: number) => Effect.Effect<Page.Page<A>, E, R>,
  options: PagingOptions = {}
): Stream.Stream<Page.Page<A>, E, R> =>
  Stream.suspend(() => {
    const pageSize = options.pageSize ?? 100
    return grid(fetch, pageSize, () => pageSize, options).pipe(Stream.takeUntil(Page.isLast))
  })

/**
 * Pages at `startOffset`, then each `stride()` further on, each of `pageSize`, `concurrency` at once, in offset
 * order. Once a short page has been seen, pages past it are not requested (they would come after the end of the
 * list, and each request spends rate-limit budget): an empty page stands in for them.
 */
const grid = <A, E, R>(
  fetch: (offset: number, count: number) => Effect.Effect<Page.Page<A>, E, R>,
  pageSize: number,
  stride: () => number,
  options: PagingOptions
): Stream.Stream<Page.Page<A>, E, R> => {
  const concurrency = Math.max(1, options.concurrency ?? 4)
  let end = Infinity
  const fetchPage = (offset: number): Effect.Effect<Page.Page<A>, E, R> =>
    offset > end
      ? Effect.succeed({ offset, count: pageSize, received: 0, records: [], raw: [], invalid: [] })
      : Effect.tap(fetch(offset, pageSize), (page) => {
        if (Page.isLast(page) && offset < end) end = offset
      })
  // Ordered: at most `concurrency` pages in flight and as many finished ones queued, emitted by offset.
  return Stream.iterate(options.startOffset ?? 0, (offset) => offset + stride()).pipe(
    Stream.mapEffect(fetchPage, { concurrency })
  )
}

/**
 * Drift-safe pages of any offset-paged source whose records carry an id: for a list that gets inserts and deletes
 * while it is read, where plain offset paging repeats records (inserts ahead of it) or skips them (deletes).
 *
 * Consecutive pages overlap by `overlap` records, and a page is only taken when it holds a record already emitted
 * (the first page, and any page at offset 0, are anchored by the start of the list). Records already emitted are
 * dropped by id. A page that holds none (the list moved by more than the overlap) is not taken: paging steps back
 * until a fresh page overlaps what was read, walks forward again, doubles the overlap (up to half a page) and goes
 * on; `PagingDrift` when one recovery takes more than `maxRecoveryRequests`.
 *
 * Guarantees, when the list keeps one order (records move only by inserts and deletes): each id is emitted at most
 * once, in list order; every record present for the whole export is emitted; records inserted or deleted during it
 * may or may not be. Cost: about `pageSize / (pageSize - overlap)` times the requests of plain paging, plus the
 * recoveries (reported by `onDrift`), and a set of the ids emitted so far (memory grows with the export).
 *
 * Emitted pages keep the server's `offset` and `received` and hold only records not emitted before. To resume an
 * interrupted export, keep the ids it emitted and the offset of its last page (see `resumeAfter`).
 *
 * @since 0.1.0
 * @category Constructors
 */
export const safePages = <A, E, R>(
  fetch: (offset: number, count: number) => Effect.Effect<Page.Page<A>, E, R>,
  options: PagingOptions & SafeOptions & { readonly endpoint?: string | undefined } = {}
): Stream.Stream<Page.Page<A>, E | DecodeError | InvalidRequest | PagingDrift, R> =>
  Stream.suspend((): Stream.Stream<Page.Page<A>, E | DecodeError | InvalidRequest | PagingDrift, R> => {
    const endpoint = options.endpoint ?? "list"
    const pageSize = options.pageSize ?? 100
    let overlap = options.overlap ?? Math.max(1, Math.round(pageSize / 10))
    if (!(Number.isSafeInteger(pageSize) && Number.isSafeInteger(overlap) && overlap >= 1 && overlap < pageSize)) {
      return Stream.fail(
        new InvalidRequest({
          endpoint,
          reason: `drift-safe paging needs 1 <= overlap < page size, got overlap ${overlap} with page size ${pageSize}`
        })
      )
    }
    // A lost anchor means the list moves by more than the overlap between two requests: the overlap doubles (up to
    // half a page) for the rest of the export, so paging keeps up instead of recovering page after page.
    const widest = Math.max(overlap, Math.floor(pageSize / 2))
    const stride = () => pageSize - overlap
    const idField = options.idField ?? "id"
    const maxRecoveryRequests = Math.max(0, options.maxRecoveryRequests ?? 16)
    const onDrift = options.onDrift ?? (() => Effect.void)
    const start = options.startOffset ?? 0
    // Every id emitted so far: the one thing that makes "at most once" hold whatever the list does.
    const seen = new Set<unknown>(options.resumeAfter)
    // The last page taken, by absolute position of each id, to measure shifts.
    let previous: Map<unknown, number> | undefined
    let first = true

    const idsOf = (page: Page.Page<A>): Effect.Effect<ReadonlyArray<string | number>, DecodeError> =>
      Effect.suspend(() => {
        // The records in the order the server sent them: valid ones fill the positions the invalid ones leave.
        const invalidAt = new Map(page.invalid.map((record) => [record.offset - page.offset, record.raw]))
        const ids: Array<string | number> = []
        let valid = 0
        for (let i = 0; i < page.received; i++) {
          const raw = invalidAt.has(i) ? invalidAt.get(i) : page.raw[valid++]
          const id = typeof raw === "object" && raw !== null ? (raw as Record<string, unknown>)[idField] : undefined
          if (!(typeof id === "string" || (typeof id === "number" && Number.isFinite(id)))) {
            return Effect.fail(
              new DecodeError({
                endpoint,
                path: `data[${i}].${idField}`,
                reason: "drift-safe paging needs an id (a string or a number) on every record",
                offset: page.offset + i
              })
            )
          }
          ids.push(id)
        }
        return Effect.succeed(ids)
      })

    // The page with only its records not emitted before, if it overlaps what was read (or is anchored by the start).
    const take = (page: Page.Page<A>, trusted: boolean) =>
      Effect.gen(function*() {
        const ids = yield* idsOf(page)
        if (!(trusted || page.offset === 0 || ids.some((id) => seen.has(id)))) return Option.none<Page.Page<A>>()
        if (previous !== undefined) {
          // The last record shared with the page before: where it is now against where it was.
          for (let i = ids.length - 1; i >= 0; i--) {
            const before = previous.get(ids[i])
            if (before === undefined) continue
            const by = page.offset + i - before
            if (by !== 0) yield* onDrift(DriftEvent.Shifted({ offset: page.offset, by }))
            break
          }
        }
        previous = new Map(ids.map((id, i) => [id, page.offset + i]))
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

    // The page at `lost.offset` overlapped nothing read: step back along the grid until a fresh page overlaps,
    // then walk forward to `lost.offset` (trying its first answer again before asking anew).
    const recover = (lost: Page.Page<A>) =>
      Effect.gen(function*() {
        const target = lost.offset
        overlap = Math.min(widest, overlap * 2)
        const taken: Array<Page.Page<A>> = []
        let requests = 0
        const fresh = (offset: number) =>
          requests >= maxRecoveryRequests
            ? Effect.fail(new PagingDrift({ endpoint, offset: target, requests }))
            : Effect.suspend(() => {
              requests++
              return fetch(offset, pageSize)
            })
        let cursor = Math.max(0, target - stride())
        let lostTried = false
        for (;;) {
          const useLost = cursor === target && !lostTried
          if (useLost) lostTried = true
          const page = useLost ? lost : yield* fresh(cursor)
          const accepted = yield* take(page, false)
          if (Option.isNone(accepted)) {
            // A first answer may just be older than the pages read since: ask again there. A fresh page that
            // overlaps nothing means the list moved again: step back once more.
            if (!useLost) cursor = Math.max(0, cursor - stride())
            continue
          }
          taken.push(accepted.value)
          if (Page.isLast(page) || cursor >= target) break
          cursor = Math.min(target, cursor + stride())
        }
        yield* onDrift(DriftEvent.Recovered({ offset: target, requests, overlap }))
        return taken
      })

    const step = (page: Page.Page<A>) =>
      Effect.gen(function*() {
        const trusted = first && page.offset === start && seen.size === 0
        first = false
        const accepted = yield* take(page, trusted)
        const taken = Option.isSome(accepted) ? [accepted.value] : yield* recover(page)
        return { taken, done: taken.length > 0 && Page.isLast(taken[taken.length - 1]) }
      })

    return grid(fetch, pageSize, stride, options).pipe(
      Stream.mapEffect(step),
      Stream.takeUntil((result) => result.done),
      Stream.mapConcat((result) => result.taken)
    )
  })

/**
 * The records of a stream of pages, in order.
 *
 * @since 0.1.0
 * @category Combinators
 */
export const records = <A, E, R>(self: Stream.Stream<Page.Page<A>, E, R>): Stream.Stream<A, E, R> =>
  Stream.mapConcat(self, (page) => page.records)

/**
 * Pages of a list endpoint of the ERP, each record decoded with `schema`.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const listPages = <A, I>(
  endpoint: string,
  schema: Schema.Schema<A, I>,
  options: ListOptions = {}
): Stream.Stream<Page.Page<A>, PagingError, ErpClient> =>
  Stream.unwrap(Effect.map(ErpClient, (client) => {
    let pageCount = 0
    let recordCount = 0
    const streamed = Metric.tagged(recordsStreamed, "endpoint", endpoint)
    const onInvalid = options.onInvalidRecord
    const fetch = (offset: number, count: number) =>
      client.list(endpoint, schema, {
        offset,
        count,
        where: options.where,
        invalidRecords: onInvalid === undefined ? "fail" : "collect"
      })
    const safe = options.safe === true ? {} : options.safe
    let shifts = 0
    let recoveries = 0
    const onDrift = (event: DriftEvent) => {
      if (event._tag === "Shifted") shifts++
      else recoveries++
      return Effect.zipRight(
        Metric.increment(Metric.tagged(Metric.tagged(pagingDrift, "endpoint", endpoint), "kind", event._tag)),
        Effect.zipRight(
          Effect.annotateCurrentSpan({ "erp.drift.shifts": shifts, "erp.drift.recoveries": recoveries }),
          Effect.zipRight(
            // A shift is routine under change; a recovery costs requests and is worth an operator's eye.
            (event._tag === "Shifted" ? Effect.logDebug : Effect.logInfo)(
              event._tag === "Shifted"
                ? `${endpoint}: the list shifted by ${event.by} at offset ${event.offset}`
                : `${endpoint}: the list moved past the overlap at offset ${event.offset}; recovered with ` +
                  `${event.requests} extra requests, overlap now ${event.overlap}`
            ),
            safe?.onDrift === undefined ? Effect.void : safe.onDrift(event)
          )
        )
      )
    }
    const source = safe === undefined
      ? pages(fetch, options)
      : safePages(fetch, { ...options, ...safe, endpoint, onDrift })
    // Counted per page, never per record: the stream's span ends with its pages and records.
    const stream = Stream.tap(source, (page) => {
      pageCount++
      recordCount += page.records.length
      return Effect.zipRight(
        Metric.incrementBy(streamed, page.records.length),
        Effect.annotateCurrentSpan({ "erp.pages": pageCount, "erp.records": recordCount })
      )
    })
    return (onInvalid === undefined
      ? stream
      : Stream.tap(stream, (page) => Effect.forEach(page.invalid, onInvalid, { discard: true }))).pipe(
        Stream.withSpan("Paginate.listPages", {
          attributes: {
            "erp.endpoint": endpoint,
            "erp.page_size": options.pageSize ?? 100,
            "erp.concurrency": options.concurrency ?? 4,
            "erp.start_offset": options.startOffset ?? 0,
            "erp.safe": safe !== undefined
          },
          captureStackTrace: false
        })
      )
  }))

/**
 * Records streamed out of list endpoints, tagged by endpoint.
 *
 * @since 0.1.0
 * @category Metrics
 */
export const recordsStreamed = Metric.counter("erp_client_records_streamed", {
  description: "records streamed out of list endpoints"
})

/**
 * Shifts and recoveries noticed by drift-safe paging, tagged by endpoint and kind (`Shifted`, `Recovered`).
 *
 * @since 0.1.0
 * @category Metrics
 */
export const pagingDrift = Metric.counter("erp_client_paging_drift", {
  description: "list shifts and recoveries noticed by drift-safe paging"
})

/**
 * How paging a list endpoint can fail: a call's failures, and drift-safe paging losing its place.
 *
 * @since 0.1.0
 * @category Errors
 */
export type PagingError = CallError | PagingDrift

/**
 * Every record of a list endpoint, in offset order: each exactly once while the list does not change (plain paging),
 * or, with `safe`, each id at most once and none skipped while it does.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const paginate = <A, I>(
  endpoint: string,
  schema: Schema.Schema<A, I>,
  options: ListOptions = {}
): Stream.Stream<A, PagingError, ErpClient> => records(listPages(endpoint, schema, options))
