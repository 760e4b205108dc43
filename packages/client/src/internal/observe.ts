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
 *   `unit` tag, which `@effect/opentelemetry` exports as the metric's unit.
 * - How an attempt or a call ended. Answered: by its status (a 4xx or 5xx is an error of the attempt; an error the ERP
 *   reports in an HTTP 200 is none of the attempt's, but the call's: `error.type` `NotFound`, counted in
 *   `erp.client.api_errors`). Failed without an answer: `error.type` the error's (`timeout`, `TransportError`).
 *   Interrupted (Ctrl-C, a caller's timeout): an error, `error.type` `interrupted`, since it did not complete. Cancelled
 *   by the client because its answer was no longer wanted (`cancel.ts`: a page fetched ahead past the end of its list):
 *   no error; the span ends with a success, marked `erp.cancelled` and `erp.cancel_reason`, and the attempt's duration
 *   is recorded with `error.type` `cancelled` (it did not complete).
 */
import type * as Headers from "@effect/platform/Headers"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Telemetry from "@erp-client/kernel/Telemetry"
import * as Cause from "effect/Cause"
import type * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as MetricKey from "effect/MetricKey"
import type * as MetricKeyType from "effect/MetricKeyType"
import * as MetricLabel from "effect/MetricLabel"
import type * as Tracer from "effect/Tracer"
import type * as ErpRateLimiter from "../ErpRateLimiter.js"
import * as Cancel from "./cancel.js"
import type * as Transport from "./transport.js"

// The metrics are made from their keys (`Metric.fromMetricKey`), their unit and other tags in the key, rather than by
// `Metric.tagged`: a metric tagged that way joins its tags to the fiber's at every update, a new array each time, so
// Effect's cache of the metric's hook misses and the tagged key is built and hashed again (about 4 µs an update
// against 0.2 µs, several times a request: `pnpm bench cost`). The key, and so what an exporter reads, is the same.
const keys = new WeakMap<Metric.Metric<any, any, any>, MetricKey.MetricKey<any>>()

const fromKey = <Type extends MetricKeyType.MetricKeyType<any, any>>(key: MetricKey.MetricKey<Type>) => {
  const metric = Metric.fromMetricKey(key)
  keys.set(metric, key)
  return metric
}

/** The metric of `key` with its unit (UCUM, or an annotation in braces: `{request}`), as the OTLP exporter reads it. */
export const withUnit = <Type extends MetricKeyType.MetricKeyType<any, any>>(
  key: MetricKey.MetricKey<Type>,
  unit: string
) => fromKey(MetricKey.tagged(key, "unit", unit))

/** The boundaries the HTTP conventions advise for `http.client.request.duration`, in seconds. */
export const DURATION_BOUNDARIES: ReadonlyArray<number> = Telemetry.DURATION_BOUNDARIES

const { metrics } = Telemetry

export const requestDuration = withUnit(
  MetricKey.histogram(
    metrics.requestDuration.name,
    MetricBoundaries.fromIterable(DURATION_BOUNDARIES),
    metrics.requestDuration.description
  ),
  metrics.requestDuration.unit
)

const counter = (info: Telemetry.MetricInfo) =>
  withUnit(MetricKey.counter(info.name, { description: info.description, incremental: true }), info.unit)

const waitHistogram = (info: Telemetry.MetricInfo) =>
  withUnit(
    MetricKey.histogram(info.name, MetricBoundaries.fromIterable(Telemetry.WAIT_BOUNDARIES), info.description),
    info.unit
  )

export const requests = counter(metrics.requests)

export const apiErrors = counter(metrics.apiErrors)

export const rateLimitWait = waitHistogram(metrics.rateLimitWait)

export const rateLimitWaitDuration = waitHistogram(metrics.rateLimitWaitDuration)

export const retries = counter(metrics.retries)

export const tooManyRequests = counter(metrics.tooManyRequests)

/** One retry counted. */
export const retried: Effect.Effect<void> = Metric.increment(retries)

// Tagged metrics, made once for each set of tags: a tagged metric is a new key, and a key per request costs.
const tagged = new Map<Metric.Metric<any, any, any>, Map<string, Metric.Metric<any, any, any>>>()

/** `metric` with the `tags` (name, value), the same object for the same tags. */
export const withTags = <Type, In, Out>(
  metric: Metric.Metric<Type, In, Out>,
  tags: ReadonlyArray<readonly [string, string]>
): Metric.Metric<Type, In, Out> => {
  let byKey = tagged.get(metric)
  if (byKey === undefined) tagged.set(metric, byKey = new Map())
  const key = tags.map(([name, value]) => `${name}\u0001${value}`).join("\u0000")
  let found = byKey.get(key)
  if (found === undefined) {
    const labels = tags.map(([name, value]) => MetricLabel.make(name, value))
    const metricKey = keys.get(metric)
    found = metricKey === undefined
      ? Metric.taggedWithLabels(metric, labels)
      : fromKey(MetricKey.taggedWithLabels(metricKey, labels))
    byKey.set(key, found)
  }
  return found as Metric.Metric<Type, In, Out>
}

/** `metric` tagged with `erp.endpoint` (and `erp.outcome`), the same object for the same tags. */
export const byEndpoint = <Type, In, Out>(
  metric: Metric.Metric<Type, In, Out>,
  endpoint: string,
  outcome?: string
): Metric.Metric<Type, In, Out> =>
  withTags(
    metric,
    outcome === undefined ? [["erp.endpoint", endpoint]] : [
      ["erp.endpoint", endpoint],
      ["erp.outcome", outcome]
    ]
  )

/**
 * Runs `record` with the fiber's metric tags (`Metric.update` reads them for each metric): several updates in one step.
 */
export const recording = (record: (tags: ReadonlyArray<MetricLabel.MetricLabel>) => void): Effect.Effect<void> =>
  Effect.withFiberRuntime((fiber) => {
    record(fiber.getFiberRef(FiberRef.currentMetricLabels))
    return Effect.void
  })

/**
 * The time one attempt waited for the limiter, in seconds: in all (`erp.client.rate_limit.wait`), and by reason, for
 * each reason it waited for (`erp.client.rate_limit.wait.duration`).
 */
export const recordWait = (endpoint: string, acquired: ErpRateLimiter.Acquired): Effect.Effect<void> => {
  const metric = byEndpoint(rateLimitWait, endpoint)
  const { pausedMillis, spacedMillis } = acquired
  return recording((tags) => {
    metric.unsafeUpdate((spacedMillis + pausedMillis) / 1000, tags)
    if (spacedMillis > 0) waitFor(endpoint, "client-limit").unsafeUpdate(spacedMillis / 1000, tags)
    if (pausedMillis > 0) waitFor(endpoint, "server-pause").unsafeUpdate(pausedMillis / 1000, tags)
  })
}

const waitFor = (endpoint: string, reason: ErpRateLimiter.WaitReason) =>
  withTags(rateLimitWaitDuration, [["erp.endpoint", endpoint], ["erp.rate_limit.reason", reason]])

/** Which headers become attributes of the attempts' spans, by lower-case name (the key never). */
export type HeaderNames = Telemetry.HeaderNames

/** The names asked for, lower case, without the ones that never become attributes. */
export const headerNames = Telemetry.headerNames

const headerAttributes = Telemetry.headerAttributes

/** The request headers asked for, as attributes of the current span (the attempt's). */
export const annotateRequestHeaders = (
  names: HeaderNames,
  request: HttpClientRequest.HttpClientRequest
): Effect.Effect<void> =>
  names.request.length === 0
    ? Effect.void
    : Effect.annotateCurrentSpan(
      headerAttributes("http.request.header", names.request, request.headers as Headers.Headers)
    )

/** The name and options of one attempt's span, and the attributes of its metrics. */
export interface AttemptSpan {
  readonly name: string
  readonly options: Tracer.SpanOptions
  /** The tags the attempt's duration is recorded with before its outcome is known. */
  readonly tags: ReadonlyArray<readonly [string, string]>
}

/** The span options of each attempt of one request (`resend`: how many attempts came before it). */
export const attemptSpan = (target: Transport.Target, url: URL | undefined) => {
  const shape = Telemetry.attemptShape(target, url)
  return (resend: number): AttemptSpan => {
    const { attributes, name, tags } = shape(resend)
    return { name, tags, options: { kind: "client", captureStackTrace: false, attributes } }
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
  labels: ReadonlyArray<MetricLabel.MetricLabel>,
  attempt: {
    readonly target: Transport.Target
    readonly span: AttemptSpan
    readonly current: Tracer.Span
    readonly seconds: number
    readonly clock: Clock.Clock
  }
): void => {
  const failure = Cause.failureOption(cause)
  const reason = failure._tag === "Some" ? undefined : Cancel.reasonOf(cause)
  const { errorType, outcome } = Telemetry.unansweredType(
    failure._tag === "Some"
      ? { _tag: "Failure", tag: failure.value._tag }
      : reason !== undefined
      ? { _tag: "Cancelled" }
      : Cause.isInterruptedOnly(cause)
      ? { _tag: "Interrupted" }
      : { _tag: "Defect" }
  )
  if (reason !== undefined) endCancelled(attempt.current, reason, attempt.clock.unsafeCurrentTimeNanos())
  withTags(requestDuration, [...attempt.span.tags, ["error.type", errorType]]).unsafeUpdate(attempt.seconds, labels)
  byEndpoint(requests, attempt.target.endpoint, outcome).unsafeUpdate(1, labels)
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
      const started = clock.unsafeCurrentTimeMillis()
      const seconds = () => (clock.unsafeCurrentTimeMillis() - started) / 1000
      return attempt(current).pipe(
        Effect.onExit((exit) =>
          recording((labels) => {
            if (exit._tag === "Failure") {
              return unanswered(exit.cause, labels, { target, span, current, seconds: seconds(), clock })
            }
            const answer = exit.value
            const status = String(answer.status)
            withTags(
              requestDuration,
              answer.status >= 400
                ? [...span.tags, ["http.response.status_code", status], ["error.type", status]]
                : [...span.tags, ["http.response.status_code", status]]
            ).unsafeUpdate(seconds(), labels)
            byEndpoint(requests, target.endpoint, Telemetry.statusOutcome(answer.status)).unsafeUpdate(1, labels)
            if (answer.status === 429) tooManyRequests.unsafeUpdate(1, labels)
            current.attribute("http.response.status_code", answer.status)
            if (answer.status >= 400) current.attribute("error.type", status)
            if (headers.response.length > 0) {
              const attributes = headerAttributes("http.response.header", headers.response, answer.headers)
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
  Effect.useSpan(name, { attributes, captureStackTrace: false }, (span) =>
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
    recording((labels) => {
      const failure = Cause.failureOption(cause)
      if (failure._tag === "Some") {
        const tag = failure.value._tag
        span.attribute("error.type", tag)
        const code = Telemetry.apiErrorCode(failure.value)
        if (code !== undefined) {
          withTags(apiErrors, [["erp.endpoint", endpoint], ["erp.error.type", tag], ["erp.result.code", code]])
            .unsafeUpdate(1, labels)
        }
        return
      }
      const reason = Cancel.reasonOf(cause)
      if (reason !== undefined) endCancelled(span, reason, clock.unsafeCurrentTimeNanos())
      else span.attribute("error.type", Cause.isInterruptedOnly(cause) ? Telemetry.INTERRUPTED : Telemetry.OTHER)
    })
  )
