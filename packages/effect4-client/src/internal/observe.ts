/**
 * What the client tells an operator: its metrics and one span per attempt, both by OpenTelemetry's stable HTTP client
 * conventions, as the Effect 3 edition's `internal/observe.ts` does; the names, units, attributes and outcomes are
 * `@erp-client/kernel/Telemetry`'s, so an operator reads the same telemetry whichever edition runs.
 *
 * - The span of an attempt: `{method} {endpoint}`, kind client, `http.request.method`, `server.address`,
 *   `server.port`, `url.full` (no secret), `http.response.status_code`, `error.type` and an error status for a 4xx, a
 *   5xx and a failure without an answer, `http.request.resend_count` on every attempt after the first.
 * - The metrics: `http.client.request.duration` for every attempt, and the ERP's own counters, `erp.client.…`, with
 *   their unit as the `unit` attribute (which Effect 4's OTLP exporter reads).
 * - How an attempt or a call ended: answered (by its status; an error the ERP reports in an HTTP 200 is the call's, not
 *   the attempt's), failed without an answer, interrupted (an error, `interrupted`), or cancelled by the client
 *   (`cancel.ts`: no error, marked `erp.cancelled` and `erp.cancel_reason`).
 */
import * as Telemetry from "@erp-client/kernel/Telemetry"
import * as Cause from "effect/Cause"
import type * as Clock from "effect/Clock"
import type * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Metric from "effect/Metric"
import type * as Tracer from "effect/Tracer"
import type * as ErpRateLimiter from "../ErpRateLimiter.js"
import * as Cancel from "./cancel.js"
import type * as Transport from "./transport.js"

const { metrics } = Telemetry

const counter = (info: Telemetry.MetricInfo) =>
  Metric.counter(info.name, { description: info.description, incremental: true, attributes: { unit: info.unit } })

const histogram = (info: Telemetry.MetricInfo, boundaries: ReadonlyArray<number>) =>
  Metric.histogram(info.name, {
    description: info.description,
    boundaries: Metric.boundariesFromIterable(boundaries),
    attributes: { unit: info.unit }
  })

export const requestDuration = histogram(metrics.requestDuration, Telemetry.DURATION_BOUNDARIES)

export const requests = counter(metrics.requests)

export const apiErrors = counter(metrics.apiErrors)

export const rateLimitWait = histogram(metrics.rateLimitWait, Telemetry.WAIT_BOUNDARIES)

export const rateLimitWaitDuration = histogram(metrics.rateLimitWaitDuration, Telemetry.WAIT_BOUNDARIES)

export const retries = counter(metrics.retries)

export const tooManyRequests = counter(metrics.tooManyRequests)

/** One retry counted. */
export const retried: Effect.Effect<void> = Metric.update(retries, 1)

// Metrics with attributes, made once for each set of them: `Metric.withAttributes` makes a new metric, whose series key
// is computed again for each new object; a request reuses the few its endpoint and outcomes need.
const tagged = new Map<Metric.Metric<any, any>, Map<string, Metric.Metric<any, any>>>()

/** `metric` with the `tags` (name, value), the same object for the same tags. */
export const withTags = <In, State>(
  metric: Metric.Metric<In, State>,
  tags: ReadonlyArray<readonly [string, string]>
): Metric.Metric<In, State> => {
  let byKey = tagged.get(metric)
  if (byKey === undefined) tagged.set(metric, byKey = new Map())
  const key = tags.map(([name, value]) => `${name}\u0001${value}`).join("\u0000")
  let found = byKey.get(key)
  if (found === undefined) {
    found = Metric.withAttributes(metric, Object.fromEntries(tags))
    byKey.set(key, found)
  }
  return found as Metric.Metric<In, State>
}

/** `metric` tagged with `erp.endpoint` (and `erp.outcome`), the same object for the same tags. */
export const byEndpoint = <In, State>(
  metric: Metric.Metric<In, State>,
  endpoint: string,
  outcome?: string
): Metric.Metric<In, State> =>
  withTags(
    metric,
    outcome === undefined ? [["erp.endpoint", endpoint]] : [
      ["erp.endpoint", endpoint],
      ["erp.outcome", outcome]
    ]
  )

/** Runs `record` with the fiber's context (metrics read their registry and extra attributes from it), in one step. */
export const recording = (record: (context: Context.Context<never>) => void): Effect.Effect<void> =>
  Effect.withFiber((fiber) => {
    record(fiber.context)
    return Effect.void
  })

/**
 * The time one attempt waited for the limiter, in seconds: in all (`erp.client.rate_limit.wait`), and by reason, for
 * each reason it waited for (`erp.client.rate_limit.wait.duration`).
 */
