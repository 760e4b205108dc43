import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { Seed } from "../src/index.js"
import { call, json, roundTrip, TIMEOUT, transports, withSandboxOver } from "./helpers.js"

const kindsOf = (seed: number, count: number, options: Seed.OddRecords | undefined) =>
  Array.from({ length: count }, (_, index) => Option.getOrUndefined(Seed.oddKindAt(seed, index, options)))

type Fields = Readonly<Record<string, unknown>>

const exact = (value: unknown, text: string) => Seed.isExactNumber(value) && value.text === text

// What each kind does to the fields it touches; every other field stays as `partnerAt` made it.
const touched: Record<
  Seed.OddKind,
  readonly [fields: ReadonlyArray<string>, check: (served: Fields, base: Seed.PartnerRecord, index: number) => boolean]
> = {
  "tax-number-empty": [["tax_number"], (s) => s.tax_number === ""],
  "tax-number-null": [["tax_number"], (s) => s.tax_number === null],
  "tax-number-absent": [["tax_number"], (s) => !Object.hasOwn(s, "tax_number")],
  "tax-number-eu-vat": [
    ["tax_number"],
    (s, base) =>
      s.tax_number === `HU${base.tax_number.slice(0, 8)}` ||
      (typeof s.tax_number === "string" && /^DE\d{9}$/.test(s.tax_number))
  ],
  "tax-number-spaces": [
    ["tax_number"],
    (s) => typeof s.tax_number === "string" && /^\d{3} \d{3} \d{2}$/.test(s.tax_number)
  ],
  "tax-number-slashes": [["tax_number"], (s, base) => s.tax_number === base.tax_number.replaceAll("-", "/")],
  "tax-number-number": [["tax_number"], (s, base) => s.tax_number === Number(base.tax_number.replaceAll("-", ""))],
  "company-name-null": [["company_name"], (s) => s.company_name === null],
  "company-name-empty": [["company_name"], (s) => s.company_name === ""],
  "customer-flag-string": [["is_customer"], (s, base) => s.is_customer === String(base.is_customer)],
  "customer-flag-boolean": [["is_customer"], (s, base) => s.is_customer === (base.is_customer === 1)],
  "customer-flag-absent": [["is_customer"], (s) => !Object.hasOwn(s, "is_customer")],
  "extra-object": [
    ["custom_fields"],
    (s) =>
      typeof s.custom_fields === "object" && s.custom_fields !== null &&
      typeof (s.custom_fields as any).legacy?.code === "string"
  ],
  "number-beyond-double": [
    ["credit_limit", "ledger_ref"],
    (s) => exact(s.credit_limit, "12345678901234567890") && exact(s.ledger_ref, "9007199254740993")
  ],
  "decimal-as-written": [
    ["balance", "rate", "discount"],
    (s) => exact(s.balance, "1.10") && exact(s.rate, "1e2") && exact(s.discount, "-0.0")
  ],
  "id-beyond-double": [["id"], (s, _, index) => exact(s.id, String(12345678901234567890n + BigInt(index) * 1000n))],
  // With every partner a duplicate, each repeats the first partner's id (the first keeps its own).
  "duplicate-id": [["id"], (s) => s.id === 1]
}

