import * as Option from "effect/Option"
import type * as Seed from "../Seed.js"
import * as Prng from "./prng.js"
import * as Tables from "./seedTables.js"

type Stray = (record: Seed.PartnerRecord, prng: Seed.Prng) => Seed.ServedRecord

// The digits of a seeded tax number (`12345678-2-42` -> `12345678242`): eleven, the first never 0.
const taxDigits = (record: Seed.PartnerRecord): string => record.tax_number.replaceAll("-", "")

// One entry per kind, so a kind added to `Seed.OddKind` without a way to stray does not compile.
const STRAYS: { readonly [K in Seed.OddKind]: Stray } = {
  "tax-number-empty": (record) => ({ ...record, tax_number: "" }),
  "tax-number-null": (record) => ({ ...record, tax_number: null }),
  "tax-number-absent": ({ tax_number: _, ...rest }) => rest,
  "tax-number-eu-vat": (record, prng) => ({
    ...record,
    // A Hungarian VAT number is HU and the first eight digits of the tax number; a German one is DE and nine digits.
    tax_number: prng() < 0.5 ? `HU${taxDigits(record).slice(0, 8)}` : `DE${Tables.digits(prng, 9)}`
  }),
  "tax-number-spaces": (record) => {
    const digits = taxDigits(record)
    return { ...record, tax_number: `${digits.slice(0, 3)} ${digits.slice(3, 6)} ${digits.slice(6, 8)}` }
  },
  "tax-number-slashes": (record) => ({ ...record, tax_number: record.tax_number.replaceAll("-", "/") }),
  "tax-number-number": (record) => ({ ...record, tax_number: Number(taxDigits(record)) }),
  "company-name-null": (record) => ({ ...record, company_name: null }),
  "company-name-empty": (record) => ({ ...record, company_name: "" }),
  // The flag keeps its meaning in every form: a customer stays a customer.
  "customer-flag-string": (record) => ({ ...record, is_customer: record.is_customer === 1 ? "1" : "0" }),
  "customer-flag-boolean": (record) => ({ ...record, is_customer: record.is_customer === 1 }),
  "customer-flag-absent": ({ is_customer: _, ...rest }) => rest,
  "extra-object": (record, prng) => ({
    ...record,
    custom_fields: {
      segment: Tables.pick(prng, ["B2B", "B2C", "public sector"]),
      legacy: { system: "ERP-6", code: `L-${String(record.id).padStart(6, "0")}`, migrated: record.created_at },
      contacts: [{ role: "billing", email: record.email }]
    }
  })
}

/**
 * Every kind, in the order of `Seed.OddKind`'s documentation.
 *
 * @internal
 */
export const KINDS = Object.keys(STRAYS) as ReadonlyArray<Seed.OddKind>

// Odd records are drawn from a stream of their own, so whether a partner strays is unrelated to its other fields.
const ODD_STREAM = 0x0dd5eed5

const prngAt = (seed: number, index: number, options: Seed.OddRecords): Seed.Prng =>
  Prng.mulberry32(Prng.derive(Prng.derive(options.seed ?? seed, ODD_STREAM), index))

// The first draw decides whether the record strays (a `rate` share do), the second picks the kind; later draws are
// left for the stray itself. So the kinds offered change how records stray, never which ones do.
const draw = (prng: Seed.Prng, options: Seed.OddRecords): Option.Option<Seed.OddKind> => {
  const kinds = options.kinds ?? KINDS
  if (!(options.rate > 0) || kinds.length === 0 || !(prng() < options.rate)) return Option.none()
  return Option.some(kinds[Math.floor(prng() * kinds.length)])
}

/**
 * How the seeded partner at `index` strays (see `Seed.oddKindAt`).
 *
 * @internal
 */
export const kindAt = (seed: number, index: number, options: Seed.OddRecords): Option.Option<Seed.OddKind> =>
  draw(prngAt(seed, index, options), options)

/**
 * The seeded partner at `index`, `record`, as served (see `Seed.servedPartnerAt`): strayed as `kindAt` says, its id
 * and the fields the kind does not touch as they were.
 *
 * @internal
 */
export const served = (
  record: Seed.PartnerRecord,
  seed: number,
  index: number,
  options: Seed.OddRecords
): Seed.ServedRecord => {
  const prng = prngAt(seed, index, options)
  return Option.match(draw(prng, options), { onNone: () => record, onSome: (kind) => STRAYS[kind](record, prng) })
}
