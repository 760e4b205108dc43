import type * as Seed from "../Seed.js"
import { ExactNumber } from "./exactNumber.js"
import * as Prng from "./prng.js"
import * as Tables from "./seedTables.js"

/** Where the record strays: its seed, its index and the options, for the kinds that look at other records. */
interface At {
  readonly seed: number
  readonly index: number
  readonly options: Seed.OddRecords
}

type Stray = (record: Seed.PartnerRecord, prng: Seed.Prng, at: At) => Seed.ServedRecord

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
  }),
  "number-beyond-double": (record) => ({
    ...record,
    credit_limit: new ExactNumber(BEYOND_DOUBLE),
    ledger_ref: new ExactNumber(BEYOND_SAFE)
  }),
  "decimal-as-written": (record) => ({
    ...record,
    balance: new ExactNumber("1.10"),
    rate: new ExactNumber("1e2"),
    discount: new ExactNumber("-0.0")
  }),
  "id-beyond-double": (record, _, at) => ({ ...record, id: bigIdAt(at.index) }),
  "duplicate-id": (record, _, at) => ({ ...record, id: servedIdAt(at.seed, at.index, at.options) })
}

// The numbers of the exact kinds, as the response body holds them.
const BEYOND_DOUBLE = "12345678901234567890"
const BEYOND_SAFE = "9007199254740993"

/**
 * The id of an `id-beyond-double` partner at `index`: 12345678901234567890 plus 1000 times the index. Its last three
 * digits are always 890, while a double that large prints as at most 17 significant digits and zeros: no float
 * keeps the text, and no two partners share it.
 *
 * @internal
 */
export const bigIdAt = (index: number): ExactNumber =>
  new ExactNumber(String(BigInt(BEYOND_DOUBLE) + BigInt(index) * 1000n))

/**
 * The index of the partner whose `id-beyond-double` id is `text` would be, if it is one of those ids.
 *
 * @internal
 */
export const indexOfBigId = (text: string): number | undefined => {
  if (!/^\d+$/.test(text)) return undefined
  const offset = BigInt(text) - BigInt(BEYOND_DOUBLE)
  if (offset < 0n || offset % 1000n !== 0n) return undefined
  const index = offset / 1000n
  return index <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(index) : undefined
}

/**
 * The id a seeded partner serves under its own name: `index + 1`, or its `id-beyond-double` id. A `duplicate-id`
 * partner serves the id of the nearest partner before it that is not one (the first partner has none before it and
 * keeps its own).
 *
 * @internal
 */
export const servedIdAt = (seed: number, index: number, options: Seed.OddRecords | undefined): number | ExactNumber => {
  if (options === undefined) return index + 1
  let at = index
  while (at > 0 && kindAt(seed, at, options) === "duplicate-id") at--
  return kindAt(seed, at, options) === "id-beyond-double" ? bigIdAt(at) : at + 1
}

/**
 * Every kind, in the order of `Seed.OddKind`'s documentation.
 *
 * @internal
 */
export const KINDS = Object.keys(STRAYS) as ReadonlyArray<Seed.OddKind>

/**
 * The kinds that change the record's identity or hold numbers a float would change: drawn only when asked for by
 * name, so a client that does not ask for them never meets ids or numbers a plain `JSON.parse` gets wrong.
 *
 * @internal
 */
export const EXACTNESS_KINDS: ReadonlyArray<Seed.OddKind> = [
  "number-beyond-double",
  "decimal-as-written",
  "id-beyond-double",
  "duplicate-id"
]

/**
 * The kinds drawn when `OddRecords.kinds` is not given (see `Seed.defaultOddKinds`).
 *
 * @internal
 */
export const DEFAULT_KINDS: ReadonlyArray<Seed.OddKind> = KINDS.filter((kind) => !EXACTNESS_KINDS.includes(kind))

/**
 * Whether records drawn under `options` may hold an `ExactNumber` (a `duplicate-id` record may repeat a big id): only
 * then does the ERP look for one.
 *
 * @internal
 */
export const mayHoldExact = (options: Seed.OddRecords | undefined): boolean =>
  options !== undefined && options.rate > 0 &&
  (options.kinds ?? DEFAULT_KINDS).some((kind) => EXACTNESS_KINDS.includes(kind))

// Odd records are drawn from a stream of their own, so whether a partner strays is unrelated to its other fields.
const ODD_STREAM = 0x0dd5eed5

const prngAt = (seed: number, index: number, options: Seed.OddRecords): Seed.Prng =>
  Prng.mulberry32(Prng.derive(Prng.derive(options.seed ?? seed, ODD_STREAM), index))

// The first draw decides whether the record strays (a `rate` share do), the second picks the kind; later draws are
// left for the stray itself. So the kinds offered change how records stray, never which ones do.
const draw = (prng: Seed.Prng, options: Seed.OddRecords): Seed.OddKind | undefined => {
  const kinds = options.kinds ?? DEFAULT_KINDS
  if (!(options.rate > 0) || kinds.length === 0 || !(prng() < options.rate)) return undefined
  return kinds[Math.floor(prng() * kinds.length)]
}

/**
 * How the seeded partner at `index` strays (see `Seed.oddKindAt`).
 *
 * @internal
 */
export const kindAt = (seed: number, index: number, options: Seed.OddRecords): Seed.OddKind | undefined =>
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
  const kind = draw(prng, options)
  return kind === undefined ? record : STRAYS[kind](record, prng, { seed, index, options })
}
