/**
 * One attempt on the wire, as HttpClient combinators: the request every call sends, the whole body read within a
 * cap, the per-attempt timeout, and transport failures turned into the client's typed errors. Each is a function
 * from an HttpClient to an HttpClient, so each can be tested alone; `ErpClient.make` pipes them in order.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientRequestModule from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import {
  HttpStatusError,
  InvalidRequest,
  ResponseTooLarge,
  TimeoutError,
  TransportError
} from "@erp-client/core/ErpError"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"

/**
 * `HttpClient.transform`, typed so that a combinator removes from the error type what it handles: `transform` keeps
 * the inner client's errors in its result because the request's preprocessing could fail with them, and in this
 * pipe the preprocessing is `mapRequest` only, which cannot fail.
 */
export const around = <E, R, E1, R1>(
  f: (
    effect: Effect.Effect<HttpClientResponse.HttpClientResponse, E, R>,
    request: HttpClientRequest.HttpClientRequest
  ) => Effect.Effect<HttpClientResponse.HttpClientResponse, E1, R1>
) =>
(client: HttpClient.HttpClient.With<E, R>): HttpClient.HttpClient.With<E1, R1> =>
  HttpClient.transform(client, f) as unknown as HttpClient.HttpClient.With<E1, R1>

/** Which call a request belongs to, for errors, metrics and limiter keys: the endpoint path and the method. */
export interface Target {
  readonly endpoint: string
  readonly method: string
}

/** The endpoint of a request is its URL after the base URL (the query is kept apart, in `urlParams`). */
export const targetOf = (baseUrl: string) => (request: HttpClientRequest.HttpClientRequest): Target => ({
  endpoint: request.url.startsWith(baseUrl) ? request.url.slice(baseUrl.length) : request.url,
  method: request.method
})

/**
 * The request every call sends (docs/erp-api-v2.md, "Authentication" and "Endpoints"): under the base URL, with
 * `X-API-KEY` and `Content-Type: application/json`, asking for JSON. No trace headers go to the third party.
 */
export const withErpRequest =
  (baseUrl: string, apiKey: Redacted.Redacted<string>) =>
  <E, R>(client: HttpClient.HttpClient.With<E, R>): HttpClient.HttpClient.With<E, R> =>
    client.pipe(
      HttpClient.mapRequest((request) =>
        request.pipe(
          HttpClientRequestModule.prependUrl(baseUrl),
          HttpClientRequestModule.setHeader("X-API-KEY", Redacted.value(apiKey)),
          HttpClientRequestModule.setHeader("Content-Type", "application/json"),
          HttpClientRequestModule.acceptJson
        )
      ),
      HttpClient.withTracerPropagation(false)
    )

const textDecoder = new TextDecoder()

/**
 * Reads the whole body, but never more than `maxBytes` of it: a declared length over the cap is refused before
 * reading, a body that turns out longer is cut off (`ResponseTooLarge`). The response that comes out holds its body
 * in memory, so the timeout above covers reading it. Redirects are refused, never followed: a fetch-based client
 * would carry `X-API-KEY` to any origin (the status then fails as `HttpStatusError`).
 */
export const readBodyCapped =
  (maxBytes: number, target: (request: HttpClientRequest.HttpClientRequest) => Target) =>
  <E, R>(client: HttpClient.HttpClient.With<E, R>): HttpClient.HttpClient.With<E | ResponseTooLarge, R> =>
    HttpClient.transform(client, (effect, request) =>
      effect.pipe(
        Effect.flatMap((response) => readCapped(response, maxBytes, target(request))),
        Effect.provideService(FetchHttpClient.RequestInit, { redirect: "manual" })
      ) as Effect.Effect<HttpClientResponse.HttpClientResponse, E | ResponseTooLarge, R>)

// The text of each response read here, so the call that reads it next does not go through the response again.
const texts = new WeakMap<HttpClientResponse.HttpClientResponse, string>()

/** The body of a response that came through `readBodyCapped`, as text. */
export const textOf = (
  response: HttpClientResponse.HttpClientResponse
): Effect.Effect<string, HttpClientError.ResponseError> => {
  const text = texts.get(response)
  return text === undefined ? response.text : Effect.succeed(text)
}

