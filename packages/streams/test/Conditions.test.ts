import { describe, expect, it } from "@effect/vitest"
import { Partner } from "@erp-client/core"
import { ListEndpoint, Partners, Resource } from "@erp-client/streams"
import { ErpTest } from "@erp-client/testing"
import { Effect, Layer, Stream } from "effect"
import { AnyRecord, KeyValueStore, Sandbox, Seed } from "./kit.js"

// Lists asked with conditions, checked against the records served: a server that ignores a condition (all of them,
// or those on fields it does not know) answers the whole list, and the stream fails with ConditionIgnored before it
// emits a record that does not satisfy it; a server that applies them is followed as before, record for record.
// On the in-memory ERP (ErpTest.layer), no rate limit; one suite, run against both editions (TEST_PAIRS in
// scripts/editions.ts).

const noLimit = { rateLimit: false } as const
const ids = (records: ReadonlyArray<{ readonly id: unknown }>) => records.map((record) => Number(record.id))

const served = (where?: (record: Seed.ServedRecord) => boolean) =>
  Effect.map(
    Effect.flatMap(Sandbox.Sandbox, (sandbox) => sandbox.visiblePartners),
    (records) => records.filter((record) => where === undefined || where(record))
  )

const isCustomer = (record: Seed.ServedRecord) =>
  record.is_customer === 1 || record.is_customer === "1" || record.is_customer === true

/** What a stream emitted before it ended, and how it ended. */
const run = <A, E, R>(stream: Stream.Stream<A, E, R>) =>
  Effect.gen(function*() {
    const emitted: Array<A> = []
    const end = yield* ErpTest.advancing(
      Stream.runForEach(stream, (a) => Effect.sync(() => void emitted.push(a))).pipe(
        Effect.match({ onFailure: (error) => error, onSuccess: () => undefined })
      )
    )
    return { emitted, error: end }
  })

const modes = [
  { name: "plain", safe: undefined },
  { name: "drift-safe", safe: true as const }
] as const

describe("a server that ignores every condition", () => {
  const layer = ErpTest.layer({ sandbox: { partners: 300, ignoreConditions: "all", ...noLimit } })

  for (const mode of modes) {
    it.effect(`${mode.name}: Partners.stream of customers fails with ConditionIgnored, nothing emitted`, () =>
      Effect.gen(function*() {
        const all = yield* served()
        const first = all.findIndex((record) => !isCustomer(record))
        expect(first).toBeGreaterThanOrEqual(0)
        const { emitted, error } = yield* run(
          Partners.stream({ where: { is_customer: 1 }, pageSize: 50, concurrency: 4, safe: mode.safe })
        )
        // The first page holds a partner that is not a customer: not one record of it came out.
        expect(first).toBeLessThan(50)
        expect(emitted).toEqual([])
        expect(error?._tag).toBe("ConditionIgnored")
        expect(error).toMatchObject({
          endpoint: "partner/list",
          field: "is_customer",
          asked: "1",
          had: String(all[first]!.is_customer),
          offset: first,
          recordId: all[first]!.id
        })
        expect(error?.message).toBe(
          `partner/list: the server ignored the condition is_customer=1: the record at offset ${first} ` +
            `(id ${all[first]!.id}) has is_customer ${all[first]!.is_customer}`
        )
      }).pipe(Effect.provide(layer)))
  }

  it.effect("Resource.pages and ListEndpoint.pages fail alike; the typed error is caught by its tag", () =>
    Effect.gen(function*() {
      const fromResource = yield* run(Resource.pages(Partners.resource, { where: { is_customer: true } }))
      expect(fromResource.emitted).toEqual([])
      expect(fromResource.error?._tag).toBe("ConditionIgnored")
      const caught = yield* ListEndpoint.stream("partner/list", AnyRecord, { where: { company_name: "No Such Kft." } })
        .pipe(
          Stream.runCollect,
          Effect.map(() => "filtered"),
          Effect.catchTag("ConditionIgnored", (error) => Effect.succeed(`${error.field}: ${error.had}`)),
          ErpTest.advancing
        )
      const firstName = (yield* served())[0]!.company_name
      expect(caught).toBe(`company_name: ${JSON.stringify(firstName)}`)
    }).pipe(Effect.provide(layer)))

  it.effect("checkConditions: false takes the records as served (the whole list)", () =>
    Effect.gen(function*() {
      const all = ids(yield* served())
      const got = yield* Partners.stream({ where: { is_customer: 1 }, pageSize: 50, checkConditions: false }).pipe(
        Stream.runCollect,
        ErpTest.advancing
      )
      expect(ids(Array.from(got))).toEqual(all)
    }).pipe(Effect.provide(layer)))

  it.effect("Partners.changes fails and commits no state", () =>
    Effect.gen(function*() {
      const { emitted, error } = yield* run(Partners.changes({ key: "customers", where: { is_customer: 1 } }))
      expect(emitted).toEqual([])
      expect(error?._tag).toBe("ConditionIgnored")
      const store = yield* KeyValueStore.KeyValueStore
      expect(yield* store.size).toBe(0)
    }).pipe(Effect.provide(Layer.merge(layer, KeyValueStore.layerMemory))))
})

