/**
 * The partner endpoints, declared once (`resource`): every partner as a Stream (or its pages), one partner by id or
 * by company name.
 *
 * @since 0.1.0
 */
import { type CallError, type ErpClient, type Params } from "@erp-client/client/ErpClient"
import type * as ErpError from "@erp-client/core/ErpError"
import * as Partner from "@erp-client/core/Partner"
import * as Readings from "@erp-client/kernel/Partner"
import type * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"
import type * as Changes from "./Changes.js"
import type { KeyValueStore, KeyValueStoreError, Result } from "./internal/edition.js"
import type * as ListEndpoint from "./ListEndpoint.js"
import type * as Paginate from "./Paginate.js"
import * as Resource from "./Resource.js"

/**
 * @since 0.1.0
 * @category Endpoints
 */
export const LIST = "partner/list"

/**
 * @since 0.1.0
 * @category Endpoints
 */
export const GET = "partner/get"

/**
 * Partners looked up by id (`partner/get?id=`).
 *
 * @since 0.1.0
 * @category Selectors
 */
export const byId: Resource.Selector = { param: "id", kind: "integer", flag: "id", description: "A partner's id." }

/**
 * Partners looked up by exact company name (`partner/get?company_name=`).
 *
 * @since 0.1.0
 * @category Selectors
 */
export const byCompanyName: Resource.Selector = {
  param: "company_name",
  kind: "text",
  flag: "company-name",
  description: "A partner's exact company name (any characters; sent URL-encoded).",
  prefix: "name:"
}

/**
 * The partners, declared: the endpoints of the contract (docs/erp-api-v2.md, "Endpoints"), `Partner` as servers send
 * it and `StrictPartner` as the contract shows it, looked up by id or company name, `--customers` for
 * `is_customer=1`.
 *
 * @since 0.1.0
 * @category Resources
 */
export const resource: Resource.Resource<Partner.Partner, Partner.StrictPartner> = Resource.make({
  name: "partners",
  description: "Export and look up partners",
  list: LIST,
  get: GET,
  schema: Partner.Partner,
  strict: Partner.StrictPartner,
  contract: "a tax number of hyphenated digit groups, a company name",
  idField: "id",
  fields: ["id", "company_name", "tax_number", "is_customer"],
  selectors: [byId, byCompanyName],
  columns: [
    { header: "id", width: 10, field: "id" },
    { header: "company_name", width: 48, field: "company_name" },
    { header: "tax_number", width: 16, field: "tax_number" },
    // yes and no for the contract's 1 and 0 only: any other value is shown as sent.
    { header: "customer", width: 8, show: (record) => Readings.customerCell(record.is_customer) }
  ],
  filters: [{ flag: "customers", description: "Customers only (is_customer=1).", where: { is_customer: 1 } }]
})

/**
 * Pages of partners, for callers that track progress by page: each says where an export resumed after it starts
 * (`page.next`, for `resume`).
 *
 * @example
 * ```ts
 * import { Partners } from "@erp-client/streams"
 * import { Console, Stream } from "effect"
 *
 * // Each page of partners, with where an interrupted export would go on after it (store it, pass it as `resume`)
 * const program = Partners.pages({ pageSize: 500 }).pipe(
 *   Stream.runForEach((page) =>
 *     Console.log(`${page.offset}: ${page.records.length} partners, next:`, JSON.stringify(page.next))
 *   )
 * )
 * ```
 *
 * @since 0.1.0
 * @category Accessors
 */
export const pages = (
  options: ListEndpoint.ListOptions = {}
): Stream.Stream<Paginate.ResumablePage<Partner.Partner>, ErpError.ErpError, ErpClient> =>
  Resource.pages(resource, options)

/**
 * Every partner matching `where`, in offset order: each exactly once while the list does not change, or with
 * `safe`, each at most once and none skipped while it does (see `Paginate.safePages`).
 *
 * @example
 * ```ts
 * import { Partners } from "@erp-client/streams"
 * import { Stream } from "effect"
 *
 * // Every customer's company name, drift-safe while partners are added and removed during the export
 * const names = Partners.stream({ where: { is_customer: 1 }, safe: true }).pipe(
 *   Stream.map((partner) => partner.company_name),
 *   Stream.runCollect
 * )
 * ```
 *
 * @since 0.1.0
 * @category Accessors
 */
export const stream = (
  options: ListEndpoint.ListOptions = {}
): Stream.Stream<Partner.Partner, ErpError.ErpError, ErpClient> => Resource.stream(resource, options)

