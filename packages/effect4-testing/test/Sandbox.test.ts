import { describe, expect, it } from "@effect/vitest"
import { ErpClient } from "@erp-client/effect4-client"
import { Partner } from "@erp-client/effect4-core"
import type { ErpRules } from "@erp-client/fake-erp"
import { Fault as Fault3, Sandbox as Sandbox3 } from "@erp-client/sandbox"
import { Duration, Effect, Fiber, Option, Stream } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { TestClock } from "effect/testing"
import * as Effect3 from "effect3/Effect"
import * as Fiber3 from "effect3/Fiber"
import * as TestClock3 from "effect3/TestClock"
import * as TestContext3 from "effect3/TestContext"
import { ErpTest, Fault, Sandbox } from "../src/index.js"

interface Reply {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly text: string
}

/** One GET to the in-memory ERP, with its key (or `key`), through the HttpClient provided. */
const send = (sandbox: Sandbox.Service, path: string, key: string = sandbox.apiKey) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const response = yield* client.get(`${sandbox.baseUrl}${path}`, { headers: { "X-API-KEY": key } })
    return { status: response.status, headers: { ...response.headers }, text: yield* response.text } satisfies Reply
  })

/** Runs `f` against the ERP in memory, built from `options`, closed when `f` ends. */
const withSandbox = <A, E>(
  options: Sandbox.InMemoryOptions,
  f: (sandbox: Sandbox.Service) => Effect.Effect<A, E, HttpClient.HttpClient>
) => Effect.flatMap(Sandbox.Sandbox, f).pipe(Effect.provide(Sandbox.layerHttpClient(options)))

/** Whether the forked call is still running. */
const running = <A, E>(fiber: Fiber.Fiber<A, E>) => Effect.sync(() => fiber.pollUnsafe() === undefined)

