/**
 * One kind of record of the ERP, declared once: its list and get endpoints, its schemas, the field that tells records
 * apart, how one is looked up, and how records are shown. The library's streams and lookups, and the command line's
 * commands, help and output come from the declaration (docs/ARCHITECTURE.md, "Adding an endpoint"); `Partners` is
 * one.
 *
 * @since 0.1.0
 */
import * as ErpClientModule from "@erp-client/client/ErpClient"
import { type CallError, ErpClient, type Params } from "@erp-client/client/ErpClient"
import type * as ErpError from "@erp-client/core/ErpError"
import { InvalidRequest } from "@erp-client/core/ErpError"
import type * as ListQuery from "@erp-client/core/ListQuery"
import * as KernelChanges from "@erp-client/kernel/Changes"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Changes from "./Changes.js"
import {
  type AnyDecoder,
  type Decoder,
  fieldsOf,
  type KeyValueStore,
  type KeyValueStoreError,
  locally,
  type Result,
  result
} from "./internal/edition.js"
import * as Lookups from "./internal/lookups.js"
import * as ListEndpoint from "./ListEndpoint.js"
import type * as Paginate from "./Paginate.js"

/**
 * How one record is looked up by the get endpoint: the query parameter, what a value is, and the command line's flag.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Selector {
  /** The query parameter (`id`, `company_name`). */
  readonly param: string
  /** `"integer"`: a whole number (a `--stdin` line of only digits is one); `"text"`: any text, URL-encoded. */
  readonly kind: "integer" | "text"
  /** The command line's flag, without dashes (`id`, `company-name`). */
  readonly flag: string
  /** What a value is, for help (`A partner's id.`). */
  readonly description: string
  /** A `--stdin` line starting with this is a value of this selector whatever it looks like (`name:`). */
  readonly prefix?: string | undefined
}

/**
 * A column of the command line's table: a field as the server wrote it, or a value shown from the record.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Column {
  readonly header: string
  readonly width: number
  /** The field shown as written (its exact text for a number). */
  readonly field?: string | undefined
  /** Or a value shown from the record as parsed (e.g. `yes`/`no` for a flag). */
  readonly show?: ((record: Readonly<Record<string, unknown>>) => string) | undefined
}

/**
 * A condition the command line offers as a flag of its own (`--customers` for `is_customer=1`).
 *
 * @since 0.1.0
 * @category Models
 */
export interface Filter {
  /** The flag, without dashes. */
  readonly flag: string
  readonly description: string
  readonly where: ListQuery.Conditions
}

/**
 * The declaration of a kind of record. `A` is what `schema` decodes (what servers send), `S` what `strict` decodes
 * (the contract to the letter).
 *
 * @since 0.1.0
 * @category Models
 */
export interface Resource<A, S = A> {
  /** The command line's name for these records: lower case, plural (`partners`). */
  readonly name: string
  /** One line for help, in sentence case as help shows every description: what these records are. */
  readonly description: string
  /** The list endpoint (`partner/list`). */
  readonly list: string
  /** The single-record endpoint (`partner/get`), if there is one. */
  readonly get?: string | undefined
  /** Records as servers send them: what the library decodes (a record that strays from the contract is kept). */
  readonly schema: Decoder<A>
  /** The contract to the letter: records that stray are reported, and `--strict` fails at the first. */
  readonly strict?: Decoder<S> | undefined
  /** What the contract asks, in a few words, for `--strict`'s help (`a tax number of hyphenated digit groups, …`). */
  readonly contract?: string | undefined
  /** The field that tells records apart (drift-safe paging). */
  readonly idField: string
  /** The fields the contract shows, in order: a CSV export's first columns. */
  readonly fields: ReadonlyArray<string>
  /** How one record is looked up by `get`, in the order `--stdin` tries them. */
  readonly selectors: ReadonlyArray<Selector>
  /** The command line's table. */
  readonly columns: ReadonlyArray<Column>
  /** Conditions with flags of their own. */
  readonly filters: ReadonlyArray<Filter>
  /**
   * A record like the server's, the `index`-th (from 0) of a made-up list: what `erp sandbox` serves at `list` and
   * `get` (100 of them) for a resource it has no records of its own for. Without it, the sandbox serves records of
   * the id field alone.
   */
  readonly sample?: ((index: number) => Readonly<Record<string, unknown>>) | undefined
}

