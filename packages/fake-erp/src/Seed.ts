/**
 * The in-memory ERP's data: deterministic seeded partners, generated on the fly (partner `i` of a seed is a pure
 * function of `(seed, i)`), how some stray from the contract or are hidden, and the exact JSON text of the numbers no
 * JavaScript number holds. `ErpRules` serves them; the Effect 3 sandbox re-exports them as `Seed` (with `Option` where
 * these functions answer `undefined`).
 *
 * @since 0.1.0
 */
import * as Exact from "./internal/exactNumber.js"
import * as Large from "./internal/large.js"
import * as Odd from "./internal/oddRecords.js"
import * as Prngs from "./internal/prng.js"
import * as internal from "./internal/seed.js"

/**
 * A seeded pseudo-random number generator: each call returns the next number in `[0, 1)`.
 *
 * @since 0.1.0
 * @category Models
 */
export type Prng = () => number

/**
 * mulberry32: a tiny, fast 32-bit PRNG. Good enough for test data and seeded jitter, not for secrets.
 *
 * @example
 * ```ts
 * import { Seed } from "@erp-client/fake-erp"
 *
 * // Seeded jitter for a test: the same seed gives the same numbers on every run
 * const next = Seed.mulberry32(42)
 * const jitterMillis = Math.round(next() * 100)
 * console.log(jitterMillis) // => 60
 * console.log(Seed.mulberry32(42)() === Seed.mulberry32(42)()) // => true
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const mulberry32: (seed: number) => Prng = Prngs.mulberry32

/**
 * Mixes a seed and an index into one 32-bit seed (murmur3 finalizer), so neighbouring indices get unrelated streams.
 *
 * @example
 * ```ts
 * import { Seed } from "@erp-client/fake-erp"
 *
 * // A stream of its own per partner index, the way the seeded partners are drawn
 * const streamOf = (index: number) => Seed.mulberry32(Seed.derive(42, index))
 * console.log(Seed.derive(42, 0), Seed.derive(42, 1)) // => 4125585456 174949175
 * console.log(streamOf(7)() === streamOf(7)()) // => true
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const derive: (seed: number, index: number) => number = Prngs.derive

/**
 * A postal address, nested in the partner record.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Address {
  readonly street: string
  readonly zip: string
  readonly city: string
  readonly country: string
}

/**
 * A seeded partner: the three fields the contract shows, the `is_customer` flag (an integer 0 or 1), and fields
 * the contract does not show, so clients can prove they keep what they do not know.
 *
 * @since 0.1.0
 * @category Models
 */
export interface PartnerRecord {
  readonly id: number
  readonly company_name: string
  readonly tax_number: string
  readonly is_customer: 0 | 1
  readonly email: string
  readonly phone: string
  readonly city: string
  readonly country: string
  readonly address: Address
  readonly created_at: string
  readonly credit_limit: number
  readonly tags: ReadonlyArray<string>
  readonly website: string | null
  readonly contact_person: string | null
}

/**
 * A seeded invoice (`ErpRules.Options.invoices`): a second kind of record the ERP serves, `invoice/list` and
 * `invoice/get`, addressed to one of the partners (`partner_id`), dates as `YYYY-MM-DD`, `paid` 0 or 1.
 *
 * @since 0.1.0
 * @category Models
 */
export interface InvoiceRecord {
  readonly id: number
  /** `INV-YYYY-NNNNNN`: the year issued and the id. */
  readonly number: string
  readonly partner_id: number
  readonly issued_on: string
  readonly due_on: string
  readonly currency: "HUF" | "EUR" | "USD"
  readonly total: number
  readonly paid: 0 | 1
}

