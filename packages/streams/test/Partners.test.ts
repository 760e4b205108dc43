import { describe, expect, it } from "@effect/vitest"
import { type ErpClient, ErpConfig } from "@erp-client/client"
import { Partner } from "@erp-client/core"
import { Fault, Sandbox, Seed } from "@erp-client/sandbox"
import { Partners } from "@erp-client/streams"
import { Cause, Chunk, Duration, Effect, Exit, Logger, LogLevel, Redacted, Schema, Stream, Tracer } from "effect"
import { inspect } from "node:util"
import { SECRET_KEY, seeded, testLayer } from "./harness.js"

const collect = <A, E, R>(stream: Stream.Stream<A, E, R>) =>
  Effect.map(Stream.runCollect(stream), Chunk.toReadonlyArray)

const listCalls = (sandbox: Sandbox.Service) =>
  Effect.map(sandbox.requests, (log) => log.filter((r) => r.endpoint === "/partner/list"))

describe("Partners against the sandbox", () => {
  it.live("exports a few thousand partners exactly: every record once, in order, every field kept", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      const partners = yield* collect(Partners.stream({ pageSize: 100, concurrency: 8 }))
      expect(partners).toHaveLength(3_000)
      expect(partners).toEqual(seeded(sandbox))
      const calls = yield* listCalls(sandbox)
      // 30 full pages and the empty one that ends the list, plus pages in flight past the end: at most 8 - 1.
      expect(calls.length).toBeGreaterThanOrEqual(31)
      expect(calls.length).toBeLessThanOrEqual(31 + 8 - 1)
      for (const call of calls) {
        const params = new Map(call.query)
        expect(params.get("list_count")).toBe("100")
        expect(Number(params.get("list_offset")) % 100).toBe(0)
      }
      expect((yield* sandbox.stats).tooManyRequests).toBe(0)
    }).pipe(Effect.provide(testLayer({ partners: 3_000, latency: { base: "2 millis", jitter: "15 millis" } }))))

  it.live("a server that serves fewer than asked, and records that stray from the contract: every one, as sent", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      for (const concurrency of [1, 4, 8]) {
        for (const safe of [undefined, true] as const) {
          const partners = yield* collect(Partners.stream({ concurrency, safe }))
          expect(partners).toEqual(seeded(sandbox))
        }
      }
      // The strays are there, typed: the contract's strict schema refuses them, Partner takes them.
      const strays = seeded(sandbox).filter((p) => !Schema.is(Partner.StrictPartner)(p))
      expect(strays.length).toBeGreaterThan(20)
      const filtered = yield* collect(Partners.stream({ where: { is_customer: 1 } }))
      expect(filtered).toEqual(seeded(sandbox, (p) => Partner.isCustomer(p as Partner.Partner)))
    }).pipe(
      // Seven exports, about 100 requests: past the default 100 a window, which would make this test wait out a real
      // 30 s window for nothing it checks (the limit is tested at its real numbers in Resilience.test.ts and
      // ServerWaits.test.ts). The server and the client allow 1,000.
      Effect.provide(
        testLayer(
          {
            partners: 320,
            maxListCount: 30,
            oddRecords: { rate: 0.2 },
            rateLimit: { limit: 1_000, window: "30 seconds" }
          },
          { limiter: { limit: 1_000, window: "30 seconds" } }
        )
      )
    ))

  it.live("filters customers with list_condition[is_customer]=1", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      const customers = yield* collect(Partners.stream({ where: { is_customer: 1 }, pageSize: 50, concurrency: 4 }))
      const expected = seeded(sandbox, (p) => p.is_customer === 1)
      expect(customers.length).toBeGreaterThan(500)
      expect(customers).toEqual(expected)
      expect(customers.every(Partner.isCustomer)).toBe(true)
      const calls = yield* listCalls(sandbox)
      expect(calls.every((c) => c.query.some(([k, v]) => k === "list_condition[is_customer]" && v === "1"))).toBe(true)
    }).pipe(Effect.provide(testLayer({ partners: 1_500 }))))

  it.live("resumes from a start offset without repeating earlier records", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      const rest = yield* collect(Partners.stream({ pageSize: 40, startOffset: 200 }))
      expect(rest).toEqual(seeded(sandbox).slice(200))
    }).pipe(Effect.provide(testLayer({ partners: 450 }))))

  it.live("gets a partner by id and by every awkward company name", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      expect(yield* Partners.get(42)).toEqual(sandbox.partnerAt(41))
      const names = Seed.awkwardNames(sandbox.seed, sandbox.partnerCount)
      expect(names.length).toBeGreaterThan(20)
      // The names hold &, +, =, %, #, [ ], quotes and accents: each must come back as exactly that partner.
      expect(names.some((n) => /[&+=%]/.test(n))).toBe(true)
      const found = yield* Effect.forEach(names, (name) => Partners.getByCompanyName(name), { concurrency: 8 })
      expect(found.map((p) => p.company_name)).toEqual(names)
    }).pipe(Effect.provide(testLayer({ partners: 120, rateLimit: { limit: 1_000, window: "30 seconds" } }))))

  it.live("Unauthorized and NotFound are typed failures", () =>
    Effect.gen(function*() {
      const notFound = yield* Effect.flip(Partners.get(999_999))
      expect(notFound).toMatchObject({ _tag: "NotFound", endpoint: "partner/get", selector: "id=999999" })
      const byName = yield* Effect.flip(Partners.getByCompanyName("No Such & Company"))
      expect(byName._tag).toBe("NotFound")
      const sandbox = yield* Sandbox.Sandbox
      yield* sandbox.revokeKey(SECRET_KEY)
      const unauthorized = yield* Effect.flip(Stream.runDrain(Partners.stream()))
      expect(unauthorized).toMatchObject({ _tag: "Unauthorized", endpoint: "partner/list" })
      const caught = yield* Partners.get(1).pipe(
        Effect.as("found"),
        Effect.catchTag("Unauthorized", () => Effect.succeed("caught by tag"))
      )
      expect(caught).toBe("caught by tag")
    }).pipe(Effect.provide(testLayer({ partners: 10 }))))

  it.live("keeps to the server's strict sliding window: no 429 while paging past the limit", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      const partners = yield* collect(Partners.stream({ pageSize: 10, concurrency: 8 }))
      expect(partners).toEqual(seeded(sandbox))
      const stats = yield* sandbox.stats
      expect(stats.tooManyRequests).toBe(0)
      expect(stats.byEndpoint["/partner/list"]).toBeGreaterThan(25)
      expect(stats.maxObservedInWindow["/partner/list"]).toBeLessThanOrEqual(10)
    }).pipe(
      Effect.provide(
        testLayer(
          { partners: 250, rateLimit: { limit: 10, window: "1 second", resetUnit: "epoch-millis" } },
          { limiter: { limit: 10, window: "1 second" } }
        )
      )
    ))
})