export const recordWait = (endpoint: string, acquired: ErpRateLimiter.Acquired): Effect.Effect<void> => {
  const metric = byEndpoint(rateLimitWait, endpoint)
  const { pausedMillis, spacedMillis } = acquired
  return recording((context) => {
    metric.updateUnsafe((spacedMillis + pausedMillis) / 1000, context)
    if (spacedMillis > 0) waitFor(endpoint, "client-limit").updateUnsafe(spacedMillis / 1000, context)
    if (pausedMillis > 0) waitFor(endpoint, "server-pause").updateUnsafe(pausedMillis / 1000, context)
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
  readonly options: Tracer.SpanOptionsNoTrace
  /** The tags the attempt's duration is recorded with before its outcome is known. */
  readonly tags: ReadonlyArray<readonly [string, string]>
}

/** The span options of each attempt of one request (`resend`: how many attempts came before it). */
export const attemptSpan = (target: Transport.Target, url: URL | undefined) => {
  const shape = Telemetry.attemptShape(target, url)
  return (resend: number): AttemptSpan => {
    const { attributes, name, tags } = shape(resend)
    return { name, tags, options: { kind: "client", attributes } }
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

/** How a failure, an interruption or a cancellation ended some work, as the kernel's outcomes read it. */
const endOf = (cause: Cause.Cause<{ readonly _tag: string }>, reason: string | undefined) => {
  const failure = Cause.findErrorOption(cause)
  return failure._tag === "Some"
    ? { _tag: "Failure" as const, tag: failure.value._tag }
    : reason !== undefined
    ? { _tag: "Cancelled" as const }
    : Cause.hasInterruptsOnly(cause)
    ? { _tag: "Interrupted" as const }
    : { _tag: "Defect" as const }
}

/** An attempt's end without an answer: failed, interrupted or cancelled (see `observeAttempt`). */
const unanswered = (
  cause: Cause.Cause<Transport.AttemptError>,
  context: Context.Context<never>,
  attempt: {
    readonly target: Transport.Target
    readonly span: AttemptSpan
    readonly current: Tracer.Span
    readonly seconds: number
    readonly clock: Clock.Clock
  }
): void => {
  const reason = Cancel.reasonOf(cause)
  const { errorType, outcome } = Telemetry.unansweredType(endOf(cause, reason))
  if (reason !== undefined) endCancelled(attempt.current, reason, attempt.clock.currentTimeNanosUnsafe())
  withTags(requestDuration, [...attempt.span.tags, ["error.type", errorType]]).updateUnsafe(attempt.seconds, context)
  byEndpoint(requests, attempt.target.endpoint, outcome).updateUnsafe(1, context)
  if (errorType !== Telemetry.CANCELLED) attempt.current.attribute("error.type", errorType)
}

/**
 * One attempt in its span, counted by endpoint and outcome, its duration recorded (until the whole body is in, the
 * failure or the interruption) with the conventions' attributes. Its metrics and the span's attributes are set in one
 * step at its end. `attempt` gets the span, the parent of what it traces.
 */
export const observeAttempt = (
  target: Transport.Target,
  span: AttemptSpan,
  attempt: (span: Tracer.Span) => Effect.Effect<Transport.Answer, Transport.AttemptError>,
  headers: HeaderNames = { request: [], response: [] }
): Effect.Effect<Transport.Answer, Transport.AttemptError> =>
  Effect.useSpan(span.name, span.options, (current) =>
    Effect.clockWith((clock) => {
      const started = clock.currentTimeMillisUnsafe()
      const seconds = () => (clock.currentTimeMillisUnsafe() - started) / 1000
      return attempt(current).pipe(
        Effect.onExit((exit) =>
          recording((context) => {
            if (exit._tag === "Failure") {
              return unanswered(exit.cause, context, { target, span, current, seconds: seconds(), clock })
            }
            const answer = exit.value
            const status = String(answer.status)
            withTags(
              requestDuration,
              answer.status >= 400
                ? [...span.tags, ["http.response.status_code", status], ["error.type", status]]
                : [...span.tags, ["http.response.status_code", status]]
            ).updateUnsafe(seconds(), context)
            byEndpoint(requests, target.endpoint, Telemetry.statusOutcome(answer.status)).updateUnsafe(1, context)
            if (answer.status === 429) tooManyRequests.updateUnsafe(1, context)
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
    })).pipe(Effect.catchTag("StatusAnswer", (status) => Effect.succeed(status.answer)))

/**
 * `self`, one call of the client (`ErpClient.get`, `list`, `post`), in its span named `name`, ended by how the call
 * ended: a success; a failure, ERROR with `error.type` the error's tag (an error the ERP reported in an HTTP 200 also
 * counted in `erp.client.api_errors`); interrupted, `error.type` `interrupted`; cancelled by the client, a success
 * marked `erp.cancelled` and `erp.cancel_reason`.
 */
export const observeCall = <A, E extends { readonly _tag: string }, R>(
  self: Effect.Effect<A, E, R>,
  name: string,
  endpoint: string,
  attributes: Record<string, unknown>
): Effect.Effect<A, E, R> =>
  Effect.useSpan(name, { attributes }, (span) =>
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
      const failure = Cause.findErrorOption(cause)
      if (failure._tag === "Some") {
        const tag = failure.value._tag
        span.attribute("error.type", tag)
        const code = Telemetry.apiErrorCode(failure.value)
        if (code !== undefined) {
          withTags(apiErrors, [["erp.endpoint", endpoint], ["erp.error.type", tag], ["erp.result.code", code]])
            .updateUnsafe(1, context)
        }
        return
      }
      const reason = Cancel.reasonOf(cause)
      if (reason !== undefined) endCancelled(span, reason, clock.currentTimeNanosUnsafe())
      else span.attribute("error.type", Cause.hasInterruptsOnly(cause) ? Telemetry.INTERRUPTED : Telemetry.OTHER)
    })
  )
