import { describe, expect, it } from "@effect/vitest"
import { ErpClient, ErpConfig, ErpRateLimiter } from "@erp-client/effect4-client"
import {
  Cause,
  Clock,
  Config,
  ConfigProvider,
  Duration,
  Effect,
  Exit,
  Fiber,
  Layer,
  Redacted,
  Result,
  Schema
} from "effect"
import { HttpClient, HttpClientRequest, HttpClientResponse, UrlParams } from "effect/http"
import { TestClock } from "effect/testing"
import { inspect } from "node:util"

const KEY = "sk-test-9d8c7b6a"
const ok = (data: unknown) => JSON.stringify({ result: { code: 1, message: null }, data })

/** A fake ERP that answers from `respond` and records what it was sent. */
const fakeErp = (respond: (request: HttpClientRequest.HttpClientRequest, n: number) => Response) => {
  const seen: Array<{ method: string; url: string; headers: Record<string, string> }> = []
  const layer = Layer.succeed(
    HttpClient.HttpClient,
    HttpClient.make((request, url) =>
      Effect.sync(() => {
        seen.push({ method: request.method, url: url.toString(), headers: { ...request.headers } })
        return HttpClientResponse.fromWeb(request, respond(request, seen.length))
      })
    )
  )
  return { seen, layer }
}

const clientOn = (fake: ReturnType<typeof fakeErp>, options: Partial<ErpConfig.Options> = {}) =>
  ErpClient.layer({ baseUrl: "https://erp.example.com/api/", apiKey: Redacted.make(KEY), ...options }).pipe(
    Layer.provide(ErpRateLimiter.layer()),
    Layer.provide(fake.layer)
  )

/** A client whose limiter allows 2 requests per 10 s (margin 200 ms), on `fake`. */
const twoPerTenSeconds = (fake: ReturnType<typeof fakeErp>) =>
  ErpClient.layer({ baseUrl: "https://erp.example.com/api/", apiKey: Redacted.make(KEY) }).pipe(
    Layer.provide(ErpRateLimiter.layer({ limit: 2, window: "10 seconds", margin: "200 millis" })),
    Layer.provide(fake.layer)
  )

const Id = Schema.Struct({ id: Schema.Number })

