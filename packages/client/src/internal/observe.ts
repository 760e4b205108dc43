/**
 * What the client tells an operator: its metrics, the per-attempt observation combinator, and the per-call span
 * attributes that add up over the attempts of one call.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as Option from "effect/Option"
import type { Target } from "./transport.js"

export const requests = Metric.counter("erp_client_requests", {
  description: "HTTP requests sent to the ERP, tagged by endpoint and outcome (2xx, 429, 5xx, transport, timeout, ...)"
})

export const requestDuration = Metric.histogram(
  "erp_client_request_duration_ms",
  MetricBoundaries.exponential({ start: 1, factor: 2, count: 16 }),
  "time from sending a request to having its whole body"
)

export const rateLimitWait = Metric.histogram(
  "erp_client_rate_limit_wait_ms",
  MetricBoundaries.exponential({ start: 1, factor: 2, count: 20 }),
  "time a request waited for the rate limit before it was sent"
)

export const retries = Metric.counter("erp_client_retries", { description: "retries after transient failures" })

export const tooManyRequests = Metric.counter("erp_client_429", { description: "429 responses received" })

// Tagged metrics by endpoint (and outcome), made once: a tagged metric is a new key, and a key per request costs.
const tagged = new Map<Metric.Metric<any, any, any>, Map<string, Metric.Metric<any, any, any>>>()

/** `metric` tagged with `endpoint` (and further tags), the same object for the same tags. */
export const byEndpoint = <Type, In, Out>(
  metric: Metric.Metric<Type, In, Out>,
  endpoint: string,
  outcome?: string
): Metric.Metric<Type, In, Out> => {
  let byKey = tagged.get(metric)
  if (byKey === undefined) tagged.set(metric, byKey = new Map())
  const key = outcome === undefined ? endpoint : `${endpoint}\u0000${outcome}`
  let found = byKey.get(key)
  if (found === undefined) {
    found = Metric.tagged(metric, "endpoint", endpoint)
    if (outcome !== undefined) found = Metric.tagged(found, "outcome", outcome)
    byKey.set(key, found)
  }
  return found as Metric.Metric<Type, In, Out>
}

const outcomeOfError = (error: unknown): string => {
  const tag = (error as { readonly _tag?: unknown })._tag
  return tag === "TimeoutError" ? "timeout" : tag === "TransportError" ? "transport" : "other"
}

/**
 * Counts every attempt by endpoint and outcome (`2xx`, `429`, `5xx`, `transport`, `timeout`, …), records how long it
 * took to have the whole body, and puts the status on the call's span.
 */
export const observeAttempts =
  (target: (request: HttpClientRequest.HttpClientRequest) => Target) =>
  <E, R>(client: HttpClient.HttpClient.With<E, R>): HttpClient.HttpClient.With<E, R> =>
    HttpClient.transform(client, (effect, request) => {
      const { endpoint } = target(request)
      const outcome = (o: string) => Metric.increment(byEndpoint(requests, endpoint, o))
      return Effect.flatMap(Clock.currentTimeMillis, (started) =>
        effect.pipe(
          Effect.tapError((error) => outcome(outcomeOfError(error))),
          Effect.tap((response: HttpClientResponse.HttpClientResponse) =>
            Effect.flatMap(Clock.currentTimeMillis, (now) =>
              Effect.all([
                Metric.update(byEndpoint(requestDuration, endpoint), now - started),
                outcome(response.status === 429 ? "429" : `${Math.floor(response.status / 100)}xx`),
                Effect.annotateCurrentSpan("http.response.status_code", response.status)
              ], { discard: true }))
          )
        ))
    })

/**
 * Adds `delta` to a numeric attribute of the current span (the call's span: `ErpClient.get`, …), so an attribute
 * sums over the attempts of one call with the span itself as the only state. Nothing without a span.
 */
export const addToSpan = (name: string, delta: number): Effect.Effect<void> =>
  Effect.flatMap(Effect.option(Effect.currentSpan), (span) =>
    Option.match(span, {
      onNone: () => Effect.void,
      onSome: (span) =>
        Effect.sync(() => {
          const before = span.attributes.get(name)
          span.attribute(name, (typeof before === "number" ? before : 0) + delta)
        })
    }))

/** The attempts of the current call so far, read back from its span (see `addToSpan`). */
export const attemptsOnSpan: Effect.Effect<number> = Effect.map(
  Effect.option(Effect.currentSpan),
  (span) => {
    const value = Option.isSome(span) ? span.value.attributes.get("erp.attempts") : undefined
    return typeof value === "number" ? value : 0
  }
)
