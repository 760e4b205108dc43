/**
 * Offset paging as a Stream: ordered, bounded concurrency, resumable, for any list endpoint and schema.
 *
 * @since 0.1.0
 */
import { type CallError, ErpClient } from "@erp-client/client/ErpClient"
import type * as ListQuery from "@erp-client/core/ListQuery"
import * as Page from "@erp-client/core/Page"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
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
}

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
  Stream.unwrap(Effect.sync(() => {
    const pageSize = options.pageSize ?? 100
    const concurrency = Math.max(1, options.concurrency ?? 4)
    // The offset of the first short page seen so far. Pages past it are not requested: they would come after the
    // end of the stream, and each request spends rate-limit budget.
    let end = Infinity
    const fetchPage = (offset: number): Effect.Effect<Page.Page<A>, E, R> =>
      offset > end
        ? Effect.succeed({ offset, count: pageSize, received: 0, records: [], raw: [], invalid: [] })
        : Effect.tap(fetch(offset, pageSize), (page) => {
          if (Page.isLast(page) && offset < end) end = offset
        })
    return Stream.iterate(options.startOffset ?? 0, (offset) => offset + pageSize).pipe(
      // Ordered: at most `concurrency` pages in flight and as many finished ones queued, emitted by offset.
      Stream.mapEffect(fetchPage, { concurrency }),
      Stream.takeUntil(Page.isLast)
    )
  }))

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
): Stream.Stream<Page.Page<A>, CallError, ErpClient> =>
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
    // Counted per page, never per record: the stream's span ends with its pages and records.
    const stream = Stream.tap(pages(fetch, options), (page) => {
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
            "erp.start_offset": options.startOffset ?? 0
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
 * Every record of a list endpoint, in offset order, each exactly once.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const paginate = <A, I>(
  endpoint: string,
  schema: Schema.Schema<A, I>,
  options: ListOptions = {}
): Stream.Stream<A, CallError, ErpClient> => records(listPages(endpoint, schema, options))
