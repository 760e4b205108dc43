/**
 * A request's path and query, checked before anything is sent (docs/ARCHITECTURE.md, "Queries"): an endpoint is a
 * relative path of `[A-Za-z0-9_-]` segments, a condition field is `[A-Za-z0-9_]`, paging is a non-negative offset and a
 * positive count, and the list parameters come first, in the contract's order. Each edition's `ListQuery` turns a
 * refusal into its `InvalidRequest`.
 *
 * @since 0.1.0
 */

/**
 * A value a condition can compare with. Booleans are sent as `1` / `0`, the form the contract shows.
 *
 * @since 0.1.0
 * @category Models
 */
export type ConditionValue = string | number | boolean

/**
 * Conditions on record fields: `{ is_customer: 1 }` becomes `list_condition[is_customer]=1`.
 *
 * @since 0.1.0
 * @category Models
 */
export type Conditions = Readonly<Record<string, ConditionValue>>

/**
 * One page of a list: `list_offset`, `list_count` and the conditions.
 *
 * @since 0.1.0
 * @category Models
 */
export interface ListQuery {
  readonly offset: number
  readonly count: number
  readonly where?: Conditions | undefined
}

/**
 * Query parameters, in order. Values are URL-encoded when the URL is built.
 *
 * @since 0.1.0
 * @category Models
 */
export type Params = ReadonlyArray<readonly [string, string]>

/**
 * A check's answer: the value, or why it is refused (the `reason` of an `InvalidRequest`).
 *
 * @since 0.1.0
 * @category Models
 */
export type Checked<A> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly reason: string }

const ok = <A>(value: A): Checked<A> => ({ ok: true, value })
const refused = (reason: string): Checked<never> => ({ ok: false, reason })

const FIELD = /^[A-Za-z0-9_]+$/
const ENDPOINT = /^[A-Za-z0-9_-]+(?:\/[A-Za-z0-9_-]+)*$/

/**
 * The endpoint a request's URL reaches, as the rate limit counts it: the URL after the base URL, without its query or
 * fragment. The server counts its limit per endpoint, so a query written into the URL (`partner/get?id=1`) must not
 * make a limiter key of its own, which would let every id past the limit.
 *
 * @example
 * ```ts
 * import { ListQuery } from "@erp-client/kernel"
 *
 * console.log(ListQuery.endpointOfUrl("https://erp.example/api/v2/partner/get?id=1", "https://erp.example/api/v2/"))
 * // => partner/get
 * ```
 *
 * @since 0.1.0
 * @category Validation
 */
