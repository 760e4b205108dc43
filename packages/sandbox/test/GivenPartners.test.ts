import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { call, json, TIMEOUT, transports, withSandboxOver } from "./helpers.js"

const acme = { id: 42, company_name: "Acme & Söhne Kft.", tax_number: "12345678-2-42", is_customer: 1, vip: true }
const given: ReadonlyArray<Record<string, unknown>> = [
  acme,
  { id: 7, company_name: "Beta Ltd.", tax_number: null, is_customer: 0 },
  // Not the contract's shape, as real data may be: a string id, no tax number, the flag as a string.
  { id: "9007199254740993", company_name: "Big Id Zrt.", is_customer: "1" },
  // The same id again: served as given, found by get after the first.
  { id: 7, company_name: "Beta Ltd. (duplicate)", tax_number: "87654321-1-11", is_customer: 1 }
]

const page = (offset: number, count: number, where: Record<string, string> = {}) => ({
  list_offset: String(offset),
  list_count: String(count),
  ...where
})

describe.each(transports)("Sandbox: partners given as records (%s)", (transport) => {
  const withSandbox = withSandboxOver(transport)

  it.live(
    "serves them in order as given: pages, conditions, get by id and by name, Not found",
    () =>
      withSandbox({ partners: given, rateLimit: false, maxListCount: 3 }, (sandbox) =>
        Effect.gen(function*() {
          expect(sandbox.partnerCount).toBe(4)
          expect(sandbox.partnerAt(0)).toStrictEqual(acme)
          const first = json(yield* call(sandbox.baseUrl, "/partner/list", page(0, 10)))
          expect(first.data).toStrictEqual(given.slice(0, 3))
          const second = json(yield* call(sandbox.baseUrl, "/partner/list", page(3, 10)))
          expect(second.data).toStrictEqual(given.slice(3))
          const customers = json(
            yield* call(sandbox.baseUrl, "/partner/list", page(0, 10, { "list_condition[is_customer]": "1" }))
          )
          expect(customers.data.map((partner: any) => partner.company_name)).toStrictEqual([
            "Acme & Söhne Kft.",
            "Big Id Zrt.",
            "Beta Ltd. (duplicate)"
          ])
          expect(json(yield* call(sandbox.baseUrl, "/partner/get", { id: "42" })).data).toStrictEqual(acme)
          expect(json(yield* call(sandbox.baseUrl, "/partner/get", { id: "7" })).data.company_name).toBe("Beta Ltd.")
          expect(json(yield* call(sandbox.baseUrl, "/partner/get", { id: "9007199254740993" })).data.company_name)
            .toBe("Big Id Zrt.")
          expect(json(yield* call(sandbox.baseUrl, "/partner/get", { company_name: "Acme & Söhne Kft." })).data.id)
            .toBe(42)
          for (const params of [{ id: "1" }, { company_name: "Nobody" }, { id: "42", company_name: "Beta Ltd." }]) {
            expect(json(yield* call(sandbox.baseUrl, "/partner/get", params))).toStrictEqual({
              result: { code: 0, message: "Not found" },
              data: null
            })
          }
        })),
    TIMEOUT
  )

  it.live(
    "own ids: the given id when it is a positive safe integer of its own, else a fresh one; insert, delete, hide",
    () =>
      withSandbox(
        { partners: given, rateLimit: false, hidden: { positions: [1] } },
        (sandbox) =>
          Effect.gen(function*() {
            expect(yield* sandbox.partnerIds).toStrictEqual([42, 7, 43, 44])
            expect(sandbox.hiddenAt(1)).toBe(true)
            expect((yield* sandbox.visiblePartners).map((partner) => partner.company_name)).toStrictEqual([
              "Acme & Söhne Kft.",
              "Big Id Zrt.",
              "Beta Ltd. (duplicate)"
            ])
            // Hidden, the first partner with id 7 is not found: the duplicate after it is.
            expect(json(yield* call(sandbox.baseUrl, "/partner/get", { id: "7" })).data.company_name).toBe(
              "Beta Ltd. (duplicate)"
            )
            const inserted = yield* sandbox.insertPartners(1, 0)
            expect(inserted).toStrictEqual([45])
            expect(yield* sandbox.deletePartners([42, 44])).toBe(2)
            const listed = json(yield* call(sandbox.baseUrl, "/partner/list", page(0, 10)))
            expect(listed.data.map((partner: any) => partner.id)).toStrictEqual([45, "9007199254740993"])
            expect(json(yield* call(sandbox.baseUrl, "/partner/get", { id: "42" })).result.code).toBe(0)
            expect(() => sandbox.partnerAt(4)).toThrow(RangeError)
          })
      ),
    TIMEOUT
  )
})