describe("ErpClient requests", () => {
  it.effect("sends the key, JSON content type and URL-encoded params, under the base URL, with no trace headers", () => {
    const fake = fakeErp(() => new Response(ok({ id: 1 })))
    return Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      yield* client.get("partner/get", Id, { params: [["company_name", "A&B=C+D 100% #1 [x]\nÉ"]] })
      const [sent] = fake.seen
      const url = new URL(sent!.url)
      expect(url.origin + url.pathname).toBe("https://erp.example.com/api/partner/get")
      expect([...url.searchParams]).toEqual([["company_name", "A&B=C+D 100% #1 [x]\nÉ"]])
      expect(sent!.headers["x-api-key"]).toBe(KEY)
      expect(sent!.headers["content-type"]).toBe("application/json")
      expect(Object.keys(sent!.headers).filter((h) => h === "traceparent" || h === "b3")).toEqual([])
    }).pipe(Effect.provide(clientOn(fake)))
  })

  it.effect("refuses bad condition fields and endpoints before sending anything", () => {
    const fake = fakeErp(() => new Response(ok([])))
    return Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      for (const field of ["a]&list_offset=5", "x[y]", "a b"]) {
        const error = yield* Effect.flip(
          client.list("partner/list", Schema.Unknown, { offset: 0, count: 10, where: { [field]: 1 } })
        )
        expect(error._tag).toBe("InvalidRequest")
      }
      const taken = yield* Effect.flip(
        client.list("partner/list", Schema.Unknown, { offset: 0, count: 10, params: [["list_count", "5000"]] })
      )
      expect(taken.message).toBe("partner/list: invalid request: list_count is set by paging, not as a parameter")
      for (const endpoint of ["../admin", "/partner/list", "partner/list?x=1", "https://evil.example/x", ""]) {
        expect((yield* Effect.flip(client.get(endpoint, Schema.Unknown)))._tag).toBe("InvalidRequest")
      }
      expect(fake.seen).toHaveLength(0)
    }).pipe(Effect.provide(clientOn(fake)))
  })

  it.effect("list decodes a page, and with exact: true gives each record's text as the server wrote it", () => {
    const body = `{"result":{"code":1,"message":null},"data":[{"id":1,"credit":1.10,"ref":12345678901234567890}]}`
    const fake = fakeErp(() => new Response(body))
    return Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      const page = yield* client.list("partner/list", Id, { offset: 0, count: 10, exact: true })
      expect(page.json).toEqual([`{"id":1,"credit":1.10,"ref":12345678901234567890}`])
      expect(page.received).toBe(1)
      expect(new URL(fake.seen[0]!.url).searchParams.get("list_count")).toBe("10")
      const got = yield* client.get("partner/get", Schema.Unknown, { exact: true })
      expect(got.json).toBe(`[{"id":1,"credit":1.10,"ref":12345678901234567890}]`)
    }).pipe(Effect.provide(clientOn(fake)))
  })

  it.effect("retries a GET after a 503, never a POST", () => {
    const fake = fakeErp((_, n) => n % 2 === 1 ? new Response("busy", { status: 503 }) : new Response(ok({ id: 1 })))
    return Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      const got = yield* Effect.forkChild(client.get("thing/get", Id))
      yield* TestClock.adjust("10 seconds")
      expect(yield* Fiber.join(got)).toEqual({ id: 1 })
      expect(fake.seen.map((r) => r.method)).toEqual(["GET", "GET"])
      const posted = yield* Effect.flip(client.post("thing/create", Schema.Unknown, { body: { a: 1 } }))
      expect(posted).toMatchObject({ _tag: "HttpStatusError", status: 503, method: "POST" })
      expect(fake.seen.map((r) => r.method)).toEqual(["GET", "GET", "POST"])
    }).pipe(Effect.provide(clientOn(fake)))
  })

  it.effect("retries a POST after a 429, which the server refused before acting, once its reset has passed", () => {
    const fake = fakeErp((_, n) =>
      n === 1
        ? new Response("", { status: 429, headers: { "x-ratelimit-reset": "3", "x-ratelimit-remaining": "0" } })
        : new Response(ok({ created: true }))
    )
    return Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      const posted = yield* Effect.forkChild(client.post("thing/create", Schema.Unknown, { body: { a: 1 } }))
      yield* TestClock.adjust("2 seconds")
      expect(fake.seen).toHaveLength(1)
      yield* TestClock.adjust("2 seconds")
      expect(yield* Fiber.join(posted)).toEqual({ created: true })
      expect(fake.seen).toHaveLength(2)
    }).pipe(Effect.provide(clientOn(fake)))
  })

  it.effect("gives up with RateLimited once the budget for server waits is spent", () => {
    const fake = fakeErp(() =>
      new Response("", { status: 429, headers: { "x-ratelimit-reset": "10", "x-ratelimit-limit": "100" } })
    )
    return Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      const call = yield* Effect.forkChild(Effect.exit(client.get("thing/get", Schema.Unknown)))
      yield* TestClock.adjust("2 minutes")
      const exit = yield* Fiber.join(call)
      expect(Exit.isFailure(exit)).toBe(true)
      const error = yield* Effect.flip(exit)
      expect(error).toMatchObject({ _tag: "RateLimited", limit: 100, endpoint: "thing/get", tooManyRequests: 4 })
      // A 30 s budget and 10 s resets: three waits fit, the fourth would not.
      expect(fake.seen).toHaveLength(4)
    }).pipe(Effect.provide(clientOn(fake, { rateLimitBudget: "30 seconds" })))
  })

  it.effect("a Retry-After past the budget fails at once, saying the wait asked for", () => {
    const fake = fakeErp(() => new Response("", { status: 429, headers: { "retry-after": "3600" } }))
    return Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      const error = yield* Effect.flip(client.get("thing/get", Schema.Unknown))
      expect(error.message).toBe(
        "thing/get: rate limited: the server asked to wait 3600 s (Retry-After: 3600), past the rate-limit budget of " +
          "300 s: not waited for"
      )
      expect(fake.seen).toHaveLength(1)
    }).pipe(Effect.provide(clientOn(fake)))
  })

  it.effect("Remaining: 0 that only counts our own requests does not wait for the reset: the limiter already spaces", () => {
    const fake = fakeErp((_, n) =>
      new Response(ok(1), {
        headers: {
          "x-ratelimit-limit": "2",
          "x-ratelimit-remaining": String(Math.max(0, 2 - n)),
          "x-ratelimit-reset": "60"
        }
      })
    )
    return Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      yield* client.get("thing/get", Schema.Number)
      yield* client.get("thing/get", Schema.Number)
      const third = yield* Effect.forkChild(client.get("thing/get", Schema.Number))
      // Our limiter's own spacing: a window (10 s) and its margin (200 ms) after the first request.
      yield* TestClock.adjust("10100 millis")
      expect(fake.seen).toHaveLength(2)
      yield* TestClock.adjust("200 millis")
      yield* Fiber.join(third)
      expect(fake.seen).toHaveLength(3)
    }).pipe(Effect.provide(twoPerTenSeconds(fake)))
  })

  it.effect("Remaining: 0 when the server counts more than we sent (another process on the key) waits for the reset", () => {
    const fake = fakeErp(() =>
      new Response(ok(1), {
        headers: { "x-ratelimit-limit": "2", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "15" }
      })
    )
    return Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      yield* client.get("thing/get", Schema.Number)
      const second = yield* Effect.forkChild(client.get("thing/get", Schema.Number))
      yield* TestClock.adjust("14 seconds")
      expect(fake.seen).toHaveLength(1)
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(second)
      expect(fake.seen).toHaveLength(2)
      // Another endpoint is not paused.
      yield* client.get("other/get", Schema.Number)
      expect(fake.seen).toHaveLength(3)
    }).pipe(Effect.provide(twoPerTenSeconds(fake)))
  })

  it.effect("a lower X-RateLimit-Limit is learned (without a reset, in the limiter's window): the next request waits", () => {
    const fake = fakeErp(() => new Response(ok(1), { headers: { "x-ratelimit-limit": "1" } }))
    return Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      yield* client.get("thing/get", Schema.Number)
      const second = yield* Effect.forkChild(client.get("thing/get", Schema.Number))
      // The limiter was told 2 per 10 s; the server said 1: the second waits a window (and the margin).
      yield* TestClock.adjust("10 seconds")
      expect(fake.seen).toHaveLength(1)
      yield* TestClock.adjust("200 millis")
      yield* Fiber.join(second)
      expect(fake.seen).toHaveLength(2)
    }).pipe(Effect.provide(twoPerTenSeconds(fake)))
  })

  it.effect("withMaxWait: a call the limit would keep longer fails at once, taking no place", () => {
    const fake = fakeErp(() => new Response(ok(1)))
    return Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      yield* client.get("thing/get", Schema.Number)
      yield* client.get("thing/get", Schema.Number)
      const error = yield* Effect.flip(client.get("thing/get", Schema.Number).pipe(ErpClient.withMaxWait("1 second")))
      expect(error).toMatchObject({ _tag: "RateLimited", maxWaitMillis: 1_000, attempts: 0 })
      expect(error.message).toBe(
        "thing/get: rate limited: the call may wait 1000 ms for the limit and would have waited 10200 ms; nothing was sent"
      )
      // A call's own maxWait wins over the scope's.
      const own = yield* Effect.flip(
        client.get("thing/get", Schema.Number, { maxWait: "2 seconds" }).pipe(ErpClient.withMaxWait("20 seconds"))
      )
      expect(own).toMatchObject({ _tag: "RateLimited", maxWaitMillis: 2_000 })
      expect(fake.seen).toHaveLength(2)
    }).pipe(Effect.provide(twoPerTenSeconds(fake)))
  })
})

