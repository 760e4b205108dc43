import { describe, expect, it } from "@effect/vitest"
import { ErpClient, ErpRateLimiter } from "@erp-client/effect4-client"
import { Cause, Deferred, Effect, Exit, Fiber, Layer, Metric, Redacted, Schema, Tracer } from "effect"
import { HttpClient, HttpClientError, type HttpClientRequest, HttpClientResponse } from "effect/http"
import { TestClock } from "effect/testing"

// How the client's spans end and what its metrics count, as the Effect 3 edition's do (the names, attributes and
// outcomes are the kernel's Telemetry): an interruption is an error that did not complete; the client's own
// cancellation is none; an error the ERP reports in an HTTP 200 is the call's, not the attempt's.

const ok = (data: unknown) => JSON.stringify({ result: { code: 1, message: null }, data })
const refused = (code: number, message: string) => JSON.stringify({ result: { code, message }, data: null })

/** A tracer that keeps every span (Effect 4's own `NativeSpan`: its attributes, parent and how it ended). */
const recorder = () => {
  const spans: Array<Tracer.NativeSpan> = []
  const tracer = Tracer.make({
    span(options) {
      const span = new Tracer.NativeSpan(options)
      spans.push(span)
      return span
    }
  })
  const exitOf = (span: Tracer.NativeSpan) => span.status._tag === "Ended" ? span.status.exit : undefined
  const parentOf = (span: Tracer.NativeSpan) => span.parent._tag === "Some" ? span.parent.value.spanId : undefined
  return { spans, tracer, exitOf, parentOf }
}

/** A fake ERP: `respond` answers each request (it may never answer); `seen(n)` settles on the n-th request. */
const fakeErp = (
  respond: (request: HttpClientRequest.HttpClientRequest, n: number) => Effect.Effect<Response, string>
) => {
  let count = 0
  const arrivals = new Map<number, Deferred.Deferred<void>>()
  const arrival = (n: number) => {
    let deferred = arrivals.get(n)
    if (deferred === undefined) arrivals.set(n, deferred = Deferred.makeUnsafe<void>())
    return deferred
  }
  const layer = Layer.succeed(
    HttpClient.HttpClient,
    HttpClient.make((request) =>
      Effect.suspend(() => {
        const n = ++count
        return Deferred.succeed(arrival(n), undefined).pipe(
          Effect.andThen(respond(request, n)),
          Effect.map((response) => HttpClientResponse.fromWeb(request, response)),
          Effect.mapError((description) =>
            new HttpClientError.HttpClientError({
              reason: new HttpClientError.TransportError({ request, description })
            })
          )
        )
      })
    )
  )
  return { layer, seen: (n: number) => Deferred.await(arrival(n)) }
}

const clientOn = (fake: ReturnType<typeof fakeErp>, limiter?: ErpRateLimiter.Options) =>
  ErpClient.layer({ baseUrl: "https://erp.example.com/api/", apiKey: Redacted.make("sk-telemetry-test") }).pipe(
    Layer.provide(ErpRateLimiter.layer(limiter)),
    Layer.provide(fake.layer)
  )

/** The points of the metric `name` whose attributes include `where`, each with its attributes and state. */
const points = (name: string, where: Record<string, string>) =>
  Effect.map(Metric.snapshot, (snapshots) =>
    snapshots.flatMap((snapshot) => {
      if (snapshot.id !== name) return []
      const tags = { ...snapshot.attributes } as Record<string, string>
      return Object.entries(where).every(([key, value]) => tags[key] === value)
        ? [{ tags, state: snapshot.state as unknown as { count: number; sum?: number } }]
        : []
    }))

const never = () => Effect.never