describe("Seed: odd records", () => {
  it("without options, at rate 0 or with no kinds, every partner is as partnerAt makes it", () => {
    for (const options of [undefined, { rate: 0 }, { rate: 1, kinds: [] }]) {
      for (let index = 0; index < 200; index++) {
        expect(Seed.servedPartnerAt(3, index, options)).toStrictEqual(Seed.partnerAt(3, index))
        expect(Seed.oddKindAt(3, index, options)).toStrictEqual(Option.none())
      }
    }
  })

  it("a seeded share strays, the same on every run; kinds change how, not which", () => {
    const options = { rate: 0.2 }
    const kinds = kindsOf(1, 10_000, options)
    const odd = kinds.filter((kind) => kind !== undefined)
    expect(odd.length).toBeGreaterThan(1800)
    expect(odd.length).toBeLessThan(2200)
    expect(new Set(odd)).toStrictEqual(new Set(Seed.defaultOddKinds))
    expect(kindsOf(1, 10_000, { rate: 0.2 })).toStrictEqual(kinds)
    const onlyNull = kindsOf(1, 10_000, { rate: 0.2, kinds: ["tax-number-null"] })
    expect(onlyNull.map((kind) => kind !== undefined)).toStrictEqual(kinds.map((kind) => kind !== undefined))
    expect(new Set(onlyNull)).toStrictEqual(new Set([undefined, "tax-number-null"]))
    expect(kindsOf(1, 10_000, { rate: 0.2, seed: 2 })).not.toStrictEqual(kinds)
  })

  it("by default, only the kinds that keep the integer id and survive a float round trip are drawn", () => {
    const named = ["number-beyond-double", "decimal-as-written", "id-beyond-double", "duplicate-id"]
    expect(Seed.defaultOddKinds).toStrictEqual(Seed.oddKinds.filter((kind) => !named.includes(kind)))
    expect(Seed.defaultOddKinds).toHaveLength(13)
  })

  it("each kind strays as documented, and keeps every field it does not touch", () => {
    expect(Seed.oddKinds).toHaveLength(Object.keys(touched).length)
    for (const kind of Seed.oddKinds) {
      const [fields, check] = touched[kind]
      for (let index = 0; index < 100; index++) {
        const base = Seed.partnerAt(5, index) as unknown as Fields
        const served = Seed.servedPartnerAt(5, index, { rate: 1, kinds: [kind] }) as unknown as Fields
        expect(Seed.oddKindAt(5, index, { rate: 1, kinds: [kind] })).toStrictEqual(Option.some(kind))
        if (!fields.includes("id")) expect(served.id).toBe(index + 1)
        expect(check(served, Seed.partnerAt(5, index), index), `${kind} ${index}`).toBe(true)
        const rest = (record: Fields) =>
          Object.fromEntries(Object.entries(record).filter(([name]) => !fields.includes(name)))
        expect(rest(served)).toStrictEqual(rest(base))
      }
    }
  })
})

describe.each(transports)("Sandbox: odd records over HTTP (%s)", (transport) => {
  const withSandbox = withSandboxOver(transport)

  const oddRecords = { rate: 0.3, seed: 4 }
  const partners = 600

  it.live(
    "list and get serve exactly what partnerAt says, every kind included",
    () =>
      withSandbox({ partners, seed: 8, rateLimit: false, oddRecords }, (sandbox) =>
        Effect.gen(function*() {
          const served: Array<unknown> = []
          for (let offset = 0; offset < partners; offset += 100) {
            const body = json(
              yield* call(sandbox.baseUrl, "/partner/list", { list_offset: String(offset), list_count: "100" })
            )
            served.push(...body.data)
          }
          const expected = Array.from({ length: partners }, (_, index) => roundTrip(sandbox.partnerAt(index)))
          expect(served).toStrictEqual(expected)
          const kinds = Array.from({ length: partners }, (_, index) => sandbox.oddKindAt(index))
          const counts = new Map<Seed.OddKind, number>()
          for (const kind of kinds) if (Option.isSome(kind)) counts.set(kind.value, (counts.get(kind.value) ?? 0) + 1)
          expect([...counts.keys()].sort()).toStrictEqual([...Seed.defaultOddKinds].sort())
          const odd = [...counts.values()].reduce((a, b) => a + b, 0)
          expect(odd).toBeGreaterThan(partners * 0.2)
          expect(odd).toBeLessThan(partners * 0.4)
          // JSON keeps each form: a number stays a number, an absent field stays absent.
          const numeric = kinds.findIndex((kind) => Option.contains(kind, "tax-number-number"))
          expect(typeof (served[numeric] as any).tax_number).toBe("number")
          const absent = kinds.findIndex((kind) => Option.contains(kind, "customer-flag-absent"))
          expect(Object.hasOwn(served[absent] as object, "is_customer")).toBe(false)
          expect(Seed.servedPartnerAt(8, absent, oddRecords)).toStrictEqual(sandbox.partnerAt(absent))
        })),
    TIMEOUT
  )

  it.live(
    "every odd record is found by id, and by company name when it has one",
    () =>
      withSandbox({ partners, seed: 8, rateLimit: false, oddRecords }, (sandbox) =>
        Effect.gen(function*() {
          let byName = 0
          let nameless = 0
          for (let index = 0; index < partners; index++) {
            if (Option.isNone(sandbox.oddKindAt(index))) continue
            const record = sandbox.partnerAt(index)
            const found = json(yield* call(sandbox.baseUrl, "/partner/get", { id: String(record.id) }))
            expect(found).toStrictEqual({ result: { code: 1, message: null }, data: roundTrip(record) })
            if (record.company_name !== null && record.company_name !== "") {
              const named = json(yield* call(sandbox.baseUrl, "/partner/get", { company_name: record.company_name }))
              expect(named.data).toStrictEqual(roundTrip(record))
              byName++
            } else {
              // The name it would have had is not served, so it finds nothing.
              const seededName = Seed.partnerAt(8, index).company_name
              const gone = json(yield* call(sandbox.baseUrl, "/partner/get", { company_name: seededName }))
              expect(gone.result).toStrictEqual({ code: 0, message: "Not found" })
              nameless++
            }
          }
          expect(byName).toBeGreaterThan(100)
          expect(nameless).toBeGreaterThan(5)
          const empty = json(yield* call(sandbox.baseUrl, "/partner/get", { company_name: "" }))
          expect(empty.result).toStrictEqual({ code: 0, message: "Not found" })
        })),
    TIMEOUT
  )

  it.live(
    "a filtered list selects the customer flag in every form it is sent, and never an absent one",
    () =>
      withSandbox({
        partners: 400,
        seed: 6,
        rateLimit: false,
        oddRecords: { rate: 0.6, kinds: ["customer-flag-string", "customer-flag-boolean", "customer-flag-absent"] }
      }, (sandbox) =>
        Effect.gen(function*() {
          const filtered = (flag: string) =>
            Effect.map(
              call(sandbox.baseUrl, "/partner/list", [
                ["list_offset", "0"],
                ["list_count", "500"],
                ["list_condition[is_customer]", flag]
              ]),
              (reply) => (json(reply).data as Array<{ id: number; is_customer?: unknown }>)
            )
          const all = Array.from({ length: 400 }, (_, index) => sandbox.partnerAt(index))
          const expected = (forms: ReadonlyArray<unknown>) =>
            all.filter((p) => forms.includes(p.is_customer)).map((p) => roundTrip(p))
          const customers = yield* filtered("1")
          const others = yield* filtered("0")
          expect(customers).toStrictEqual(expected([1, "1", true]))
          expect(others).toStrictEqual(expected([0, "0", false]))
          expect(new Set(customers.map((p) => p.is_customer))).toStrictEqual(new Set([1, "1", true]))
          expect(new Set(others.map((p) => p.is_customer))).toStrictEqual(new Set([0, "0", false]))
          const absent = all.filter((p) => !Object.hasOwn(p, "is_customer")).length
          expect(absent).toBeGreaterThan(30)
          expect(customers.length + others.length + absent).toBe(400)
        })),
    TIMEOUT
  )
})