describe("a server that ignores conditions on fields it does not know", () => {
  const layer = ErpTest.layer({ sandbox: { partners: 300, ignoreConditions: "unknown", ...noLimit } })

  it.effect("a field the records do not carry fails at the first record; a field they do is applied and passes", () =>
    Effect.gen(function*() {
      const { emitted, error } = yield* run(
        ListEndpoint.stream("partner/list", AnyRecord, { where: { nonexistent_field: 1 }, exact: true })
      )
      expect(emitted).toEqual([])
      expect(error).toMatchObject({ _tag: "ConditionIgnored", field: "nonexistent_field", asked: "1", offset: 0 })
      expect(error !== undefined && "had" in error).toBe(false)
      expect(error?.message).toMatch(/ has no field nonexistent_field$/)
      const customers = yield* Partners.stream({ where: { is_customer: 1 }, pageSize: 50 }).pipe(
        Stream.runCollect,
        ErpTest.advancing
      )
      expect(ids(Array.from(customers))).toEqual(ids(yield* served(isCustomer)))
    }).pipe(Effect.provide(layer)))
})

describe("a page that fails the check after pages that pass", () => {
  // The first 30 partners are customers; after them, customers and others alternate.
  const partners = Array.from({ length: 60 }, (_, i) => ({
    id: i + 1,
    company_name: `Partner ${i + 1}`,
    tax_number: "12345678-2-42",
    is_customer: i < 30 || i % 2 === 0 ? 1 : 0
  }))
  const layer = ErpTest.layer({ sandbox: { partners, ignoreConditions: "all", ...noLimit } })

  for (const mode of modes) {
    it.effect(`${mode.name}: the pages before it are emitted, each record satisfying the condition; then it fails`, () =>
      Effect.gen(function*() {
        const { emitted, error } = yield* run(
          Partners.pages({ where: { is_customer: 1 }, pageSize: 10, concurrency: 1, safe: mode.safe })
        )
        const records = emitted.flatMap((page) => page.records)
        expect(records.length).toBeGreaterThan(0)
        expect(records.every(Partner.isCustomer)).toBe(true)
        expect(Math.max(...ids(records))).toBeLessThanOrEqual(31)
        expect(error).toMatchObject({ _tag: "ConditionIgnored", offset: 31, recordId: 32, had: "0" })
      }).pipe(Effect.provide(layer)))
  }
})

describe("a server that applies the conditions", () => {
  const layer = ErpTest.layer({
    sandbox: {
      partners: 400,
      oddRecords: {
        rate: 0.3,
        kinds: ["customer-flag-string", "customer-flag-boolean", "customer-flag-absent", "number-beyond-double"]
      },
      hidden: { rate: 0.03, seed: 5 },
      ...noLimit
    }
  })

  for (const mode of modes) {
    it.effect(`${mode.name}: customers in every form of the flag, exactly those served, nothing failed`, () =>
      Effect.gen(function*() {
        const customers = ids(yield* served(isCustomer))
        for (const where of [{ is_customer: 1 }, { is_customer: true }, { is_customer: "1" }]) {
          const got = yield* Partners.stream({ where, pageSize: 40, concurrency: 4, safe: mode.safe }).pipe(
            Stream.runCollect,
            ErpTest.advancing
          )
          expect(ids(Array.from(got))).toEqual(customers)
        }
      }).pipe(Effect.provide(layer)))
  }

  it.effect("a number beyond a double, asked by its digits, exactly and inexactly", () =>
    Effect.gen(function*() {
      const big = (record: Seed.ServedRecord) =>
        Seed.recordJson(record).includes("\"credit_limit\":12345678901234567890")
      const expected = ids(yield* served(big))
      expect(expected.length).toBeGreaterThan(0)
      for (const exact of [true, false]) {
        const got = yield* ListEndpoint.stream("partner/list", AnyRecord, {
          where: { credit_limit: "12345678901234567890" },
          exact
        }).pipe(Stream.runCollect, ErpTest.advancing)
        expect(Array.from(got).map((record) => Number(record.id))).toEqual(expected)
      }
    }).pipe(Effect.provide(layer)))
})

describe("digits beyond a double, on a server that ignores the condition", () => {
  const layer = ErpTest.layer({
    sandbox: {
      partners: 50,
      oddRecords: { rate: 1, kinds: ["number-beyond-double"] },
      ignoreConditions: "all",
      ...noLimit
    }
  })

  it.effect("with the records' texts (exact), the neighbour of the number served is told apart", () =>
    Effect.gen(function*() {
      const where = { credit_limit: "12345678901234567891" }
      const exact = yield* run(ListEndpoint.stream("partner/list", AnyRecord, { where, exact: true }))
      expect(exact.emitted).toEqual([])
      expect(exact.error).toMatchObject({ _tag: "ConditionIgnored", had: "12345678901234567890", offset: 0 })
      // From parsed doubles alone the two are one number: not a clear difference, so not failed.
      const parsed = yield* run(ListEndpoint.stream("partner/list", AnyRecord, { where }))
      expect(parsed.error).toBeUndefined()
      expect(parsed.emitted.length).toBe(50)
    }).pipe(Effect.provide(layer)))
})