/**
 * How an odd record strays from the contract's table (docs/erp-api-v2.md, "Partner record"), the way real ERP data
 * does. An odd record keeps the fields its kind does not touch.
 *
 * - `tax-number-empty`: `tax_number` is `""`, as for a private person.
 * - `tax-number-null`: `tax_number` is `null`.
 * - `tax-number-absent`: no `tax_number` field.
 * - `tax-number-eu-vat`: the EU VAT form, `"HU12345678"` (from the Hungarian number) or `"DE123456789"`.
 * - `tax-number-spaces`: digit groups split by spaces, `"123 456 78"`.
 * - `tax-number-slashes`: slashes for hyphens, `"12345678/2/42"`.
 * - `tax-number-number`: the digits as a JSON number, `12345678242`.
 * - `company-name-null`, `company-name-empty`: `company_name` is `null` or `""`; such a partner cannot be looked up by
 *   name.
 * - `customer-flag-string`: `is_customer` is `"1"` or `"0"`; `customer-flag-boolean`: `true` or `false`. Either way
 *   the flag means what `1` or `0` would, and `list_condition[is_customer]=1` selects it as a customer.
 * - `customer-flag-absent`: no `is_customer` field; no `list_condition[is_customer]` selects it.
 * - `extra-object`: an extra field, `custom_fields`, holding nested objects and an array.
 *
 * The kinds above keep the integer `id` and are the ones drawn by default (`defaultOddKinds`). These are drawn only
 * when asked for by name; their numbers are written in the body exactly as shown (`ExactNumber`), text a float round
 * trip would change (docs/ARCHITECTURE.md, "Records"):
 *
 * - `number-beyond-double`: `"credit_limit":12345678901234567890` (beyond a double) and an extra
 *   `"ledger_ref":9007199254740993` (2^53 + 1, the first integer a double cannot hold).
 * - `decimal-as-written`: extra fields `"balance":1.10`, `"rate":1e2` and `"discount":-0.0`.
 * - `id-beyond-double`: the `id` is 12345678901234567890 plus 1000 times the index (`12345678901234567890` for the
 *   first partner, `12345678901234568890` for the second): not a safe integer, and still one partner's id, which
 *   `partner/get` finds it by.
 * - `duplicate-id`: the `id` of the nearest partner before it that is not a duplicate (the first partner has none
 *   and keeps its own), with its own other fields: a distinct record that a client dropping records by id alone
 *   loses. `partner/get` by that id finds the first of them in list order.
 *
 * @since 0.1.0
 * @category Models
 */
export type OddKind =
  | "tax-number-empty"
  | "tax-number-null"
  | "tax-number-absent"
  | "tax-number-eu-vat"
  | "tax-number-spaces"
  | "tax-number-slashes"
  | "tax-number-number"
  | "company-name-null"
  | "company-name-empty"
  | "customer-flag-string"
  | "customer-flag-boolean"
  | "customer-flag-absent"
  | "extra-object"
  | "number-beyond-double"
  | "decimal-as-written"
  | "id-beyond-double"
  | "duplicate-id"

/**
 * Every odd kind, in the order documented at `OddKind`.
 *
 * @since 0.1.0
 * @category Constants
 */
export const oddKinds: ReadonlyArray<OddKind> = Odd.KINDS

/**
 * The kinds an odd record is drawn from when `OddRecords.kinds` is not given: every kind that keeps the integer id
 * and whose numbers survive a float round trip. The others (`number-beyond-double`, `decimal-as-written`,
 * `id-beyond-double`, `duplicate-id`) are drawn only when named.
 *
 * @since 0.1.0
 * @category Constants
 */
export const defaultOddKinds: ReadonlyArray<OddKind> = Odd.DEFAULT_KINDS

/**
 * Which seeded partners stray from the contract, and how. The choice is a pure function of the seed and the index,
 * so the same options give the same odd records on every run.
 *
 * @since 0.1.0
 * @category Models
 */
export interface OddRecords {
  /** The share of partners that stray, from 0 (none) to 1 (all). */
  readonly rate: number
  /** The kinds an odd record is drawn from, equally likely (default `defaultOddKinds`). */
  readonly kinds?: ReadonlyArray<OddKind> | undefined
  /** Seed of the choice (default: the partners' seed). */
  readonly seed?: number | undefined
}

/**
 * Which seeded partners the server holds but does not serve (permissions, soft deletes): a seeded `rate` share of
 * them, or the partners at these `positions` (indices) of the seeded list. Such a server cuts a page from the list
 * with them and drops them afterwards, so a page comes back shorter than asked while more follow. Partners inserted
 * later are never hidden.
 *
 * @since 0.1.0
 * @category Models
 */
export type HiddenRecords =
  | { readonly rate: number; readonly seed?: number | undefined }
  | { readonly positions: ReadonlyArray<number> }

/**
 * Whether the seeded partner at `index` is hidden under `options` (none without options). Pure, like `oddKindAt`.
 *
 * @example
 * ```ts
 * import { Seed } from "@erp-client/fake-erp"
 *
 * // Which of seed 42's first ten partners a server hiding a 20% share holds back
 * const indices = Array.from({ length: 10 }, (_, index) => index)
 * console.log(indices.filter((index) => Seed.hiddenAt(42, index, { rate: 0.2 }))) // => [ 4, 7 ]
 * console.log(Seed.hiddenAt(42, 3, { positions: [3, 7] })) // => true
 * console.log(Seed.hiddenAt(42, 3, undefined)) // => false
 * ```
 *
 * @since 0.1.0
 * @category Lookups
 */
export const hiddenAt: (seed: number, index: number, options: HiddenRecords | undefined) => boolean = internal.hiddenAt

