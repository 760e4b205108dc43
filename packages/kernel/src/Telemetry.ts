/**
 * What the client tells an operator, as data (docs/ARCHITECTURE.md, "Telemetry"): the names, descriptions, units and
 * bucket boundaries of its metrics, the attributes of an attempt's span by OpenTelemetry's stable HTTP client
 * conventions (https://opentelemetry.io/docs/specs/semconv/http/), `url.full` without secrets, the headers that never
 * become attributes, and the `error.type` and `erp.outcome` of each way an attempt or a call ends. Each edition's
 * `internal/observe.ts` makes its metrics and spans from these.
 *
 * @since 0.1.0
 */

/**
 * A metric's name, description and unit (UCUM, or an annotation in braces: `{request}`; exporters read it from the
 * `unit` tag).
 *
 * @since 0.1.0
 * @category Models
 */
export interface MetricInfo {
  readonly name: string
  readonly description: string
  readonly unit: string
}

/**
 * The boundaries the HTTP conventions advise for `http.client.request.duration`, in seconds.
 *
 * @since 0.1.0
 * @category Metrics
 */
export const DURATION_BOUNDARIES: ReadonlyArray<number> = [
  0.005,
  0.01,
  0.025,
  0.05,
  0.075,
  0.1,
  0.25,
  0.5,
  0.75,
  1,
  2.5,
  5,
  7.5,
  10
]

/**
 * The boundaries of the rate limit's wait histograms, in seconds: 1 ms doubling, 19 of them (about 4.4 minutes).
 *
 * @since 0.1.0
 * @category Metrics
 */
export const WAIT_BOUNDARIES: ReadonlyArray<number> = Array.from({ length: 19 }, (_, i) => 0.001 * 2 ** i)

/**
 * Every metric of the client and its limiter.
 *
 * @since 0.1.0
 * @category Metrics
 */
export const metrics = {
  requestDuration: {
    name: "http.client.request.duration",
    description: "Duration of HTTP client requests.",
    unit: "s"
  },
  requests: {
    name: "erp.client.requests",
    description: "requests sent to the ERP (every attempt), by erp.endpoint and erp.outcome (2xx, 429, 5xx, " +
      "transport, timeout, interrupted, cancelled, ...)",
    unit: "{request}"
  },
  apiErrors: {
    name: "erp.client.api_errors",
    description: "errors the ERP reported in its answer (HTTP 200, result.code 0 or unknown), one per call, by " +
      "erp.endpoint, erp.error.type (NotFound, Unauthorized, ApiError) and erp.result.code",
    unit: "{error}"
  },
  rateLimitWait: {
    name: "erp.client.rate_limit.wait",
    description: "time each attempt waited for the rate limit in all (ours and the server's pauses) before it was " +
      "sent, 0 when it did not wait: one observation per attempt, by erp.endpoint",
    unit: "s"
  },
  rateLimitWaitDuration: {
    name: "erp.client.rate_limit.wait.duration",
    description: "time one attempt waited before it was sent, by erp.endpoint and erp.rate_limit.reason " +
      "(client-limit: the client's own limit; server-pause: a pause the server asked for): one observation per " +
      "attempt and reason that made it wait. Requests wait side by side, so a sum over them is not time elapsed",
    unit: "s"
  },
  retries: { name: "erp.client.retries", description: "retries after transient failures", unit: "{retry}" },
  tooManyRequests: {
    name: "erp.client.too_many_requests",
    description: "429 responses received",
    unit: "{response}"
  },
  spacingWait: {
    name: "erp.client.rate_limit.spacing_wait",
    description: "time requests waited for the client-side rate limit, summed over requests (concurrent waits " +
      "each count, so it grows faster than the clock; erp.client.rate_limit.wait.duration has each request's wait)",
    unit: "s"
  },
  pauseWait: {
    name: "erp.client.rate_limit.pause_wait",
    description: "time requests waited for pauses the server asked for, summed over requests (concurrent waits " +
      "each count, so it grows faster than the clock; erp.client.rate_limit.wait.duration has each request's wait)",
    unit: "s"
  },
  waits: {
    name: "erp.client.rate_limit.waits",
    description: "requests that waited for the rate limit",
    unit: "{request}"
  }
} as const satisfies Record<string, MetricInfo>

/**
 * Every metric of the streams and lookups (`ListEndpoint`, `Lookups` in each edition's streams package).
 *
 * @since 0.1.0
 * @category Metrics
 */
export const streamMetrics = {
  recordsStreamed: {
    name: "erp.client.records.streamed",
    description: "records streamed out of list endpoints",
    unit: "{record}"
  },
  pagingDrift: {
    name: "erp.client.paging.drift",
    description: "list shifts and recoveries noticed by drift-safe paging",
    unit: "{event}"
  },
  lookups: {
    name: "erp.client.lookups",
    description: "lookups asked for (Resource.get and getMany)",
    unit: "{lookup}"
  },
  lookupsSent: {
    name: "erp.client.lookups.sent",
    description: "lookups sent to the server (one per distinct lookup in flight or not cached)",
    unit: "{lookup}"
  },
  lookupsShared: {
    name: "erp.client.lookups.shared",
    description: "lookups answered by an identical one already in flight",
    unit: "{lookup}"
  },
  lookupsCached: {
    name: "erp.client.lookups.cached",
    description: "lookups answered from the cache of Lookups.layer",
    unit: "{lookup}"
  }
} as const satisfies Record<string, MetricInfo>

