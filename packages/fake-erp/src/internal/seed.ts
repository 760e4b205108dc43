/**
 * The seeded partners (see `Seed`): partner `i` of a seed is a pure function of `(seed, i)`, strayed from the
 * contract or hidden as the options say.
 */
import type * as Seed from "../Seed.js"
import * as Hidden from "./hidden.js"
import * as Odd from "./oddRecords.js"
import * as Prng from "./prng.js"
import * as Tables from "./seedTables.js"

/** @internal */
export const AWKWARD_SHARE = 0.45

/** @internal */
export const CUSTOMER_SHARE = 0.6

const { digits, pick } = Tables

/** @internal */
export const partnerAt = (seed: number, index: number): Seed.PartnerRecord => {
  const prng = Prng.mulberry32(Prng.derive(seed, index))
  const id = index + 1
  const n = String(id)
  const company_name = prng() < AWKWARD_SHARE
    ? pick(prng, Tables.AWKWARD).replace("{n}", n)
    : `${pick(prng, Tables.FIRST)} ${pick(prng, Tables.SECOND)} ${n} ${pick(prng, Tables.LEGAL)}`
  const tax_number = `${1 + Math.floor(prng() * 9)}${digits(prng, 7)}-${digits(prng, 1)}-${digits(prng, 2)}`
  const is_customer = prng() < CUSTOMER_SHARE ? 1 : 0
  const [city, country] = pick(prng, Tables.PLACES)
  const tagCount = Math.floor(prng() * 4)
  const tags: Array<string> = []
  for (let i = 0; i < tagCount; i++) {
    const tag = pick(prng, Tables.TAGS)
    if (!tags.includes(tag)) tags.push(tag)
  }
  const createdAt = Tables.EPOCH_2015 + Math.floor(prng() * 3650) * Tables.DAY + Math.floor(prng() * Tables.DAY)
  return {
    id,
    company_name,
    tax_number,
    is_customer,
    email: `partner${n}@${pick(prng, Tables.DOMAINS)}`,
    phone: `+36 ${digits(prng, 2)} ${digits(prng, 3)} ${digits(prng, 4)}`,
    city,
    country,
    address: {
      street: `${pick(prng, Tables.STREETS)} ${1 + Math.floor(prng() * 200)}`,
      zip: digits(prng, 4),
      city,
      country
    },
    created_at: new Date(createdAt).toISOString(),
    credit_limit: Math.round(prng() * 5_000_000) / 100,
    tags,
    website: prng() < 0.3 ? null : `https://www.partner${n}.${pick(prng, Tables.DOMAINS)}`,
    contact_person: prng() < 0.2 ? null : pick(prng, Tables.PEOPLE)
  }
}

/** @internal */
export const partners = function*(seed: number, count: number): Generator<Seed.PartnerRecord, void, undefined> {
  for (let index = 0; index < count; index++) yield partnerAt(seed, index)
}

/** @internal */
export const isAwkward = (name: string): boolean => /[^A-Za-z0-9 .-]/.test(name)

/** @internal */
export const awkwardNames = (seed: number, count: number): ReadonlyArray<string> => {
  const out: Array<string> = []
  for (const partner of partners(seed, count)) {
    if (isAwkward(partner.company_name)) out.push(partner.company_name)
  }
  return out
}

/** @internal */
export const indexOfName = (seed: number, count: number, name: string): number | undefined => {
  for (const match of name.matchAll(/\d+/g)) {
    const id = Number(match[0])
    if (!Number.isSafeInteger(id) || id < 1 || id > count) continue
    if (partnerAt(seed, id - 1).company_name === name) return id - 1
  }
  return undefined
}

/** @internal */
export const oddKindAt = (
  seed: number,
  index: number,
  options: Seed.OddRecords | undefined
): Seed.OddKind | undefined => options === undefined ? undefined : Odd.kindAt(seed, index, options)

/** @internal */
export const servedPartnerAt = (seed: number, index: number, options: Seed.OddRecords | undefined): Seed.ServedRecord =>
  options === undefined ? partnerAt(seed, index) : Odd.served(partnerAt(seed, index), seed, index, options)

/** @internal */
export const hiddenAt = (seed: number, index: number, options: Seed.HiddenRecords | undefined): boolean =>
  Hidden.make(seed, options)?.(index) ?? false
