/**
 * The query of a list endpoint: `list_offset`, `list_count` and `list_condition[field]`, validated and encoded. The
 * checks are `@erp-client/kernel/ListQuery`'s; this module gives their refusals as `InvalidRequest`s.
 *
 * @since 0.1.0
 */
import * as Kernel from "@erp-client/kernel/ListQuery"
import * as Result from "effect/Result"
import { InvalidRequest } from "./ErpError.js"

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
 * A kernel check's answer as a `Result`, its refusal the `InvalidRequest` of `endpoint`.
 *
 * @example
 * ```ts
 * import { ListQuery } from "@erp-client/effect4-core"
 * import { Result } from "effect"
 *
 * // A check answers `{ ok: true, value }` or `{ ok: false, reason }`
 * const endpoint = ListQuery.checked("../admin", { ok: false, reason: "the path holds .." })
 * console.log(Result.isFailure(endpoint) && endpoint.failure._tag) // => InvalidRequest
 * ```
 *
 * @since 0.1.0
 * @category Validation
 */
export const checked = <A>(endpoint: string, check: Kernel.Checked<A>): Result.Result<A, InvalidRequest> =>
  check.ok ? Result.succeed(check.value) : Result.fail(new InvalidRequest({ endpoint, reason: check.reason }))

/**
 * Encodes a condition value the way the server compares it.
 *
 * @example
 * ```ts
 * import { ListQuery } from "@erp-client/effect4-core"
 *
 * console.log(ListQuery.conditionValue(true)) // => 1
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
 * import { ListQuery } from "@erp-client/effect4-core"
 * import { Result } from "effect"
 *
 * const smuggled = ListQuery.validateConditions("partner/list", { "is_customer]=1&list_count": 1 })
 * console.log(Result.isFailure(smuggled) && smuggled.failure._tag) // => InvalidRequest
 * ```
 *
 * @since 0.1.0
 * @category Validation
 */
export const validateConditions = (
  endpoint: string,
  where: Conditions | undefined
): Result.Result<ReadonlyArray<readonly [string, string]>, InvalidRequest> =>
  checked(endpoint, Kernel.checkConditions(where))

/**
 * Checks a page request: a non-negative integer offset and a positive integer count.
 *
 * @example
 * ```ts
 * import { ListQuery } from "@erp-client/effect4-core"
 * import { Result } from "effect"
 *
 * const paging = ListQuery.validatePaging("partner/list", 0, 0)
 * if (Result.isFailure(paging)) console.log(paging.failure.reason) // => list_count must be an integer >= 1, got 0
 * ```
 *
 * @since 0.1.0
 * @category Validation
 */
export const validatePaging = (endpoint: string, offset: number, count: number): Result.Result<void, InvalidRequest> =>
  checked(endpoint, Kernel.checkPaging(offset, count))

/**
 * The query parameters of one page, in the order the contract lists them. `list_offset` and `list_count` are always
 * sent (docs/erp-api-v2.md, "Paging rules", 3).
 *
 * @example
 * ```ts
 * import { ListQuery } from "@erp-client/effect4-core"
 * import { Result } from "effect"
 *
 * const params = ListQuery.toParams("partner/list", { offset: 50, count: 25, where: { is_customer: 1 } })
 * console.log(Result.getOrThrow(params))
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
): Result.Result<ReadonlyArray<readonly [string, string]>, InvalidRequest> => checked(endpoint, Kernel.toParams(query))
