import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Http from "node:http"
import type * as Fault from "../Fault.js"
import * as RateLimit from "../RateLimit.js"
import type * as Sandbox from "../Sandbox.js"
import * as Envelope from "./envelope.js"
import type * as RequestLog from "./requestLog.js"

/**
 * A request the rate limit let through with a fault to serve instead of (or around) its normal answer.
 *
 * @internal
 */
export interface Faulted {
  readonly fault: Fault.Fault
  /** The `X-RateLimit-*` headers the window gave the request. */
  readonly headers: Record<string, string>
  readonly nowMillis: number
  readonly draft: RequestLog.Draft
  /** The Node response under the platform's, for the faults that cut the socket. */
  readonly response: Http.ServerResponse
  /** The body text of the normal answer; computed only by the faults that send it (each call is a new answer). */
  readonly answer: () => string
}

/**
 * @internal
 */
export interface Responder {
  readonly serve: (faulted: Faulted) => Effect.Effect<HttpServerResponse.HttpServerResponse>
  /** A 429 with these headers: what the window sends past the limit and the `TooManyRequests` fault sends always. */
  readonly tooManyRequests: (headers: Record<string, string>) => HttpServerResponse.HttpServerResponse
}

// What a proxy or gateway sends in place of the service.
const statusPage = (status: number): string =>
  `<html><body><h1>${status} ${Http.STATUS_CODES[status] ?? "Error"}</h1></body></html>\n`

/**
 * The `Retry-After` value of a fault at `nowMillis` (see `Fault.RetryAfter`).
 *
 * @internal
 */
export const retryAfterValue = (retryAfter: Fault.RetryAfter, nowMillis: number): string => {
  if (typeof retryAfter === "string") return retryAfter
  const afterMillis = Duration.toMillis(Duration.decode(retryAfter.after))
  return retryAfter.format === "http-date"
    ? new Date(nowMillis + afterMillis).toUTCString()
    : String(Math.max(0, Math.ceil(afterMillis / 1000)))
}

const withRetryAfter = (
  headers: Record<string, string>,
  retryAfter: Fault.RetryAfter | undefined,
  nowMillis: number
): Record<string, string> =>
  retryAfter === undefined ? headers : { ...headers, "retry-after": retryAfterValue(retryAfter, nowMillis) }

/**
 * Cuts the connection, optionally after raw bytes, bypassing the Node response object so the platform can still
 * close its side cleanly. The fiber ends when the socket is closed (the platform interrupts it as a client abort).
 *
 * @internal
 */
export const cut = (response: Http.ServerResponse, raw: Uint8Array | undefined): Effect.Effect<never> =>
  Effect.async<never>((resume) => {
    const socket = response.socket
    if (socket === null || socket.destroyed) {
      resume(Effect.interrupt)
      return
    }
    const onClose = () => resume(Effect.interrupt)
    socket.once("close", onClose)
    if (raw === undefined) socket.destroy()
    else socket.write(raw, () => socket.destroy())
    return Effect.sync(() => socket.off("close", onClose))
  })

/**
 * The bytes of a 200 response with the full `Content-Length` but only the first `fraction` of `body` (at least one
 * byte, never all of them).
 *
 * @internal
 */