describe("httpClient, transformClient and spanHeaders", () => {
  it.effect("httpClient: the configured client for endpoints that do not answer with the envelope", () => {
    const fake = fakeErp((_, n) =>
      n === 1 ? new Response("busy", { status: 503 }) : new Response("%PDF-1.7 not an envelope", { status: 200 })
    )
    return Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      const got = yield* Effect.forkChild(
        Effect.flatMap(client.httpClient.get("invoice/pdf?id=7"), (response) => response.text)
      )
      yield* TestClock.adjust("1 second")
      expect(yield* Fiber.join(got)).toBe("%PDF-1.7 not an envelope")
      expect(fake.seen.map((r) => [r.method, new URL(r.url).pathname, r.headers["x-api-key"]])).toEqual([
        ["GET", "/api/invoice/pdf", KEY],
        ["GET", "/api/invoice/pdf", KEY]
      ])
    }).pipe(Effect.provide(clientOn(fake)))
  })

  it.effect("transformClient adds a header of the application's own; the key header stays the client's", () => {
    const fake = fakeErp(() => new Response(ok(1)))
    return Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      yield* client.get("thing/get", Schema.Number)
      expect(fake.seen[0]!.headers["x-tenant"]).toBe("acme")
      expect(fake.seen[0]!.headers["x-api-key"]).toBe(KEY)
    }).pipe(
      Effect.provide(
        ErpClient.layer({
          baseUrl: "https://erp.example.com/api/",
          apiKey: Redacted.make(KEY),
          transformClient: HttpClient.mapRequest(HttpClientRequest.setHeader("X-Tenant", "acme"))
        }).pipe(Layer.provide(ErpRateLimiter.layer()), Layer.provide(fake.layer))
      )
    )
  })
})

