import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Seed } from "../src/index.js"
import { call, companyNameAt, json, roundTrip, TIMEOUT, transports, withSandboxOver } from "./helpers.js"

describe.each(transports)("Sandbox (%s)", (transport) => {
  const withSandbox = withSandboxOver(transport)

  it.live(
    "serves at a base URL without trailing slash (loopback, or the in-memory origin) with the first key",
    () =>
      withSandbox({ apiKeys: ["k1", "k2"] }, (sandbox) =>
        Effect.sync(() => {
          expect(sandbox.baseUrl).toMatch(
            transport === "socket" ? /^http:\/\/127\.0\.0\.1:\d+$/ : /^https:\/\/sandbox\.erp\.invalid$/
          )
          expect(sandbox.port).toBe(transport === "socket" ? Number(new URL(sandbox.baseUrl).port) : 443)
          expect(sandbox.port).toBeGreaterThan(0)
          expect(sandbox.apiKey).toBe("k1")
        })),
    TIMEOUT
  )

  describe("partner/list", () => {
    it.live(
      "pages through every partner exactly once, in the envelope",
      () =>
        withSandbox({ partners: 120, seed: 9, rateLimit: false }, (sandbox) =>
          Effect.gen(function*() {
            const ids: Array<number> = []
            const sizes: Array<number> = []
            for (let offset = 0;; offset += 50) {
              const reply = yield* call(sandbox.baseUrl, "/partner/list", {
                list_offset: String(offset),
                list_count: "50"
              })
              expect(reply.status).toBe(200)
              expect(reply.headers.get("content-type")).toMatch(/^application\/json/)
              const body = json(reply)
              expect(body.result).toStrictEqual({ code: 1, message: null })
              sizes.push(body.data.length)
              for (const record of body.data) ids.push(record.id)
              if (offset === 0) expect(body.data[0]).toStrictEqual(roundTrip(Seed.partnerAt(9, 0)))
              if (body.data.length < 50) break
            }
            expect(sizes).toStrictEqual([50, 50, 20])
            expect(ids).toStrictEqual(Array.from({ length: 120 }, (_, i) => i + 1))
            const past = json(yield* call(sandbox.baseUrl, "/partner/list", { list_offset: "500", list_count: "10" }))
            expect(past).toStrictEqual({ result: { code: 1, message: null }, data: [] })
          })),
      TIMEOUT
    )

    it.live(
      "clamps list_count to maxListCount",
      () =>
        withSandbox({ partners: 100, maxListCount: 30 }, (sandbox) =>
          Effect.gen(function*() {
            const body = json(yield* call(sandbox.baseUrl, "/partner/list", { list_offset: "10", list_count: "100" }))
            expect(body.data.map((r: any) => r.id)).toStrictEqual(Array.from({ length: 30 }, (_, i) => i + 11))
          })),
      TIMEOUT
    )

    it.live(
      "filters on conditions, customers included, and pages through the filtered list",
      () =>
        withSandbox({ partners: 300, seed: 4, rateLimit: false }, (sandbox) =>
          Effect.gen(function*() {
            const all = Array.from(Seed.partners(4, 300))
            const customers = all.filter((p) => p.is_customer === 1).map((p) => p.id)
            const got: Array<number> = []
            for (let offset = 0;; offset += 40) {
              const body = json(
                yield* call(sandbox.baseUrl, "/partner/list", [
                  ["list_offset", String(offset)],
                  ["list_count", "40"],
                  ["list_condition[is_customer]", "1"]
                ])
              )
              for (const record of body.data) {
                expect(record.is_customer).toBe(1)
                got.push(record.id)
              }
              if (body.data.length < 40) break
            }
            expect(got).toStrictEqual(customers)

            const both = json(
              yield* call(sandbox.baseUrl, "/partner/list", [
                ["list_offset", "0"],
                ["list_count", "500"],
                ["list_condition[is_customer]", "0"],
                ["list_condition[country]", "HU"]
              ])
            )
            expect(both.data.map((r: any) => r.id)).toStrictEqual(
              all.filter((p) => p.is_customer === 0 && p.country === "HU").map((p) => p.id)
            )
            const unknown = json(
              yield* call(sandbox.baseUrl, "/partner/list", [
                ["list_offset", "0"],
                ["list_count", "10"],
                ["list_condition[no_such_field]", "undefined"]
              ])
            )
            expect(unknown).toStrictEqual({ result: { code: 1, message: null }, data: [] })
          })),
      TIMEOUT
    )

    it.live(
      "answers code 0 when list_offset or list_count is missing or not an integer",
      () =>
        withSandbox({}, (sandbox) =>
          Effect.gen(function*() {
            const cases: Array<Record<string, string>> = [
              {},
              { list_offset: "0" },
              { list_count: "10" },
              { list_offset: "-1", list_count: "10" },
              { list_offset: "0", list_count: "1.5" },
              { list_offset: "abc", list_count: "10" },
              { list_offset: "0", list_count: "1e3" }
            ]
            for (const params of cases) {
              const reply = yield* call(sandbox.baseUrl, "/partner/list", params)
              expect(reply.status).toBe(200)
              const body = json(reply)
              expect(body.result.code).toBe(0)
              expect(body.result.message).toMatch(/list_(offset|count)/)
              expect(body.data).toBeNull()
            }
          })),
      TIMEOUT
    )
  })

  describe("partner/get", () => {
    it.live(
      "finds by id and by every awkward company name, URL-encoded",
      () =>
        withSandbox({ partners: 1000, seed: 1, rateLimit: false }, (sandbox) =>
          Effect.gen(function*() {
            const byId = json(yield* call(sandbox.baseUrl, "/partner/get", { id: "7" }))
            expect(byId).toStrictEqual({ result: { code: 1, message: null }, data: roundTrip(Seed.partnerAt(1, 6)) })
            const names = Seed.awkwardNames(1, 1000)
            expect(names.length).toBeGreaterThan(300)
            for (const name of names) {
              const body = json(yield* call(sandbox.baseUrl, "/partner/get", { company_name: name }))
              expect(body.result.code, name).toBe(1)
              expect(body.data.company_name).toBe(name)
            }
          })),
      TIMEOUT
    )

    it.live(
      "answers Not found, and needs both selectors to agree",
      () =>
        withSandbox({ partners: 50 }, (sandbox) =>
          Effect.gen(function*() {
            const notFound = { result: { code: 0, message: "Not found" }, data: null }
            const first = companyNameAt(sandbox, 0)
            const second = companyNameAt(sandbox, 1)
            for (
              const params of [
                { id: "51" },
                { id: "0" },
                { id: "abc" },
                { company_name: "No Such Company" },
                { company_name: companyNameAt(sandbox, 50) },
                { id: "1", company_name: second }
              ]
            ) {
              const reply = yield* call(sandbox.baseUrl, "/partner/get", params)
              expect(reply.status).toBe(200)
              expect(json(reply), JSON.stringify(params)).toStrictEqual(notFound)
            }
            const both = json(yield* call(sandbox.baseUrl, "/partner/get", { id: "1", company_name: first }))
            expect(both.data.id).toBe(1)
            const neither = json(yield* call(sandbox.baseUrl, "/partner/get", {}))
            expect(neither.result.code).toBe(0)
            expect(neither.result.message).not.toBe("Not found")
          })),
      TIMEOUT
    )
  })

  describe("auth and routing", () => {
    it.live(
      "answers Unauthorized with HTTP 200 for a missing, wrong or revoked key",
      () =>
        withSandbox({ apiKeys: ["good", "spare"] }, (sandbox) =>
          Effect.gen(function*() {
            const unauthorized = { result: { code: 0, message: "Unauthorized" }, data: null }
            const params = { list_offset: "0", list_count: "1" }
            for (const key of [null, "", "wrong", "GOOD"]) {
              const reply = yield* call(sandbox.baseUrl, "/partner/list", params, { key })
              expect(reply.status).toBe(200)
              expect(json(reply)).toStrictEqual(unauthorized)
            }
            expect(json(yield* call(sandbox.baseUrl, "/partner/get", { id: "1" }, { key: "spare" })).result.code).toBe(
              1
            )
            yield* sandbox.revokeKey("good")
            expect(json(yield* call(sandbox.baseUrl, "/partner/list", params, { key: "good" }))).toStrictEqual(
              unauthorized
            )
            yield* sandbox.setKeys(["fresh"])
            expect(json(yield* call(sandbox.baseUrl, "/partner/list", params, { key: "spare" }))).toStrictEqual(
              unauthorized
            )
            expect(json(yield* call(sandbox.baseUrl, "/partner/list", params, { key: "fresh" })).result.code).toBe(1)
          })),
      TIMEOUT
    )

    it.live(
      "answers 404 with the envelope on an unknown path, and accepts POST with query parameters",
      () =>
        withSandbox({}, (sandbox) =>
          Effect.gen(function*() {
            const unknown = yield* call(sandbox.baseUrl, "/partner/delete", { id: "1" })
            expect(unknown.status).toBe(404)
            expect(json(unknown)).toStrictEqual({ result: { code: 0, message: "Unknown endpoint" }, data: null })
            expect(unknown.headers.get("x-ratelimit-limit")).toBeNull()
            const posted = yield* call(sandbox.baseUrl, "/partner/get", { id: "3" }, { method: "POST" })
            expect(json(posted).data.id).toBe(3)
          })),
      TIMEOUT
    )
  })

  describe("request log and stats", () => {
    it.live(
      "logs decoded queries and outcomes, and never the key",
      () =>
        withSandbox({ apiKeys: ["s3cr3t-key-value"], partners: 100 }, (sandbox) =>
          Effect.gen(function*() {
            const name = companyNameAt(sandbox, 4)
            yield* call(sandbox.baseUrl, "/partner/get", { company_name: name }, { key: "s3cr3t-key-value" })
            yield* call(sandbox.baseUrl, "/partner/list", [
              ["list_offset", "0"],
              ["list_count", "2"],
              ["list_condition[is_customer]", "1"]
            ], { key: "wrong-s3cr3t" })
            yield* call(sandbox.baseUrl, "/partner/get", { id: "1", api_key: "s3cr3t-key-value" }, {
              key: "s3cr3t-key-value"
            })
            yield* call(sandbox.baseUrl, "/nowhere", {}, { key: "s3cr3t-key-value" })
            const log = yield* sandbox.requests
            expect(log.map((e) => [e.method, e.endpoint, e.status, e.keyValid])).toStrictEqual([
              ["GET", "/partner/get", 200, true],
              ["GET", "/partner/list", 200, false],
              ["GET", "/partner/get", 200, true],
              ["GET", "/nowhere", 404, true]
            ])
            expect(log[0].query).toStrictEqual([["company_name", name]])
            expect(log[1].query).toStrictEqual([["list_offset", "0"], ["list_count", "2"], [
              "list_condition[is_customer]",
              "1"
            ]])
            expect(log[0].durationMillis).toBeGreaterThanOrEqual(0)
            const stats = yield* sandbox.stats
            expect(stats).toMatchObject({
              requests: 4,
              byEndpoint: { "/partner/get": 2, "/partner/list": 1, "/nowhere": 1 },
              byStatus: { "200": 3, "404": 1 },
              tooManyRequests: 0,
              faultsServed: 0,
              inFlight: 0
            })
            const everything = JSON.stringify({ log, stats }) + String(sandbox.requests)
            expect(everything).not.toContain("s3cr3t")
            yield* sandbox.resetStats
            expect((yield* sandbox.stats).requests).toBe(0)
            expect(yield* sandbox.requests).toStrictEqual([])
          })),
      TIMEOUT
    )
  })

  it.live(
    "serves a million partners without building them: last page, filtered page, lookup by name",
    () =>
      withSandbox({ partners: 1_000_000, seed: 2 }, (sandbox) =>
        Effect.gen(function*() {
          const started = Date.now()
          const last = json(yield* call(sandbox.baseUrl, "/partner/list", { list_offset: "999990", list_count: "500" }))
          expect(last.data.map((r: any) => r.id)).toStrictEqual(Array.from({ length: 10 }, (_, i) => 999_991 + i))
          const customers = json(
            yield* call(sandbox.baseUrl, "/partner/list", [
              ["list_offset", "1000"],
              ["list_count", "500"],
              ["list_condition[is_customer]", "1"]
            ])
          )
          expect(customers.data).toHaveLength(500)
          const name = companyNameAt(sandbox, 999_999)
          const found = json(yield* call(sandbox.baseUrl, "/partner/get", { company_name: name }))
          expect(found.data.id).toBe(1_000_000)
          expect(Date.now() - started).toBeLessThan(5000)
        })),
    TIMEOUT
  )
})
