import { HttpClient, HttpClientError, HttpClientResponse } from "@effect/platform"
import type { HttpClientRequest } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { ErpClient, ErpRateLimiter } from "@erp-client/client"
import {
  Cause,
  Deferred,
  Effect,
  Exit,
  Fiber,
  FiberId,
  Layer,
  Metric,
  Redacted,
  Schema,
  TestClock,
  Tracer
} from "effect"

// How the client's spans end and what its metrics count, read through a recording tracer and the metric registry:
// an interruption is an error that did not complete; the client's own cancellation is none; an error the ERP reports
// in an HTTP 200 is the call's, not the attempt's.

const ok = (data: unknown) => JSON.stringify({ result: { code: 1, message: null }, data })
const refused = (code: number, message: string) => JSON.stringify({ result: { code, message }, data: null })

interface Recorded {
  readonly name: string
  readonly attributes: Map<string, unknown>
  readonly parent: string | undefined
  readonly id: string
  exit: Exit.Exit<unknown, unknown> | undefined
}

/** A tracer that keeps every span, its attributes and the exit it ended with (the first end only, as exporters do). */
const recorder = () => {
  const spans: Array<Recorded> = []
  let ids = 0
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind) => {
      const id = String(++ids)
      const record: Recorded = {
        name,
        attributes: new Map(),
        parent: parent._tag === "Some" ? parent.value.spanId : undefined,
        id,
        exit: undefined
      }
      spans.push(record)
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
        end: (endTime, exit) => {
          if (record.exit !== undefined) throw new Error(`${name} ended twice`)
          Object.assign(span, { status: { _tag: "Ended", startTime, endTime, exit } })
          record.exit = exit
        },
        attribute: (key, value) => {
          record.attributes.set(key, value)
        },
        event: () => {},
        addLinks: () => {}
      }
      return span
    },
    context: (f) => f()
  })
  return { spans, tracer }
}

