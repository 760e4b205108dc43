/**
 * Deterministic seeded partners, generated on the fly: partner `i` of a seed is a pure function of `(seed, i)`.
 *
 * @since 0.1.0
 */
import * as Option from "effect/Option"

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
 * @since 0.1.0
 * @category Constructors
 */
export const mulberry32 = (seed: number): Prng => {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/**
 * Mixes a seed and an index into one 32-bit seed (murmur3 finalizer), so neighbouring indices get unrelated streams.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const derive = (seed: number, index: number): number => {
  let h = (Math.imul(seed >>> 0, 0x9e3779b1) ^ Math.imul((index >>> 0) + 0x7f4a7c15, 0x85ebca6b)) >>> 0
  // The high bits of large indices (> 2^32) are folded in too, so every safe integer index gets its own stream.
  h = (h ^ Math.floor(index / 4294967296)) >>> 0
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

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

// `{n}` is replaced by the partner id. It must never touch a digit, so the id is always a digit run of its own
// and a name can be traced back to its index (see `indexOfName`).
const AWKWARD = [
  "Müller & Söhne GmbH {n}",
  "Crème Brûlée S.à r.l. {n}",
  "A+B=C Kft. {n}",
  "100% Bio {n} Zrt.",
  "Hash #{n} Trading",
  "[Brackets] & Co. {n}",
  "Either/Or Ltd. {n}",
  "Why? Not! {n} Inc.",
  "\"Quoted\" Holdings {n}",
  "O'Brien's Pub {n}",
  "Smith, Jones, and Partners {n}",
  "東京商事株式会社 {n}",
  "Café ☕ {n} 🍰",
  "Ünïcödé Ťëšť s.r.o. {n}",
  "50/50 Joint Venture {n}",
  "Back\\slash {n}",
  "Semi;colon & Comma, {n}",
  "Plus + Space {n}",
  "%20 Not An Escape {n}",
  "a=1&b=2 Partners {n}",
  "list_offset=0&list_count=1 {n}",
  "Ørsted Å/S {n}",
  "Ελληνική Εταιρεία {n}",
  "Double  Space {n}",
  "Rocket 🚀 Labs {n}",
  "Ärzte-Zentrum {n} (Süd)",
  "L'Oréal-ish {n} <Beauty>",
  "Tilde~Caret^Pipe| {n}",
  "{curly} & $dollar {n}",
  "Ça va? Très bien & Co. {n}"
] as const

const FIRST = [
  "Nordwind",
  "Blue River",
  "Alpine",
  "Danube",
  "Silverline",
  "Greenfield",
  "Redwood",
  "Eastgate",
  "Sunrise",
  "Ironbridge",
  "Oakridge",
  "Harbor"
] as const

const SECOND = [
  "Logistics",
  "Trading",
  "Foods",
  "Machinery",
  "Software",
  "Textiles",
  "Pharma",
  "Energy",
  "Furniture",
  "Media"
] as const

const LEGAL = ["GmbH", "Kft.", "Ltd.", "Inc.", "Zrt.", "AG", "s.r.o.", "BV"] as const

const PLACES = [
  ["Budapest", "HU"],
  ["Wien", "AT"],
  ["München", "DE"],
  ["Köln", "DE"],
  ["Praha", "CZ"],
  ["Kraków", "PL"],
  ["Zürich", "CH"],
  ["Lyon", "FR"],
  ["Győr", "HU"],
  ["Debrecen", "HU"],
  ["Amsterdam", "NL"],
  ["Tokyo", "JP"]
] as const

const STREETS = ["Fő utca", "Hauptstraße", "Rue de la Paix", "Váci út", "Baker Street", "Kärntner Ring"] as const

const TAGS = ["wholesale", "retail", "vip", "export", "new", "eu", "prepaid", "net-30"] as const

const PEOPLE = ["Anna Kovács", "Jürgen Weiß", "Zoë O'Neil", "José Núñez", "Li Wei", "Ève Durand"] as const

const DOMAINS = ["example.com", "example.org", "example.net"] as const

// 2015-01-01T00:00:00Z: created_at is spread over about ten years after it, independent of the current time.
const EPOCH_2015 = 1420070400000
const DAY = 86400000

const pick = <A>(prng: Prng, items: ReadonlyArray<A>): A => items[Math.floor(prng() * items.length)]

const digits = (prng: Prng, n: number): string => {
  let out = ""
  for (let i = 0; i < n; i++) out += String(Math.floor(prng() * 10))
  return out
}

/**
 * Share of partners whose company name is awkward for URLs and CSV.
 *
 * @since 0.1.0
 * @category Constants
 */
export const AWKWARD_SHARE = 0.45

/**
 * Share of partners that are customers (`is_customer = 1`).
 *
 * @since 0.1.0
 * @category Constants
 */
export const CUSTOMER_SHARE = 0.6

/**
 * The partner at `index` (zero-based; its `id` is `index + 1`) of the set generated from `seed`. Pure: the same
 * arguments give an equal record, and no partner is kept in memory.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const partnerAt = (seed: number, index: number): PartnerRecord => {
  const prng = mulberry32(derive(seed, index))
  const id = index + 1
  const n = String(id)
  const company_name = prng() < AWKWARD_SHARE
    ? pick(prng, AWKWARD).replace("{n}", n)
    : `${pick(prng, FIRST)} ${pick(prng, SECOND)} ${n} ${pick(prng, LEGAL)}`
  const tax_number = `${1 + Math.floor(prng() * 9)}${digits(prng, 7)}-${digits(prng, 1)}-${digits(prng, 2)}`
  const is_customer = prng() < CUSTOMER_SHARE ? 1 : 0
  const [city, country] = pick(prng, PLACES)
  const tagCount = Math.floor(prng() * 4)
  const tags: Array<string> = []
  for (let i = 0; i < tagCount; i++) {
    const tag = pick(prng, TAGS)
    if (!tags.includes(tag)) tags.push(tag)
  }
  const createdAt = EPOCH_2015 + Math.floor(prng() * 3650) * DAY + Math.floor(prng() * DAY)
  return {
    id,
    company_name,
    tax_number,
    is_customer,
    email: `partner${n}@${pick(prng, DOMAINS)}`,
    phone: `+36 ${digits(prng, 2)} ${digits(prng, 3)} ${digits(prng, 4)}`,
    city,
    country,
    address: {
      street: `${pick(prng, STREETS)} ${1 + Math.floor(prng() * 200)}`,
      zip: digits(prng, 4),
      city,
      country
    },
    created_at: new Date(createdAt).toISOString(),
    credit_limit: Math.round(prng() * 5_000_000) / 100,
    tags,
    website: prng() < 0.3 ? null : `https://www.partner${n}.${pick(prng, DOMAINS)}`,
    contact_person: prng() < 0.2 ? null : pick(prng, PEOPLE)
  }
}

/**
 * The first `count` partners of `seed`, generated lazily one at a time.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const partners = function*(seed: number, count: number): Generator<PartnerRecord, void, undefined> {
  for (let index = 0; index < count; index++) yield partnerAt(seed, index)
}

/**
 * Whether a company name holds something beyond letters, digits, spaces, `.` and `-`: a character that must be
 * URL-encoded, quoted in CSV, or is outside ASCII.
 *
 * @since 0.1.0
 * @category Predicates
 */
export const isAwkward = (name: string): boolean => /[^A-Za-z0-9 .-]/.test(name)

/**
 * The awkward company names among the first `count` partners of `seed`, in id order.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const awkwardNames = (seed: number, count: number): ReadonlyArray<string> => {
  const out: Array<string> = []
  for (const partner of partners(seed, count)) {
    if (isAwkward(partner.company_name)) out.push(partner.company_name)
  }
  return out
}

/**
 * The index of the partner called `name` among the first `count` partners of `seed`. Every name holds its id as a
 * digit run of its own, so this tries each digit run of the name and checks the name it generates: constant memory,
 * even for a million partners, and exact for every awkward name.
 *
 * @since 0.1.0
 * @category Lookups
 */
export const indexOfName = (seed: number, count: number, name: string): Option.Option<number> => {
  for (const match of name.matchAll(/\d+/g)) {
    const id = Number(match[0])
    if (!Number.isSafeInteger(id) || id < 1 || id > count) continue
    if (partnerAt(seed, id - 1).company_name === name) return Option.some(id - 1)
  }
  return Option.none()
}