/**
 * A JSON number the ERP writes exactly as `text` (`12345678901234567890`, `1.10`, `-0.0`), which no JavaScript
 * number holds. `JSON.stringify` writes it as `Number(text)` (what a plain `JSON.parse` of the body gives);
 * `recordJson` writes the text; `String(n)` is the text.
 *
 * @since 0.1.0
 * @category Models
 */
export interface ExactNumber {
  readonly _tag: "ExactNumber"
  /** The number as the body holds it. */
  readonly text: string
  toJSON(): number
  toString(): string
}

/**
 * Whether a value is an `ExactNumber`, such as the id of an `id-beyond-double` record.
 *
 * @example
 * ```ts
 * import { Seed } from "@erp-client/fake-erp"
 *
 * // An `id-beyond-double` partner's id is an ExactNumber; an ordinary id is a number
 * const partner = Seed.servedPartnerAt(42, 0, { rate: 1, kinds: ["id-beyond-double"] })
 * console.log(Seed.isExactNumber(partner.id), String(partner.id)) // => true 12345678901234567890
 * console.log(Seed.isExactNumber(Seed.partnerAt(42, 0).id)) // => false
 * ```
 *
 * @since 0.1.0
 * @category Predicates
 */
export const isExactNumber: (u: unknown) => u is ExactNumber = Exact.isExactNumber

/**
 * The JSON text the ERP writes for a value holding served records: `JSON.stringify`, with every `ExactNumber`
 * written exactly as its text. What a client that keeps records as sent must write back.
 *
 * @example
 * ```ts
 * import { Seed } from "@erp-client/fake-erp"
 *
 * // A served id beyond a double: JSON.stringify rounds it, recordJson writes the digits the server sent
 * const partner = Seed.servedPartnerAt(42, 0, { rate: 1, kinds: ["id-beyond-double"] })
 * console.log(JSON.stringify({ id: partner.id })) // => {"id":12345678901234567000}
 * console.log(Seed.recordJson({ id: partner.id })) // => {"id":12345678901234567890}
 * ```
 *
 * @since 0.1.0
 * @category Encoding
 */
export const recordJson: (value: unknown) => string = Exact.stringify

/**
 * A partner as the ERP serves it: a `PartnerRecord`, or one that strays from the contract (see `OddKind`).
 *
 * @since 0.1.0
 * @category Models
 */
export interface ServedRecord
  extends Omit<PartnerRecord, "id" | "company_name" | "tax_number" | "is_customer" | "credit_limit">
{
  /** A number, except on `id-beyond-double` records (and the `duplicate-id` records that repeat one). */
  readonly id: number | ExactNumber
  readonly company_name: string | null
  readonly tax_number?: string | number | null
  readonly is_customer?: 0 | 1 | "0" | "1" | boolean
  readonly credit_limit: number | ExactNumber
  /** Only on `extra-object` records. */
  readonly custom_fields?: { readonly [field: string]: unknown }
  /** Only on `number-beyond-double` records. */
  readonly ledger_ref?: ExactNumber
  /** Only on `decimal-as-written` records. */
  readonly balance?: ExactNumber
  readonly rate?: ExactNumber
  readonly discount?: ExactNumber
}

/**
 * Share of partners whose company name is awkward for URLs and CSV.
 *
 * @since 0.1.0
 * @category Constants
 */
export const AWKWARD_SHARE: number = internal.AWKWARD_SHARE

/**
 * Share of partners that are customers (`is_customer = 1`).
 *
 * @since 0.1.0
 * @category Constants
 */
export const CUSTOMER_SHARE: number = internal.CUSTOMER_SHARE

