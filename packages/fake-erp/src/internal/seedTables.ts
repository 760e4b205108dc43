// The word lists and helpers the seeded partners of `Seed.partnerAt` are made from.
import type * as Seed from "../Seed.js"

// `{n}` is replaced by the partner id. It must never touch a digit, so the id is always a digit run of its own
// and a name can be traced back to its index (see `indexOfName`).
/** @internal */
export const AWKWARD = [
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

/** @internal */
export const FIRST = [
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

/** @internal */
export const SECOND = [
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

/** @internal */
export const LEGAL = ["GmbH", "Kft.", "Ltd.", "Inc.", "Zrt.", "AG", "s.r.o.", "BV"] as const

/** @internal */
export const PLACES = [
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

/** @internal */
export const STREETS = ["Fő utca", "Hauptstraße", "Rue de la Paix", "Váci út", "Baker Street", "Kärntner Ring"] as const

/** @internal */
export const TAGS = ["wholesale", "retail", "vip", "export", "new", "eu", "prepaid", "net-30"] as const

/** @internal */
export const PEOPLE = ["Anna Kovács", "Jürgen Weiß", "Zoë O'Neil", "José Núñez", "Li Wei", "Ève Durand"] as const

/** @internal */
export const DOMAINS = ["example.com", "example.org", "example.net"] as const

// 2015-01-01T00:00:00Z: created_at is spread over about ten years after it, independent of the current time.
/** @internal */
export const EPOCH_2015 = 1420070400000
/** @internal */
export const DAY = 86400000

/** @internal */
export const pick = <A>(prng: Seed.Prng, items: ReadonlyArray<A>): A => items[Math.floor(prng() * items.length)]

/** @internal */
export const digits = (prng: Seed.Prng, n: number): string => {
  let out = ""
  for (let i = 0; i < n; i++) out += String(Math.floor(prng() * 10))
  return out
}
