/**
 * What the client tells an operator: its metrics, and one span per attempt by OpenTelemetry's HTTP client conventions
 * (name `{method} {endpoint}`, kind client, `http.request.method`, `server.address`, `server.port`, `url.full`,
 * `http.response.status_code`, `error.type` and an error status for 4xx, 5xx and failures without an answer,
 * `http.request.resend_count` on every resent attempt).
 */
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import type * as Tracer from "effect/Tracer"
import type * as ErpRateLimiter from "../ErpRateLimiter.js"
import type * as Transport from "./transport.js"

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

/** One retry counted. */
export const retried: Effect.Effect<void> = Metric.increment(retries)

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

/** The time one attempt waited for the limiter, recorded. */
export const recordWait = (endpoint: string, acquired: ErpRateLimiter.Acquired): Effect.Effect<void> => {
  const waited = acquired.spacedMillis + acquired.pausedMillis
  return Metric.update(byEndpoint(rateLimitWait, endpoint), waited)
}

/** The name and options of one attempt's span. */
export interface AttemptSpan {
  readonly name: string
  readonly options: Tracer.SpanOptions
}

/** The span options of each attempt of one request (`resend`: how many attempts came before it). */
export const attemptSpan = (target: Transport.Target, url: URL | undefined) => {
  const base: Record<string, unknown> = {
    "http.request.method": target.method,
    "erp.endpoint": target.endpoint
  }
  if (url !== undefined) {
    base["server.address"] = url.hostname.replace(/^\[|\]$/g, "")
    base["server.port"] = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port)
    // The key travels in a header, never in the URL: the whole URL is no secret.
    base["url.full"] = url.toString()
  }
  const name = `${target.method} ${target.endpoint}`
  return (resend: number): AttemptSpan => ({
    name,
    options: {
      kind: "client",
      captureStackTrace: false,
      attributes: resend > 0 ? { ...base, "http.request.resend_count": resend } : base
    }
  })
}

/** An answer with a 4xx or 5xx status, failing its attempt's span (the executor judges the answer itself). */
class StatusAnswer extends Data.TaggedError("StatusAnswer")<{ readonly answer: Transport.Answer }> {
  override get message(): string {
    return `HTTP ${this.answer.status}`
  }
}

const outcomeOf = (error: Transport.AttemptError): string =>
  error._tag === "TimeoutError" ? "timeout" : error._tag === "TransportError" ? "transport" : "other"

/**
 * One attempt in its span, counted by endpoint and outcome (`2xx`, `429`, `5xx`, `transport`, `timeout`, …), with how
 * long it took to have the whole body.
 */
export const observeAttempt = (
  target: Transport.Target,
  span: AttemptSpan,
  attempt: Effect.Effect<Transport.Answer, Transport.AttemptError>
): Effect.Effect<Transport.Answer, Transport.AttemptError> =>
  Effect.flatMap(Clock.currentTimeMillis, (started) =>
    attempt.pipe(
      Effect.tapBoth({
        onFailure: (error) =>
          Effect.zipRight(
            Metric.increment(byEndpoint(requests, target.endpoint, outcomeOf(error))),
            Effect.annotateCurrentSpan("error.type", error._tag)
          ),
        onSuccess: (answer) =>
          Effect.flatMap(Clock.currentTimeMillis, (now) =>
            Effect.all([
              Metric.update(byEndpoint(requestDuration, target.endpoint), now - started),
              Metric.increment(
                byEndpoint(
                  requests,
                  target.endpoint,
                  answer.status === 429 ? "429" : `${Math.floor(answer.status / 100)}xx`
                )
              ),
              answer.status === 429 ? Metric.increment(tooManyRequests) : Effect.void,
              Effect.annotateCurrentSpan("http.response.status_code", answer.status),
              answer.status >= 400 ? Effect.annotateCurrentSpan("error.type", String(answer.status)) : Effect.void
            ], { discard: true }))
      }),
      Effect.flatMap((answer) =>
        answer.status >= 400 ? Effect.fail(new StatusAnswer({ answer })) : Effect.succeed(answer)
      ),
      Effect.withSpan(span.name, span.options),
      Effect.catchTag("StatusAnswer", (status) => Effect.succeed(status.answer))
    ))
