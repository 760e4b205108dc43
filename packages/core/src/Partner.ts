/**
 * The partner record: the known fields typed, every other field kept as the server sent it.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * Identifier of a partner: a positive integer.
 *
 * @since 0.1.0
 * @category Schemas
 */
export const PartnerId = Schema.Int.pipe(Schema.positive(), Schema.brand("PartnerId"))

/**
 * @since 0.1.0
 * @category Models
 */
export type PartnerId = typeof PartnerId.Type

/**
 * A tax number: groups of digits joined by hyphens, e.g. `12345678-2-42`.
 *
 * @since 0.1.0
 * @category Schemas
 */
export const TaxNumber = Schema.String.pipe(
  Schema.pattern(/^\d+(?:-\d+)*$/, {
    message: () => "a tax number is groups of digits joined by hyphens"
  }),
  Schema.brand("TaxNumber")
)

/**
 * @since 0.1.0
 * @category Models
 */
export type TaxNumber = typeof TaxNumber.Type

/**
 * The customer flag. The contract shows it only as a filter (`list_condition[is_customer]=1`), not its type in the
 * record, so the forms a server plausibly sends are accepted and kept as sent; read it with `isCustomer`.
 *
 * @since 0.1.0
 * @category Schemas
 */
export const CustomerFlag = Schema.Union(Schema.Literal(0, 1), Schema.Boolean, Schema.Literal("0", "1"))

/**
 * @since 0.1.0
 * @category Models
 */
export type CustomerFlag = typeof CustomerFlag.Type

/**
 * A partner record. The index signature keeps every field the contract does not show (invariant 5): decoding never
 * strips or rewrites what the server sent.
 *
 * @since 0.1.0
 * @category Schemas
 */
export const Partner = Schema.Struct(
  {
    id: PartnerId,
    company_name: Schema.String,
    tax_number: TaxNumber,
    is_customer: Schema.optional(CustomerFlag)
  },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
).annotations({ identifier: "Partner" })

/**
 * @since 0.1.0
 * @category Models
 */
export type Partner = typeof Partner.Type

/**
 * @since 0.1.0
 * @category Accessors
 */
export const isCustomer = (partner: Partner): boolean => {
  const flag = partner.is_customer
  return flag === 1 || flag === true || flag === "1"
}