describe("Sandbox.layerHttpClient: what a client sees", () => {
  it.effect("a connection dropped before a response is an HttpClientError whose reason is a TransportError", () =>
    withSandbox({}, (sandbox) =>
      Effect.gen(function*() {
        yield* sandbox.inject(Fault.Fault.DropBeforeResponse())
        const failed = yield* Effect.flip(send(sandbox, "/partner/get?id=1"))
        expect(failed._tag).toBe("HttpClientError")
        expect(failed.reason._tag).toBe("TransportError")
        expect(failed.reason._tag === "TransportError" && failed.reason.description).toBe(
          "the sandbox closed the connection before responding"
        )
        expect((yield* sandbox.requests)[0]).toMatchObject({ status: 0, fault: "DropBeforeResponse" })
        expect((yield* sandbox.stats).inFlight).toBe(0)
      })))

  it.effect("a body cut mid-way gives its first bytes, then an HttpClientError", () =>
    withSandbox({}, (sandbox) =>
      Effect.gen(function*() {
        yield* sandbox.inject(Fault.Fault.DropMidBody({ fraction: 0.25 }))
        const client = yield* HttpClient.HttpClient
        const response = yield* client.execute(
          HttpClientRequest.get(`${sandbox.baseUrl}/partner/list?list_offset=0&list_count=20`).pipe(
            HttpClientRequest.setHeader("X-API-KEY", sandbox.apiKey)
          )
        )
        const length = Number(response.headers["content-length"])
        let received = 0
        const read = yield* Stream.runForEach(response.stream, (chunk) =>
          Effect.sync(() => {
            received += chunk.length
          })).pipe(Effect.flip)
        expect(read._tag).toBe("HttpClientError")
        expect(received).toBe(Math.floor(length * 0.25))
        expect(received).toBeGreaterThan(0)
        expect((yield* sandbox.requests)[0]).toMatchObject({ status: 200, fault: "DropMidBody" })
      })))

  it.effect("a hang never answers: the caller's timeout (on the TestClock) ends it; closing cuts it", () =>
    Effect.gen(function*() {
      const hung = yield* withSandbox({}, (sandbox) =>
        Effect.gen(function*() {
          yield* sandbox.inject(Fault.Fault.Hang(), { times: 2 })
          const waiting = yield* Effect.forkChild(send(sandbox, "/partner/get?id=1").pipe(Effect.timeout("30 seconds")))
          yield* TestClock.adjust("29 seconds")
          expect(yield* running(waiting)).toBe(true)
          expect((yield* sandbox.stats).inFlight).toBe(1)
          yield* TestClock.adjust("1 second")
          const timedOut = yield* Effect.flip(Fiber.join(waiting))
          expect(timedOut._tag).toBe("TimeoutError")
          expect((yield* sandbox.stats).inFlight).toBe(0)
          expect((yield* sandbox.requests)[0]).toMatchObject({ status: 0, fault: "Hang", durationMillis: 30_000 })
          // The second one is still hanging when the sandbox closes.
          const second = yield* Effect.forkDetach(send(sandbox, "/partner/get?id=1"))
          yield* Effect.repeat(Effect.andThen(Effect.yieldNow, sandbox.stats), {
            until: (stats) => stats.inFlight === 1
          })
          return second
        }))
      const cut = yield* Effect.flip(Fiber.join(hung))
      expect(cut._tag === "HttpClientError" && cut.reason._tag === "TransportError" && cut.reason.description).toBe(
        "the sandbox closed with the request unanswered"
      )
    }))

  it.effect("answers its origin only, and nothing once closed; statuses without a body have none", () =>
    Effect.gen(function*() {
      const { httpClient, sandbox } = yield* Effect.scoped(
        Sandbox.makeHttpClient({ baseUrl: "http://127.0.0.1:8080", partners: 3 })
      )
      expect([sandbox.baseUrl, sandbox.port]).toStrictEqual(["http://127.0.0.1:8080", 8080])
      const closed = yield* Effect.flip(httpClient.get(`${sandbox.baseUrl}/partner/get?id=1`))
      expect(closed.message).toContain("connection refused: the in-memory sandbox is closed")
      yield* withSandbox({}, (sandbox) =>
        Effect.gen(function*() {
          expect((yield* send(sandbox, "/partner/get?id=1")).status).toBe(200)
          const elsewhere = yield* Effect.flip(send({ ...sandbox, baseUrl: "https://erp.example.com" }, "/partner/get"))
          expect(elsewhere.message).toContain(
            "the in-memory sandbox answers https://sandbox.erp.invalid, not https://erp.example.com"
          )
          // Not a request the sandbox saw.
          expect((yield* sandbox.stats).requests).toBe(1)
          // A 304 from a Status fault: no body, no content length.
          yield* sandbox.inject(Fault.Fault.Status({ status: 304 }))
          const notModified = yield* send(sandbox, "/partner/get?id=1")
          expect([notModified.status, notModified.text, notModified.headers["content-length"]]).toStrictEqual([
            304,
            "",
            undefined
          ])
        }))
    }))
})