describe("faults", () => {
  it.live("survives a burst of 429s, waiting for the server's reset", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      yield* sandbox.inject(Fault.Fault.TooManyRequests({ resetAfter: "200 millis", resetUnit: "seconds" }), {
        times: 4,
        endpoint: "/partner/list"
      })
      yield* sandbox.inject(Fault.Fault.TooManyRequests({ headers: false }), { times: 2, endpoint: "/partner/list" })
      const partners = yield* collect(Partners.stream({ pageSize: 50, concurrency: 4 }))
      expect(partners).toEqual(seeded(sandbox))
      expect((yield* sandbox.stats).tooManyRequests).toBe(6)
    }).pipe(
      // A 429 without headers is backed off by the window the call was admitted under: a 3 s window (the client told
      // it) rather than the default 30 s keeps those waits to seconds of real time.
      Effect.provide(
        testLayer({ partners: 600, rateLimit: { limit: 100, window: "3 seconds" } }, {
          limiter: { limit: 100, window: "3 seconds" }
        })
      )
    ))

  it.live("survives dropped connections, 5xx and a hung response mid-stream with no duplicate or gap", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      const list = { endpoint: "/partner/list" }
      yield* sandbox.inject(Fault.Fault.Delay({ duration: "10 millis" }), { ...list, times: 3 })
      yield* sandbox.inject(Fault.Fault.DropMidBody({ fraction: 0.5 }), { ...list, times: 1 })
      yield* sandbox.inject(Fault.Fault.DropBeforeResponse(), { ...list, times: 1 })
      yield* sandbox.inject(Fault.Fault.Status({ status: 503 }), { ...list, times: 1 })
      yield* sandbox.inject(Fault.Fault.Hang(), { ...list, times: 1 })
      const partners = yield* collect(Partners.stream({ pageSize: 25, concurrency: 4 }))
      const ids = partners.map((p) => p.id)
      expect(new Set(ids).size).toBe(ids.length)
      expect(partners).toEqual(seeded(sandbox))
      expect((yield* sandbox.stats).faultsServed).toBe(7)
    }).pipe(Effect.provide(testLayer({ partners: 500 }, { timeout: "500 millis", retries: 3 }))))

  it.live("gives up on transient failures after the bounded retries, with a typed error", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      yield* sandbox.inject(Fault.Fault.Status({ status: 502 }), { times: Infinity })
      const error = yield* Effect.flip(Partners.get(1))
      expect(error).toMatchObject({ _tag: "HttpStatusError", status: 502, endpoint: "partner/get" })
      // One try and two retries.
      expect((yield* sandbox.stats).faultsServed).toBe(3)
    }).pipe(Effect.provide(testLayer({ partners: 5 }, { retries: 2 }))))

  it.live("a 429 that outlasts the budget becomes RateLimited", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      yield* sandbox.inject(Fault.Fault.TooManyRequests({ resetAfter: "300 millis", resetUnit: "epoch-millis" }), {
        times: Infinity
      })
      const error = yield* Effect.flip(Partners.get(1))
      expect(error._tag).toBe("RateLimited")
      if (error._tag === "RateLimited") {
        expect(error.limit).toBe(100)
        // The waits it counted are the server's resets, within the budget (on a starved machine each starts later
        // and is shorter: its sum is no fixed figure).
        expect(error.waitedMillis).toBeGreaterThan(0)
        expect(error.waitedMillis).toBeLessThanOrEqual(1_000)
      }
      // By the server's clock, each attempt came after the reset the 429 before it gave: 300 ms or more apart.
      const arrivals = (yield* sandbox.requests).map((entry) => entry.timeMillis)
      expect(arrivals.length).toBeGreaterThanOrEqual(2)
      for (let i = 1; i < arrivals.length; i++) expect(arrivals[i]! - arrivals[i - 1]!).toBeGreaterThanOrEqual(299)
    }).pipe(Effect.provide(testLayer({ partners: 5 }, { rateLimitBudget: "1 second" }))))

  it.live("a malformed body, or one that is not the envelope, is retried; every time: a DecodeError with its attempts", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      // Once (a body cut short by a proxy, a JSON error page): a GET tries again and gets the page.
      yield* sandbox.inject(Fault.Fault.MalformedJson(), { endpoint: "/partner/list" })
      yield* sandbox.inject(Fault.Fault.NotEnvelope({}), { endpoint: "/partner/get" })
      expect(yield* Stream.runCollect(Partners.stream())).toHaveLength(5)
      expect((yield* Partners.get(1)).id).toBe(1)
      // Every time: after its retries (2 here), the error names the endpoint, the path and the attempts.
      yield* sandbox.inject(Fault.Fault.MalformedJson(), { endpoint: "/partner/list", times: Infinity })
      const malformed = yield* Effect.flip(Stream.runDrain(Partners.stream()))
      expect(malformed).toMatchObject({ _tag: "DecodeError", endpoint: "partner/list", path: "", attempts: 3 })
      expect(malformed.message).toContain("(3 attempts over")
      yield* sandbox.clearFaults
      yield* sandbox.inject(Fault.Fault.NotEnvelope({}), { endpoint: "/partner/get", times: Infinity })
      const notEnvelope = yield* Effect.flip(Partners.get(1))
      expect(notEnvelope).toMatchObject({ _tag: "DecodeError", endpoint: "partner/get", path: "result", attempts: 3 })
      yield* sandbox.clearFaults
      yield* sandbox.inject(Fault.Fault.UnknownCode({ code: 7, message: "maintenance" }), { endpoint: "/partner/get" })
      const unknownCode = yield* Effect.flip(Partners.get(1))
      expect(unknownCode).toMatchObject({ _tag: "ApiError", code: 7, serverMessage: "maintenance" })
    }).pipe(Effect.provide(testLayer({ partners: 5 }, { retries: 2 }))))
})