/**
 * The attribute of an export's span (`ListEndpoint.pages`) that counts each kind of event drift-safe paging noticed.
 *
 * @since 0.1.0
 * @category Attributes
 */
export const DRIFT_ATTRIBUTES = {
  Shifted: "erp.drift.shifts",
  Recovered: "erp.drift.recoveries",
  Dropped: "erp.drift.dropped"
} as const

/**
 * `error.type` of work interrupted by anyone but the client itself: it did not complete.
 *
 * @since 0.1.0
 * @category Outcomes
 */
export const INTERRUPTED = "interrupted"

/**
 * `error.type` of an attempt's duration when the client cancelled it (the span itself is no error).
 *
 * @since 0.1.0
 * @category Outcomes
 */
export const CANCELLED = "cancelled"

/**
 * `error.type` of a defect (a bug, not an outcome): the conventions' fallback value.
 *
 * @since 0.1.0
 * @category Outcomes
 */
export const OTHER = "_OTHER"

/**
 * `erp.outcome` of an answered attempt: `429`, or its status class (`2xx`, `5xx`).
 *
 * @example
 * ```ts
 * import { Telemetry } from "@erp-client/kernel"
 *
 * console.log([200, 429, 503].map(Telemetry.statusOutcome)) // => [ '2xx', '429', '5xx' ]
 * ```
 *
 * @since 0.1.0
 * @category Outcomes
 */
export const statusOutcome = (status: number): string => status === 429 ? "429" : `${Math.floor(status / 100)}xx`

/**
 * `error.type` and `erp.outcome` of an attempt that ended without an answer: by the client's error's tag (`timeout`
 * for a `TimeoutError`, as the conventions name it), or by how it was stopped (`cancelled` by the client, otherwise
 * `interrupted`), or `_OTHER` for a defect.
 *
 * @example
 * ```ts
 * import { Telemetry } from "@erp-client/kernel"
 *
 * console.log(Telemetry.unansweredType({ _tag: "Failure", tag: "TimeoutError" })) // => { errorType: 'timeout', outcome: 'timeout' }
 * console.log(Telemetry.unansweredType({ _tag: "Cancelled" })) // => { errorType: 'cancelled', outcome: 'cancelled' }
 * ```
 *
 * @since 0.1.0
 * @category Outcomes
 */
export const unansweredType = (
  end:
    | { readonly _tag: "Failure"; readonly tag: string }
    | { readonly _tag: "Cancelled" }
    | { readonly _tag: "Interrupted" }
    | { readonly _tag: "Defect" }
): { readonly errorType: string; readonly outcome: string } => {
  switch (end._tag) {
    case "Failure":
      return {
        errorType: end.tag === "TimeoutError" ? "timeout" : end.tag,
        outcome: end.tag === "TimeoutError" ? "timeout" : end.tag === "TransportError" ? "transport" : "other"
      }
    case "Cancelled":
      return { errorType: CANCELLED, outcome: CANCELLED }
    case "Interrupted":
      return { errorType: INTERRUPTED, outcome: INTERRUPTED }
    case "Defect":
      return { errorType: OTHER, outcome: "other" }
  }
}

/**
 * The `result.code` an error the ERP reported in its answer's envelope (HTTP 200) came with (`NotFound`,
 * `Unauthorized`: 0; `ApiError`: its code), or `undefined` for any other error: what `erp.client.api_errors` counts.
 *
 * @example
 * ```ts
 * import { Telemetry } from "@erp-client/kernel"
 *
 * console.log(Telemetry.apiErrorCode({ _tag: "ApiError", code: 7 }), Telemetry.apiErrorCode({ _tag: "TimeoutError" }))
 * // => 7 undefined
 * ```
 *
 * @since 0.1.0
 * @category Outcomes
 */
export const apiErrorCode = (error: { readonly _tag: string; readonly code?: unknown }): string | undefined => {
  switch (error._tag) {
    case "NotFound":
    case "Unauthorized":
      return "0"
    case "ApiError":
      return String(error.code)
    default:
      return undefined
  }
}

/** Headers that never become attributes, whatever was asked: the key and any other credential. */
const NEVER = new Set(["x-api-key", "authorization", "proxy-authorization", "cookie", "set-cookie"])

/**
 * Which headers become attributes of the attempts' spans, by lower-case name.
 *
 * @since 0.1.0
 * @category Models
 */
export interface HeaderNames {
  readonly request: ReadonlyArray<string>
  readonly response: ReadonlyArray<string>
}

