/**
 * One attempt on the wire: the request every call sends, the whole body read within a cap and a timeout, and the
 * platform's failures as the client's typed errors. What comes back is the answer's status, headers and body text,
 * the body travelling with the answer it belongs to.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import type * as Headers from "@effect/platform/Headers"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { InvalidRequest, ResponseTooLarge, TimeoutError, TransportError } from "@erp-client/core/ErpError"
import * as BodyCap from "@erp-client/kernel/BodyCap"
import * as ListQuery from "@erp-client/kernel/ListQuery"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as FiberRefs from "effect/FiberRefs"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"
import * as Deadlines from "./deadlines.js"

/** Which call a request belongs to, for errors, metrics and limiter keys: the endpoint path and the method. */
export interface Target {
  readonly endpoint: string
  readonly method: string
}

/** The endpoint of a request is its URL after the base URL (the query is kept apart, in `urlParams`). */
export const targetOf = (baseUrl: string) => (request: HttpClientRequest.HttpClientRequest): Target => ({
  endpoint: ListQuery.endpointOfUrl(request.url, baseUrl),
  method: request.method
})

/**
 * The request every call sends (docs/erp-api-v2.md, "Authentication" and "Endpoints"): under the base URL, with
 * `X-API-KEY` and `Content-Type: application/json`, asking for JSON. (No trace headers go to the third party, and the
 * platform's own span is off: `attempt` sets both on the attempt's fiber.)
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
export interface Answer {
  readonly status: number
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly text: string
}

/** How one attempt can fail without an answer. */
export type AttemptError = TransportError | TimeoutError | ResponseTooLarge | InvalidRequest

/**
 * Reads the whole body, but never more than `maxBytes` of it (`@erp-client/kernel/BodyCap` decides how): a declared
 * length over the cap is refused before reading, a body that turns out longer is cut off (`ResponseTooLarge`).
 */
const readCapped = (
  response: HttpClientResponse.HttpClientResponse,
  headers: Headers.Headers,
  maxBytes: number,
  target: Target
): Effect.Effect<string, ResponseTooLarge | HttpClientError.ResponseError> =>
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
): TransportError | InvalidRequest =>
  error._tag === "RequestError" && error.reason !== "Transport"
    ? new InvalidRequest({ endpoint: target.endpoint, reason: `the request could not be built (${error.reason})` })
    : new TransportError({
      ...target,
      description: error._tag === "ResponseError"
        ? "the response body broke off"
        : error.description ?? "the connection failed"
    })

// What the platform reads from the fiber that sends a request: no trace headers to the third party, no span of the
// platform's (the executor makes one per attempt, by the HTTP conventions), and no redirect followed by a fetch-based
// client; and the attempt's span as the parent of anything the HttpClient traces. Set on the attempt's own fiber
// (`Deadlines.within` runs each attempt in a fiber of its own, whose fiber refs are not joined back into the caller's),
// so nothing needs restoring: `HttpClient.withTracerPropagation`, `Effect.provideService` and `Effect.withParentSpan`
// set and restored them around every request, a copy of the fiber's refs each way.
const attemptFiberRefs = (span: Tracer.AnySpan): Effect.Effect<void> =>
  Effect.updateFiberRefs((fiberId, refs) =>
    FiberRefs.updateAs(
      FiberRefs.updateAs(
        FiberRefs.updateAs(refs, {
          fiberId,
          fiberRef: HttpClient.currentTracerPropagation,
          value: false
        }),
        { fiberId, fiberRef: HttpClient.currentTracerDisabledWhen, value: () => true }
      ),
      {
        fiberId,
        fiberRef: FiberRef.currentContext,
        value: FiberRefs.getOrDefault(refs, FiberRef.currentContext).pipe(
          Context.add(FetchHttpClient.RequestInit, { redirect: "manual" }),
          Context.add(Tracer.ParentSpan, span)
        )
      }
    )
  )

/**
 * One attempt, in the span `span`: the request sent on `client` (the configured HttpClient, see `withErpRequest`), its
 * whole body read within `maxBytes`, all within `timeout` (the client's attempts share one watcher of their deadlines:
 * `deadlines.ts`).
 * Redirects are refused, never followed: a fetch-based client would carry `X-API-KEY` to any origin (the status then
 * fails the call as `HttpStatusError`).
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
      Effect.zipRight(
        attemptFiberRefs(span),
        Effect.flatMap(client.execute(request), (response) => {
          // Read once: a platform response builds its headers anew at every read.
          const headers = response.headers
          return Effect.map(readCapped(response, headers, options.maxBytes, target), (text): Answer => ({
            status: response.status,
            headers,
            text
          }))
        })
      ),
      timeoutMillis,
      () => new TimeoutError({ ...target, timeoutMillis })
    ).pipe(
      Effect.catchIf(HttpClientError.isHttpClientError, (error) => Effect.fail(transportError(error, target)))
    )
}
