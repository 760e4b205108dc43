import { ErpClient, ErpRateLimiter } from "@erp-client/effect4-client"
import type { ErpConfig } from "@erp-client/effect4-client"
import * as ErpRules from "@erp-client/kernel/ErpRules"
import { Duration, Effect, Fiber, Layer, Redacted } from "effect"
import { HttpClient, HttpClientError, HttpClientResponse } from "effect/http"
import type { HttpClientRequest } from "effect/http"
import { TestClock } from "effect/testing"

// The in-memory ERP of the kernel (`ErpRules`, the rules the Effect 3 sandbox serves) answered to an HttpClient of
// Effect 4, on the fiber's clock: under the TestClock the server's windows, latency, outages and delays follow the
// test's clock. A small stand-in for `@erp-client/effect4-testing` (being built), for this package's tests only.

const ORIGIN = "https://erp.test"

const transport = (request: HttpClientRequest.HttpClientRequest, description: string) =>
  new HttpClientError.HttpClientError({ reason: new HttpClientError.TransportError({ request, description }) })

// A body that gives its first `sentBytes` bytes, then fails, as a connection closed in the middle of the body does.
const cutStream = (body: Uint8Array, sentBytes: number): ReadableStream<Uint8Array> => {
  let sent = false
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent) controller.error(new Error("the connection closed in the middle of the body"))
      else {
        sent = true
        controller.enqueue(body.slice(0, sentBytes))
      }
    }
  })
}

const NULL_BODY = new Set([101, 103, 204, 205, 304])

const deliver = (
  request: HttpClientRequest.HttpClientRequest,
  reply: ErpRules.Reply
): Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError> => {
  switch (reply._tag) {
    case "Respond": {
      const headers = new Headers(reply.headers)
      const body = NULL_BODY.has(reply.status) ? undefined : reply.body
      if (body !== undefined && reply.contentType !== undefined) headers.set("content-type", reply.contentType)
      return Effect.succeed(
        HttpClientResponse.fromWeb(request, new Response(body ?? null, { status: reply.status, headers }))
      )
    }
    case "Drop":
      return Effect.fail(transport(request, "the server closed the connection before responding"))
    case "CutBody": {
      const headers = new Headers(reply.headers)
      headers.set("content-type", reply.contentType)
      headers.set("content-length", String(reply.body.length))
      return Effect.succeed(
        HttpClientResponse.fromWeb(
          request,
          new Response(cutStream(reply.body, reply.sentBytes), { status: reply.status, headers })
        )
      )
    }
    case "Hang":
      return Effect.never
  }
}

const carryOut = (
  request: HttpClientRequest.HttpClientRequest,
  next: () => ErpRules.Plan
): Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError> =>
  Effect.suspend(() => {
    const plan = next()
    return plan._tag === "Delay"
      ? Effect.andThen(Effect.sleep(Duration.millis(plan.millis)), carryOut(request, plan.next))
      : deliver(request, plan)
  })

/** One in-memory ERP: its controls (requests, stats, faults, partners), its HttpClient, and a client on it. */
export const memoryErp = (
  options: ErpRules.Options = {},
  client: Partial<ErpConfig.Options> & { readonly limiter?: ErpRateLimiter.Options } = {}
) => {
  const rules = ErpRules.make({ rateLimit: false, ...options })
  const httpClient = HttpClient.make((request, url) =>
    url.origin !== ORIGIN
      ? Effect.fail(transport(request, `connection refused: the in-memory ERP answers ${ORIGIN}`))
      : Effect.acquireUseRelease(
        Effect.clockWith((clock) =>
          Effect.sync(() =>
            rules.arrive(
              {
                method: request.method,
                url: `${url.pathname}${url.search}`,
                apiKey: request.headers["x-api-key"] ?? ""
              },
              clock.currentTimeMillisUnsafe()
            )
          )
        ),
        (arrival) => carryOut(request, arrival.plan),
        (arrival) => Effect.clockWith((clock) => Effect.sync(() => arrival.finish(clock.currentTimeMillisUnsafe())))
      )
  )
  const { limiter, ...settings } = client
  const layer = ErpClient.layer({
    baseUrl: `${ORIGIN}/`,
    apiKey: Redacted.make(rules.controls.apiKey),
    retryBaseDelay: "20 millis",
    ...settings
  }).pipe(
    Layer.provide(ErpRateLimiter.layer(limiter)),
    Layer.provide(Layer.succeed(HttpClient.HttpClient, httpClient))
  )
  const erp = rules.controls
  /** The list requests the ERP saw, as `offset+count`. */
  const listed = () =>
    erp.requests().filter((entry) => entry.endpoint === "/partner/list").map((entry) => {
      const query = new Map(entry.query)
      return `${query.get("list_offset")}+${query.get("list_count")}`
    })
  /** The get requests the ERP saw, as their query (`id=7`). */
  const got = () =>
    erp.requests().filter((entry) => entry.endpoint === "/partner/get").map((entry) =>
      entry.query.map(([name, value]) => `${name}=${value}`).join("&")
    )
  return { erp, layer, httpClient, listed, got }
}

/** Runs `effect` on a fiber of its own, moving the TestClock by `step` until it ends (at most `max` steps). */
export const advancing = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  options: { readonly step?: Duration.Input; readonly max?: number } = {}
): Effect.Effect<A, E | string, R> =>
  Effect.gen(function*() {
    const fiber = yield* Effect.forkChild(effect)
    const max = options.max ?? 100_000
    for (let i = 0; i < max; i++) {
      const exit = fiber.pollUnsafe()
      if (exit !== undefined) return yield* exit
      yield* TestClock.adjust(options.step ?? "100 millis")
    }
    yield* Fiber.interrupt(fiber)
    return yield* Effect.fail(`still running after ${max} steps of the TestClock`)
  })