/**
 * Any resource, whatever its records' types: what the command line's commands and `erp mcp`'s tools take. An Effect 3
 * schema is invariant in its types, so a `Resource<Product>` is not a `Resource<unknown>` there; this is the one type
 * every declaration is, in either edition.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Any extends Omit<Resource<unknown, unknown>, "schema" | "strict"> {
  readonly schema: AnyDecoder
  readonly strict?: AnyDecoder | undefined
}

/**
 * A declaration: the name, a line for help, the list endpoint and the record schema are all it needs. The defaults:
 * `idField` `"id"`; `fields` the schema's own fields, in order (for a `Schema.Struct`); with a `get` endpoint, one
 * selector, the id field (`--id N`); the table's columns the first page's first fields; no strict schema (no
 * `--strict`), no filters, no sample records.
 *
 * @example
 * ```ts
 * import { Resource } from "@erp-client/streams"
 * import { Schema } from "effect"
 *
 * // Invoices, declared once: streams, lookups and (in `Cli.resources`) `erp invoices list | get` come from it
 * const Invoice = Schema.Struct({ id: Schema.Number, number: Schema.String, partner_id: Schema.Number })
 * const invoices = Resource.make({
 *   name: "invoices",
 *   description: "Export and look up invoices",
 *   list: "invoice/list",
 *   get: "invoice/get",
 *   schema: Invoice
 * })
 * console.log(invoices.idField, invoices.fields, invoices.filters) // => id [ 'id', 'number', 'partner_id' ] []
 * console.log(invoices.selectors.map((selector) => `--${selector.flag}`)) // => [ '--id' ]
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const make = <A, S = A>(
  declaration:
    & Pick<Resource<A, S>, "name" | "description" | "list" | "schema">
    & Partial<Omit<Resource<A, S>, "name" | "description" | "list" | "schema">>
): Resource<A, S> => {
  const idField = declaration.idField ?? "id"
  return {
    idField,
    fields: fieldsOf(declaration.schema),
    selectors: declaration.get === undefined ? [] : [idSelector(declaration.name, idField)],
    columns: [],
    filters: [],
    ...declaration
  }
}

// The get endpoint's default selector: the id field, a whole number (`--id N`).
const idSelector = (name: string, idField: string): Selector => ({
  param: idField,
  kind: "integer",
  flag: idField.replace(/_/g, "-"),
  description: `A${/^[aeiou]/i.test(name) ? "n" : ""} ${name.replace(/s$/, "")}'s ${idField.replace(/_/g, " ")}.`
})

/**
 * Pages of the resource's list, each record decoded with its schema (see `ListEndpoint.pages`).
 *
 * @example
 * ```ts
 * import { Partners, Resource } from "@erp-client/streams"
 * import { Console, Stream } from "effect"
 *
 * // Each page of customers, with where an interrupted export would go on after it (`resume: page.next`)
 * const program = Resource.pages(Partners.resource, { where: { is_customer: 1 } }).pipe(
 *   Stream.runForEach((page) => Console.log(`${page.records.length} partners, next:`, JSON.stringify(page.next)))
 * )
 * ```
 *
 * @since 0.1.0
 * @category Accessors
 */
export const pages = <A, S>(
  resource: Resource<A, S>,
  options: ListEndpoint.ListOptions = {}
): Stream.Stream<Paginate.ResumablePage<A>, ErpError.ErpError, ErpClient> =>
  ListEndpoint.pages(resource.list, resource.schema, withIdField(resource, options))

/**
 * Every record of the resource's list, in offset order (see `ListEndpoint.stream`).
 *
 * @example
 * ```ts
 * import { Partners, Resource } from "@erp-client/streams"
 * import { Stream } from "effect"
 *
 * // Every customer's company name; `safe: true` tells partners apart by the resource's `idField`
 * const names = Resource.stream(Partners.resource, { where: { is_customer: 1 }, safe: true }).pipe(
 *   Stream.map((partner) => partner.company_name),
 *   Stream.runCollect
 * )
 * ```
 *
 * @since 0.1.0
 * @category Accessors
 */
