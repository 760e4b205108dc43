/**
 * The response envelope's rules (docs/ARCHITECTURE.md, "Envelope"), as plain functions: what `result.code` and
 * `result.message` mean, how a body that is not JSON is described, and how a path into the body is written. Each
 * edition's `Envelope` decodes the body with its own `Schema` and turns these verdicts into its typed errors.
 *
 * @since 0.1.0
 */

/**
 * Success code of `result.code`.
 *
 * @since 0.1.0
 * @category Constants
 */
export const CODE_OK = 1

/**
 * Error code of `result.code`.
 *
 * @since 0.1.0
 * @category Constants
 */
export const CODE_ERROR = 0

/**
 * What an envelope's `result` says: its `data` is the answer, or the error it reports.
 *
 * @since 0.1.0
 * @category Models
 */
export type Verdict = "Data" | "Unauthorized" | "NotFound" | "ApiError"

/**
 * The verdict of `result.code` and `result.message` (docs/erp-api-v2.md, "Response envelope"): code 1 is the data;
 * code 0 with `Unauthorized` or `Not found` (compared leniently on case and surrounding space) is that error; any other
 * message, or any other code, is an `ApiError`.
 *
 * @example
 * ```ts
 * import { Envelope } from "@erp-client/kernel"
 *
 * console.log(Envelope.verdict(1, null), Envelope.verdict(0, " not FOUND "), Envelope.verdict(0, "Database is down"))
 * // => Data NotFound ApiError
 * ```
 *
 * @since 0.1.0
 * @category Decisions
 */
export const verdict = (code: number, message: string | null): Verdict => {
  if (code === CODE_OK) return "Data"
  if (code === CODE_ERROR) {
    // The contract names these two messages; compare leniently on case and surrounding space.
    const normalized = message?.trim().toLowerCase()
    if (normalized === "unauthorized") return "Unauthorized"
    if (normalized === "not found") return "NotFound"
  }
  return "ApiError"
}

/**
 * A path into the body the way a reader finds it there: `data[3].tax_number`.
 *
 * @example
 * ```ts
 * import { Envelope } from "@erp-client/kernel"
 *
 * console.log(Envelope.formatPath("data", [3, "tax_number"])) // => data[3].tax_number
 * ```
 *
 * @since 0.1.0
 * @category Formatting
 */
export const formatPath = (prefix: string, path: ReadonlyArray<PropertyKey>): string => {
  let out = prefix
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`
    else out += out === "" ? String(key) : `.${String(key)}`
  }
  return out
}

/**
 * The body parsed as JSON, or why it is not (`JSON.parse`'s message names the position, never the key): the one
 * step of decoding that throws, caught here.
 *
 * @example
 * ```ts
 * import { Envelope } from "@erp-client/kernel"
 *
 * const parsed = Envelope.parseJson("<html>502 Bad Gateway</html>")
 * console.log(parsed.ok ? "JSON" : parsed.reason.slice(0, 29)) // => the body is not valid JSON (U
 * ```
 *
 * @since 0.1.0
 * @category Decoding
 */
export const parseJson = (
  body: string
): { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly reason: string } => {
  try {
    return { ok: true, value: JSON.parse(body) }
  } catch (cause) {
    return { ok: false, reason: `the body is not valid JSON (${describeThrown(cause)})` }
  }
}

/**
 * The reason of a `DecodeError` for a value whose check threw (a hostile body nested so deep that writing the error
 * overflows the stack): a typed error like any other bad body, not an exception.
 *
 * @example
 * ```ts
 * import { Envelope } from "@erp-client/kernel"
 *
 * console.log(Envelope.uncheckable(new RangeError("Maximum call stack size exceeded")))
 * // => the value cannot be checked (Maximum call stack size exceeded)
 * ```
 *
 * @since 0.1.0
 * @category Decoding
 */
export const uncheckable = (cause: unknown): string => `the value cannot be checked (${describeThrown(cause)})`

const describeThrown = (cause: unknown): string => cause instanceof Error ? cause.message : String(cause)

/**
 * The server's message in an answer that is not a success but whose body is the envelope (`result.message`, e.g.
 * `database unavailable`), from the envelope's decoded `result`; `undefined` for a success, or no message.
 *
 * @example
 * ```ts
 * import { Envelope } from "@erp-client/kernel"
 *
 * console.log(Envelope.serverMessage(503, { message: "database unavailable" })) // => database unavailable
 * console.log(Envelope.serverMessage(200, { message: "Not found" })) // => undefined
 * ```
 *
 * @since 0.1.0
 * @category Decoding
 */
export const serverMessage = (
  status: number,
  result: { readonly message: string | null } | undefined
): string | undefined => {
  if (status >= 200 && status < 300 || result === undefined) return undefined
  const message = result.message
  return typeof message === "string" && message.trim() !== "" ? message : undefined
}
