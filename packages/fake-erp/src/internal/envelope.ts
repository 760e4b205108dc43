import type * as ErpRules from "../ErpRules.js"
import * as Exact from "./exactNumber.js"

// `result.code` of a success and of an error (docs/erp-api-v2.md, "Response envelope"; `CODE_OK` and `CODE_ERROR` of
// `@erp-client/core/Envelope`: this package depends on no other, so that both editions can serve it).
const CODE_OK = 1
const CODE_ERROR = 0

/** @internal */
export const JSON_TYPE = "application/json"

/**
 * The response envelope of every endpoint (docs/erp-api-v2.md, "Response envelope"), as text.
 *
 * @internal
 */
export const envelope = (code: number, message: string | null, data: unknown, exact = false): string =>
  (exact ? Exact.stringify : JSON.stringify)({ result: { code, message }, data })

/**
 * `ErpRules.Messages` with the defaults filled in: the contract's texts (docs/erp-api-v2.md, "Errors").
 *
 * @internal
 */
export interface Messages {
  readonly unauthorized: string
  readonly notFound: string
  readonly tooManyRequests: string
}

/** @internal */
export const resolveMessages = (messages: ErpRules.Messages | undefined): Messages => ({
  unauthorized: messages?.unauthorized ?? "Unauthorized",
  notFound: messages?.notFound ?? "Not found",
  tooManyRequests: messages?.tooManyRequests ?? "Too Many Requests"
})

/**
 * The success envelope; with `exact`, the numbers of the odd kinds that hold them are written as their text (slower,
 * so only for data that holds one).
 *
 * @internal
 */
export const success = (data: unknown, exact = false): string => envelope(CODE_OK, null, data, exact)

/** @internal */
export const failure = (message: string): string => envelope(CODE_ERROR, message, null)