export const stream = <A, S>(
  resource: Resource<A, S>,
  options: ListEndpoint.ListOptions = {}
): Stream.Stream<A, ErpError.ErpError, ErpClient> =>
  ListEndpoint.stream(resource.list, resource.schema, withIdField(resource, options))

/**
 * Options of `changes`: the list's (its conditions, parameters, page size, concurrency), drift-safe paging's (its
 * overlap; paging is always drift-safe here), and the run's (`Changes.RunOptions`: the state's key, `init`,
 * `beforeCommit`, `onSummary`).
 *
 * @since 0.1.0
 * @category Models
 */
export interface ChangesOptions<E2 = never, R2 = never>
  extends
    Omit<ListEndpoint.ListOptions, "safe" | "exact" | "onInvalidRecord" | "resume" | "startOffset">,
    Omit<Changes.RunOptions<E2, R2>, "idField" | "source">
{
  /** Drift-safe paging's settings (the ids are the resource's `idField`). */
  readonly safe?: Omit<Paginate.SafeOptions, "idField" | "seen" | "resumeAfter" | "confirmEnd"> | undefined
}

/**
 * The records of the resource's list added, changed and removed since the last complete run whose state is under
 * `key` in the `KeyValueStore` (see `Changes.make`): the whole list read drift-safe, each record compared by a digest
 * of its exact text, removals only once the end of the list is confirmed, the new state committed only when the stream
 * completes. A first run (no state under `key`) reports every record as added; `init` writes the state and reports
 * nothing. A record that does not match the schema fails the stream (`DecodeError`): a change is never left out.
 *
 * @example
 * ```ts
 * import { KeyValueStore } from "@effect/platform"
 * import { Partners, Resource } from "@erp-client/streams"
 * import { Console, Effect, Stream } from "effect"
 *
 * // What changed among the customers since the last run; the state in memory here (`Changes.layerFile` keeps it)
 * const program = Resource.changes(Partners.resource, { key: "customers", where: { is_customer: 1 } }).pipe(
 *   Stream.runForEach((change) => Console.log(change._tag, change.id)),
 *   Effect.provide(KeyValueStore.layerMemory)
 * )
 * ```
 *
 * @since 0.1.0
 * @category Accessors
 */
export const changes = <A, S, E2 = never, R2 = never>(
  resource: Resource<A, S>,
  options: ChangesOptions<E2, R2>
): Stream.Stream<
  Changes.Change<A>,
  ErpError.ErpError | Changes.Refused | KeyValueStoreError | E2,
  ErpClient | KeyValueStore | R2
> => {
  const { allowDuplicateIds, beforeCommit, init, key, maxRemovedRatio, onSummary, safe, ...list } = options
  return Stream.unwrap(Effect.gen(function*() {
    // The state records the list it is of, its server included: a state of another is refused.
    const source = KernelChanges.sourceOf({
      baseUrl: (yield* ErpClient).baseUrl,
      endpoint: resource.list,
      idField: resource.idField,
      where: list.where,
      params: list.params
    })
    return Changes.make((tracking) =>
      ListEndpoint.pages(resource.list, resource.schema, {
        ...list,
        safe: { ...safe, idField: resource.idField, ...tracking },
        exact: true
      }), { key, idField: resource.idField, source, init, allowDuplicateIds, maxRemovedRatio, beforeCommit, onSummary })
  }))
}

// Drift-safe paging tells records apart by the resource's id field unless told otherwise.
const withIdField = <A, S>(resource: Resource<A, S>, options: ListEndpoint.ListOptions): ListEndpoint.ListOptions =>
  options.safe === undefined
    ? options
    : { ...options, safe: { idField: resource.idField, ...(options.safe === true ? {} : options.safe) } }

/**
 * The get endpoint's query for a selector and a value, and how `NotFound` names it (`id=42`).
 *
 * @example
 * ```ts
 * import { Partners, Resource } from "@erp-client/streams"
 *
 * const { params, selector } = Resource.query(Partners.byCompanyName, "Kovács & Társa Kft.")
 * console.log(params) // => [ [ 'company_name', 'Kovács & Társa Kft.' ] ]
 * console.log(selector) // => company_name="Kovács & Társa Kft."
 * ```
 *
 * @since 0.1.0
 * @category Accessors
 */
