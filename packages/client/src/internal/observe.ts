/**
 * What the client tells an operator: its metrics and one span per attempt, both by OpenTelemetry's stable HTTP client
 * conventions (https://opentelemetry.io/docs/specs/semconv/http/).
 *
 * - The span of an attempt: named `{method} {endpoint}`, kind client, with `http.request.method`, `server.address`
 *   (the host alone), `server.port`, `url.full` (the key travels in a header, never in it; a query parameter whose
 *   name says it is a secret is written `REDACTED`), `http.response.status_code`, `error.type` and an error status
 *   for a 4xx, a 5xx and a failure without an answer, `http.request.resend_count` on every attempt after the first
 *   (whatever the reason: a retry or a 429). Headers are attributes only when asked for (`http.request.header.<name>`,
 *   `http.response.header.<name>`), and never the key.
 * - The metrics: `http.client.request.duration`, a histogram in seconds with the conventions' boundaries and
 *   attributes, for every attempt; the ERP's own counters, monotonic, named `erp.client.…`. The unit of each is its
 *   `unit` attribute, which the OTLP exporters (`@effect/opentelemetry`, `effect/observability`) export as its unit.
 * - How an attempt or a call ended. Answered: by its status (a 4xx or 5xx is an error of the attempt; an error the ERP
 *   reports in an HTTP 200 is none of the attempt's, but the call's: `error.type` `NotFound`, counted in
 *   `erp.client.api_errors`). Failed without an answer: `error.type` the error's (`timeout`, `TransportError`).
 *   Interrupted (Ctrl-C, a caller's timeout): an error, `error.type` `interrupted`, since it did not complete. Cancelled
 *   by the client because its answer was no longer wanted (`cancel.ts`: a page fetched ahead past the end of its list):
 *   no error; the span ends with a success, marked `erp.cancelled` and `erp.cancel_reason`, and the attempt's duration
 *   is recorded with `error.type` `cancelled` (it did not complete).
 */
import * as Telemetry from "@erp-client/kernel/Telemetry"
import type * as Cause from "effect/Cause"
import type * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Metric from "effect/Metric"
import type * as Tracer from "effect/Tracer"
import type * as ErpRateLimiter from "../ErpRateLimiter.js"
import * as Cancel from "./cancel.js"
import {
  type AnyMetric,
  counter,
  failureOption,
  histogram,
  type HttpClientRequest,
  isInterruptedOnly,
  type MetricContext,
  nowMillis,
  nowNanos,
  recording,
  type SpanOptions,
  updateUnsafe,
  withAttributes,
  withoutStackTrace
} from "./edition.js"
import type * as Transport from "./transport.js"

const { metrics } = Telemetry

export const requestDuration = histogram(metrics.requestDuration, Telemetry.DURATION_BOUNDARIES)

export const requests = counter(metrics.requests)

export const apiErrors = counter(metrics.apiErrors)

export const rateLimitWait = histogram(metrics.rateLimitWait, Telemetry.WAIT_BOUNDARIES)

export const rateLimitWaitDuration = histogram(metrics.rateLimitWaitDuration, Telemetry.WAIT_BOUNDARIES)

export const retries = counter(metrics.retries)

export const tooManyRequests = counter(metrics.tooManyRequests)

/** One retry counted. */
export const retried: Effect.Effect<void> = Metric.update(retries, 1)

// Tagged metrics, made once for each set of tags: a tagged metric is a new key, and a key per request costs.
const tagged = new Map<AnyMetric, Map<string, AnyMetric>>()

/** `metric` with the `tags` (name, value), the same object for the same tags. */
export const withTags = <M extends AnyMetric>(metric: M, tags: ReadonlyArray<readonly [string, string]>): M => {
  let byKey = tagged.get(metric)
  if (byKey === undefined) tagged.set(metric, byKey = new Map())
  const key = tags.map(([name, value]) => `${name}\u0001${value}`).join("\u0000")
  let found = byKey.get(key)
  if (found === undefined) {
    found = withAttributes(metric, tags)
    byKey.set(key, found)
  }
  return found as M
}

/** `metric` tagged with `erp.endpoint` (and `erp.outcome`), the same object for the same tags. */
export const byEndpoint = <M extends AnyMetric>(metric: M, endpoint: string, outcome?: string): M =>
  withTags(
    metric,
    outcome === undefined ? [["erp.endpoint", endpoint]] : [
      ["erp.endpoint", endpoint],
      ["erp.outcome", outcome]
    ]
  )