const readCapped = (
  response: HttpClientResponse.HttpClientResponse,
  maxBytes: number,
  target: Target
): Effect.Effect<HttpClientResponse.HttpClientResponse, ResponseTooLarge | HttpClientError.ResponseError> =>
  Effect.suspend(() => {
    const tooLarge = () => new ResponseTooLarge({ ...target, limitBytes: maxBytes })
    const headers = response.headers
    const declared = Number(headers["content-length"] ?? Number.NaN)
    if (Number.isFinite(declared) && declared > maxBytes) return Effect.fail(tooLarge())
    const encoding = headers["content-encoding"]
    if (Number.isFinite(declared) && (encoding === undefined || encoding === "identity")) {
      // A declared length frames the body (HTTP reads no more than that), and nothing decompresses it into more: it
      // can be read whole. The platform's responses keep their text, so later reads of `text` get it again.
      return Effect.map(response.text, (text) => {
        texts.set(response, text)
        return response
      })
    }
    // No length, or a compressed body: counted as it arrives (decompressed), and cut off past the cap.
    const chunks: Array<Uint8Array> = []
    let size = 0
    return Stream.runForEach(response.stream, (chunk) => {
      size += chunk.length
      if (size > maxBytes) return Effect.fail(tooLarge())
      chunks.push(chunk)
      return Effect.void
    }).pipe(Effect.map(() => {
      const body = new Uint8Array(size)
      let at = 0
      for (const chunk of chunks) {
        body.set(chunk, at)
        at += chunk.length
      }
      const text = size === 0 || response.status === 204 || response.status === 304 ? null : textDecoder.decode(body)
      // The stream is spent: a response that holds the text, for callers of the HttpClient that read it again.
      const buffered = HttpClientResponse.fromWeb(
        response.request,
        new Response(text, { status: response.status, headers: Object.entries(headers) })
      )
      texts.set(buffered, text ?? "")
      return buffered
    }))
  })

/** No complete answer (body included) within `timeout`: `TimeoutError`. One attempt; the retries come above. */
export const timeoutEach = (
  timeout: Duration.Duration,
  target: (request: HttpClientRequest.HttpClientRequest) => Target
) =>
<E, R>(client: HttpClient.HttpClient.With<E, R>): HttpClient.HttpClient.With<E | TimeoutError, R> =>
  HttpClient.transform(client, (effect, request) =>
    Effect.timeoutFail(effect, {
      duration: timeout,
      onTimeout: () => new TimeoutError({ ...target(request), timeoutMillis: Duration.toMillis(timeout) })
    }))

/**
 * The platform's `HttpClientError` as the client's own errors, in this one place: a request that could not be built
 * is `InvalidRequest`, anything else (refused, reset, body broken off) `TransportError`. The description comes from
 * the socket layer; the request and its headers (the key) are deliberately left out.
 */
export const typedTransportErrors = (target: (request: HttpClientRequest.HttpClientRequest) => Target) =>
<E, R>(
  client: HttpClient.HttpClient.With<E, R>
): HttpClient.HttpClient.With<Exclude<E, HttpClientError.HttpClientError> | TransportError | InvalidRequest, R> =>
  around((effect: Effect.Effect<HttpClientResponse.HttpClientResponse, E, R>, request) =>
    Effect.catchIf(
      effect,
      HttpClientError.isHttpClientError,
      (error) => Effect.fail(transportError(error, target(request)))
    ) as Effect.Effect<
      HttpClientResponse.HttpClientResponse,
      Exclude<E, HttpClientError.HttpClientError> | TransportError | InvalidRequest,
      R
    >
  )(client)

/** One `HttpClientError` as the client's typed error (see `typedTransportErrors`). */
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

/**
 * A status the contract does not use (docs/erp-api-v2.md, "Errors": success and the error envelopes come with 200;
 * 429 is handled above) is `HttpStatusError`: a 5xx from a proxy, a 404, a redirect that was not followed.
 */
export const requireOkStatus =
  (target: (request: HttpClientRequest.HttpClientRequest) => Target) =>
  <E, R>(client: HttpClient.HttpClient.With<E, R>): HttpClient.HttpClient.With<E | HttpStatusError, R> =>
    HttpClient.transform(
      client,
      (effect, request) =>
        Effect.flatMap(effect, (response) =>
          response.status >= 200 && response.status < 300
            ? Effect.succeed(response)
            : Effect.fail(new HttpStatusError({ ...target(request), status: response.status })))
    )
