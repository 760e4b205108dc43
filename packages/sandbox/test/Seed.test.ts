import { describe, expect, it } from "@effect/vitest"
import { Partner } from "@erp-client/core"
import { Either, Option, Schema } from "effect"
import { Seed } from "../src/index.js"

describe("Seed", () => {
  it("is deterministic and depends on the seed", () => {
    expect(Seed.partnerAt(1, 41)).toStrictEqual(Seed.partnerAt(1, 41))
    expect(Seed.partnerAt(2, 41)).not.toStrictEqual(Seed.partnerAt(1, 41))
    const a = Seed.mulberry32(7)
    const b = Seed.mulberry32(7)
    for (let i = 0; i < 100; i++) expect(a()).toBe(b())
  })

  it("gives ids from 1, unique names, hyphenated tax numbers, about 60% customers and 45% awkward names", () => {
    const count = 20_000
    const names = new Set<string>()
    let customers = 0
    let awkward = 0
    let index = 0
    for (const partner of Seed.partners(1, count)) {
      expect(partner.id).toBe(index + 1)
      expect(partner.tax_number).toMatch(/^\d+(?:-\d+)+$/)
      expect([0, 1]).toContain(partner.is_customer)
      names.add(partner.company_name)
      if (partner.is_customer === 1) customers++
      if (Seed.isAwkward(partner.company_name)) awkward++
      index++
    }
    expect(index).toBe(count)
    expect(names.size).toBe(count)
    expect(customers / count).toBeGreaterThan(0.57)
    expect(customers / count).toBeLessThan(0.63)
    expect(awkward / count).toBeGreaterThan(0.35)
    expect(awkward / count).toBeLessThan(0.55)
  })

  it("has names awkward in every way a URL or CSV can trip on", () => {
    const names = Seed.awkwardNames(1, 5000)
    for (const char of ["&", "+", "=", "%", "#", "[", "]", "/", "?", "\"", "'", ",", "ü", "é", "東", "🚀"]) {
      expect(names.some((name) => name.includes(char)), char).toBe(true)
    }
  })

  it("records decode with the core Partner schema and keep extra fields, a nested object and nulls", () => {
    const decode = Schema.decodeUnknownEither(Partner.Partner)
    let nulls = 0
    for (const record of Seed.partners(3, 500)) {
      const json = JSON.parse(JSON.stringify(record))
      const decoded = decode(json)
      expect(Either.isRight(decoded)).toBe(true)
      expect(json.address.city).toBe(record.city)
      expect(Array.isArray(json.tags)).toBe(true)
      expect(Number.isNaN(Date.parse(json.created_at))).toBe(false)
      if (record.website === null || record.contact_person === null) nulls++
    }
    expect(nulls).toBeGreaterThan(0)
  })

  it("finds every partner by its exact name, and nothing else", () => {
    const count = 3000
    for (const partner of Seed.partners(5, count)) {
      expect(Seed.indexOfName(5, count, partner.company_name)).toStrictEqual(Option.some(partner.id - 1))
    }
    const last = Seed.partnerAt(5, count)
    expect(Seed.indexOfName(5, count, last.company_name)).toStrictEqual(Option.none())
    expect(Seed.indexOfName(5, count, `${Seed.partnerAt(5, 0).company_name} `)).toStrictEqual(Option.none())
    expect(Seed.indexOfName(5, count, "")).toStrictEqual(Option.none())
    expect(Seed.indexOfName(5, count, "99999999999999999999999")).toStrictEqual(Option.none())
  })
})