/**
 * The time one attempt waited for the limiter, in seconds: in all (`erp.client.rate_limit.wait`), and by reason, for
 * each reason it waited for (`erp.client.rate_limit.wait.duration`).
 */
export const recordWait = (endpoint: string, acquired: ErpRateLimiter.Acquired): Effect.Effect<void> => {
  const metric = byEndpoint(rateLimitWait, endpoint)
  const { pausedMillis, spacedMillis } = acquired
  return recording((context) => {
    updateUnsafe(metric, (spacedMillis + pausedMillis) / 1000, context)
    if (spacedMillis > 0) updateUnsafe(waitFor(endpoint, "client-limit"), spacedMillis / 1000, context)
    if (pausedMillis > 0) updateUnsafe(waitFor(endpoint, "server-pause"), pausedMillis / 1000, context)
  })
}

const waitFor = (endpoint: string, reason: ErpRateLimiter.WaitReason) =>
  withTags(rateLimitWaitDuration, [["erp.endpoint", endpoint], ["erp.rate_limit.reason", reason]])

/** Which headers become attributes of the attempts' spans, by lower-case name (the key never). */
export type HeaderNames = Telemetry.HeaderNames

/** The names asked for, lower case, without the ones that never become attributes. */
export const headerNames = Telemetry.headerNames

/** The request headers asked for, as attributes of the current span (the attempt's). */
export const annotateRequestHeaders = (
  names: HeaderNames,
  request: HttpClientRequest.HttpClientRequest
): Effect.Effect<void> =>
  names.request.length === 0
    ? Effect.void
    : Effect.annotateCurrentSpan(Telemetry.headerAttributes("http.request.header", names.request, request.headers))

/** The name and options of one attempt's span, and the attributes of its metrics. */
export interface AttemptSpan {
  readonly name: string
  readonly options: SpanOptions
  /** The tags the attempt's duration is recorded with before its outcome is known. */
  readonly tags: ReadonlyArray<readonly [string, string]>
}

/** The span options of each attempt of one request (`resend`: how many attempts came before it). */
export const attemptSpan = (target: Transport.Target, url: URL | undefined) => {
  const shape = Telemetry.attemptShape(target, url)
  return (resend: number): AttemptSpan => {
    const { attributes, name, tags } = shape(resend)
    return { name, tags, options: withoutStackTrace({ kind: "client", attributes }) }
  }
}

/**
 * An answer with a 4xx or 5xx status, failing its attempt's span (the conventions' error status; the executor judges
 * the answer itself).
 */
class StatusAnswer extends Data.TaggedError("StatusAnswer")<{ readonly answer: Transport.Answer }> {
  override get message(): string {
    return `HTTP ${this.answer.status}`
  }
}

/**
 * Marks `span` cancelled by the client for `reason` and ends it now with a success: it was not wanted any more, and
 * did not fail. The span's own end (`Effect.useSpan`'s) then finds it ended and leaves it.
 */
const endCancelled = (span: Tracer.Span, reason: string, nanos: bigint): void => {
  span.attribute("erp.cancelled", true)
  span.attribute("erp.cancel_reason", reason)
  span.end(nanos, Exit.void)
}

/** An attempt's end without an answer: failed, interrupted or cancelled (see `observeAttempt`). */
const unanswered = (
  cause: Cause.Cause<Transport.AttemptError>,
  context: MetricContext,
  attempt: {
    readonly target: Transport.Target
    readonly span: AttemptSpan
    readonly current: Tracer.Span
    readonly seconds: number
    readonly clock: Clock.Clock
  }
): void => {
  const failure = failureOption(cause)
  const reason = failure._tag === "Some" ? undefined : Cancel.reasonOf(cause)
  const { errorType, outcome } = Telemetry.unansweredType(
    failure._tag === "Some"
      ? { _tag: "Failure", tag: failure.value._tag }
      : reason !== undefined
      ? { _tag: "Cancelled" }
      : isInterruptedOnly(cause)
      ? { _tag: "Interrupted" }
      : { _tag: "Defect" }
  )
  if (reason !== undefined) endCancelled(attempt.current, reason, nowNanos(attempt.clock))
  updateUnsafe(withTags(requestDuration, [...attempt.span.tags, ["error.type", errorType]]), attempt.seconds, context)
  updateUnsafe(byEndpoint(requests, attempt.target.endpoint, outcome), 1, context)
  if (errorType !== Telemetry.CANCELLED) attempt.current.attribute("error.type", errorType)
}