describe("how the client's spans end, and what its metrics count", () => {
  it.effect("an attempt's span by the HTTP conventions, under the call's", () => {
    const fake = fakeErp(() => Effect.succeed(new Response(ok(1))))
    const { parentOf, spans, tracer } = recorder()
    return Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      yield* client.get("telemetry/shape", Schema.Number, { params: [["id", "7"], ["api_token", "t0k3n"]] }).pipe(
        Effect.withTracer(tracer)
      )
      const call = spans.find((s) => s.name === "ErpClient.get")!
      const attempt = spans.find((s) => s.name === "GET telemetry/shape")!
      expect(parentOf(attempt)).toBe(call.spanId)
      expect(attempt.kind).toBe("client")
      expect(Object.fromEntries(attempt.attributes)).toEqual({
        "http.request.method": "GET",
        "erp.endpoint": "telemetry/shape",
        "server.address": "erp.example.com",
        "server.port": 443,
        "url.full": "https://erp.example.com/api/telemetry/shape?id=7&api_token=REDACTED",
        "http.response.status_code": 200
      })
      expect(call.attributes.get("erp.result.code")).toBe(1)
      // The platform's own span is off: one span per attempt.
      expect(spans.map((s) => s.name)).toEqual(["ErpClient.get", "GET telemetry/shape"])
    }).pipe(Effect.provide(clientOn(fake)))
  })

  it.effect("headers on the attempt's span only when asked for, and never the key", () => {
    const fake = fakeErp(() => Effect.succeed(new Response(ok(1), { headers: { "x-ratelimit-remaining": "7" } })))
    const { spans, tracer } = recorder()
    return Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      yield* client.get("telemetry/headers", Schema.Number).pipe(Effect.withTracer(tracer))
      const attempt = spans.find((s) => s.name === "GET telemetry/headers")!
      expect(attempt.attributes.get("http.request.header.accept")).toEqual(["application/json"])
      expect(attempt.attributes.get("http.response.header.x-ratelimit-remaining")).toEqual(["7"])
      expect([...attempt.attributes.keys()].filter((k) => k.includes("api-key"))).toEqual([])
      expect(JSON.stringify([...attempt.attributes.values()])).not.toContain("sk-telemetry-test")
    }).pipe(
      Effect.provide(
        ErpClient.layer({
          baseUrl: "https://erp.example.com/api/",
          apiKey: Redacted.make("sk-telemetry-test"),
          spanHeaders: { request: ["X-API-KEY", "Accept"], response: ["X-RateLimit-Remaining"] }
        }).pipe(Layer.provide(ErpRateLimiter.layer()), Layer.provide(fake.layer))
      )
    )
  })

  it.effect("an attempt interrupted (Ctrl-C): ERROR spans with error.type interrupted, its duration recorded", () => {
    const fake = fakeErp(never)
    const { exitOf, parentOf, spans, tracer } = recorder()
    return Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      const call = yield* Effect.forkChild(
        client.get("telemetry/interrupted", Schema.Unknown).pipe(Effect.withTracer(tracer))
      )
      yield* fake.seen(1)
      yield* TestClock.adjust("250 millis")
      yield* Fiber.interrupt(call)

      const get = spans.find((s) => s.name === "ErpClient.get")!
      const attempt = spans.find((s) => s.name === "GET telemetry/interrupted")!
      expect(parentOf(attempt)).toBe(get.spanId)
      for (const span of [get, attempt]) {
        expect(Exit.hasInterrupts(exitOf(span)!), span.name).toBe(true)
        expect(span.attributes.get("error.type"), span.name).toBe("interrupted")
        expect(span.attributes.has("erp.cancelled"), span.name).toBe(false)
      }
      const durations = yield* points("http.client.request.duration", { "erp.endpoint": "telemetry/interrupted" })
      expect(durations.map((p) => p.tags)).toEqual([{
        unit: "s",
        "http.request.method": "GET",
        "server.address": "erp.example.com",
        "server.port": "443",
        "erp.endpoint": "telemetry/interrupted",
        "error.type": "interrupted"
      }])
      expect(durations[0]!.state).toMatchObject({ count: 1, sum: 0.25 })
      const requests = yield* points("erp.client.requests", { "erp.endpoint": "telemetry/interrupted" })
      expect(requests.map((p) => [p.tags["erp.outcome"], p.state.count])).toEqual([["interrupted", 1]])
    }).pipe(Effect.provide(clientOn(fake)))
  })

  it.effect("an attempt the client cancelled (ErpClient.cancel): no error, marked, its duration recorded", () => {
    const fake = fakeErp(never)
    const { exitOf, spans, tracer } = recorder()
    return Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      const call = yield* Effect.forkChild(
        client.list("telemetry/cancelled", Schema.Unknown, { offset: 40, count: 20 }).pipe(Effect.withTracer(tracer))
      )
      yield* fake.seen(1)
      yield* TestClock.adjust("100 millis")
      yield* ErpClient.cancel(call, "list-ended")
      const exit = yield* Fiber.await(call)
      expect(Exit.isFailure(exit) && ErpClient.cancelReason(exit.cause)).toBe("list-ended")
      for (const name of ["ErpClient.list", "GET telemetry/cancelled"]) {
        const span = spans.find((s) => s.name === name)!
        expect(exitOf(span), name).toEqual(Exit.void)
        expect(span.attributes.get("erp.cancelled"), name).toBe(true)
        expect(span.attributes.get("erp.cancel_reason"), name).toBe("list-ended")
        expect(span.attributes.has("error.type"), name).toBe(false)
      }
      const durations = yield* points("http.client.request.duration", { "erp.endpoint": "telemetry/cancelled" })
      expect(durations.map((p) => [p.tags["error.type"], p.state.count, p.state.sum])).toEqual([["cancelled", 1, 0.1]])
      const requests = yield* points("erp.client.requests", { "erp.endpoint": "telemetry/cancelled" })
      expect(requests.map((p) => [p.tags["erp.outcome"], p.state.count])).toEqual([["cancelled", 1]])
    }).pipe(Effect.provide(clientOn(fake)))
  })

  it.effect("an interruption by anyone else, even beside a cancellation, is no cancellation", () =>
    Effect.gen(function*() {
      const interrupted = yield* Effect.forkChild(Effect.never)
      yield* Fiber.interrupt(interrupted)
      const byAnother = yield* Fiber.await(interrupted)
      expect(Exit.isFailure(byAnother) && ErpClient.cancelReason(byAnother.cause)).toBeUndefined()
      const cancelled = yield* Effect.forkChild(Effect.never)
      yield* ErpClient.cancel(cancelled, "paging-moved")
      const exit = yield* Fiber.await(cancelled)
      if (!Exit.isFailure(exit)) throw new Error("the cancelled fiber succeeded")
      expect(ErpClient.cancelReason(exit.cause)).toBe("paging-moved")
      expect(ErpClient.cancelReason(Cause.combine(exit.cause, Cause.interrupt(7)))).toBeUndefined()
      expect(ErpClient.cancelReason(Cause.combine(exit.cause, Cause.fail("boom")))).toBeUndefined()
    }))

  it.effect("NotFound, Unauthorized and other codes in an HTTP 200: the call's error, counted; the attempt is OK", () => {
    const fake = fakeErp((request) =>
      Effect.succeed(
        new Response(
          request.url.includes("unauthorized")
            ? refused(0, "Unauthorized")
            : request.url.includes("other")
            ? refused(7, "Quota of the day spent")
            : refused(0, "Not found")
        )
      )
    )
    const { exitOf, spans, tracer } = recorder()
    return Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      const errors = yield* Effect.forEach(
        ["telemetry/get", "telemetry/get", "telemetry/unauthorized", "telemetry/other"],
        (endpoint) => Effect.flip(client.get(endpoint, Schema.Unknown)).pipe(Effect.withTracer(tracer))
      )
      expect(errors.map((e) => e._tag)).toEqual(["NotFound", "NotFound", "Unauthorized", "ApiError"])
      const calls = spans.filter((s) => s.name === "ErpClient.get")
      expect(calls.map((s) => [Exit.isFailure(exitOf(s)!), s.attributes.get("error.type")])).toEqual([
        [true, "NotFound"],
        [true, "NotFound"],
        [true, "Unauthorized"],
        [true, "ApiError"]
      ])
      for (const attempt of spans.filter((s) => s.name.startsWith("GET telemetry/"))) {
        expect(Exit.isSuccess(exitOf(attempt)!)).toBe(true)
        expect(attempt.attributes.get("http.response.status_code")).toBe(200)
        expect(attempt.attributes.has("error.type")).toBe(false)
      }
      const counted = (endpoint: string) =>
        Effect.map(
          points("erp.client.api_errors", { "erp.endpoint": endpoint }),
          (found) => found.map((p) => [p.tags["erp.error.type"], p.tags["erp.result.code"], p.state.count])
        )
      expect(yield* counted("telemetry/get")).toEqual([["NotFound", "0", 2]])
      expect(yield* counted("telemetry/unauthorized")).toEqual([["Unauthorized", "0", 1]])
      expect(yield* counted("telemetry/other")).toEqual([["ApiError", "7", 1]])
      const durations = yield* points("http.client.request.duration", { "erp.endpoint": "telemetry/get" })
      expect(durations.map((p) => [p.tags["http.response.status_code"], p.tags["error.type"]])).toEqual([
        ["200", undefined]
      ])
    }).pipe(Effect.provide(clientOn(fake)))
  })

  it.effect("a failure without an answer, and a 503 retried: error.type on the spans, resend_count on the retry", () => {
    const fake = fakeErp((request, n) =>
      request.method === "POST"
        ? Effect.fail("connection reset")
        : Effect.succeed(n === 2 ? new Response("", { status: 503 }) : new Response(ok(1)))
    )
    const { exitOf, spans, tracer } = recorder()
    return Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      const error = yield* Effect.flip(client.post("telemetry/post", Schema.Unknown).pipe(Effect.withTracer(tracer)))
      expect(error._tag).toBe("TransportError")
      expect(spans.map((s) => [s.name, Exit.isFailure(exitOf(s)!), s.attributes.get("error.type")])).toEqual([
        ["ErpClient.post", true, "TransportError"],
        ["POST telemetry/post", true, "TransportError"]
      ])
      const got = yield* Effect.forkChild(client.get("telemetry/retry", Schema.Number).pipe(Effect.withTracer(tracer)))
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(got)
      const attempts = spans.filter((s) => s.name === "GET telemetry/retry")
      expect(attempts.map((s) => [s.attributes.get("error.type"), s.attributes.get("http.request.resend_count")]))
        .toEqual([["503", undefined], [undefined, 1]])
      const retries = yield* points("erp.client.retries", {})
      expect(retries.map((p) => [p.tags.unit, p.state.count])).toEqual([["{retry}", 1]])
    }).pipe(
      Effect.provide(clientOn(fake)),
      // Counted in a registry of its own: the process's has the retries of the worker's other test files too.
      Effect.provideService(Metric.MetricRegistry, new Map())
    )
  })

  it.effect("each request's wait for the rate limit, by reason: one observation per waiting attempt", () => {
    const fake = fakeErp((_, n) =>
      Effect.succeed(
        n === 1 ? new Response("", { status: 429, headers: { "x-ratelimit-reset": "3" } }) : new Response(ok(1))
      )
    )
    return Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      const get = client.get("telemetry/waits", Schema.Number)
      const first = yield* Effect.forkChild(get)
      yield* TestClock.adjust("5 seconds")
      yield* Fiber.join(first)
      const others = yield* Effect.forkChild(Effect.all([get, get, get, get], { concurrency: "unbounded" }))
      yield* TestClock.adjust("30 seconds")
      yield* Fiber.join(others)
      const waits = yield* points("erp.client.rate_limit.wait.duration", { "erp.endpoint": "telemetry/waits" })
      const byReason = Object.fromEntries(waits.map((p) => [p.tags["erp.rate_limit.reason"], p.state]))
      expect(byReason["server-pause"]!.count).toBe(1)
      expect(byReason["server-pause"]!.sum).toBeGreaterThanOrEqual(3)
      expect(byReason["server-pause"]!.sum).toBeLessThanOrEqual(5)
      expect(byReason["client-limit"]!.count).toBe(4)
      expect(byReason["client-limit"]!.sum).toBeGreaterThan(30)
      const total = yield* points("erp.client.rate_limit.wait", { "erp.endpoint": "telemetry/waits" })
      expect(total.map((p) => p.state.count)).toEqual([6])
    }).pipe(Effect.provide(clientOn(fake, { limit: 2, window: "10 seconds", margin: "200 millis" })))
  })
})
