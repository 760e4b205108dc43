import { FetchHttpClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import type { Duration } from "effect"
import { Effect, Either, Fiber, Option, Stream, TestClock } from "effect"
import { Fault, Sandbox } from "../src/index.js"
import type { Reply } from "./helpers.js"
import { call, json, send, TIMEOUT, withSandboxOver } from "./helpers.js"

const page = { list_offset: "0", list_count: "5" }

// Headers that belong to a connection, not to the sandbox's answer.
const CONNECTION_HEADERS = new Set(["date", "connection", "keep-alive", "transfer-encoding"])

const comparable = (reply: Reply) => ({
  status: reply.status,
  headers: Object.fromEntries([...reply.headers].filter(([name]) => !CONNECTION_HEADERS.has(name))),
  text: reply.text
})

const get = (sandbox: Sandbox.Service, path: string) =>
  HttpClientRequest.get(`${sandbox.baseUrl}${path}`).pipe(HttpClientRequest.setHeader("X-API-KEY", sandbox.apiKey))

describe("Sandbox.layerHttpClient", () => {
  it.effect(
    "answers as the socket does: the same statuses, headers, bodies and request log for the same requests",
    () =>
      Effect.gen(function*() {
        const script = (sandbox: Sandbox.Service) =>
          Effect.gen(function*() {
            const replies: Array<Reply> = []
            const ask = (path: string, params: Record<string, string>, key?: string | null) =>
              Effect.map(call(sandbox.baseUrl, path, params, key === undefined ? {} : { key }), (reply) => {
                replies.push(reply)
              })
            yield* ask("/partner/list", page)
            yield* ask("/partner/list", { ...page, "list_condition[is_customer]": "1" })
            yield* ask("/partner/get", { id: "3" })
            yield* ask("/partner/get", { company_name: sandbox.partnerAt(4).company_name ?? "" })
            yield* ask("/partner/get", { id: "999999" })
            yield* ask("/partner/list", page, null)
            yield* ask("/partner/delete", { id: "1" })
            yield* ask("/partner/list", { list_offset: "x" })
            for (
              const fault of [
                Fault.Fault.TooManyRequests({ resetAfter: "3 seconds" }),
                Fault.Fault.Status({ status: 503, retryAfter: { after: "2 seconds" } }),
                Fault.Fault.MalformedJson(),
                Fault.Fault.NotEnvelope({}),
                Fault.Fault.UnknownCode({}),
                Fault.Fault.Unauthorized(),
                Fault.Fault.Redirect({ location: "https://elsewhere.invalid/" }),
                Fault.Fault.Outage({ duration: "1 second", body: "empty" })
              ]
            ) {
              yield* sandbox.inject(fault)
              yield* ask("/partner/get", { id: "1" })
              yield* TestClock.adjust("2 seconds")
            }
            // Nine of those counted in the window (not the 429 fault, not the outage): three more, then past the limit.
            for (let i = 0; i < 4; i++) yield* ask("/partner/get", { id: "2" })
            return { replies: replies.map(comparable), log: yield* sandbox.requests, stats: yield* sandbox.stats }
          })
        const options: Sandbox.Options = { partners: 50, seed: 3, rateLimit: { limit: 12, window: "1 minute" } }
        yield* TestClock.setTime(Date.UTC(2030, 0, 1))
        // A redirect is an answer to compare, not to follow.
        const socket = yield* withSandboxOver("socket")(options, script).pipe(
          Effect.provideService(FetchHttpClient.RequestInit, { redirect: "manual" })
        )
        yield* TestClock.setTime(Date.UTC(2030, 0, 1))
        const memory = yield* withSandboxOver("memory")(options, script)
        expect(memory.replies).toStrictEqual(socket.replies)
        expect(memory.log).toStrictEqual(socket.log)
        expect(memory.stats).toStrictEqual(socket.stats)
        expect(memory.replies.map((reply) => reply.status)).toStrictEqual([
          ...[200, 200, 200, 200, 200, 200, 404, 200],
          ...[429, 503, 200, 200, 200, 200, 302, 503],
          ...[200, 200, 200, 429]
        ])
      }),
    TIMEOUT
  )

  it.effect("a connection dropped before a response is a RequestError with reason Transport", () =>
    withSandboxOver("memory")({}, (sandbox) =>
      Effect.gen(function*() {
        yield* sandbox.inject(Fault.Fault.DropBeforeResponse())
        const failed = yield* Effect.either(HttpClient.execute(get(sandbox, "/partner/get?id=1")))
        expect(Either.isLeft(failed) && failed.left._tag === "RequestError" && failed.left.reason).toBe("Transport")
        expect((yield* sandbox.requests)[0]).toMatchObject({ status: 0, fault: "DropBeforeResponse" })
        expect((yield* sandbox.stats).inFlight).toBe(0)
      })))

  it.effect("a body cut mid-way gives its first bytes, then a ResponseError", () =>
    withSandboxOver("memory")({}, (sandbox) =>
      Effect.gen(function*() {
        yield* sandbox.inject(Fault.Fault.DropMidBody({ fraction: 0.25 }))
        const response = yield* HttpClient.execute(get(sandbox, "/partner/list?list_offset=0&list_count=20"))
        const length = Number(response.headers["content-length"])
        let received = 0
        const read = yield* Stream.runForEach(response.stream, (chunk) =>
          Effect.sync(() => {
            received += chunk.length
          })).pipe(Effect.either)
        expect(Either.isLeft(read) && read.left._tag === "ResponseError" && read.left.reason).toBe("Decode")
        expect(received).toBe(Math.floor(length * 0.25))
        expect((yield* sandbox.requests)[0]).toMatchObject({ status: 200, fault: "DropMidBody" })
      })))

  it.effect("a hang never answers: the caller's timeout (on the TestClock) ends it; closing cuts it", () =>
    Effect.gen(function*() {
      const hung = yield* withSandboxOver("memory")({}, (sandbox) =>
        Effect.gen(function*() {
          yield* sandbox.inject(Fault.Fault.Hang(), { times: 2 })
          const waiting = yield* Effect.fork(
            send(sandbox.baseUrl, "/partner/get", { id: "1" }).pipe(Effect.timeout("30 seconds"))
          )
          yield* TestClock.adjust("29 seconds")
          expect(Option.isNone(yield* Fiber.poll(waiting))).toBe(true)
          expect((yield* sandbox.stats).inFlight).toBe(1)
          yield* TestClock.adjust("1 second")
          const timedOut = yield* Effect.either(Fiber.join(waiting))
          expect(Either.isLeft(timedOut) && timedOut.left._tag).toBe("TimeoutException")
          expect((yield* sandbox.stats).inFlight).toBe(0)
          expect((yield* sandbox.requests)[0]).toMatchObject({ status: 0, fault: "Hang", durationMillis: 30_000 })
          // The second one is still hanging when the sandbox closes.
          const second = yield* Effect.forkDaemon(send(sandbox.baseUrl, "/partner/get", { id: "1" }))
          yield* Effect.repeat(Effect.zipRight(Effect.yieldNow(), sandbox.stats), {
            until: (stats) => stats.inFlight === 1
          })
          return second
        }))
      const cut = yield* Effect.either(Fiber.join(hung))
      expect(Either.isLeft(cut) && cut.left._tag === "RequestError" && cut.left.description).toBe(
        "the sandbox closed with the request unanswered"
      )
    }))

  it.effect("time is the caller's Effect clock: latency, Delay, outages and the window wait for TestClock.adjust", () =>
    withSandboxOver("memory")(
      { rateLimit: { limit: 2, window: "10 seconds", resetUnit: "seconds" }, latency: { base: "2 seconds" } },
      (sandbox) =>
        Effect.gen(function*() {
          const status = Effect.map(call(sandbox.baseUrl, "/partner/get", { id: "1" }), (reply) => reply.status)
          const after = (wait: Duration.DurationInput) =>
            Effect.gen(function*() {
              const fiber = yield* Effect.fork(status)
              yield* TestClock.adjust(wait)
              return yield* Fiber.join(fiber)
            })
          // Latency: nothing until two seconds have passed on the test's clock.
          const first = yield* Effect.fork(status)
          yield* TestClock.adjust("1999 millis")
          expect(Option.isNone(yield* Fiber.poll(first))).toBe(true)
          yield* TestClock.adjust("1 millis")
          expect(yield* Fiber.join(first)).toBe(200)
          expect(yield* after("2 seconds")).toBe(200)
          const limited = yield* Effect.fork(call(sandbox.baseUrl, "/partner/get", { id: "1" }))
          yield* TestClock.adjust("2 seconds")
          const reply = yield* Fiber.join(limited)
          // Two arrived at 0 and 2 seconds: the window frees a place at 10 seconds, 6 from now.
          expect([reply.status, reply.headers.get("x-ratelimit-reset")]).toStrictEqual([429, "6"])
          yield* TestClock.adjust("4 seconds")
          expect(yield* after("2 seconds")).toBe(200)
          // Delay: the answer a minute later on the test's clock (the latency on top).
          yield* sandbox.inject(Fault.Fault.Delay({ duration: "1 minute" }))
          const delayed = yield* Effect.fork(call(sandbox.baseUrl, "/partner/get", { id: "2" }))
          yield* TestClock.adjust("61999 millis")
          expect(Option.isNone(yield* Fiber.poll(delayed))).toBe(true)
          yield* TestClock.adjust("1 millis")
          expect(json(yield* Fiber.join(delayed)).data.id).toBe(2)
          // An outage lasts its duration of the test's clock.
          yield* sandbox.inject(Fault.Fault.Outage({ duration: "30 seconds" }))
          expect(yield* after("2 seconds")).toBe(503)
          expect(yield* after("2 seconds")).toBe(503)
          yield* TestClock.adjust("26 seconds")
          expect(yield* after("2 seconds")).toBe(200)
        })
    ))

  it.effect("answers its origin only, and nothing once closed", () =>
    Effect.gen(function*() {
      const { httpClient, sandbox } = yield* Effect.scoped(
        Sandbox.makeHttpClient({ baseUrl: "http://127.0.0.1:8080", partners: 3 })
      )
      expect([sandbox.baseUrl, sandbox.port]).toStrictEqual(["http://127.0.0.1:8080", 8080])
      const closed = yield* Effect.either(httpClient.execute(get(sandbox, "/partner/get?id=1")))
      expect(Either.isLeft(closed) && closed.left.message).toContain("the in-memory sandbox is closed")
      yield* withSandboxOver("memory")({}, (sandbox) =>
        Effect.gen(function*() {
          expect((yield* call(sandbox.baseUrl, "/partner/get", { id: "1" })).status).toBe(200)
          const elsewhere = yield* Effect.either(send("https://erp.example.com", "/partner/get", { id: "1" }))
          expect(Either.isLeft(elsewhere) && elsewhere.left.message).toContain(
            "the in-memory sandbox answers https://sandbox.erp.invalid, not https://erp.example.com"
          )
          // Not a request the sandbox saw.
          expect((yield* sandbox.stats).requests).toBe(1)
        }))
    }))
})
