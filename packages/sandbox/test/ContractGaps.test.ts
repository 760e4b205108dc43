import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Fault } from "../src/index.js"
import type { Reply } from "./helpers.js"
import { call, json, TIMEOUT, transports, withSandboxOver } from "./helpers.js"

const ids = (reply: Reply): Array<number> => (json(reply).data as Array<{ id: number }>).map((record) => record.id)

describe.each(transports)("Sandbox: where the contract says \"not shown\" (%s)", (transport) => {
  const withSandbox = withSandboxOver(transport)

  describe("the largest and the default page", () => {
    it.live(
      "maxListCount below the page asked for: pages are clamped; paging by what was served finds every partner once",
      () =>
        withSandbox({ partners: 40, rateLimit: false, maxListCount: 7 }, (sandbox) =>
          Effect.gen(function*() {
            expect(sandbox.maxListCount).toBe(7)
            const seen: Array<number> = []
            const sizes: Array<number> = []
            for (let offset = 0; offset < 60; offset += sizes[sizes.length - 1]) {
              const page = ids(
                yield* call(sandbox.baseUrl, "/partner/list", { list_offset: String(offset), list_count: "50" })
              )
              sizes.push(page.length)
              seen.push(...page)
              if (page.length === 0) break
            }
            expect(sizes).toStrictEqual([7, 7, 7, 7, 7, 5, 0])
            expect(seen).toStrictEqual(Array.from({ length: 40 }, (_, i) => i + 1))
            const smaller = yield* call(sandbox.baseUrl, "/partner/list", { list_offset: "3", list_count: "5" })
            expect(ids(smaller)).toStrictEqual([4, 5, 6, 7, 8])
          })),
      TIMEOUT
    )

    it.live(
      "maxListCount 1 serves one record a page",
      () =>
        withSandbox({ partners: 10, maxListCount: 1 }, (sandbox) =>
          Effect.gen(function*() {
            const reply = yield* call(sandbox.baseUrl, "/partner/list", { list_offset: "4", list_count: "500" })
            expect(ids(reply)).toStrictEqual([5])
          })),
      TIMEOUT
    )

    it.live(
      "defaultListCount: a list request without list_count gets the default page, at most maxListCount",
      () =>
        Effect.gen(function*() {
          yield* withSandbox({ partners: 100, defaultListCount: 25 }, (sandbox) =>
            Effect.gen(function*() {
              const first = yield* call(sandbox.baseUrl, "/partner/list", { list_offset: "0" })
              expect(json(first).result).toStrictEqual({ code: 1, message: null })
              expect(ids(first)).toStrictEqual(Array.from({ length: 25 }, (_, i) => i + 1))
              const second = yield* call(sandbox.baseUrl, "/partner/list", { list_offset: "25" })
              expect(ids(second)).toStrictEqual(Array.from({ length: 25 }, (_, i) => i + 26))
              // Only an absent list_count is defaulted: a malformed one, or no list_offset, is still refused.
              for (const params of [{ list_offset: "0", list_count: "x" }, { list_count: "10" }, {}]) {
                const refused = json(yield* call(sandbox.baseUrl, "/partner/list", params))
                expect(refused.result.code, JSON.stringify(params)).toBe(0)
                expect(refused.data).toBeNull()
              }
              expect(ids(yield* call(sandbox.baseUrl, "/partner/list", { list_offset: "0", list_count: "3" })))
                .toStrictEqual([1, 2, 3])
            }))
          yield* withSandbox({ partners: 100, defaultListCount: 25, maxListCount: 10 }, (sandbox) =>
            Effect.gen(function*() {
              expect(ids(yield* call(sandbox.baseUrl, "/partner/list", { list_offset: "90" }))).toHaveLength(10)
            }))
          yield* withSandbox({ partners: 100 }, (sandbox) =>
            Effect.gen(function*() {
              const refused = json(yield* call(sandbox.baseUrl, "/partner/list", { list_offset: "0" }))
              expect(refused.result).toStrictEqual({
                code: 0,
                message: "list_count is required and must be a non-negative integer"
              })
            }))
        }),
      TIMEOUT
    )
  })

  describe("error messages and the 429 body", () => {
    it.live(
      "messages: Unauthorized, Not found and the 429 envelope as another server spells them",
      () =>
        withSandbox({
          apiKeys: ["good"],
          // Per key: the third request with the good key is over the limit.
          rateLimit: { limit: 2 },
          messages: { unauthorized: "unauthorized", notFound: "Not Found", tooManyRequests: "Rate limit exceeded" }
        }, (sandbox) =>
          Effect.gen(function*() {
            const wrong = yield* call(sandbox.baseUrl, "/partner/get", { id: "1" }, { key: "bad" })
            expect(wrong.status).toBe(200)
            expect(json(wrong)).toStrictEqual({ result: { code: 0, message: "unauthorized" }, data: null })
            const missing = yield* call(sandbox.baseUrl, "/partner/get", { id: "999999" }, { key: "good" })
            expect(json(missing)).toStrictEqual({ result: { code: 0, message: "Not Found" }, data: null })
            yield* sandbox.inject(Fault.Fault.Unauthorized())
            const revoked = yield* call(sandbox.baseUrl, "/partner/get", { id: "1" }, { key: "good" })
            expect(json(revoked).result.message).toBe("unauthorized")
            const limited = yield* call(sandbox.baseUrl, "/partner/get", { id: "1" }, { key: "good" })
            expect(limited.status).toBe(429)
            expect(json(limited)).toStrictEqual({ result: { code: 0, message: "Rate limit exceeded" }, data: null })
          })),
      TIMEOUT
    )

    it.live(
      "tooManyRequestsBody \"html\": a 429 from the window or a fault is an HTML page, with the rate-limit headers",
      () =>
        withSandbox({ rateLimit: { limit: 1 }, tooManyRequestsBody: "html" }, (sandbox) =>
          Effect.gen(function*() {
            yield* sandbox.inject(Fault.Fault.TooManyRequests({ resetAfter: "2 seconds", resetUnit: "seconds" }))
            const faulted = yield* call(sandbox.baseUrl, "/partner/get", { id: "1" })
            expect((yield* call(sandbox.baseUrl, "/partner/get", { id: "1" })).status).toBe(200)
            const limited = yield* call(sandbox.baseUrl, "/partner/get", { id: "1" })
            for (const reply of [faulted, limited]) {
              expect(reply.status).toBe(429)
              expect(reply.headers.get("content-type")).toMatch(/^text\/html/)
              expect(reply.text).toBe("<html><body><h1>429 Too Many Requests</h1></body></html>\n")
              expect(reply.headers.get("x-ratelimit-remaining")).toBe("0")
            }
            expect(faulted.headers.get("x-ratelimit-reset")).toBe("2")
            expect((yield* sandbox.stats).tooManyRequests).toBe(2)
          })),
      TIMEOUT
    )

    it.live(
      "tooManyRequestsBody \"empty\": a 429 with no body at all, with the rate-limit headers",
      () =>
        withSandbox({ rateLimit: { limit: 1 }, tooManyRequestsBody: "empty" }, (sandbox) =>
          Effect.gen(function*() {
            expect((yield* call(sandbox.baseUrl, "/partner/list", { list_offset: "0", list_count: "1" })).status)
              .toBe(200)
            yield* sandbox.inject(Fault.Fault.TooManyRequests({}))
            const limited = yield* call(sandbox.baseUrl, "/partner/list", { list_offset: "0", list_count: "1" })
            yield* sandbox.resetRateLimits
            const faulted = yield* call(sandbox.baseUrl, "/partner/list", { list_offset: "0", list_count: "1" })
            expect((yield* sandbox.requests).map((entry) => entry.fault)).toStrictEqual([
              undefined,
              undefined,
              "TooManyRequests"
            ])
            for (const reply of [limited, faulted]) {
              expect(reply.status).toBe(429)
              expect(reply.text).toBe("")
              expect(reply.headers.get("content-type")).toBeNull()
              expect(reply.headers.get("x-ratelimit-limit")).toBe("1")
            }
          })),
      TIMEOUT
    )
  })
})
