/**
 * How a partner record's fields read, whichever form a server sent them in (docs/erp-api-v2.md, "Partner record"):
 * the customer flag and the tax number. Each edition's `Partner` module types the record with its `Schema` and reads
 * it with these.
 *
 * @since 0.1.0
 */

/**
 * Whether a customer flag says "customer", whichever form it came in: `1`, `true` and `"1"` do; `0`, `false`, `"0"`,
 * `null` and an absent flag do not.
 *
 * @example
 * ```ts
 * import { Partner } from "@erp-client/kernel"
 *
 * console.log([1, true, "1", 0, "0", null, undefined].map(Partner.isCustomerFlag))
 * // => [ true, true, true, false, false, false, false ]
 * ```
 *
 * @since 0.1.0
 * @category Readings
 */
export const isCustomerFlag = (flag: unknown): boolean => flag === 1 || flag === true || flag === "1"

/**
 * The customer flag as a table shows it: `yes` for the contract's `1`, `no` for its `0`, nothing when the record has
 * no flag, and any other value as the server sent it, as JSON (`null`, `2`, `"yes"`, `true`, `"1"`): a value the
 * contract does not have is shown, never read as "no" or "yes".
 *
 * @example
 * ```ts
 * import { Partner } from "@erp-client/kernel"
 *
 * console.log([1, 0, undefined, null, 2, "yes", true, "1"].map(Partner.customerCell).join(" | "))
 * // => yes | no |  | null | 2 | "yes" | true | "1"
 * ```
 *
 * @since 0.1.0
 * @category Readings
 */
export const customerCell = (flag: unknown): string =>
  flag === 1 ? "yes" : flag === 0 ? "no" : flag === undefined ? "" : JSON.stringify(flag) ?? String(flag)

/**
 * A tax number as text, when there is one: a number is written out, surrounding spaces trimmed; an empty or absent one
 * is none (`undefined`). Its form is as sent.
 *
 * @example
 * ```ts
 * import { Partner } from "@erp-client/kernel"
 *
 * console.log(Partner.taxNumberText(" 12345678-2-42 "), Partner.taxNumberText(12345678242), Partner.taxNumberText(""))
 * // => 12345678-2-42 12345678242 undefined
 * ```
 *
 * @since 0.1.0
 * @category Readings
 */
export const taxNumberText = (value: string | number | null | undefined): string | undefined => {
  if (value === null || value === undefined) return undefined
  const text = typeof value === "number" ? String(value) : value.trim()
  return text === "" ? undefined : text
}
