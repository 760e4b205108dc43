/**
 * The partner endpoints: every partner as a Stream (or its pages), one partner by id or by company name.
 *
 * @since 0.1.0
 */
import { type CallError, ErpClient, type Params } from "@erp-client/client/ErpClient"
import { Partner } from "@erp-client/core/Partner"
import * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"
import * as ListEndpoint from "./ListEndpoint.js"
import type * as Paginate from "./Paginate.js"

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
 * Pages of partners, for callers that track progress by page: each says where an export resumed after it starts
 * (`page.next`, for `resume`).
 *
 * @since 0.1.0
 * @category Accessors
 */
export const pages = (
  options: ListEndpoint.ListOptions = {}
): Stream.Stream<Paginate.ResumablePage<Partner>, ListEndpoint.PagingError, ErpClient> =>
  ListEndpoint.pages(LIST, Partner, options)

/**
 * Every partner matching `where`, in offset order: each exactly once while the list does not change, or with
 * `safe`, each at most once and none skipped while it does (see `Paginate.safePages`).
 *
 * @since 0.1.0
 * @category Accessors
 */
export const stream = (
  options: ListEndpoint.ListOptions = {}
): Stream.Stream<Partner, ListEndpoint.PagingError, ErpClient> => ListEndpoint.stream(LIST, Partner, options)

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
 * @since 0.1.0
 * @category Accessors
 */
export const query = (by: Selector): { readonly params: Params; readonly selector: string } =>
  "id" in by
    ? { params: [["id", String(by.id)]], selector: `id=${by.id}` }
    : { params: [["company_name", by.companyName]], selector: `company_name=${JSON.stringify(by.companyName)}` }

/**
 * One partner by id; `NotFound` when there is none.
 *
 * @since 0.1.0
 * @category Accessors
 */
export const get = (id: number): Effect.Effect<Partner, CallError, ErpClient> =>
  Effect.flatMap(ErpClient, (client) => client.get(GET, Partner, query({ id })))

/**
 * One partner by company name (sent URL-encoded; `&`, `+`, `=`, `%` and accents are safe); `NotFound` when there
 * is none.
 *
 * @since 0.1.0
 * @category Accessors
 */
export const getByCompanyName = (companyName: string): Effect.Effect<Partner, CallError, ErpClient> =>
  Effect.flatMap(ErpClient, (client) => client.get(GET, Partner, query({ companyName })))