/**
 * The partners added, changed and removed since the last complete run whose state is under `key` in the
 * `KeyValueStore` (see `Resource.changes`).
 *
 * @example
 * ```ts
 * import { NodeContext } from "@effect/platform-node"
 * import { Changes, Partners } from "@erp-client/streams"
 * import { Console, Effect, Layer, Stream } from "effect"
 *
 * // A nightly sync: only what changed since last night, the state in ./state/partners (replaced atomically)
 * const program = Partners.changes({ key: "partners" }).pipe(
 *   Stream.runForEach((change) =>
 *     change._tag === "Removed"
 *       ? Console.log(`delete ${change.id}`)
 *       : Console.log(`upsert ${change.id}: ${change.record.company_name}`)
 *   ),
 *   Effect.provide(Changes.layerFile("state").pipe(Layer.provide(NodeContext.layer)))
 * )
 * ```
 *
 * @since 0.1.0
 * @category Accessors
 */
export const changes = <E2 = never, R2 = never>(
  options: Resource.ChangesOptions<E2, R2>
): Stream.Stream<
  Changes.Change<Partner.Partner>,
  ErpError.ErpError | Changes.Refused | KeyValueStoreError | E2,
  ErpClient | KeyValueStore | R2
> => Resource.changes(resource, options)

/**
 * How one partner is selected: by id or by company name.
 *
 * @since 0.1.0
 * @category Models
 */
export type Selector = { readonly id: number } | { readonly companyName: string }

/**
 * The `partner/get` query for a selector, and how `NotFound` names it.
 *
 * @example
 * ```ts
 * import { Partners } from "@erp-client/streams"
 *
 * console.log(Partners.query({ id: 42 }).selector) // => id=42
 * console.log(Partners.query({ companyName: "Acme GmbH" }).params) // => [ [ 'company_name', 'Acme GmbH' ] ]
 * ```
 *
 * @since 0.1.0
 * @category Accessors
 */
export const query = (by: Selector): { readonly params: Params; readonly selector: string } =>
  "id" in by ? Resource.query(byId, by.id) : Resource.query(byCompanyName, by.companyName)

/**
 * One partner by id; `NotFound` when there is none.
 *
 * @example
 * ```ts
 * import { Partners } from "@erp-client/streams"
 * import { Effect } from "effect"
 *
 * // Partner 7's company name, or `undefined` when there is no partner 7
 * const program = Partners.get(7).pipe(
 *   Effect.map((partner) => partner.company_name),
 *   Effect.catchTag("NotFound", () => Effect.succeed(undefined))
 * )
 * ```
 *
 * @since 0.1.0
 * @category Accessors
 */
export const get = (id: number): Effect.Effect<Partner.Partner, CallError, ErpClient> =>
  Resource.get(resource, byId, id)

/**
 * One partner by company name (sent URL-encoded; `&`, `+`, `=`, `%` and accents are safe); `NotFound` when there
 * is none.
 *
 * @example
 * ```ts
 * import { Partners } from "@erp-client/streams"
 * import { Effect } from "effect"
 *
 * // The name is sent as written: `&` and accents included
 * const program = Partners.getByCompanyName("Kovács & Társa Kft.").pipe(Effect.map((partner) => partner.id))
 * ```
 *
 * @since 0.1.0
 * @category Accessors
 */
export const getByCompanyName = (companyName: string): Effect.Effect<Partner.Partner, CallError, ErpClient> =>
  Resource.get(resource, byCompanyName, companyName)

/**
 * Many partners by id, in the order given: each id with its partner or the error of its lookup (`NotFound` for one
 * that does not exist), as they come in order. Repeated ids in flight together share one request; with a
 * `Lookups.layer`, every repeat within its time to live does (see `Resource.getMany`).
 *
 * @example
 * ```ts
 * import { Lookups, Partners } from "@erp-client/streams"
 * import { Effect, Either, Stream } from "effect"
 *
 * // Three requests for six lookups: 7, 3 and 12.
 * const found = Partners.getMany([7, 7, 3, 7, 3, 12]).pipe(
 *   Stream.map(({ result, value }) => Either.isRight(result) ? result.right.company_name : `no partner ${value}`),
 *   Stream.runCollect,
 *   Effect.provide(Lookups.layer())
 * )
 * ```
 *
 * @since 0.1.0
 * @category Accessors
 */
export const getMany = (
  ids: Iterable<number>,
  options: { readonly concurrency?: number | undefined } = {}
): Stream.Stream<
  { readonly value: string | number; readonly result: Result<Partner.Partner, CallError> },
  never,
  ErpClient
> => Resource.getMany(resource, byId, ids, options)