describe("Fault: Effect 4's durations, on the TestClock", () => {
  it("constructors give the fake ERP's plain faults", () => {
    expect({ ...Fault.Fault.TooManyRequests({ resetAfter: "1 second" }) }).toStrictEqual({
      _tag: "TooManyRequests",
      resetAfter: "1 second"
    })
    expect({ ...Fault.Fault.Hang() }).toStrictEqual({ _tag: "Hang" })
    expect(Fault.Fault.$is("Hang")(Fault.Fault.Hang())).toBe(true)
    expect(Fault.Fault.$is("Hang")({ _tag: "Delay", duration: 5 })).toBe(false)
  })

  it.effect("a Delay of Duration.seconds(2), a 429's reset of Duration.seconds(20), an Outage of { seconds: 5 }", () =>
    withSandbox({ partners: 5, rateLimit: { resetUnit: "seconds" } }, (sandbox) =>
      Effect.gen(function*() {
        yield* sandbox.inject(Fault.Fault.Delay({ duration: Duration.seconds(2) }))
        const delayed = yield* Effect.forkChild(send(sandbox, "/partner/get?id=2"))
        yield* TestClock.adjust("1999 millis")
        expect(yield* running(delayed)).toBe(true)
        yield* TestClock.adjust("1 millis")
        expect(JSON.parse((yield* Fiber.join(delayed)).text).data.id).toBe(2)

        yield* sandbox.inject(Fault.Fault.TooManyRequests({ resetAfter: Duration.seconds(20) }))
        const limited = yield* send(sandbox, "/partner/get?id=2")
        expect([limited.status, limited.headers["x-ratelimit-reset"]]).toStrictEqual([429, "20"])

        yield* sandbox.inject(Fault.Fault.Outage({ duration: { seconds: 5 }, retryAfter: { after: "3 seconds" } }))
        const down = yield* send(sandbox, "/partner/get?id=2")
        expect([down.status, down.headers["retry-after"]]).toStrictEqual([503, "3"])
        yield* TestClock.adjust("4999 millis")
        expect((yield* send(sandbox, "/partner/get?id=2")).status).toBe(503)
        yield* TestClock.adjust("1 millis")
        expect((yield* send(sandbox, "/partner/get?id=2")).status).toBe(200)
      })))

  it.effect("latency and the window given as Effect 4 durations follow the TestClock", () =>
    withSandbox(
      {
        partners: 5,
        rateLimit: { limit: 1, window: Duration.seconds(10), resetUnit: "seconds" },
        latency: { base: Duration.millis(500) }
      },
      (sandbox) =>
        Effect.gen(function*() {
          const first = yield* Effect.forkChild(send(sandbox, "/partner/get?id=1"))
          yield* TestClock.adjust("499 millis")
          expect(yield* running(first)).toBe(true)
          yield* TestClock.adjust("1 millis")
          expect((yield* Fiber.join(first)).status).toBe(200)
          // One a window, the window from the arrival at 0: a place frees at 10 seconds.
          const second = yield* Effect.forkChild(send(sandbox, "/partner/get?id=1"))
          yield* TestClock.adjust("500 millis")
          const refused = yield* Fiber.join(second)
          expect([refused.status, refused.headers["x-ratelimit-reset"]]).toStrictEqual([429, "10"])
        })
    ))
})

describe("Sandbox: the controls", () => {
  it.effect("partners inserted, deleted and revoked keys change what the ErpClient gets; stats reset", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      const erp = yield* ErpClient.ErpClient
      const byId = (id: number) => erp.get("partner/get", Partner.Partner, { params: [["id", String(id)]] })
      expect([sandbox.partnerCount, yield* sandbox.size]).toStrictEqual([20, 20])
      expect(sandbox.partnerAt(6).id).toBe(7)
      expect(Option.isOption(sandbox.oddKindAt(0))).toBe(true)
      const [inserted] = yield* sandbox.insertPartners(1, 0)
      expect((yield* sandbox.partnerIds)[0]).toBe(inserted)
      expect((yield* byId(inserted)).id).toBe(inserted)
      expect(yield* sandbox.deletePartners([7, 999])).toBe(1)
      expect((yield* Effect.flip(byId(7)))._tag).toBe("NotFound")
      expect((yield* sandbox.visiblePartners).map((record) => record.id)).not.toContain(7)
      expect((yield* sandbox.stats).requests).toBe(2)
      yield* sandbox.resetStats
      expect(yield* sandbox.requests).toStrictEqual([])
      yield* sandbox.revokeKey(sandbox.apiKey)
      expect((yield* Effect.flip(byId(1)))._tag).toBe("Unauthorized")
      yield* sandbox.setKeys([sandbox.apiKey])
      expect((yield* byId(1)).id).toBe(1)
      yield* sandbox.inject(Fault.Fault.Status({ status: 500 }), { times: Infinity })
      yield* sandbox.clearFaults
      expect((yield* byId(2)).id).toBe(2)
    }).pipe(Effect.provide(ErpTest.layer({ sandbox: { partners: 20, oddRecords: { rate: 0.5 } } }))))
})

