/**
 * The seeded invoices `invoice/list` and `invoice/get` serve (`ErpRules.Options.invoices`): invoice `i` of a seed is a
 * pure function of `(seed, i)`, id `i + 1`, made on demand like the seeded partners. A second kind of record beside
 * partners, in the same envelope, paging, rate limit and faults; the list does not change and hides nothing.
 */
import type * as Seed from "../Seed.js"
import * as PartnerStore from "./partnerStore.js"
import * as Prng from "./prng.js"

// Invoices draw from their own derived seed, so they do not repeat the partners' random fields.
const INVOICE_STREAM = 0x1a701ce5

const DAY = 86_400_000
const EPOCH_2020 = Date.UTC(2020, 0, 1)
const CURRENCIES = ["HUF", "EUR", "USD"] as const

/**
 * Invoice `index` of `seed`; `partners` is how many partners it may be addressed to (ids 1 to `partners`).
 *
 * @internal
 */
export const invoiceAt = (seed: number, index: number, partners: number): Seed.InvoiceRecord => {
  const prng = Prng.mulberry32(Prng.derive(Prng.derive(seed, INVOICE_STREAM), index))
  const id = index + 1
  const issued = EPOCH_2020 + Math.floor(prng() * 1825) * DAY
  return {
    id,
    number: `INV-${new Date(issued).getUTCFullYear()}-${String(id).padStart(6, "0")}`,
    partner_id: 1 + Math.floor(prng() * Math.max(1, partners)),
    issued_on: new Date(issued).toISOString().slice(0, 10),
    due_on: new Date(issued + (8 + Math.floor(prng() * 53)) * DAY).toISOString().slice(0, 10),
    currency: CURRENCIES[Math.floor(prng() * CURRENCIES.length)]!,
    total: Math.round(prng() * 100_000_000) / 100,
    paid: prng() < 0.7 ? 1 : 0
  }
}

/**
 * The invoices of one ERP.
 *
 * @internal
 */
export interface Table {
  /** The page at `[offset, offset + count)` of the invoices matching `conditions` (ANDed). */
  readonly page: (
    offset: number,
    count: number,
    conditions: ReadonlyArray<readonly [string, string]>
  ) => ReadonlyArray<Seed.InvoiceRecord>
  readonly byId: (id: string) => Seed.InvoiceRecord | undefined
  readonly byNumber: (number: string) => Seed.InvoiceRecord | undefined
}

/** @internal */
export const make = (seed: number, count: number, partners: number): Table => {
  const at = (index: number) => invoiceAt(seed, index, partners)
  const indexOfId = (id: string): number | undefined => {
    const n = /^\d+$/.test(id) ? Number(id) : Number.NaN
    return Number.isSafeInteger(n) && n >= 1 && n <= count ? n - 1 : undefined
  }
  return {
    page: (offset, pageCount, conditions) => {
      const records: Array<Seed.InvoiceRecord> = []
      // A plain scan: the table is small (a test's), and a filtered page scans only as far as it reaches.
      let matched = 0
      for (let index = 0; index < count && records.length < pageCount; index++) {
        const invoice = at(index)
        if (conditions.length > 0 && !PartnerStore.matchesAll(invoice, conditions)) continue
        if (matched++ >= offset) records.push(invoice)
      }
      return records
    },
    byId: (id) => {
      const index = indexOfId(id)
      return index === undefined ? undefined : at(index)
    },
    // The number holds the id (`INV-2023-000042`): the invoice of that id, if that is its number.
    byNumber: (number) => {
      const id = /^INV-\d{4}-(\d+)$/.exec(number)?.[1]
      const index = id === undefined ? undefined : indexOfId(String(Number(id)))
      const invoice = index === undefined ? undefined : at(index)
      return invoice !== undefined && invoice.number === number ? invoice : undefined
    }
  }
}
