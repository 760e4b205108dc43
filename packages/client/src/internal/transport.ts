/**
 * One attempt on the wire: the request every call sends, the whole body read within a cap and a timeout, and the
 * platform's failures as the client's typed errors. What comes back is the answer's status, headers and body text,
 * the body travelling with the answer it belongs to.
 */
import { InvalidRequest, ResponseTooLarge, TimeoutError, TransportError } from "@erp-client/core/ErpError"
import * as BodyCap from "@erp-client/kernel/BodyCap"
import type * as CallState from "@erp-client/kernel/CallState"
import * as ListQuery from "@erp-client/kernel/ListQuery"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import type * as Tracer from "effect/Tracer"
import * as Deadlines from "./deadlines.js"
import {
  HttpClient,
  HttpClientError,
  HttpClientRequest,
  type HttpClientResponse,
  httpFailure,
  withAttemptContext
} from "./edition.js"

/** Which call a request belongs to, for errors, metrics and limiter keys: the endpoint path and the method. */
export type Target = CallState.Target

/** The endpoint of a request is its URL after the base URL (the query is kept apart, in `urlParams`). */
export const targetOf = (baseUrl: string) => (request: HttpClientRequest.HttpClientRequest): Target => ({
  endpoint: ListQuery.endpointOfUrl(request.url, baseUrl),
  method: request.method
})

/**
 * The request every call sends (docs/erp-api-v2.md, "Authentication" and "Endpoints"): under the base URL, with
 * `X-API-KEY` and `Content-Type: application/json`, asking for JSON. (No trace headers go to the third party, and the
 * platform's own span is off: `attempt` sets both for the attempt.)
 */
export const withErpRequest = (
  baseUrl: string,
  apiKey: Redacted.Redacted<string>,
  headers: Readonly<Record<string, string>> = {}
) =>
<E, R>(client: HttpClient.HttpClient.With<E, R>): HttpClient.HttpClient.With<E, R> =>
  client.pipe(
    HttpClient.mapRequest((request) =>
      request.pipe(
        // The application's own first: the client's own (which they may not name, `Settings.checkHeaders`) last.
        HttpClientRequest.setHeaders(headers),
        HttpClientRequest.prependUrl(baseUrl),
        HttpClientRequest.setHeader("X-API-KEY", Redacted.value(apiKey)),
        HttpClientRequest.setHeader("Content-Type", "application/json"),
        HttpClientRequest.acceptJson
      )
    )
  )

/** An answer with its whole body. */
export type Answer = CallState.Answer

/** How one attempt can fail without an answer. */
export type AttemptError = TransportError | TimeoutError | ResponseTooLarge | InvalidRequest

/**
 * Reads the whole body, but never more than `maxBytes` of it (`@erp-client/kernel/BodyCap` decides how): a declared
 * length over the cap is refused before reading, a body that turns out longer is cut off (`ResponseTooLarge`).
 */
const readCapped = (
  response: HttpClientResponse.HttpClientResponse,
  headers: HttpClientResponse.HttpClientResponse["headers"],
  maxBytes: number,
  target: Target
): Effect.Effect<string, ResponseTooLarge | HttpClientError.HttpClientError> =>
  Effect.suspend(() => {
    const tooLarge = () => new ResponseTooLarge({ ...target, limitBytes: maxBytes })
    switch (BodyCap.plan(headers, maxBytes)) {
      case "too-large":
        return Effect.fail(tooLarge())
      case "whole":
        return response.text
      case "counted": {
        const body = BodyCap.counted(maxBytes)
        return Stream.runForEach(response.stream, (chunk) =>
          BodyCap.add(body, chunk) ? Effect.void : Effect.fail(tooLarge()))
          .pipe(Effect.map(() =>
            BodyCap.text(body)
          ))
      }
    }
  })

/** One `HttpClientError` as the client's typed error, the request and its headers (the key) left out. */
export const transportError = (
  error: HttpClientError.HttpClientError,
  target: Target
): TransportError | InvalidRequest => {
  const failure = httpFailure(error)
  switch (failure._tag) {
    case "Build":
      return new InvalidRequest({
        endpoint: target.endpoint,
        reason: `the request could not be built (${failure.reason})`
      })
    case "Connection":
      return new TransportError({ ...target, description: failure.description ?? "the connection failed" })
    case "Body":
      return new TransportError({ ...target, description: "the response body broke off" })
  }
}

/**
 * One attempt, in the span `span`: the request sent on `client` (the configured HttpClient, see `withErpRequest`), its
 * whole body read within `maxBytes`, all within `timeout` (the client's deadlines: `deadlines.ts`). Redirects are
 * refused, never followed: a fetch-based client would carry `X-API-KEY` to any origin (the status then fails the call
 * as `HttpStatusError`).
 */
export const attempt = (
  client: HttpClient.HttpClient,
  options: { readonly maxBytes: number; readonly timeout: Duration.Duration }
) => {
  const timeoutMillis = Duration.toMillis(options.timeout)
  const deadlines = Deadlines.make()
  return (
    request: HttpClientRequest.HttpClientRequest,
    target: Target,
    span: Tracer.AnySpan
  ): Effect.Effect<Answer, AttemptError> =>
    deadlines.within(
      withAttemptContext(
        Effect.flatMap(client.execute(request), (response) => {
          // Read once: a platform response may build its headers anew at every read.
          const headers = response.headers
          return Effect.map(readCapped(response, headers, options.maxBytes, target), (text): Answer => ({
            status: response.status,
            headers,
            text
          }))
        }),
        span
      ),
      timeoutMillis,
      () => new TimeoutError({ ...target, timeoutMillis })
    ).pipe(
      Effect.catchIf(HttpClientError.isHttpClientError, (error) => Effect.fail(transportError(error, target)))
    )
}