describe("a limit learned from the server that rises", () => {
  it.effect("the requests queued under it go as soon as an answer says so, not a window apart", () => {
    // Three requests at once: the first answer says the limit is 1 (in 30 s); the other two, answered 5 s later, 100.
    const sent: Array<number> = []
    const layer = Layer.succeed(
      HttpClient.HttpClient,
      HttpClient.make((request) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          const n = sent.push(now)
          const answer = Effect.succeed(HttpClientResponse.fromWeb(
            request,
            new Response(ok(1), {
              headers: { "x-ratelimit-limit": n === 1 ? "1" : "100", "x-ratelimit-reset": "30" }
            })
          ))
          return n === 2 || n === 3 ? Effect.delay(answer, "5 seconds") : answer
        })
      )
    )
    return Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      const get = client.get("thing/get", Schema.Number)
      const first = yield* Effect.forkChild(Effect.all([get, get, get], { concurrency: 3 }))
      yield* TestClock.adjust("100 millis")
      expect(sent).toEqual([0, 0, 0])
      // Three more, queued under the limit of 1 in 30 s the first answer said (and the three sent count in it).
      const queued = yield* Effect.forkChild(Effect.all([get, get, get], { concurrency: 3 }))
      yield* TestClock.adjust("4 seconds")
      expect(sent).toHaveLength(3)
      // The other two answers say 100: the limit is forgotten, and the queued requests plan again at once.
      yield* TestClock.adjust("1 second")
      yield* TestClock.adjust("10 millis")
      expect(sent.slice(3)).toEqual([5_000, 5_000, 5_000])
      yield* Fiber.join(first)
      yield* Fiber.join(queued)
    }).pipe(Effect.provide(
      ErpClient.layer({ baseUrl: "https://erp.example.com/api/", apiKey: Redacted.make(KEY) }).pipe(
        Layer.provide(ErpRateLimiter.layer()),
        Layer.provide(layer)
      )
    ))
  })
})

