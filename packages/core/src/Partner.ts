/**
 * The partner record: the known fields typed, every other field kept as the server sent it.
 *
 * Two schemas, because real ERP data strays from the contract (docs/erp-api-v2.md, "Partner record"), and a record
 * that does not match must never cost the others:
 *
 * - `Partner` types what servers actually send. `id` is the one field held to the contract (a positive integer: a
 *   record without one cannot be looked up or told apart). `company_name` may be `null` or empty (private persons,
 *   gaps in data entry). `tax_number` may be absent, `null`, empty, in an EU VAT form (`HU12345678`), with spaces or
 *   slashes, or a JSON number. `is_customer`, whose type the contract does not show, may be `0`/`1`, a boolean, a
 *   string `"0"`/`"1"`, `null` or absent.
 * - `StrictPartner` is the contract to the letter: a company name (a string, not empty), and a tax number of digit
 *   groups joined by hyphens (`TaxNumber`). Use it to check records (`Schema.is(StrictPartner)`), or to page with it when a
 *   record that strays should fail the export.
 *
 * Precision. The schemas check values parsed by `JSON.parse`, where a JSON number is a float. So the typed fields say
 * how exact they are: `id` is a safe integer (at most 2^53 - 1; a larger id cannot be told from its neighbours and is
 * refused), `company_name` and a string `tax_number` are the server's text, and a `tax_number` sent as a JSON number
 * keeps about 15 significant digits. Every other field is kept as parsed; its exact text (`12345678901234567890`,
 * `1.10`) is in the record's text when the client is asked for it (`exact`, `Page.json`; see `JsonText`).
 *
 * @since 0.1.0
 */
import * as Readings from "@erp-client/kernel/Partner"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Edition from "./internal/edition.js"

/**
 * Identifier of a partner: a positive integer, exact as a number: at most `Number.MAX_SAFE_INTEGER` (2^53 - 1). A
 * larger id is refused (a `DecodeError` for its record) rather than read as a float that may name another partner:
 * `9007199254740993` parses to `9007199254740992`.
 *
 * @since 0.1.0
 * @category Schemas
 */
export const PartnerId = Edition.PositiveSafeInteger((actual) =>
  Number.isInteger(actual)
    ? `an id past 2^53 - 1 (${Number.MAX_SAFE_INTEGER}) cannot be held exactly as a number, and is not read as ` +
      "one that may name another partner"
    : `expected an integer, got ${String(actual)}`
).pipe(Schema.brand("PartnerId"))

/**
 * @since 0.1.0
 * @category Models
 */
export type PartnerId = typeof PartnerId.Type

/**
 * A tax number as the contract shows it: groups of digits joined by hyphens, e.g. `12345678-2-42`.
 *
 * @since 0.1.0
 * @category Schemas
 */
export const TaxNumber = Edition.Matching(/^\d+(?:-\d+)*$/, "a tax number is groups of digits joined by hyphens").pipe(
  Schema.brand("TaxNumber")
)

/**
 * @since 0.1.0
 * @category Models
 */
export type TaxNumber = typeof TaxNumber.Type

/**
 * A tax number as servers send it: the contract's form, any other text (a VAT number, spaces, slashes, `""`), a
 * JSON number, or `null`. Read it with `taxNumberOf`. A string is exact; a JSON number is a float, exact to about 15
 * significant digits (the record's exact text has it as sent: `Page.json`).
 *
 * @since 0.1.0
 * @category Schemas
 */
export const SentTaxNumber = Schema.NullOr(Edition.Union(Schema.String, Schema.Number))

/**
 * The customer flag. The contract shows it only as a filter (`list_condition[is_customer]=1`), not its type in the
 * record, so the forms a server plausibly sends are accepted and kept as sent; read it with `isCustomer`.
 *
 * @since 0.1.0
 * @category Schemas
 */
export const CustomerFlag = Edition.Union(
  Edition.Literals(0, 1),
  Schema.Boolean,
  Edition.Literals("0", "1"),
  Schema.Null
)

/**
 * @since 0.1.0
 * @category Models
 */
export type CustomerFlag = typeof CustomerFlag.Type

// Decoding never strips or rewrites what the server sent: every field the contract does not show is kept.
const otherFields = Edition.Record(Schema.String, Schema.Unknown)

/**
 * A partner record as servers send it (see the module's description): only a positive integer `id` is required to
 * match the contract.
 *
 * @since 0.1.0
 * @category Schemas
 */
export const Partner = Edition.StructWithRest(
  {
    id: PartnerId,
    company_name: Schema.NullOr(Schema.String),
    tax_number: Schema.optional(SentTaxNumber),
    is_customer: Schema.optional(CustomerFlag)
  },
  otherFields,
  "Partner"
)

/**
 * @since 0.1.0
 * @category Models
 */
export type Partner = typeof Partner.Type

/**
 * A partner record exactly as the contract describes it: a company name, a tax number of hyphenated digit groups.
 *
 * @since 0.1.0
 * @category Schemas
 */
export const StrictPartner = Edition.StructWithRest(
  {
    id: PartnerId,
    company_name: Schema.NonEmptyString,
    tax_number: TaxNumber,
    is_customer: Schema.optional(Edition.Union(Edition.Literals(0, 1), Schema.Boolean, Edition.Literals("0", "1")))
  },
  otherFields,
  "StrictPartner"
)

/**
 * @since 0.1.0
 * @category Models
 */
export type StrictPartner = typeof StrictPartner.Type

/**
 * Whether the partner is a customer, whichever form the flag came in: `1`, `true` and `"1"` are; `0`, `false`, `"0"`,
 * `null` and an absent flag are not.
 *
 * @example
 * ```ts
 * import { Partner } from "@erp-client/core"
 * import { Schema } from "effect"
 *
 * // A server that sends the flag as a string
 * const partner = Schema.decodeUnknownSync(Partner.Partner)({ id: 7, company_name: "Kovács Kft.", is_customer: "1" })
 * console.log(Partner.isCustomer(partner)) // => true
 * ```
 *
 * @since 0.1.0
 * @category Accessors
 */
export const isCustomer = (partner: Partner): boolean => Readings.isCustomerFlag(partner.is_customer)

/**
 * The tax number as text, when there is one: a number is written out, surrounding spaces trimmed, an empty or absent
 * one is none. Its form is as sent (`TaxNumber` checks the contract's).
 *
 * @example
 * ```ts
 * import { Partner } from "@erp-client/core"
 * import { Option, Schema } from "effect"
 *
 * const decodePartner = Schema.decodeUnknownSync(Partner.Partner)
 *
 * // Spaces around it are trimmed; an empty one (a private person) is none
 * const company = decodePartner({ id: 7, company_name: "Kovács Kft.", tax_number: " 12345678-2-42 " })
 * const person = decodePartner({ id: 8, company_name: null, tax_number: "" })
 * console.log(Option.getOrElse(Partner.taxNumberOf(company), () => "none")) // => 12345678-2-42
 * console.log(Option.getOrElse(Partner.taxNumberOf(person), () => "none")) // => none
 * ```
 *
 * @since 0.1.0
 * @category Accessors
 */
export const taxNumberOf = (partner: Partner): Option.Option<string> => {
  const text = Readings.taxNumberText(partner.tax_number)
  return text === undefined ? Option.none() : Option.some(text)
}