export const endpointOfUrl = (url: string, baseUrl: string): string =>
  (url.startsWith(baseUrl) ? url.slice(baseUrl.length) : url).replace(/[?#].*$/s, "")

/**
 * Checks an endpoint path (`partner/list`): relative, made of `[A-Za-z0-9_-]` segments, so it can never leave the base
 * URL or smuggle a query.
 *
 * @example
 * ```ts
 * import { ListQuery } from "@erp-client/kernel"
 *
 * console.log(ListQuery.checkEndpoint("partner/list").ok, ListQuery.checkEndpoint("../admin/users").ok) // => true false
 * ```
 *
 * @since 0.1.0
 * @category Validation
 */
export const checkEndpoint = (endpoint: string): Checked<string> =>
  ENDPOINT.test(endpoint) ? ok(endpoint) : refused("an endpoint is a relative path of [A-Za-z0-9_-] segments")

/**
 * Encodes a condition value the way the server compares it.
 *
 * @example
 * ```ts
 * import { ListQuery } from "@erp-client/kernel"
 *
 * console.log(ListQuery.conditionValue(true), ListQuery.conditionValue("Kovács Kft.")) // => 1 Kovács Kft.
 * ```
 *
 * @since 0.1.0
 * @category Encoding
 */
export const conditionValue = (value: ConditionValue): string =>
  typeof value === "boolean" ? (value ? "1" : "0") : String(value)

/**
 * The conditions as parameters; a field name outside `[A-Za-z0-9_]` (it could add or change a parameter) or a number
 * that is not finite is refused. Values may hold anything: the URL builder encodes them.
 *
 * @example
 * ```ts
 * import { ListQuery } from "@erp-client/kernel"
 *
 * console.log(ListQuery.checkConditions({ is_customer: true })) // => { ok: true, value: [ [ 'list_condition[is_customer]', '1' ] ] }
 * console.log(ListQuery.checkConditions({ "a]=1&list_count": 1 }).ok) // => false
 * ```
 *
 * @since 0.1.0
 * @category Validation
 */
export const checkConditions = (where: Conditions | undefined): Checked<Params> => {
  const params: Array<readonly [string, string]> = []
  if (where === undefined) return ok(params)
  for (const [field, value] of Object.entries(where)) {
    if (!FIELD.test(field)) {
      return refused(`condition field ${JSON.stringify(field)} is not made of A-Z, a-z, 0-9 and _`)
    }
    if (typeof value === "number" && !Number.isFinite(value)) {
      return refused(`condition ${field} is not a finite number`)
    }
    params.push([`list_condition[${field}]`, conditionValue(value)])
  }
  return ok(params)
}

/**
 * Checks a page request: a non-negative integer offset and a positive integer count.
 *
 * @example
 * ```ts
 * import { ListQuery } from "@erp-client/kernel"
 *
 * console.log(ListQuery.checkPaging(0, 0)) // => { ok: false, reason: 'list_count must be an integer >= 1, got 0' }
 * ```
 *
 * @since 0.1.0
 * @category Validation
 */
export const checkPaging = (offset: number, count: number): Checked<void> => {
  if (!Number.isSafeInteger(offset) || offset < 0) return refused(`list_offset must be an integer >= 0, got ${offset}`)
  if (!Number.isSafeInteger(count) || count < 1) return refused(`list_count must be an integer >= 1, got ${count}`)
  return ok(undefined)
}

/**
 * The query parameters of one page, in the order the contract lists them: `list_offset` and `list_count` always
 * (docs/erp-api-v2.md, "Paging rules", 3), then the conditions.
 *
 * @example
 * ```ts
 * import { ListQuery } from "@erp-client/kernel"
 *
 * const params = ListQuery.toParams({ offset: 50, count: 25, where: { is_customer: 1 } })
 * console.log(params.ok && params.value.map(([name, value]) => `${name}=${value}`).join("&"))
 * // => list_offset=50&list_count=25&list_condition[is_customer]=1
 * ```
 *
 * @since 0.1.0
 * @category Encoding
 */
export const toParams = (query: ListQuery): Checked<Params> => {
  const paging = checkPaging(query.offset, query.count)
  if (!paging.ok) return paging
  const conditions = checkConditions(query.where)
  if (!conditions.ok) return conditions
  return ok([["list_offset", String(query.offset)], ["list_count", String(query.count)], ...conditions.value])
}

/**
 * A list call's parameters: the page's (`toParams`), then the caller's others, which may not set what paging sets.
 *
 * @example
 * ```ts
 * import { ListQuery } from "@erp-client/kernel"
 *
 * const params = ListQuery.listParams({ offset: 0, count: 10 }, [["list_offset", "5"]])
 * console.log(params) // => { ok: false, reason: 'list_offset is set by paging, not as a parameter' }
 * ```
 *
 * @since 0.1.0
 * @category Encoding
 */
export const listParams = (query: ListQuery, other: Params = []): Checked<Params> => {
  const paging = toParams(query)
  if (!paging.ok) return paging
  const taken = other.find(([name]) =>
    name === "list_offset" || name === "list_count" || name.startsWith("list_condition[")
  )
  return taken === undefined
    ? ok([...paging.value, ...other])
    : refused(`${taken[0]} is set by paging, not as a parameter`)
}