describe("outages, slow servers and odd resets", () => {
  it.effect("rides out an outage of 503s with Retry-After, waiting as the server asked", () => {
    const fake = fakeErp((_, n) =>
      n <= 4
        ? new Response("<html>503</html>", {
          status: 503,
          headers: { "retry-after": "5", "content-type": "text/html" }
        })
        : new Response(ok({ id: 1 }))
    )
    return Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      const got = yield* Effect.forkChild(client.get("thing/get", Id))
      yield* TestClock.adjust("4900 millis")
      expect(fake.seen).toHaveLength(1)
      yield* TestClock.adjust("20 seconds")
      expect(yield* Fiber.join(got)).toEqual({ id: 1 })
      expect(fake.seen).toHaveLength(5)
    }).pipe(Effect.provide(clientOn(fake)))
  })

  it.effect("an outage past the retry budget fails saying the attempts, the time, and the server's Retry-After", () => {
    const fake = fakeErp(() => new Response("down", { status: 503, headers: { "retry-after": "5" } }))
    return Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      const call = yield* Effect.forkChild(Effect.flip(client.get("thing/get", Schema.Unknown)))
      yield* TestClock.adjust("1 minute")
      const error = yield* Fiber.join(call)
      expect(error).toMatchObject({ _tag: "HttpStatusError", status: 503, attempts: 4, retryAfter: "5" })
      expect(error.message).toBe(
        "GET thing/get: unexpected HTTP status 503 (Retry-After: 5); the server asked to wait 5 s, which would end " +
          "past the retry budget of 16 s: not waited for (4 attempts over 15.0 s)"
      )
    }).pipe(Effect.provide(clientOn(fake, { retryBudget: "16 seconds" })))
  })

  it.effect("a 5xx whose body is the envelope says the server's message; a 401 is Unauthorized", () => {
    const fake = fakeErp((request) =>
      request.url.includes("down")
        ? new Response(JSON.stringify({ result: { code: 0, message: "database unavailable" }, data: null }), {
          status: 500
        })
        : new Response("", { status: 401 })
    )
    return Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      const down = yield* Effect.flip(client.post("down/post", Schema.Unknown))
      expect(down.message).toBe("POST down/post: unexpected HTTP status 500 (the server said: database unavailable)")
      const refused = yield* Effect.flip(client.get("key/get", Schema.Unknown))
      expect(refused).toMatchObject({ _tag: "Unauthorized", status: 401 })
    }).pipe(Effect.provide(clientOn(fake, { retries: 0 })))
  })

  it.effect("a 200 whose body is cut short is retried like a reset connection", () => {
    const body = ok({ id: 1 })
    const fake = fakeErp((_, n) => new Response(n === 1 ? body.slice(0, 20) : body))
    return Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      const got = yield* Effect.forkChild(client.get("thing/get", Id))
      yield* TestClock.adjust("1 second")
      expect(yield* Fiber.join(got)).toEqual({ id: 1 })
      expect(fake.seen).toHaveLength(2)
    }).pipe(Effect.provide(clientOn(fake)))
  })

  it.effect("a server slower than the timeout: the error says the attempts and the whole time", () => {
    const slow = Layer.succeed(HttpClient.HttpClient, HttpClient.make(() => Effect.never))
    return Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      const call = yield* Effect.forkChild(Effect.flip(client.get("thing/get", Schema.Unknown)))
      yield* TestClock.adjust("5 minutes")
      const error = yield* Fiber.join(call)
      expect(error).toMatchObject({ _tag: "TimeoutError", attempts: 3 })
      expect(error.message).toMatch(
        /^GET thing\/get: no complete response within 10000 ms \(3 attempts over 30\.\d s\)$/
      )
    }).pipe(
      Effect.provide(
        ErpClient.layer({
          baseUrl: "https://erp.example.com/api/",
          apiKey: Redacted.make(KEY),
          timeout: "10 seconds",
          retries: 2
        }).pipe(Layer.provide(ErpRateLimiter.layer()), Layer.provide(slow))
      )
    )
  })

  it.effect("a reset in the past (a slow server clock) is unknown: backs off by the window, never hammers", () => {
    const fake = fakeErp(() =>
      new Response("", {
        status: 429,
        headers: { "x-ratelimit-reset": String(Math.floor(Date.UTC(2020, 0, 1) / 1000)), "x-ratelimit-limit": "100" }
      })
    )
    return Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      const call = yield* Effect.forkChild(Effect.flip(client.get("thing/get", Schema.Unknown)))
      yield* TestClock.adjust("1 minute")
      expect((yield* Fiber.join(call))._tag).toBe("RateLimited")
      expect(fake.seen.length).toBeGreaterThanOrEqual(2)
      expect(fake.seen.length).toBeLessThanOrEqual(4)
    }).pipe(Effect.provide(clientOn(fake, { rateLimitBudget: "1 minute" })))
  })

  it.effect("resets in every unit are waited for: seconds from now, epoch seconds, epoch ms, ISO and HTTP dates", () =>
    Effect.gen(function*() {
      // Each reset says "in 7 seconds", from 2026-11-26T10:00:00Z.
      const now = Date.UTC(2026, 10, 26, 10, 0, 0)
      const resets = [
        "7",
        String(now / 1000 + 7),
        String(now + 7_000),
        "2026-11-26T10:00:07Z",
        "Thu, 26 Nov 2026 10:00:07 GMT"
      ]
      for (const reset of resets) {
        const fake = fakeErp((_, n) =>
          n === 1 ? new Response("", { status: 429, headers: { "x-ratelimit-reset": reset } }) : new Response(ok(1))
        )
        yield* Effect.gen(function*() {
          yield* TestClock.setTime(now)
          const client = yield* ErpClient.ErpClient
          const call = yield* Effect.forkChild(client.get("thing/get", Schema.Number))
          yield* TestClock.adjust("6900 millis")
          expect(fake.seen, reset).toHaveLength(1)
          yield* TestClock.adjust("100 millis")
          yield* Fiber.join(call)
          expect(fake.seen, reset).toHaveLength(2)
        }).pipe(Effect.provide(clientOn(fake)), Effect.provide(TestClock.layer()))
      }
    }))

  it.effect("a reset an hour ahead is reported as the server said it, not as the capped wait", () => {
    const reset = String(Math.floor(Date.UTC(2030, 0, 1, 12) / 1000))
    const fake = fakeErp(() =>
      new Response("", {
        status: 429,
        headers: { "x-ratelimit-reset": reset, "x-ratelimit-limit": "100", "x-ratelimit-remaining": "0" }
      })
    )
    return Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      const call = yield* Effect.forkChild(Effect.flip(client.get("thing/get", Schema.Unknown)))
      yield* TestClock.adjust("2 minutes")
      const error = yield* Fiber.join(call)
      expect(error).toMatchObject({ _tag: "RateLimited", serverReset: reset, limit: 100, remaining: 0 })
      expect(error.message).toContain(`X-RateLimit-Reset: ${reset} (read as 2030-01-01T12:00:00.000Z)`)
    }).pipe(Effect.provide(clientOn(fake, { rateLimitBudget: "1 minute" })))
  })
})