/**
 * The header names asked for, lower case, without the ones that never become attributes (`X-API-KEY`,
 * `Authorization`, cookies).
 *
 * @example
 * ```ts
 * import { Telemetry } from "@erp-client/kernel"
 *
 * console.log(Telemetry.headerNames({ request: ["X-API-KEY", "X-Request-Id"], response: ["X-RateLimit-Remaining"] }))
 * // => { request: [ 'x-request-id' ], response: [ 'x-ratelimit-remaining' ] }
 * ```
 *
 * @since 0.1.0
 * @category Spans
 */
export const headerNames = (
  asked:
    | { readonly request?: ReadonlyArray<string> | undefined; readonly response?: ReadonlyArray<string> | undefined }
    | undefined
): HeaderNames => {
  const clean = (names: ReadonlyArray<string> | undefined) =>
    [...new Set((names ?? []).map((name) => name.trim().toLowerCase()))].filter((name) =>
      name !== "" && !NEVER.has(name)
    )
  return { request: clean(asked?.request), response: clean(asked?.response) }
}

/**
 * The headers asked for as span attributes (`http.request.header.<name>`: the conventions' value is the list of the
 * header's values).
 *
 * @example
 * ```ts
 * import { Telemetry } from "@erp-client/kernel"
 *
 * console.log(Telemetry.headerAttributes("http.response.header", ["x-ratelimit-remaining"], { "x-ratelimit-remaining": "3" }))
 * // => { 'http.response.header.x-ratelimit-remaining': [ '3' ] }
 * ```
 *
 * @since 0.1.0
 * @category Spans
 */
export const headerAttributes = (
  prefix: string,
  names: ReadonlyArray<string>,
  headers: Readonly<Record<string, string | undefined>>
): Record<string, unknown> => {
  const attributes: Record<string, unknown> = {}
  for (const name of names) {
    const value = headers[name]
    if (value !== undefined) attributes[`${prefix}.${name}`] = [value]
  }
  return attributes
}

// Query parameters whose values are secrets: the conventions' list (signatures of presigned URLs), and any name that
// says so.
const SECRET_PARAM = /^(awsaccesskeyid|signature|sig|x-goog-signature)$|key|token|secret|passw|auth/i

/** `url` as `url.full` may carry it: credentials and secret query values written `REDACTED`. */
const fullUrl = (url: URL): string => {
  const copy = new URL(url.toString())
  if (copy.username !== "") copy.username = "REDACTED"
  if (copy.password !== "") copy.password = "REDACTED"
  let redacted = false
  const params = new URLSearchParams()
  for (const [name, value] of copy.searchParams) {
    const secret = SECRET_PARAM.test(name)
    redacted ||= secret
    params.append(name, secret ? "REDACTED" : value)
  }
  if (redacted) copy.search = params.toString()
  return copy.toString()
}

/**
 * An attempt's span, before it is sent: its name (`{method} {endpoint}`), its attributes, and the tags its duration is
 * recorded with before its outcome is known.
 *
 * @since 0.1.0
 * @category Models
 */
export interface AttemptShape {
  readonly name: string
  readonly attributes: Readonly<Record<string, unknown>>
  readonly tags: ReadonlyArray<readonly [string, string]>
}

/**
 * The span of each attempt of a request to `url`: `http.request.method`, `server.address` (the host alone),
 * `server.port`, `url.full` (see `fullUrl`) and `erp.endpoint`; `resend` (how many attempts came before it) adds
 * `http.request.resend_count` from the second attempt on.
 *
 * @example
 * ```ts
 * import { Telemetry } from "@erp-client/kernel"
 *
 * const shape = Telemetry.attemptShape({ method: "GET", endpoint: "partner/get" }, new URL("https://erp.example.com/api/partner/get?id=7"))
 * console.log(shape(1).name, shape(1).attributes["server.port"], shape(1).attributes["http.request.resend_count"])
 * // => GET partner/get 443 1
 * ```
 *
 * @since 0.1.0
 * @category Spans
 */
export const attemptShape = (
  target: { readonly method: string; readonly endpoint: string },
  url: URL | undefined
): (resend: number) => AttemptShape => {
  const base: Record<string, unknown> = {
    "http.request.method": target.method,
    "erp.endpoint": target.endpoint
  }
  const tags: Array<readonly [string, string]> = [["http.request.method", target.method]]
  if (url !== undefined) {
    const address = url.hostname.replace(/^\[|\]$/g, "")
    const port = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port)
    base["server.address"] = address
    base["server.port"] = port
    base["url.full"] = fullUrl(url)
    tags.push(["server.address", address], ["server.port", String(port)])
  }
  tags.push(["erp.endpoint", target.endpoint])
  const name = `${target.method} ${target.endpoint}`
  const first: AttemptShape = { name, attributes: base, tags }
  return (resend) => resend > 0 ? { name, tags, attributes: { ...base, "http.request.resend_count": resend } } : first
}
