/**
 * The query of a list endpoint: `list_offset`, `list_count` and `list_condition[field]`, validated and encoded.
 *
 * @since 0.1.0
 */
import * as Kernel from "@erp-client/kernel/ListQuery"
import { InvalidRequest } from "./ErpError.js"
import * as Edition from "./internal/edition.js"

/**
 * A value a condition can compare with. Booleans are sent as `1` / `0`, the form the contract shows.
 *
 * @since 0.1.0
 * @category Models
 */
export type ConditionValue = Kernel.ConditionValue

/**
 * Conditions on record fields: `{ is_customer: 1 }` becomes `list_condition[is_customer]=1`.
 *
 * @since 0.1.0
 * @category Models
 */
export type Conditions = Kernel.Conditions

/**
 * @since 0.1.0
 * @category Models
 */
export type ListQuery = Kernel.ListQuery

/**
 * A kernel check's answer as a `Result` (Effect 3's `Either`), its refusal the `InvalidRequest` of `endpoint`.
 *
 * @example
 * ```ts
 * import { ListQuery } from "@erp-client/core"
 * import { ListQuery as Checks } from "@erp-client/kernel"
 * import { Either } from "effect"
 *
 * const endpoint = ListQuery.checked("../admin", Checks.checkEndpoint("../admin"))
 * console.log(Either.isLeft(endpoint) && endpoint.left._tag) // => InvalidRequest
 * ```
 *
 * @since 0.1.0
 * @category Validation
 */
export const checked = <A>(endpoint: string, check: Kernel.Checked<A>): Edition.Result<A, InvalidRequest> =>
  check.ok
    ? Edition.Result.succeed(check.value)
    : Edition.Result.fail(new InvalidRequest({ endpoint, reason: check.reason }))

/**
 * Encodes a condition value the way the server compares it.
 *
 * @example
 * ```ts
 * import { ListQuery } from "@erp-client/core"
 *
 * // A boolean goes out as the contract's 1 / 0; text and numbers as they are
 * console.log(ListQuery.conditionValue(true)) // => 1
 * console.log(ListQuery.conditionValue("Kovács Kft.")) // => Kovács Kft.
 * ```
 *
 * @since 0.1.0
 * @category Encoding
 */
export const conditionValue: (value: ConditionValue) => string = Kernel.conditionValue

/**
 * Checks conditions before anything is sent (docs/ARCHITECTURE.md, "Queries"): field names are restricted to
 * `[A-Za-z0-9_]` so a name can never add or change a parameter; values may hold anything and are URL-encoded by the
 * URL builder.
 *
 * @example
 * ```ts
 * import { ListQuery } from "@erp-client/core"
 * import { Either } from "effect"
 *
 * // Customers only
 * const params = ListQuery.validateConditions("partner/list", { is_customer: true })
 * console.log(Either.getOrThrow(params)) // => [ [ 'list_condition[is_customer]', '1' ] ]
 *
 * // A field name that would smuggle in a parameter of its own is refused before anything is sent
 * const smuggled = ListQuery.validateConditions("partner/list", { "is_customer]=1&list_count": 1 })
 * console.log(Either.isLeft(smuggled) && smuggled.left._tag) // => InvalidRequest
 * ```
 *
 * @since 0.1.0
 * @category Validation
 */
export const validateConditions = (
  endpoint: string,
  where: Conditions | undefined
): Edition.Result<ReadonlyArray<readonly [string, string]>, InvalidRequest> =>
  checked(endpoint, Kernel.checkConditions(where))

/**
 * Checks a page request: a non-negative integer offset and a positive integer count.
 *
 * @example
 * ```ts
 * import { ListQuery } from "@erp-client/core"
 * import { Either } from "effect"
 *
 * // A page of no records cannot be asked for
 * const paging = ListQuery.validatePaging("partner/list", 0, 0)
 * if (Either.isLeft(paging)) console.log(paging.left.reason) // => list_count must be an integer >= 1, got 0
 * ```
 *
 * @since 0.1.0
 * @category Validation
 */
export const validatePaging = (
  endpoint: string,
  offset: number,
  count: number
): Edition.Result<void, InvalidRequest> => checked(endpoint, Kernel.checkPaging(offset, count))

/**
 * The query parameters of one page, in the order the contract lists them. `list_offset` and `list_count` are
 * always sent (docs/erp-api-v2.md, "Paging rules", 3).
 *
 * @example
 * ```ts
 * import { ListQuery } from "@erp-client/core"
 * import { Either } from "effect"
 *
 * // The third page of customers, 25 a page
 * const params = ListQuery.toParams("partner/list", { offset: 50, count: 25, where: { is_customer: 1 } })
 * console.log(Either.getOrThrow(params))
 * // => [
 * //   [ 'list_offset', '50' ],
 * //   [ 'list_count', '25' ],
 * //   [ 'list_condition[is_customer]', '1' ]
 * // ]
 * ```
 *
 * @since 0.1.0
 * @category Encoding
 */
export const toParams = (
  endpoint: string,
  query: ListQuery
): Edition.Result<ReadonlyArray<readonly [string, string]>, InvalidRequest> => checked(endpoint, Kernel.toParams(query))
