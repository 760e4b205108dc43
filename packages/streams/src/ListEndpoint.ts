/**
 * Any list endpoint of the ERP as a Stream: `Paginate` over `ErpClient.list`, with the client's metrics, span and
 * logs. The service has over 500 endpoints; this pages any of them with the caller's schema.
 *
 * @since 0.1.0
 */
import { ErpClient, type Params } from "@erp-client/client/ErpClient"
import type * as ErpError from "@erp-client/core/ErpError"
import { ConditionIgnored } from "@erp-client/core/ErpError"
import type * as ListQuery from "@erp-client/core/ListQuery"
import type * as Page from "@erp-client/core/Page"
import * as ConditionCheck from "@erp-client/kernel/ConditionCheck"
import * as PagingText from "@erp-client/kernel/PagingText"
import { DRIFT_ATTRIBUTES, streamMetrics } from "@erp-client/kernel/Telemetry"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import {
  type Counter,
  counter,
  type Decoder,
  failureOption,
  isInterruptedOnly,
  onExit,
  withAttributes
} from "./internal/edition.js"
import * as Paginate from "./Paginate.js"

/**
 * @since 0.1.0
 * @category Models
 */
export interface ListOptions extends Omit<Paginate.PagingOptions, "endpoint"> {
  /**
   * Conditions sent as `list_condition[field]=value`, e.g. `{ is_customer: 1 }`. The records served are checked
   * against them (see `checkConditions`).
   */
  readonly where?: ListQuery.Conditions | undefined
  /**
   * Check each record served against `where` before its page is emitted (default `true`): a record that does not
   * satisfy a condition (the field absent, or a value that clearly differs: `@erp-client/kernel/ConditionCheck`)
   * means the server did not apply it, and the stream fails with `ConditionIgnored` instead of passing the whole list
   * off as the filtered one. `false` takes the records as served, for a server that matches more loosely than the
   * check allows.
   */
  readonly checkConditions?: boolean | undefined
  /** Other query parameters of the endpoint, sent with every page. */
  readonly params?: Params | undefined
  /**
   * Records that do not match the schema: without this, the stream fails with a `DecodeError` naming the first one.
   * With it, each is handed here (whole, with its offset and error) and the stream goes on.
   */
  readonly onInvalidRecord?: ((record: Page.InvalidRecord) => Effect.Effect<void>) | undefined
  /**
   * Drift-safe paging for a list that may change while it is read (see `Paginate.safePages`): each id at most once,
   * and no record that stays in the list is skipped. `true` for the defaults. Costs extra requests (the overlap).
   */
  readonly safe?: Paginate.SafeOptions | true | undefined
  /** Each page also carries its records' texts exactly as the server wrote them (`Page.json`; see `JsonText`). */
  readonly exact?: boolean | undefined
}

/**
 * Records streamed out of list endpoints, `erp.client.records.streamed`, unit `{record}`, monotonic, with the attribute
 * `erp.endpoint`.
 *
 * @since 0.1.0
 * @category Metrics
 */
export const recordsStreamed: Counter = counter(streamMetrics.recordsStreamed)

/**
 * Shifts, recoveries and dropped records noticed by drift-safe paging, `erp.client.paging.drift`, unit `{event}`,
 * monotonic, with the attributes `erp.endpoint` and `erp.drift.kind` (`Shifted`, `Recovered`, `Dropped`).
 *
 * @since 0.1.0
 * @category Metrics
 */
export const pagingDrift: Counter = counter(streamMetrics.pagingDrift)

// The line each event is logged with, at its level (`@erp-client/kernel/PagingText`).
const logDrift = (endpoint: string, event: Paginate.DriftEvent) => {
  const line = PagingText.drift(endpoint, event)
  switch (line.level) {
    case "Debug":
      return Effect.logDebug(line.text)
    case "Info":
      return Effect.logInfo(line.text)
    case "Warning":
      return Effect.logWarning(line.text)
  }
}

/**
 * `stream` with how it ended said on its span (`span`, `ListEndpoint.pages`'s) before the span ends: a failure's
 * `error.type` (the error's tag, `PagingLoop`, `TimeoutError`, …), or `interrupted` for an export interrupted before its
 * end (Ctrl-C), by the conventions' error attribute.
 */
const sayEnd = <A, E, R>(
  stream: Stream.Stream<A, E, R>,
  span: Option.Option<{ readonly attribute: (key: string, value: unknown) => void }>
): Stream.Stream<A, E, R> =>
  Option.isNone(span) ?
    stream :
    onExit(stream, (exit) =>
      exit._tag === "Success" ? Effect.void : Effect.sync(() => {
        const failure = failureOption(exit.cause)
        span.value.attribute(
          "error.type",
          Option.isSome(failure)
            ? String((failure.value as { readonly _tag?: unknown })._tag ?? "_OTHER")
            : isInterruptedOnly(exit.cause)
            ? "interrupted"
            : "_OTHER"
        )
      }))

/** `erp.client.paging.drift` of `endpoint` by kind, each counter made once (its attributes joined once). */
const driftCounters = (endpoint: string) => {
  const drifts = new Map<string, Counter>()
  return (kind: Paginate.DriftEvent["_tag"]) => {
    let metric = drifts.get(kind)
    if (metric === undefined) {
      metric = withAttributes(pagingDrift, { "erp.endpoint": endpoint, "erp.drift.kind": kind })
      drifts.set(kind, metric)
    }
    return metric
  }
}