export const query = (
  selector: Selector,
  value: string | number
): { readonly params: Params; readonly selector: string } => ({
  params: [[selector.param, String(value)]],
  selector: `${selector.param}=${typeof value === "number" ? value : JSON.stringify(value)}`
})

/**
 * One record by a selector's value; `NotFound` when there is none. A resource without a get endpoint is an
 * `InvalidRequest`. Identical lookups in flight share one request (with a `Lookups.layer`: answers are kept for its
 * time to live). Under `ErpClient.withMaxWait`, a lookup the rate limit would keep longer fails at once with
 * `RateLimited`; lookups under different bounds do not share a request.
 *
 * @example
 * ```ts
 * import { Partners, Resource } from "@erp-client/streams"
 * import { Effect } from "effect"
 *
 * // One partner by its exact company name, or `undefined` when there is none
 * const program = Resource.get(Partners.resource, Partners.byCompanyName, "Kovács & Társa Kft.").pipe(
 *   Effect.map((partner) => partner.id),
 *   Effect.catchTag("NotFound", () => Effect.succeed(undefined))
 * )
 * ```
 *
 * @since 0.1.0
 * @category Accessors
 */
export const get = <A, S>(
  resource: Resource<A, S>,
  selector: Selector,
  value: string | number
): Effect.Effect<A, CallError, ErpClient> => {
  const endpoint = resource.get
  return endpoint === undefined
    ? Effect.fail(new InvalidRequest({ endpoint: resource.list, reason: `${resource.name} have no get endpoint` }))
    : Effect.flatMap(
      ErpClient,
      (client) =>
        Lookups.run(
          Lookups.make({
            client,
            endpoint,
            schema: resource.schema,
            param: selector.param,
            value,
            selector: query(selector, value).selector
          })
        )
    )
}

/**
 * How many lookups of `getMany` may be under way ahead of the oldest one not yet answered: answers wait in order
 * behind it. Its retries hold no place for a request (`ErpClient.withMaxInFlight`), so with one lookup failing, up to
 * this many others go on meanwhile.
 *
 * @since 0.1.0
 * @category Constants
 */
export const lookahead = 4096

/**
 * Many records by a selector's values, in the order given: each value's record or the error of its lookup, one by one
 * as they come in order. Lookups of equal values share one request while it is in flight (with a `Lookups.layer`,
 * for its time to live), so a batch with repeats costs one request per distinct value within that reach; up to
 * `concurrency` (default 4) requests are in flight at once, the limiter deciding when each goes.
 *
 * Lookups fail independently: one that keeps failing is retried within the client's budget while the others go on
 * (its waits between attempts hold none of the `concurrency` places), so a batch with failing values takes about its
 * time without them plus one retry budget (`retryBudget`, 60 s by default), as long as fewer than `lookahead` lookups
 * are answered meanwhile.
 *
 * @example
 * ```ts
 * import { Partners, Resource } from "@erp-client/streams"
 * import { Either, Stream } from "effect"
 *
 * // Partners by company name, two lookups at a time; each name with its partner's id or why there is none
 * const lines = Resource.getMany(Partners.resource, Partners.byCompanyName, ["Acme GmbH", "Globex Kft."], {
 *   concurrency: 2
 * }).pipe(
 *   Stream.map(({ result, value }) =>
 *     Either.isRight(result) ? `${value}: partner ${result.right.id}` : `${value}: ${result.left._tag}`
 *   ),
 *   Stream.runCollect
 * )
 * ```
 *
 * @since 0.1.0
 * @category Accessors
 */
export const getMany = <A, S>(
  resource: Resource<A, S>,
  selector: Selector,
  values: Iterable<string | number>,
  options: { readonly concurrency?: number | undefined } = {}
): Stream.Stream<
  { readonly value: string | number; readonly result: Result<A, CallError> },
  never,
  ErpClient
> =>
  Stream.suspend(() => {
    // One bound for the whole batch: every lookup's requests count against it.
    const inFlight = ErpClientModule.makeInFlight(options.concurrency ?? 4)
    return Stream.mapEffect(
      Stream.fromIterable(values),
      (value) =>
        Effect.map(result(get(resource, selector, value)), (result) => ({ value, result })).pipe(
          locally(ErpClientModule.currentInFlight, inFlight)
        ),
      { concurrency: lookahead }
    )
  })