/**
 * The partner at `index` (zero-based; its `id` is `index + 1`) of the set generated from `seed`. Pure: the same
 * arguments give an equal record, and no partner is kept in memory.
 *
 * @example
 * ```ts
 * import { Seed } from "@erp-client/fake-erp"
 *
 * // Partner 1 of seed 42: the same record on every run, so a test can name what it expects
 * const partner = Seed.partnerAt(42, 0)
 * console.log(partner.id, partner.company_name, partner.tax_number) // => 1 Danube Furniture 1 BV 45326685-0-00
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const partnerAt: (seed: number, index: number) => PartnerRecord = internal.partnerAt

/**
 * A large record: the one at `index` (zero-based; its `id` is `index + 1`) of a kind whose records take about `bytes`
 * bytes of JSON each, made on demand (nothing is kept). It holds what makes a record costly to read: a long `text`, a
 * long array of `lines` (each an object), `wide`, an object of 600 fields, and `deep`, objects nested 25 levels deep,
 * beside an `id`, a `name` and a `kind` of three values. `erp sandbox --large-records N` serves them at `large/list`
 * and `large/get`.
 *
 * @example
 * ```ts
 * import { Seed } from "@erp-client/fake-erp"
 *
 * const record = Seed.largeRecordAt(0, 1_000_000)
 * console.log(record.id, record.kind, Math.round(JSON.stringify(record).length / 100_000) / 10) // => 1 report 1
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const largeRecordAt: (index: number, bytes: number) => Readonly<Record<string, unknown>> = Large.largeRecordAt

/**
 * The first `count` partners of `seed`, generated lazily one at a time.
 *
 * @example
 * ```ts
 * import { Seed } from "@erp-client/fake-erp"
 *
 * // The company names of seed 42's first three partners, generated one at a time
 * const names = Array.from(Seed.partners(42, 3), (partner) => partner.company_name)
 * console.log(names.join(" | ")) // => Danube Furniture 1 BV | Ørsted Å/S 2 | Redwood Foods 3 Ltd.
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const partners: (seed: number, count: number) => Generator<PartnerRecord, void, undefined> = internal.partners

/**
 * Whether a company name holds something beyond letters, digits, spaces, `.` and `-`: a character that must be
 * URL-encoded, quoted in CSV, or is outside ASCII.
 *
 * @example
 * ```ts
 * import { Seed } from "@erp-client/fake-erp"
 *
 * console.log(Seed.isAwkward("Redwood Foods 3 Ltd.")) // => false
 * console.log(Seed.isAwkward("Smith, Jones, and Partners 5")) // => true
 * console.log(Seed.isAwkward("Ørsted Å/S 2")) // => true
 * ```
 *
 * @since 0.1.0
 * @category Predicates
 */
export const isAwkward: (name: string) => boolean = internal.isAwkward

/**
 * The awkward company names among the first `count` partners of `seed`, in id order.
 *
 * @example
 * ```ts
 * import { Seed } from "@erp-client/fake-erp"
 *
 * // Names to test URL encoding and CSV quoting with, from seed 42's first ten partners
 * console.log(Seed.awkwardNames(42, 10)) // => [ 'Ørsted Å/S 2', 'Smith, Jones, and Partners 5', 'Café ☕ 7 🍰' ]
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const awkwardNames: (seed: number, count: number) => ReadonlyArray<string> = internal.awkwardNames

/**
 * The index of the partner called `name` among the first `count` partners of `seed`. Every name holds its id as a
 * digit run of its own, so this tries each digit run of the name and checks the name it generates: constant memory,
 * even for a million partners, and exact for every awkward name. `undefined` when none is.
 *
 * @example
 * ```ts
 * import { Seed } from "@erp-client/fake-erp"
 *
 * // Which of seed 42's 1,000 partners a name belongs to: partner 7 (index 6), and none
 * console.log(Seed.indexOfName(42, 1000, "Café ☕ 7 🍰")) // => 6
 * console.log(Seed.indexOfName(42, 1000, "Acme Trading 7 Ltd.")) // => undefined
 * ```
 *
 * @since 0.1.0
 * @category Lookups
 */
export const indexOfName: (seed: number, count: number, name: string) => number | undefined = internal.indexOfName

/**
 * How the partner at `index` strays from the contract under `options`, or `undefined` when it does not (or without
 * options): what tests count odd records by.
 *
 * @example
 * ```ts
 * import { Seed } from "@erp-client/fake-erp"
 *
 * // How seed 42's first eight partners stray when 30% do, drawn from the default kinds
 * const kinds = Array.from({ length: 8 }, (_, index) => Seed.oddKindAt(42, index, { rate: 0.3 }))
 * console.log(kinds.filter((kind) => kind !== undefined))
 * // => [ 'company-name-empty', 'tax-number-absent', 'company-name-null' ]
 * ```
 *
 * @since 0.1.0
 * @category Lookups
 */
export const oddKindAt: (seed: number, index: number, options: OddRecords | undefined) => OddKind | undefined =
  internal.oddKindAt

/**
 * The partner at `index` as the ERP serves it with `oddRecords: options`: `partnerAt(seed, index)`, strayed
 * the way `oddKindAt` says. Pure, like `partnerAt`.
 *
 * @example
 * ```ts
 * import { Seed } from "@erp-client/fake-erp"
 *
 * // Partner 1 of seed 42 from a server that sends null tax numbers; the other fields as `partnerAt` gives them
 * const served = Seed.servedPartnerAt(42, 0, { rate: 1, kinds: ["tax-number-null"] })
 * console.log(served.tax_number, served.company_name) // => null Danube Furniture 1 BV
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const servedPartnerAt: (seed: number, index: number, options: OddRecords | undefined) => ServedRecord =
  internal.servedPartnerAt