describe("the API key never leaks", () => {
  it.live("not in errors, their JSON, inspect or Cause.pretty, nor in any log line", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      const lines: Array<string> = []
      const capture = Logger.replace(
        Logger.defaultLogger,
        Logger.make(({ message, cause }) => lines.push(inspect(message, { depth: 10 }), Cause.pretty(cause)))
      )
      yield* sandbox.inject(Fault.Fault.Status({ status: 500 }), { times: 2 })
      yield* sandbox.inject(Fault.Fault.DropBeforeResponse(), { times: 1 })
      const outputs: Array<string> = []
      const record = (exit: Exit.Exit<unknown, unknown>) => {
        if (Exit.isFailure(exit)) {
          outputs.push(Cause.pretty(exit.cause), inspect(exit.cause, { depth: 10 }), JSON.stringify(exit.cause))
          const failure = Cause.failureOption(exit.cause)
          if (failure._tag === "Some") {
            outputs.push(String(failure.value), JSON.stringify(failure.value), inspect(failure.value, { depth: 10 }))
          }
        }
      }
      const config = yield* ErpConfig.resolve({ baseUrl: sandbox.baseUrl, apiKey: Redacted.make(SECRET_KEY) }, {
        window: Duration.seconds(30)
      })
      outputs.push(String(config.apiKey), JSON.stringify(config), inspect(config, { depth: 10 }))
      const run = <A, E>(effect: Effect.Effect<A, E, ErpClient.ErpClient>) =>
        Effect.exit(effect).pipe(
          Effect.tap((exit) => Effect.logError("call ended", exit)),
          Effect.tap(record),
          Effect.provide(Logger.minimumLogLevel(LogLevel.All)),
          Effect.provide(capture)
        )
      yield* run(Partners.get(1))
      yield* run(Partners.get(999_999))
      yield* sandbox.inject(Fault.Fault.MalformedJson(), { times: 1 })
      yield* run(Partners.get(1))
      yield* sandbox.revokeKey(SECRET_KEY)
      yield* run(Stream.runDrain(Partners.stream()))
      const log = yield* sandbox.requests
      outputs.push(JSON.stringify(log))
      expect(outputs.length).toBeGreaterThan(10)
      for (const text of [...outputs, ...lines]) expect(text).not.toContain(SECRET_KEY)
    }).pipe(Effect.provide(testLayer({ partners: 5 }, { retries: 2 }))))

  it.live("not in span names, attributes, events or end states, HttpClient's own spans included", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      const spans: Array<{ name: string; attributes: Map<string, unknown>; events: Array<unknown>; exit?: unknown }> =
        []
      let ids = 0
      const tracer = Tracer.make({
        span: (name, parent, context, links, startTime, kind) => {
          const record = {
            name,
            attributes: new Map<string, unknown>(),
            events: [] as Array<unknown>,
            exit: undefined as unknown
          }
          spans.push(record)
          const id = String(++ids)
          const span: Tracer.Span = {
            _tag: "Span",
            name,
            spanId: id,
            traceId: "trace",
            parent,
            context,
            status: { _tag: "Started", startTime },
            attributes: record.attributes,
            links,
            sampled: true,
            kind,
            end: (_endTime, exit) => {
              record.exit = exit
            },
            attribute: (key, value) => {
              record.attributes.set(key, value)
            },
            event: (name, _time, attributes) => {
              record.events.push({ name, attributes })
            },
            addLinks: () => {}
          }
          return span
        },
        context: (f) => f()
      })
      yield* sandbox.inject(Fault.Fault.Status({ status: 503 }), { times: 1 })
      yield* sandbox.inject(Fault.Fault.TooManyRequests({ resetAfter: "100 millis", resetUnit: "epoch-millis" }), {
        times: 1
      })
      yield* Stream.runDrain(Partners.stream({ pageSize: 2 })).pipe(Effect.withTracer(tracer))
      yield* Effect.exit(Partners.get(999_999)).pipe(Effect.withTracer(tracer))
      expect(spans.map((s) => s.name)).toContain("ErpClient.list")
      // One span per attempt, named by the HTTP conventions: the 503's and the 429's too.
      expect(spans.filter((s) => s.name === "GET partner/list").length).toBeGreaterThanOrEqual(5)
      for (const span of spans) {
        const text = [
          span.name,
          inspect([...span.attributes], { depth: 10 }),
          JSON.stringify([...span.attributes]),
          inspect(span.events, { depth: 10 }),
          // What an exporter records of the end: success, or the failure's cause.
          Exit.isExit(span.exit) && Exit.isFailure(span.exit) ? Cause.pretty(span.exit.cause) : "success"
        ].join("\n")
        expect(text).not.toContain(SECRET_KEY)
      }
    }).pipe(Effect.provide(testLayer({ partners: 5 }, { retries: 2 }))))
})
