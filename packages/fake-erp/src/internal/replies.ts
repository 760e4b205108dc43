/**
 * What the ERP answers, as plain data: a response (status, headers, body text), or what happens to the connection
 * instead (dropped before a response, cut in the middle of the body, never answered). An edition carries a reply
 * out its way (the Effect 3 sandbox on a Node server and to an in-memory HttpClient), so every fault means the same
 * in every one.
 */
import type * as ErpRules from "../ErpRules.js"
import type * as SlidingWindow from "../SlidingWindow.js"
import * as Envelope from "./envelope.js"
import { STATUS_TEXT } from "./statusText.js"
import * as Window from "./window.js"

type Reply = ErpRules.Reply

/**
 * The status the request log records for a reply: 0 when no status line is sent.
 *
 * @internal
 */
export const statusOf = (reply: Reply): number =>
  reply._tag === "Respond" || reply._tag === "CutBody" ? reply.status : 0

/**
 * A JSON response with this body text, as sent.
 *
 * @internal
 */
export const json = (body: string, status: number, headers: Readonly<Record<string, string>>): Reply => ({
  _tag: "Respond",
  status,
  headers,
  contentType: Envelope.JSON_TYPE,
  body
})

const html = (body: string, status: number, headers: Readonly<Record<string, string>>): Reply => ({
  _tag: "Respond",
  status,
  headers,
  contentType: "text/html",
  body
})

const empty = (status: number, headers: Readonly<Record<string, string>>): Reply => ({
  _tag: "Respond",
  status,
  headers
})

// What a proxy or gateway sends in place of the service.
const statusPage = (status: number): string =>
  `<html><body><h1>${status} ${STATUS_TEXT[status] ?? "Error"}</h1></body></html>\n`

/**
 * The `Retry-After` value of a fault at `nowMillis` (see `ErpRules.RetryAfter`), its duration read by `toMillis`.
 *
 * @internal
 */
export const retryAfterValue = <D>(
  retryAfter: ErpRules.RetryAfter<D>,
  nowMillis: number,
  toMillis: (input: D) => number
): string => {
  if (typeof retryAfter === "string") return retryAfter
  const afterMillis = toMillis(retryAfter.after)
  return retryAfter.format === "http-date"
    ? new Date(nowMillis + afterMillis).toUTCString()
    : String(Math.max(0, Math.ceil(afterMillis / 1000)))
}

const withRetryAfter = <D>(
  headers: Readonly<Record<string, string>>,
  retryAfter: ErpRules.RetryAfter<D> | undefined,
  nowMillis: number,
  toMillis: (input: D) => number
): Readonly<Record<string, string>> =>
  retryAfter === undefined ? headers : { ...headers, "retry-after": retryAfterValue(retryAfter, nowMillis, toMillis) }

/**
 * How many bytes of a body of `length` bytes a `DropMidBody` with `fraction` sends: at least one, never all.
 *
 * @internal
 */
export const cutAt = (length: number, fraction: number): number =>
  Math.min(length - 1, Math.max(1, Math.floor(length * fraction)))

/**
 * The answer of an outage: its status and body, `Retry-After` when asked, no rate-limit headers.
 *
 * @internal
 */
export const outage = <D>(
  fault: Extract<ErpRules.Fault<D>, { readonly _tag: "Outage" }>,
  nowMillis: number,
  toMillis: (input: D) => number
): Reply => {
  const status = fault.status ?? 503
  const headers = withRetryAfter({}, fault.retryAfter, nowMillis, toMillis)
  switch (fault.body ?? "html") {
    case "html":
      return html(statusPage(status), status, headers)
    case "envelope":
      return json(Envelope.failure(STATUS_TEXT[status] ?? "Service unavailable"), status, headers)
    case "empty":
      return empty(status, headers)
  }
}

/**
 * What the replies depend on.
 *
 * @internal
 */
export interface Config<D> {
  /** The limit in force, for the headers of the `TooManyRequests` fault. */
  readonly rateLimit: SlidingWindow.Resolved | false
  readonly messages: Envelope.Messages
  readonly tooManyRequestsBody: ErpRules.TooManyRequestsBody
  /** Reads the durations of the faults. */
  readonly toMillis: (input: D) => number
}