// The Effect 3 sandbox (`@erp-client/sandbox`, in memory, on Effect 3's TestClock) and this kit's ERP answer the same
// script with the same options at the same clock times: the same rules, wired to each Effect.
describe("the same answers as the Effect 3 sandbox", () => {
  const options = {
    partners: 50,
    seed: 3,
    rateLimit: { limit: 12, window: "1 minute", retryAfter: true },
    oddRecords: { rate: 0.2 },
    hidden: { positions: [2, 6] },
    // A declared kind of record, made from the seed: served by the same rules in both editions.
    resources: [{
      list: "product/list",
      get: "product/get",
      records: { count: 12, record: (index: number, seed: number) => ({ id: index + 1, active: (index + seed) % 2 }) }
    }]
  } as const
  const start = Date.UTC(2030, 0, 1)
  const page = "list_offset=0&list_count=5"
  const faults: ReadonlyArray<ErpRules.Fault> = [
    { _tag: "TooManyRequests", resetAfter: "3 seconds" },
    { _tag: "Status", status: 503, retryAfter: { after: "2 seconds" } },
    { _tag: "MalformedJson" },
    { _tag: "NotEnvelope" },
    { _tag: "UnknownCode" },
    { _tag: "Unauthorized" },
    { _tag: "Redirect", location: "https://elsewhere.invalid/" },
    { _tag: "Outage", duration: "1 second", body: "envelope" }
  ]

  /** A duration both editions read alike. */
  type Span = `${number} millis` | `${number} seconds`

  /** The script, in terms of one edition: a request and its reply, a fault queued, the clock moved. */
  interface Edition<F> {
    readonly ask: (path: string, key?: string) => F
    readonly inject: (fault: ErpRules.Fault) => F
    readonly adjust: (duration: Span) => F
    /** `path` asked while the clock moves by `duration` (for an answer that waits on the clock). */
    readonly askDuring: (path: string, duration: Span) => F
  }
  const script = <F>(edition: Edition<F>, partnerName: string): Array<F> => [
    edition.ask(`/partner/list?${page}`),
    edition.ask(`/partner/list?${page}&list_condition%5Bis_customer%5D=1`),
    edition.ask("/partner/get?id=3"),
    edition.ask(`/partner/get?company_name=${encodeURIComponent(partnerName)}`),
    edition.ask("/partner/get?id=999999"),
    edition.ask("/partner/get?id=7"),
    edition.ask(`/partner/list?${page}`, "not-the-key"),
    edition.ask("/partner/delete?id=1"),
    edition.ask("/partner/list?list_offset=x"),
    edition.ask("/invoice/list?list_offset=0&list_count=3"),
    edition.ask(`/product/list?list_offset=2&list_count=3&list_condition%5Bactive%5D=1`),
    edition.ask("/product/get?id=4"),
    edition.ask("/product/get?id=13"),
    ...faults.flatMap((
      fault
    ) => [edition.inject(fault), edition.ask("/partner/get?id=1"), edition.adjust("2 seconds")]),
    edition.inject({ _tag: "Delay", duration: "1500 millis" }),
    edition.askDuring("/partner/get?id=4", "1500 millis"),
    // To the limit of 12 partner/get requests in the window, and past it.
    ...Array.from({ length: 4 }, () => edition.ask("/partner/get?id=2"))
  ]

  const effect4 = Effect.gen(function*() {
    yield* TestClock.setTime(start)
    return yield* withSandbox(options, (sandbox) =>
      Effect.gen(function*() {
        const replies: Array<Reply> = []
        const steps = script<Effect.Effect<void, unknown, HttpClient.HttpClient>>({
          ask: (path, key) => Effect.map(send(sandbox, path, key), (reply) => void replies.push(reply)),
          inject: (fault) => sandbox.inject(fault),
          adjust: (duration) => TestClock.adjust(duration),
          askDuring: (path, duration) =>
            Effect.gen(function*() {
              const fiber = yield* Effect.forkChild(send(sandbox, path))
              yield* TestClock.adjust(duration)
              replies.push(yield* Fiber.join(fiber))
            })
        }, sandbox.partnerAt(4).company_name ?? "")
        for (const step of steps) yield* step
        return { replies, log: yield* sandbox.requests, stats: yield* sandbox.stats }
      }))
  })

  const effect3 = Effect3.gen(function*() {
    yield* TestClock3.setTime(start)
    const { httpClient, sandbox } = yield* Sandbox3.makeHttpClient(options)
    const replies: Array<Reply> = []
    const send3 = (path: string, key: string = sandbox.apiKey) =>
      Effect3.gen(function*() {
        const response = yield* httpClient.get(`${sandbox.baseUrl}${path}`, { headers: { "X-API-KEY": key } })
        return { status: response.status, headers: { ...response.headers }, text: yield* response.text }
      })
    const steps = script<Effect3.Effect<void, unknown>>({
      ask: (path, key) => Effect3.map(send3(path, key), (reply) => void replies.push(reply)),
      // The Effect 3 edition's constructors, as an Effect 3 test writes its faults.
      inject: (fault) => sandbox.inject((Fault3.Fault[fault._tag] as (args: unknown) => Fault3.Fault)(fault)),
      adjust: (duration) => TestClock3.adjust(duration),
      askDuring: (path, duration) =>
        Effect3.gen(function*() {
          const fiber = yield* Effect3.fork(send3(path))
          yield* TestClock3.adjust(duration)
          replies.push(yield* Fiber3.join(fiber))
        })
    }, sandbox.partnerAt(4).company_name ?? "")
    for (const step of steps) yield* step
    return { replies, log: yield* sandbox.requests, stats: yield* sandbox.stats }
  }).pipe(Effect3.scoped, Effect3.provide(TestContext3.TestContext))

  it.effect("for the same script, options and clock: statuses, headers, bodies, the request log and the stats", () =>
    Effect.gen(function*() {
      const mine = yield* effect4
      const theirs = yield* Effect.promise(() => Effect3.runPromise(effect3))
      expect(mine.replies).toHaveLength(theirs.replies.length)
      mine.replies.forEach((reply, i) => expect(reply, `reply ${i}`).toStrictEqual(theirs.replies[i]))
      expect(mine.log).toStrictEqual(theirs.log)
      expect(mine.stats).toStrictEqual(theirs.stats)
      // The script meets what it is meant to: faults, refusals, the window's 429 with Retry-After, a delayed answer.
      expect(mine.replies.map((reply) => reply.status)).toStrictEqual([
        ...[200, 200, 200, 200, 200, 200, 200, 404, 200, 200],
        // The declared products: a filtered page, one by id, one not found (in the envelope).
        ...[200, 200, 200],
        ...[429, 503, 200, 200, 200, 200, 302, 503],
        // The Delay's answer, then the twelfth request to partner/get in the window, then past the limit.
        ...[200, 200, 429, 429, 429]
      ])
      expect(mine.replies.slice(10, 13).map((reply) => JSON.parse(reply.text).data)).toStrictEqual([
        [{ id: 5, active: 1 }, { id: 7, active: 1 }, { id: 9, active: 1 }],
        { id: 4, active: 0 },
        null
      ])
      expect(mine.replies[23].headers["retry-after"]).toMatch(/^\d+$/)
      expect(mine.log.some((entry) => entry.fault === "Delay" && entry.durationMillis === 1500)).toBe(true)
      expect(mine.log.some((entry) => (entry.hidden ?? 0) > 0)).toBe(true)
    }))
})
