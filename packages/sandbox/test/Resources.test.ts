import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Sandbox } from "../src/index.js"
import { call, json, withSandboxOver } from "./helpers.js"

// A kind of record the sandbox has no code for, served from its declaration's records (`resources`): on a socket,
// as `erp sandbox` serves the command line's declared resources.
const withSandbox = withSandboxOver("socket")

const products: Sandbox.ResourceOptions = {
  list: "product/list",
  get: "product/get",
  lookups: ["sku"],
  records: Array.from({ length: 30 }, (_, index) => ({
    id: index + 1,
    sku: `SKU-${index + 1}`,
    price: 9.5 + index,
    active: index % 4 === 0 ? 0 : 1
  }))
}

describe("resources: a declared kind of record", () => {
  it.effect("is listed page by page, filtered, got by id or lookup, Not found, and faulted as partners are", () =>
    withSandbox({ resources: [products], maxListCount: 8, rateLimit: false }, (sandbox) =>
      Effect.gen(function*() {
        const all = sandbox.recordsOf("product/list")
        expect(all).toHaveLength(30)
        const page = json(yield* call(sandbox.baseUrl, "/product/list", { list_offset: "5", list_count: "50" }))
        expect(page).toStrictEqual({ result: { code: 1, message: null }, data: all.slice(5, 13) })
        const inactive = json(
          yield* call(sandbox.baseUrl, "/product/list", {
            list_offset: "1",
            list_count: "3",
            "list_condition[active]": "0"
          })
        )
        expect(inactive.data).toStrictEqual(all.filter((product) => product.active === 0).slice(1, 4))
        expect(json(yield* call(sandbox.baseUrl, "/product/get", { id: "7" })).data).toStrictEqual(all[6])
        expect(json(yield* call(sandbox.baseUrl, "/product/get", { sku: "SKU-9" })).data).toStrictEqual(all[8])
        expect(json(yield* call(sandbox.baseUrl, "/product/get", { id: "31" }))).toStrictEqual({
          result: { code: 0, message: "Not found" },
          data: null
        })
        yield* sandbox.inject({ _tag: "Status", status: 503 }, { endpoint: "/product/get" })
        expect((yield* call(sandbox.baseUrl, "/product/get", { id: "1" })).status).toBe(503)
        expect((yield* call(sandbox.baseUrl, "/product/get", { id: "1" })).status).toBe(200)
        expect((yield* sandbox.stats).byEndpoint).toStrictEqual({ "/product/list": 2, "/product/get": 5 })
      })))
})