export const truncatedResponse = (headers: Record<string, string>, body: string, fraction: number): Uint8Array => {
  const bytes = new TextEncoder().encode(body)
  const sent = Math.min(bytes.length - 1, Math.max(1, Math.floor(bytes.length * fraction)))
  const head = [
    "HTTP/1.1 200 OK",
    `content-type: ${Envelope.JSON_TYPE}`,
    `content-length: ${bytes.length}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    "",
    ""
  ].join("\r\n")
  const headBytes = new TextEncoder().encode(head)
  const raw = new Uint8Array(headBytes.length + sent)
  raw.set(headBytes, 0)
  raw.set(bytes.subarray(0, sent), headBytes.length)
  return raw
}

/**
 * The answer of an outage: its status and body, `Retry-After` when asked, no rate-limit headers.
 *
 * @internal
 */
export const outage = (
  fault: Extract<Fault.Fault, { readonly _tag: "Outage" }>,
  nowMillis: number
): HttpServerResponse.HttpServerResponse => {
  const status = fault.status ?? 503
  const headers = withRetryAfter({}, fault.retryAfter, nowMillis)
  switch (fault.body ?? "html") {
    case "html":
      return HttpServerResponse.text(statusPage(status), { status, headers, contentType: "text/html" })
    case "envelope":
      return Envelope.json(Envelope.failure(Http.STATUS_CODES[status] ?? "Service unavailable"), status, headers)
    case "empty":
      return HttpServerResponse.empty({ status, headers })
  }
}

/**
 * What the fault responses depend on.
 *
 * @internal
 */
export interface Config {
  /** The limit in force, for the headers of the `TooManyRequests` fault. */
  readonly rateLimit: RateLimit.Resolved | false
  readonly messages: Envelope.Messages
  readonly tooManyRequestsBody: Sandbox.TooManyRequestsBody
}

/** @internal */
export const make = (config: Config): Responder => {
  const { messages, rateLimit } = config
  const tooManyRequests = (headers: Record<string, string>): HttpServerResponse.HttpServerResponse => {
    switch (config.tooManyRequestsBody) {
      case "envelope":
        return Envelope.json(Envelope.failure(messages.tooManyRequests), 429, headers)
      case "html":
        return HttpServerResponse.text(statusPage(429), { status: 429, headers, contentType: "text/html" })
      case "empty":
        return HttpServerResponse.empty({ status: 429, headers })
    }
  }

  const serve = (faulted: Faulted): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
    Effect.gen(function*() {
      const { fault, headers, nowMillis } = faulted
      switch (fault._tag) {
        case "Status":
          return HttpServerResponse.text(fault.body ?? statusPage(fault.status), {
            status: fault.status,
            headers: withRetryAfter(headers, fault.retryAfter, nowMillis),
            contentType: "text/html"
          })
        case "Outage":
          return outage(fault, nowMillis)
        case "TooManyRequests": {
          if (fault.headers === false) return tooManyRequests({})
          const limit = rateLimit === false ? RateLimit.defaults.limit : rateLimit.limit
          const unit = fault.resetUnit ?? (rateLimit === false ? RateLimit.defaults.resetUnit : rateLimit.resetUnit)
          const skew = rateLimit === false ? 0 : rateLimit.resetSkewMillis
          const resetAtMillis = nowMillis +
            (fault.resetAfter === undefined ? 1000 : Duration.toMillis(fault.resetAfter))
          return tooManyRequests(
            RateLimit.headers({ allowed: false, limit, remaining: 0, resetAtMillis }, unit, nowMillis, skew)
          )
        }
        case "DropBeforeResponse":
          return yield* cut(faulted.response, undefined)
        case "DropMidBody":
          // The status line goes out with the partial body: log it as sent.
          faulted.draft.status = 200
          return yield* cut(faulted.response, truncatedResponse(headers, faulted.answer(), fault.fraction ?? 0.5))
        case "MalformedJson": {
          const body = faulted.answer()
          return Envelope.json(body.slice(0, Math.max(1, Math.floor(body.length / 2))), 200, headers)
        }
        case "NotEnvelope":
          return Envelope.json(JSON.stringify(fault.body === undefined ? { items: [] } : fault.body), 200, headers)
        case "UnknownCode":
          return Envelope.json(
            Envelope.envelope(fault.code ?? 2, fault.message ?? "Service temporarily unavailable", null),
            200,
            headers
          )
        case "Hang":
          return yield* Effect.never
        case "Delay":
          yield* Effect.sleep(fault.duration)
          return Envelope.json(faulted.answer(), 200, headers)
        case "Unauthorized":
          return Envelope.json(Envelope.failure(messages.unauthorized), 200, headers)
        case "Redirect":
          return HttpServerResponse.empty({
            status: fault.status ?? 302,
            headers: { ...headers, location: fault.location }
          })
      }
    })

  return { serve, tooManyRequests }
}