describe("ErpConfig", () => {
  const make = (options: Partial<ErpConfig.Options>) =>
    ErpConfig.resolve({ baseUrl: "https://erp.example.com", apiKey: Redacted.make(KEY), ...options }, {
      window: Duration.seconds(30)
    })

  it("accepts https anywhere and http only to loopback", () => {
    expect(Result.getOrThrow(make({})).baseUrl).toBe("https://erp.example.com/")
    for (const baseUrl of ["http://127.0.0.1:8080", "http://localhost:1/api", "http://[::1]:9"]) {
      expect(Result.isSuccess(make({ baseUrl }))).toBe(true)
    }
    for (const baseUrl of ["http://erp.example.com", "http://10.0.0.1", "ftp://x", "not a url", "https://u:p@x.com"]) {
      expect(Result.isFailure(make({ baseUrl }))).toBe(true)
    }
  })

  it("refuses keys with control characters, without echoing the key", () => {
    for (const key of ["abc\r\nX-Evil: 1", "abc\u0000", "", " padded ", "tab\tkey"]) {
      const result = make({ apiKey: Redacted.make(key) })
      expect(Result.isFailure(result)).toBe(true)
      if (key.length > 3 && Result.isFailure(result)) expect(String(result.failure)).not.toContain(key)
    }
  })

  it("never shows the key in toString, JSON or inspect", () => {
    const config = Result.getOrThrow(make({}))
    for (const text of [String(config.apiKey), JSON.stringify(config), inspect(config, { depth: 5 })]) {
      expect(text).not.toContain(KEY)
    }
  })

  it.effect("reads ERP_BASE_URL and ERP_API_KEY through Config; resolve refuses a bad one with a ConfigError", () =>
    Effect.gen(function*() {
      const env = (entries: Record<string, string>) =>
        Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: entries }))
      const fromEnv = Effect.flatMap(
        ErpConfig.fromEnv,
        (options) => Effect.fromResult(ErpConfig.resolve(options, { window: Duration.seconds(30) }))
      )
      const config = yield* fromEnv.pipe(
        env({ ERP_BASE_URL: "http://127.0.0.1:9000", ERP_API_KEY: KEY, ERP_TIMEOUT: "12" })
      )
      expect(config.baseUrl).toBe("http://127.0.0.1:9000/")
      expect(Redacted.value(config.apiKey)).toBe(KEY)
      expect(Duration.toMillis(config.timeout)).toBe(12_000)
      const limiter = yield* Effect.service(ErpRateLimiter.ErpRateLimiter).pipe(
        Effect.provide(ErpRateLimiter.layerConfig()),
        env({ ERP_RATE_LIMIT: "50", ERP_RATE_WINDOW: "30" })
      )
      expect(limiter.limit).toBe(50)
      expect(Duration.toMillis(limiter.window)).toBe(30_000)
      const badWindow = yield* Effect.flip(
        Effect.service(ErpRateLimiter.ErpRateLimiter).pipe(
          Effect.provide(ErpRateLimiter.layerConfig()),
          env({ ERP_RATE_WINDOW: "half a minute" })
        )
      )
      expect(badWindow).toBeInstanceOf(ErpConfig.ErpConfigError)
      expect(badWindow.message).toBe(
        "ERP_RATE_WINDOW must be a positive duration: seconds (30) or with a unit (\"500 millis\", \"2 minutes\")"
      )
      const missing = yield* Effect.flip(fromEnv.pipe(env({ ERP_API_KEY: KEY })))
      expect(missing._tag).toBe("ConfigError")
      const insecure = yield* Effect.flip(
        fromEnv.pipe(env({ ERP_BASE_URL: "http://erp.example.com", ERP_API_KEY: KEY }))
      )
      expect(String(insecure)).toContain("baseUrl")
      expect(String(insecure)).toContain("plain http is only allowed to a loopback address")
      expect(String(insecure)).not.toContain(KEY)
    }))
})