/**
 * One attempt in its span, counted by endpoint and outcome (`2xx`, `429`, `5xx`, `transport`, `timeout`,
 * `interrupted`, `cancelled`, …), its duration recorded (until the whole body is in, the failure or the interruption)
 * with the conventions' attributes. Its metrics and the span's attributes are set in one step at its end. `attempt`
 * gets the span, the parent of what it traces.
 */
export const observeAttempt = (
  target: Transport.Target,
  span: AttemptSpan,
  attempt: (span: Tracer.Span) => Effect.Effect<Transport.Answer, Transport.AttemptError>,
  headers: HeaderNames = { request: [], response: [] }
): Effect.Effect<Transport.Answer, Transport.AttemptError> =>
  Effect.useSpan(span.name, span.options, (current) =>
    Effect.clockWith((clock) => {
      const started = nowMillis(clock)
      const seconds = () => (nowMillis(clock) - started) / 1000
      return attempt(current).pipe(
        Effect.onExit((exit) =>
          recording((context) => {
            if (exit._tag === "Failure") {
              return unanswered(exit.cause, context, { target, span, current, seconds: seconds(), clock })
            }
            const answer = exit.value
            const status = String(answer.status)
            const durationTags: ReadonlyArray<readonly [string, string]> = answer.status >= 400
              ? [...span.tags, ["http.response.status_code", status], ["error.type", status]]
              : [...span.tags, ["http.response.status_code", status]]
            updateUnsafe(withTags(requestDuration, durationTags), seconds(), context)
            updateUnsafe(byEndpoint(requests, target.endpoint, Telemetry.statusOutcome(answer.status)), 1, context)
            if (answer.status === 429) updateUnsafe(tooManyRequests, 1, context)
            current.attribute("http.response.status_code", answer.status)
            if (answer.status >= 400) current.attribute("error.type", status)
            if (headers.response.length > 0) {
              const attributes = Telemetry.headerAttributes("http.response.header", headers.response, answer.headers)
              for (const name in attributes) current.attribute(name, attributes[name])
            }
          })
        ),
        Effect.flatMap((answer) =>
          answer.status >= 400 ? Effect.fail(new StatusAnswer({ answer })) : Effect.succeed(answer)
        )
      )
    })).pipe(
      Effect.catchTag("StatusAnswer", (status) => Effect.succeed(status.answer))
    )

/**
 * `self`, one call of the client (`ErpClient.get`, `list`, `post`), in its span named `name`, ended by how the call
 * ended: a success; a failure, ERROR with `error.type` the error's tag (`NotFound`, `TimeoutError`, …; an error the ERP
 * reported in an HTTP 200 also counted in `erp.client.api_errors`); interrupted, `error.type` `interrupted`; cancelled
 * by the client, a success marked `erp.cancelled` and `erp.cancel_reason`. A stack trace per call costs more than the
 * rest of the span; the attributes say where it came from.
 */
export const observeCall = <A, E extends { readonly _tag: string }, R>(
  self: Effect.Effect<A, E, R>,
  name: string,
  endpoint: string,
  attributes: Record<string, unknown>
): Effect.Effect<A, E, Exclude<R, Tracer.ParentSpan>> =>
  Effect.useSpan(name, withoutStackTrace({ attributes }), (span) =>
    Effect.onExit(
      Effect.withParentSpan(self, span),
      (exit) => exit._tag === "Success" ? Effect.void : callFailed(span, endpoint, exit.cause)
    ))

const callFailed = <E extends { readonly _tag: string }>(
  span: Tracer.Span,
  endpoint: string,
  cause: Cause.Cause<E>
): Effect.Effect<void> =>
  Effect.clockWith((clock) =>
    recording((context) => {
      const failure = failureOption(cause)
      if (failure._tag === "Some") {
        const tag = failure.value._tag
        span.attribute("error.type", tag)
        const code = Telemetry.apiErrorCode(failure.value)
        if (code !== undefined) {
          updateUnsafe(
            withTags(apiErrors, [["erp.endpoint", endpoint], ["erp.error.type", tag], ["erp.result.code", code]]),
            1,
            context
          )
        }
        return
      }
      const reason = Cancel.reasonOf(cause)
      if (reason !== undefined) endCancelled(span, reason, nowNanos(clock))
      else span.attribute("error.type", isInterruptedOnly(cause) ? Telemetry.INTERRUPTED : Telemetry.OTHER)
    })
  )