/** A fake ERP: `respond` answers each request (an Effect: it may never answer); `seen` settles on the n-th request. */
const fakeErp = (
  respond: (request: HttpClientRequest.HttpClientRequest, n: number) => Effect.Effect<Response, string>
) => {
  let count = 0
  const arrivals = new Map<number, Deferred.Deferred<void>>()
  const arrival = (n: number) => {
    let deferred = arrivals.get(n)
    if (deferred === undefined) arrivals.set(n, deferred = Deferred.unsafeMake<void>(FiberId.none))
    return deferred
  }
  const layer = Layer.succeed(
    HttpClient.HttpClient,
    HttpClient.make((request) =>
      Effect.suspend(() => {
        const n = ++count
        return Deferred.succeed(arrival(n), undefined).pipe(
          Effect.zipRight(respond(request, n)),
          Effect.map((response) => HttpClientResponse.fromWeb(request, response)),
          Effect.mapError((description) =>
            new HttpClientError.RequestError({ request, reason: "Transport", description })
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

/** The points of the metric `name` whose tags include `where`, each with its tags and state. */
const points = (name: string, where: Record<string, string>) =>
  Effect.map(Metric.snapshot, (pairs) =>
    pairs.flatMap((pair) => {
      if (pair.metricKey.name !== name) return []
      const tags = Object.fromEntries(pair.metricKey.tags.map((tag) => [tag.key, tag.value]))
      return Object.entries(where).every(([key, value]) => tags[key] === value)
        ? [{ tags, state: pair.metricState as unknown as { count: number; sum?: number } }]
        : []
    }))

const tagsOf = (found: ReadonlyArray<{ readonly tags: Record<string, string> }>) =>
  found.map(({ tags }) => {
    const { unit: _unit, ...rest } = tags
    return rest
  })

const never = () => Effect.never

describe("how the client's spans end, and what its metrics count", () => {
  it.effect("an attempt interrupted (Ctrl-C): ERROR spans with error.type interrupted, its duration recorded", () => {
    const fake = fakeErp(never)
    const { spans, tracer } = recorder()
    return Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      const call = yield* Effect.fork(
        client.get("telemetry/interrupted", Schema.Unknown).pipe(Effect.withTracer(tracer))
      )
      yield* fake.seen(1)
      yield* TestClock.adjust("250 millis")
      yield* Fiber.interrupt(call)

      const get = spans.find((s) => s.name === "ErpClient.get")!
      const attempt = spans.find((s) => s.name === "GET telemetry/interrupted")!
      expect(attempt.parent).toBe(get.id)
      for (const span of [get, attempt]) {
        expect(Exit.isInterrupted(span.exit!), span.name).toBe(true)
        expect(span.attributes.get("error.type"), span.name).toBe("interrupted")
        expect(span.attributes.has("erp.cancelled"), span.name).toBe(false)
      }
      const endpoint = { "erp.endpoint": "telemetry/interrupted" }
      const durations = yield* points("http.client.request.duration", endpoint)
      expect(tagsOf(durations)).toEqual([{
        "http.request.method": "GET",
        "server.address": "erp.example.com",
        "server.port": "443",
        "erp.endpoint": "telemetry/interrupted",
        "error.type": "interrupted"
      }])
      expect(durations[0]!.state).toMatchObject({ count: 1, sum: 0.25 })
      const requests = yield* points("erp.client.requests", endpoint)
      expect(requests.map((p) => [p.tags["erp.outcome"], p.state.count])).toEqual([["interrupted", 1]])
    }).pipe(Effect.provide(clientOn(fake)))
  })

  it.effect("an attempt the client cancelled (ErpClient.cancel): no error, marked, its duration recorded", () => {
    const fake = fakeErp(never)
    const { spans, tracer } = recorder()
    return Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      const call = yield* Effect.fork(
        client.list("telemetry/cancelled", Schema.Unknown, { offset: 40, count: 20 }).pipe(
          Effect.withTracer(tracer)
        )
      )
      yield* fake.seen(1)
      yield* TestClock.adjust("100 millis")
      yield* ErpClient.cancel(call, "list-ended")
      const exit = yield* Fiber.await(call)
      expect(Exit.isFailure(exit) && ErpClient.cancelReason(exit.cause)).toBe("list-ended")

      const list = spans.find((s) => s.name === "ErpClient.list")!
      const attempt = spans.find((s) => s.name === "GET telemetry/cancelled")!
      for (const span of [list, attempt]) {
        expect(span.exit, span.name).toEqual(Exit.void)
        expect(span.attributes.get("erp.cancelled"), span.name).toBe(true)
        expect(span.attributes.get("erp.cancel_reason"), span.name).toBe("list-ended")
        expect(span.attributes.has("error.type"), span.name).toBe(false)
      }
      const endpoint = { "erp.endpoint": "telemetry/cancelled" }
      const durations = yield* points("http.client.request.duration", endpoint)
      expect(durations.map((p) => [p.tags["error.type"], p.state.count, p.state.sum])).toEqual([["cancelled", 1, 0.1]])
      const requests = yield* points("erp.client.requests", endpoint)
      expect(requests.map((p) => [p.tags["erp.outcome"], p.state.count])).toEqual([["cancelled", 1]])
    }).pipe(Effect.provide(clientOn(fake)))
  })

  it.effect("an interruption by anyone else, even beside a cancellation, is no cancellation", () =>
    Effect.gen(function*() {
      const interrupted = yield* Effect.fork(Effect.never)
      const byAnother = yield* Fiber.interrupt(interrupted)
      expect(Exit.isFailure(byAnother) && ErpClient.cancelReason(byAnother.cause)).toBeUndefined()
      const cancelled = yield* Effect.fork(Effect.never)
      yield* ErpClient.cancel(cancelled, "paging-moved")
      const exit = yield* Fiber.await(cancelled)
      if (!Exit.isFailure(exit)) throw new Error("the cancelled fiber succeeded")
      expect(ErpClient.cancelReason(exit.cause)).toBe("paging-moved")
      expect(ErpClient.cancelReason(Cause.parallel(exit.cause, Cause.interrupt(FiberId.make(7, 0))))).toBeUndefined()
      expect(ErpClient.cancelReason(Cause.sequential(exit.cause, Cause.fail("boom")))).toBeUndefined()
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
    const { spans, tracer } = recorder()
    return Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      const before = yield* points("erp.client.api_errors", { "erp.endpoint": "telemetry/get" })
      const errors = yield* Effect.forEach(
        ["telemetry/get", "telemetry/get", "telemetry/unauthorized", "telemetry/other"],
        (endpoint) => Effect.flip(client.get(endpoint, Schema.Unknown)).pipe(Effect.withTracer(tracer))
      )
      expect(errors.map((e) => e._tag)).toEqual(["NotFound", "NotFound", "Unauthorized", "ApiError"])

      const calls = spans.filter((s) => s.name === "ErpClient.get")
      expect(calls.map((s) => [Exit.isFailure(s.exit!), s.attributes.get("error.type")])).toEqual([
        [true, "NotFound"],
        [true, "NotFound"],
        [true, "Unauthorized"],
        [true, "ApiError"]
      ])
      const attempts = spans.filter((s) => s.name.startsWith("GET telemetry/"))
      expect(attempts).toHaveLength(4)
      for (const attempt of attempts) {
        expect(attempt.exit).toMatchObject({ _tag: "Success" })
        expect(attempt.attributes.get("http.response.status_code")).toBe(200)
        expect(attempt.attributes.has("error.type")).toBe(false)
      }

      const counted = (endpoint: string) =>
        Effect.map(
          points("erp.client.api_errors", { "erp.endpoint": endpoint }),
          (found) => found.map((p) => [p.tags["erp.error.type"], p.tags["erp.result.code"], p.state.count])
        )
      expect(yield* counted("telemetry/get")).toEqual([["NotFound", "0", 2 + (before[0]?.state.count ?? 0)]])
      expect(yield* counted("telemetry/unauthorized")).toEqual([["Unauthorized", "0", 1]])
      expect(yield* counted("telemetry/other")).toEqual([["ApiError", "7", 1]])
      // On the wire these were successes: the HTTP metrics say so.
      const durations = yield* points("http.client.request.duration", { "erp.endpoint": "telemetry/get" })
      expect(durations.map((p) => [p.tags["http.response.status_code"], p.tags["error.type"]])).toEqual([
        ["200", undefined]
      ])
    }).pipe(Effect.provide(clientOn(fake)))
  })

  it.effect("a failure without an answer: error.type on the attempt's span and on the call's", () => {
    const fake = fakeErp(() => Effect.fail("connection reset"))
    const { spans, tracer } = recorder()
    return Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      // A POST is not retried: one attempt.
      const error = yield* Effect.flip(client.post("telemetry/post", Schema.Unknown).pipe(Effect.withTracer(tracer)))
      expect(error._tag).toBe("TransportError")
      expect(spans.map((s) => [s.name, Exit.isFailure(s.exit!), s.attributes.get("error.type")])).toEqual([
        ["ErpClient.post", true, "TransportError"],
        ["POST telemetry/post", true, "TransportError"]
      ])
      const requests = yield* points("erp.client.api_errors", { "erp.endpoint": "telemetry/post" })
      expect(requests).toEqual([])
    }).pipe(Effect.provide(clientOn(fake)))
  })

  it.effect("each request's wait for the rate limit, by reason: one observation per waiting attempt", () => {
    // The server asks for a pause once (429, reset in 3 s); the client's own limit is 2 per 10 s (and 200 ms).
    const fake = fakeErp((_, n) =>
      Effect.succeed(
        n === 1 ? new Response("", { status: 429, headers: { "x-ratelimit-reset": "3" } }) : new Response(ok(1))
      )
    )
    return Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      const get = client.get("telemetry/waits", Schema.Number)
      // Refused, paused until the reset (and the client's small margin after it), then sent on the second slot.
      const first = yield* Effect.fork(get)
      yield* TestClock.adjust("5 seconds")
      yield* Fiber.join(first)
      // Four more at once: each waits for a slot, two of them side by side at any time.
      const others = yield* Effect.fork(Effect.all([get, get, get, get], { concurrency: "unbounded" }))
      yield* TestClock.adjust("30 seconds")
      yield* Fiber.join(others)

      const waits = yield* points("erp.client.rate_limit.wait.duration", { "erp.endpoint": "telemetry/waits" })
      const byReason = Object.fromEntries(waits.map((p) => [p.tags["erp.rate_limit.reason"], p.state]))
      expect(byReason["server-pause"]!.count).toBe(1)
      expect(byReason["server-pause"]!.sum).toBeGreaterThanOrEqual(3)
      expect(byReason["server-pause"]!.sum).toBeLessThanOrEqual(5)
      // One observation per attempt that waited: their sum is more than the 30 s that passed, as waits overlap.
      expect(byReason["client-limit"]!.count).toBe(4)
      expect(byReason["client-limit"]!.sum).toBeGreaterThan(30)
      // Every attempt is one observation of its whole wait, waited or not: the 429's, its retry and the four.
      const total = yield* points("erp.client.rate_limit.wait", { "erp.endpoint": "telemetry/waits" })
      expect(total.map((p) => p.state.count)).toEqual([6])
    }).pipe(Effect.provide(clientOn(fake, { limit: 2, window: "10 seconds", margin: "200 millis" })))
  })
})