/**
 * A request the rate limit let through with a fault to serve instead of (or around) its normal answer.
 *
 * @internal
 */
export interface Faulted<D> {
  readonly fault: ErpRules.Fault<D>
  /** The `X-RateLimit-*` headers the window gave the request. */
  readonly headers: Readonly<Record<string, string>>
  readonly nowMillis: number
  /** The body text of the normal answer; computed only by the faults that send it (each call is a new answer). */
  readonly answer: () => string
}

/**
 * A fault's reply, or `Delay`: the normal answer, `millis` later (computed then, so it is the answer of that time).
 *
 * @internal
 */
export type Plan = Reply | { readonly _tag: "Delay"; readonly millis: number }

/**
 * @internal
 */
export interface Replies<D> {
  /** A 429 with these headers: what the window sends past the limit and the `TooManyRequests` fault sends always. */
  readonly tooManyRequests: (headers: Readonly<Record<string, string>>) => Reply
  readonly forFault: (faulted: Faulted<D>) => Plan
}

/** @internal */
export const make = <D>(config: Config<D>): Replies<D> => {
  const { messages, rateLimit, toMillis } = config
  const tooManyRequests = (headers: Readonly<Record<string, string>>): Reply => {
    switch (config.tooManyRequestsBody) {
      case "envelope":
        return json(Envelope.failure(messages.tooManyRequests), 429, headers)
      case "html":
        return html(statusPage(429), 429, headers)
      case "empty":
        return empty(429, headers)
    }
  }

  const forFault = (faulted: Faulted<D>): Plan => {
    const { fault, headers, nowMillis } = faulted
    switch (fault._tag) {
      case "Status":
        return html(
          fault.body ?? statusPage(fault.status),
          fault.status,
          withRetryAfter(headers, fault.retryAfter, nowMillis, toMillis)
        )
      case "Outage":
        return outage(fault, nowMillis, toMillis)
      case "TooManyRequests": {
        if (fault.headers === false) {
          return tooManyRequests(withRetryAfter({}, fault.retryAfter, nowMillis, toMillis))
        }
        const limit = rateLimit === false ? Window.defaults.limit : rateLimit.limit
        const unit = fault.resetUnit ?? (rateLimit === false ? Window.defaults.resetUnit : rateLimit.resetUnit)
        const skew = rateLimit === false ? 0 : rateLimit.resetSkewMillis
        const resetAtMillis = nowMillis + (fault.resetAfter === undefined ? 1000 : toMillis(fault.resetAfter))
        return tooManyRequests(withRetryAfter(
          Window.headers({ allowed: false, limit, remaining: 0, resetAtMillis }, unit, nowMillis, skew),
          fault.retryAfter,
          nowMillis,
          toMillis
        ))
      }
      case "DropBeforeResponse":
        return { _tag: "Drop" }
      case "DropMidBody": {
        const body = new TextEncoder().encode(faulted.answer())
        return {
          _tag: "CutBody",
          status: 200,
          headers,
          contentType: Envelope.JSON_TYPE,
          body,
          sentBytes: cutAt(body.length, fault.fraction ?? 0.5)
        }
      }
      case "MalformedJson": {
        const body = faulted.answer()
        return json(body.slice(0, Math.max(1, Math.floor(body.length / 2))), 200, headers)
      }
      case "NotEnvelope":
        return json(JSON.stringify(fault.body === undefined ? { items: [] } : fault.body), 200, headers)
      case "UnknownCode":
        return json(
          Envelope.envelope(fault.code ?? 2, fault.message ?? "Service temporarily unavailable", null),
          200,
          headers
        )
      case "Hang":
        return { _tag: "Hang" }
      case "Delay":
        return { _tag: "Delay", millis: toMillis(fault.duration) }
      case "Unauthorized":
        return json(Envelope.failure(messages.unauthorized), 200, headers)
      case "Redirect":
        return empty(fault.status ?? 302, { ...headers, location: fault.location })
      case "EmptyPage":
        return json(Envelope.success([]), 200, headers)
    }
  }

  return { tooManyRequests, forFault }
}