describe("a setting missing or wrong", () => {
  const env = (entries: Record<string, string>) =>
    Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: entries }))
  const fake = fakeErp(() => new Response(ok({ id: 1 })))
  const clientFrom = (config?: Config.Wrap<ErpClient.Options>) =>
    Effect.flip(
      Effect.service(ErpClient.ErpClient).pipe(
        Effect.provide(ErpClient.layerConfig(config).pipe(Layer.provide(ErpRateLimiter.layer()))),
        Effect.provide(fake.layer)
      )
    )

  it.effect("without ERP_API_KEY: an ErpConfigError naming it and how to set it, as the command line says", () =>
    Effect.gen(function*() {
      const missing = yield* clientFrom().pipe(env({ ERP_BASE_URL: "https://erp.example.com/api/" }))
      expect(missing).toBeInstanceOf(ErpConfig.ErpConfigError)
      expect(missing).toMatchObject({ _tag: "ErpConfigError", reason: "Missing", settings: ["ERP_API_KEY"] })
      expect(missing.message).toBe("ERP_API_KEY is not set: export ERP_API_KEY=<your API key>")
      // What an application prints of it: the line, not Effect's "Expected string at [\"ERP_API_KEY\"]".
      const printed = Cause.pretty(
        (yield* Effect.exit(Effect.fail(missing))).pipe((exit) => Exit.isFailure(exit) ? exit.cause : Cause.empty)
      )
      expect(printed).toContain("ErpConfigError: ERP_API_KEY is not set: export ERP_API_KEY=<your API key>")
      expect(printed).not.toContain("Expected string")
      // Effect 4's Config stops at the first setting it cannot read.
      const neither = yield* clientFrom().pipe(env({}))
      expect(neither.message).toBe("ERP_BASE_URL is not set: export ERP_BASE_URL=https://<your ERP's API address>")
    }))

  it.effect("a wrong one is named by its variable, or by its option when given as a value; never with the key", () =>
    Effect.gen(function*() {
      const base = { ERP_BASE_URL: "https://erp.example.com/api/", ERP_API_KEY: KEY }
      const retries = yield* clientFrom().pipe(env({ ...base, ERP_RETRIES: "-1" }))
      expect(retries).toMatchObject({ reason: "Invalid", settings: ["ERP_RETRIES"] })
      expect(retries.message).toBe("ERP_RETRIES: must be an integer >= 0")
      const notANumber = yield* clientFrom().pipe(env({ ...base, ERP_RETRIES: "many" }))
      expect(notANumber).toMatchObject({ reason: "Invalid", settings: ["ERP_RETRIES"] })
      expect(notANumber.message).toMatch(/^ERP_RETRIES: /)
      const badKey = `${KEY}\r\nX-Evil: 1`
      const key = yield* clientFrom().pipe(env({ ...base, ERP_API_KEY: badKey }))
      expect(key.message).toBe("ERP_API_KEY: the API key contains control characters")
      for (const text of [key.message, String(key), JSON.stringify(key), inspect(key)]) {
        expect(text).not.toContain(KEY)
      }
      const asValue = yield* Effect.flip(
        ErpClient.make({ baseUrl: "http://erp.example.com/api/", apiKey: Redacted.make(KEY), retries: 1.5 }).pipe(
          Effect.provide(ErpRateLimiter.layer()),
          Effect.provide(fake.layer)
        )
      )
      expect(asValue).toMatchObject({ _tag: "ErpConfigError", reason: "Invalid", settings: ["baseUrl"] })
      expect(asValue.message).toMatch(/^baseUrl: /)
      const limiter = yield* Effect.flip(ErpRateLimiter.make({ limit: 0 }))
      expect(limiter.message).toBe("limit: must be a positive integer")
      // Variables of the application's own: named as they are.
      const own = yield* clientFrom({ baseUrl: Config.String("CRM_ERP_URL"), apiKey: Config.Redacted("CRM_ERP_KEY") })
        .pipe(env({ CRM_ERP_URL: "https://erp.example.com/api/" }))
      expect(own.message).toBe("CRM_ERP_KEY is not set: export CRM_ERP_KEY=<value>")
    }))
})

