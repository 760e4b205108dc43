import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Sandbox } from "../src/index.js"
import { call, json, roundTrip, withSandboxOver } from "./helpers.js"

const withSandbox = withSandboxOver("memory")

describe("invoice/list and invoice/get", () => {
  it.effect("serve the seeded invoices in the envelope, paged, clamped and filtered as partners are", () =>
    withSandbox({ invoices: 40, partners: 10, maxListCount: 15, seed: 3 }, (sandbox) =>
      Effect.gen(function*() {
        const all = Array.from({ length: 40 }, (_, i) => roundTrip(sandbox.invoiceAt(i)))
        const first = json(yield* call(sandbox.baseUrl, "/invoice/list", { list_offset: "5", list_count: "4" }))
        expect(first).toStrictEqual({ result: { code: 1, message: null }, data: all.slice(5, 9) })
        // Clamped to the largest page; past the end, empty.
        const clamped = json(yield* call(sandbox.baseUrl, "/invoice/list", { list_offset: "30", list_count: "50" }))
        expect(clamped.data).toStrictEqual(all.slice(30, 40).slice(0, 15))
        const end = json(yield* call(sandbox.baseUrl, "/invoice/list", { list_offset: "40", list_count: "5" }))
        expect(end.data).toStrictEqual([])
        // A condition filters before the cut.
        const paid = all.filter((invoice: any) => invoice.paid === 1)
        expect(paid.length).toBeGreaterThan(5)
        const filtered = json(
          yield* call(sandbox.baseUrl, "/invoice/list", {
            list_offset: "2",
            list_count: "3",
            "list_condition[paid]": "1"
          })
        )
        expect(filtered.data).toStrictEqual(paid.slice(2, 5))
        // Paging parameters are required, as for partners.
        expect(json(yield* call(sandbox.baseUrl, "/invoice/list", {})).result.code).toBe(0)
        // The same seed, the same invoices; every one addressed to a partner of the sandbox.
        const invoice = sandbox.invoiceAt(7)
        expect(invoice.id).toBe(8)
        expect(invoice.number).toMatch(/^INV-20\d\d-000008$/)
        expect(invoice.partner_id).toBeGreaterThanOrEqual(1)
        expect(invoice.partner_id).toBeLessThanOrEqual(10)
        expect(() => sandbox.invoiceAt(40)).toThrow(RangeError)
      })))

  it.effect("get by id or number; Not found otherwise; a valid key needed; a window of its own", () =>
    withSandbox({ invoices: 20, rateLimit: { limit: 3, window: "30 seconds" } }, (sandbox) =>
      Effect.gen(function*() {
        const invoice = roundTrip(sandbox.invoiceAt(11)) as { readonly number: string }
        expect(json(yield* call(sandbox.baseUrl, "/invoice/get", { id: "12" })).data).toStrictEqual(invoice)
        expect(json(yield* call(sandbox.baseUrl, "/invoice/get", { number: invoice.number })).data).toStrictEqual(
          invoice
        )
        const missing = yield* call(sandbox.baseUrl, "/invoice/get", { id: "21" })
        expect(json(missing)).toStrictEqual({ result: { code: 0, message: "Not found" }, data: null })
        // The window of /invoice/get is spent; /invoice/list and /partner/get have their own.
        expect((yield* call(sandbox.baseUrl, "/invoice/get", { id: "1" })).status).toBe(429)
        expect((yield* call(sandbox.baseUrl, "/invoice/list", { list_offset: "0", list_count: "1" })).status).toBe(200)
        expect((yield* call(sandbox.baseUrl, "/partner/get", { id: "1" })).status).toBe(200)
        const stranger = yield* call(sandbox.baseUrl, "/invoice/list", { list_offset: "0", list_count: "1" }, {
          key: "nope"
        })
        expect(json(stranger).result.message).toBe("Unauthorized")
        expect((yield* sandbox.stats).byEndpoint["/invoice/get"]).toBe(4)
      })))

  it("are among the endpoints served", () => {
    expect(Sandbox.endpoints).toContain("/invoice/list")
    expect(Sandbox.endpoints).toContain("/invoice/get")
  })
})