describe.each(transports)(
  "Sandbox: numbers a float would change, and ids that are not what a client expects (%s)",
  (transport) => {
    const withSandbox = withSandboxOver(transport)

    const only = (kind: Seed.OddKind, partners = 3) => ({
      partners,
      seed: 8,
      rateLimit: false as const,
      oddRecords: { rate: 1, kinds: [kind] }
    })
    const firstPage = { list_offset: "0", list_count: "3" }

    it.live(
      "number-beyond-double and decimal-as-written: the body holds the numbers exactly as written",
      () =>
        Effect.gen(function*() {
          yield* withSandbox(only("number-beyond-double"), (sandbox) =>
            Effect.gen(function*() {
              const reply = yield* call(sandbox.baseUrl, "/partner/list", firstPage)
              // The body holds, for each record: "credit_limit":12345678901234567890 and "ledger_ref":9007199254740993.
              expect(reply.text.split("\"credit_limit\":12345678901234567890,")).toHaveLength(4)
              expect(reply.text.split("\"ledger_ref\":9007199254740993")).toHaveLength(4)
              // What a float round trip makes of them: other numbers.
              const parsed = json(reply).data[0]
              expect(parsed.credit_limit).toBe(12345678901234567000)
              expect(parsed.ledger_ref).toBe(9007199254740992)
              // The text as a whole: the envelope around each record as `Seed.recordJson` writes it.
              const records = Array.from({ length: 3 }, (_, index) => Seed.recordJson(sandbox.partnerAt(index)))
              expect(reply.text).toBe(`{"result":{"code":1,"message":null},"data":[${records.join(",")}]}`)
              const one = yield* call(sandbox.baseUrl, "/partner/get", { id: "2" })
              expect(one.text).toBe(`{"result":{"code":1,"message":null},"data":${records[1]}}`)
            }))
          yield* withSandbox(only("decimal-as-written"), (sandbox) =>
            Effect.gen(function*() {
              const reply = yield* call(sandbox.baseUrl, "/partner/list", firstPage)
              // The body ends each record with "balance":1.10,"rate":1e2,"discount":-0.0.
              expect(reply.text.split("\"balance\":1.10,\"rate\":1e2,\"discount\":-0.0}")).toHaveLength(4)
              const parsed = json(reply).data[0]
              expect(JSON.stringify([parsed.balance, parsed.rate, parsed.discount])).toBe("[1.1,100,0]")
              // JSON.stringify of the served record gives what a float round trip gives; recordJson the text.
              expect(JSON.stringify(sandbox.partnerAt(0))).toContain("\"balance\":1.1,\"rate\":100,\"discount\":0}")
              expect(Seed.recordJson(sandbox.partnerAt(0))).toContain(
                "\"balance\":1.10,\"rate\":1e2,\"discount\":-0.0}"
              )
            }))
        }),
      TIMEOUT
    )

    it.live(
      "id-beyond-double: the id is 12345678901234567890 plus 1000 times the index, written exactly, found by get",
      () =>
        withSandbox(only("id-beyond-double"), (sandbox) =>
          Effect.gen(function*() {
            const reply = yield* call(sandbox.baseUrl, "/partner/list", firstPage)
            // The body holds "id":12345678901234567890, "id":12345678901234568890 and "id":12345678901234569890.
            for (const id of ["12345678901234567890", "12345678901234568890", "12345678901234569890"]) {
              expect(reply.text).toContain(`{"id":${id},`)
            }
            const parsed = json(reply).data as Array<{ id: number }>
            expect(parsed.every((record) => !Number.isSafeInteger(record.id))).toBe(true)
            expect(String(sandbox.partnerAt(1).id)).toBe("12345678901234568890")

            const found = yield* call(sandbox.baseUrl, "/partner/get", { id: "12345678901234568890" })
            expect(found.text).toContain("{\"id\":12345678901234568890,")
            expect(json(found).data.company_name).toBe(sandbox.partnerAt(1).company_name)
            // Its own seeded id is not served; another big number is nobody's.
            for (const id of ["2", "12345678901234568891", "12345678901234568000"]) {
              expect(json(yield* call(sandbox.baseUrl, "/partner/get", { id })).result.message).toBe("Not found")
            }
            const name = sandbox.partnerAt(2).company_name!
            const both = yield* call(sandbox.baseUrl, "/partner/get", {
              id: "12345678901234569890",
              company_name: name
            })
            expect(json(both).result.code).toBe(1)
          })),
      TIMEOUT
    )

    it.live(
      "duplicate-id: distinct records repeat the id of the one before; get by that id finds the first",
      () =>
        withSandbox({
          partners: 300,
          seed: 8,
          rateLimit: false,
          oddRecords: { rate: 0.2, kinds: ["duplicate-id"], seed: 5 }
        }, (sandbox) =>
          Effect.gen(function*() {
            const served = json(
              yield* call(sandbox.baseUrl, "/partner/list", { list_offset: "0", list_count: "300" })
            ).data as Array<{ id: number; company_name: string }>
            expect(served).toStrictEqual(Array.from({ length: 300 }, (_, index) => roundTrip(sandbox.partnerAt(index))))
            const distinctIds = new Set(served.map((record) => record.id))
            const distinctRecords = new Set(served.map((record) => JSON.stringify(record)))
            expect(distinctRecords.size).toBe(300)
            expect(300 - distinctIds.size).toBeGreaterThan(40)
            expect(300 - distinctIds.size).toBeLessThan(85)
            // Each duplicate repeats the id of the record right before it, with its own name.
            const duplicate = served.findIndex((_, index) =>
              index > 0 && Option.contains(sandbox.oddKindAt(index), "duplicate-id")
            )
            expect(served[duplicate].id).toBe(served[duplicate - 1].id)
            expect(served[duplicate].company_name).not.toBe(served[duplicate - 1].company_name)
            // By that id, the first of them; by name, each one.
            const byId = json(yield* call(sandbox.baseUrl, "/partner/get", { id: String(served[duplicate].id) }))
            expect(byId.data).toStrictEqual(served[served.findIndex((record) => record.id === served[duplicate].id)])
            const byName = json(
              yield* call(sandbox.baseUrl, "/partner/get", { company_name: served[duplicate].company_name })
            )
            expect(byName.data).toStrictEqual(served[duplicate])
            // The duplicate's own seeded id is nobody's.
            const own = json(yield* call(sandbox.baseUrl, "/partner/get", { id: String(duplicate + 1) }))
            expect(own.result.message).toBe("Not found")
            // Once the first is deleted, get by the id finds the next that serves it.
            const head = served.findIndex((record) => record.id === served[duplicate].id)
            yield* sandbox.deletePartners([head + 1])
            const next = json(yield* call(sandbox.baseUrl, "/partner/get", { id: String(served[duplicate].id) }))
            expect(next.data).toStrictEqual(served[head + 1])
          })),
      TIMEOUT
    )
  }
)