const conditionIgnored = (endpoint: string, mismatch: ConditionCheck.PageMismatch): ConditionIgnored =>
  new ConditionIgnored({
    endpoint,
    field: mismatch.field,
    asked: mismatch.asked,
    ...(mismatch.had === undefined ? {} : { had: mismatch.had }),
    offset: mismatch.offset,
    ...(mismatch.recordId === undefined ? {} : { recordId: mismatch.recordId })
  })

/**
 * Pages of a list endpoint of the ERP, each record decoded with `schema`, each page with where to resume after it.
 *
 * @example
 * ```ts
 * import { ListEndpoint } from "@erp-client/streams"
 * import { Console, Schema, Stream } from "effect"
 *
 * // Invoices, page by page: invoices that do not match the schema are logged, not fatal
 * const Invoice = Schema.Struct({ id: Schema.Number, number: Schema.String, total: Schema.Number })
 * const program = ListEndpoint.pages("invoice/list", Invoice, {
 *   where: { paid: 0 },
 *   onInvalidRecord: (invalid) => Console.error(`invoice at offset ${invalid.offset}: ${invalid.error.message}`)
 * }).pipe(
 *   Stream.runForEach((page) => Console.log(`${page.records.length} invoices, next:`, JSON.stringify(page.next)))
 * )
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const pages = <A>(
  endpoint: string,
  schema: Decoder<A>,
  options: ListOptions = {}
): Stream.Stream<Paginate.ResumablePage<A>, ErpError.ErpError, ErpClient> =>
  Stream.unwrap(Effect.gen(function*() {
    const client = yield* ErpClient
    // Inside the span below: the export's own span, counted on as pages come.
    const span = yield* Effect.option(Effect.currentSpan)
    const streamed = withAttributes(recordsStreamed, { "erp.endpoint": endpoint })
    const onInvalid = options.onInvalidRecord
    const where = options.checkConditions === false ? undefined : options.where
    const list = (offset: number, count: number) =>
      client.list(endpoint, schema, {
        offset,
        count,
        where: options.where,
        params: options.params,
        invalidRecords: onInvalid === undefined ? "fail" : "collect",
        exact: options.exact
      })
    // Each page is checked against the conditions as it arrives, before paging judges it or emits a record of it.
    const fetch = where === undefined || Object.keys(where).length === 0 ?
      list :
      (offset: number, count: number) =>
        Effect.flatMap(list(offset, count), (page) => {
          const mismatch = ConditionCheck.checkPage(where, page)
          return mismatch === undefined ? Effect.succeed(page) : Effect.fail(conditionIgnored(endpoint, mismatch))
        })
    const safe = options.safe === true ? {} : options.safe
    // Pages, records and drift events, counted here as they happen (per page, never per record) for this run of the
    // stream, each total then set on the stream's span.
    const totals = new Map<string, number>()
    const count = (name: string, delta: number) =>
      Option.isNone(span) ? Effect.void : Effect.sync(() => {
        const total = (totals.get(name) ?? 0) + delta
        totals.set(name, total)
        span.value.attribute(name, total)
      })
    const onPageSize = (change: Paginate.PageSizeChange) =>
      Effect.all([
        Effect.logInfo(PagingText.pageSize(endpoint, change)),
        Effect.annotateCurrentSpan("erp.page_size.served", change.size),
        options.onPageSize?.(change) ?? Effect.void
      ], { discard: true })
    const paging = { ...options, endpoint, onPageSize }
    const driftOf = driftCounters(endpoint)
    const source = safe === undefined
      ? Paginate.pages(fetch, paging)
      : Paginate.safePages(fetch, {
        ...paging,
        ...safe,
        onDrift: (event) =>
          Effect.all([
            Metric.update(driftOf(event._tag), 1),
            count(DRIFT_ATTRIBUTES[event._tag], 1),
            logDrift(endpoint, event),
            safe.onDrift?.(event) ?? Effect.void
          ], { discard: true })
      })
    return sayEnd(
      Stream.tap(source, (page) =>
        Effect.all([
          Metric.update(streamed, page.records.length),
          count("erp.pages", 1),
          count("erp.records", page.records.length),
          onInvalid === undefined ? Effect.void : Effect.forEach(page.invalid, onInvalid, { discard: true })
        ], { discard: true })),
      span
    )
  })).pipe(
    Stream.withSpan("ListEndpoint.pages", {
      attributes: {
        "erp.endpoint": endpoint,
        "erp.page_size": options.resume?.pageSize ?? options.pageSize ?? "auto",
        "erp.concurrency": options.concurrency ?? 4,
        "erp.start_offset": options.resume?.offset ?? options.startOffset ?? 0,
        "erp.safe": options.safe !== undefined
      },
      captureStackTrace: false
    })
  )

/**
 * Every record of a list endpoint, in offset order: each exactly once while the list does not change (plain paging),
 * or, with `safe`, each id at most once and none skipped while it does.
 *
 * @example
 * ```ts
 * import { ListEndpoint } from "@erp-client/streams"
 * import { Schema, Stream } from "effect"
 *
 * // An endpoint with no declaration of its own, read with your own schema and query parameters
 * const Product = Schema.Struct({ id: Schema.Number, name: Schema.String })
 * const names = ListEndpoint.stream("product/list", Product, { where: { active: 1 }, params: [["lang", "hu"]] }).pipe(
 *   Stream.map((product) => product.name),
 *   Stream.runCollect
 * )
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const stream = <A>(
  endpoint: string,
  schema: Decoder<A>,
  options: ListOptions = {}
): Stream.Stream<A, ErpError.ErpError, ErpClient> => Paginate.records(pages(endpoint, schema, options))