describe("an application's own settings", () => {
  it.effect("headers of its own go on every request, from options or Config; the client's own cannot be named", () => {
    const fake = fakeErp(() => new Response(ok({ id: 1 })))
    return Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      yield* client.get("partner/get", Schema.Unknown, { params: [["id", "1"]] })
      expect(fake.seen[0]!.headers).toMatchObject({ "x-tenant": "north", "x-api-key": KEY })
      const refused = yield* Effect.flip(
        ErpClient.make({
          baseUrl: "https://erp.example.com/api/",
          apiKey: Redacted.make(KEY),
          headers: { "X-API-KEY": "sk-other-secret" }
        }).pipe(Effect.provide(ErpRateLimiter.layer()), Effect.provide(fake.layer))
      )
      expect(String(refused)).toContain("X-API-KEY is set by the client itself")
      expect(String(refused)).not.toContain("sk-other-secret")
    }).pipe(
      Effect.provide(
        ErpClient.layerConfig({
          baseUrl: Config.succeed("https://erp.example.com/api/"),
          apiKey: Config.succeed(Redacted.make(KEY)),
          headers: { "X-Tenant": Config.String("TENANT") }
        }).pipe(
          Layer.provide(ErpRateLimiter.layer()),
          Layer.provide(fake.layer),
          Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env: { TENANT: "north" } })))
        )
      )
    )
  })

  it.effect("a cap of retries for one status, as data: a 502 twice at most, a 503 as usual", () => {
    const fake = fakeErp((request) =>
      new Response("bad gateway", { status: UrlParams.toString(request.urlParams).includes("id=1") ? 502 : 503 })
    )
    return Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      const first = yield* Effect.forkChild(
        Effect.flip(client.get("partner/get", Schema.Unknown, { params: [["id", "1"]] }))
      )
      yield* TestClock.adjust("1 minute")
      expect(yield* Fiber.join(first)).toMatchObject({ _tag: "HttpStatusError", status: 502, attempts: 3 })
      const second = yield* Effect.forkChild(
        Effect.flip(client.get("partner/get", Schema.Unknown, { params: [["id", "2"]] }))
      )
      yield* TestClock.adjust("10 minutes")
      expect(yield* Fiber.join(second)).toMatchObject({ _tag: "HttpStatusError", status: 503, attempts: 6 })
    }).pipe(Effect.provide(clientOn(fake, { retries: 5, retriesByStatus: { 502: 2 }, retryBudget: "10 minutes" })))
  })
})
