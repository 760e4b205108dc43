/**
 * The sandbox's core served to an `HttpClient` without a socket: each request is handled in the calling fiber, on its
 * Effect `Clock` (so `TestClock` drives the windows, latency, outages and `Delay`), and each reply becomes what a
 * client on a real connection would see: a response, a `RequestError` ("Transport") for a connection dropped before
 * a response, a response whose body fails after its first bytes for a body cut mid-way (reading it is a
 * `ResponseError`), and no answer at all for a hang, until the caller gives up or the sandbox closes.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import type * as ErpRules from "@erp-client/kernel/ErpRules"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as Core from "./core.js"

// Statuses whose response has no body (fetch refuses one).
const NULL_BODY = new Set([101, 103, 204, 205, 304])

const transportError = (request: HttpClientRequest.HttpClientRequest, description: string) =>
  new HttpClientError.RequestError({ request, reason: "Transport", description })

/**
 * A body that gives its first `sentBytes` bytes, then fails, as a connection closed in the middle of the body does.
 *
 * @internal
 */
export const cutStream = (body: Uint8Array, sentBytes: number): ReadableStream<Uint8Array> => {
  let sent = false
  return new ReadableStream<Uint8Array>({
    // One chunk per pull: the bytes reach the reader before the failure does (an error drops what is still queued).
    pull(controller) {
      if (sent) {
        controller.error(
          new Error(`the sandbox closed the connection after ${sentBytes} of ${body.length} bytes of the body`)
        )
      } else {
        sent = true
        controller.enqueue(body.slice(0, sentBytes))
      }
    }
  })
}

const deliver = (
  request: HttpClientRequest.HttpClientRequest,
  reply: ErpRules.Reply,
  closed: Deferred.Deferred<void>
): Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError> => {
  switch (reply._tag) {
    case "Respond": {
      if (reply.status < 200 || reply.status > 599) {
        return Effect.fail(
          transportError(request, `status ${reply.status} is outside what a fetch Response holds (200 to 599)`)
        )
      }
      const headers = new Headers(reply.headers)
      const body = NULL_BODY.has(reply.status) ? undefined : reply.body
      if (body !== undefined) {
        if (reply.contentType !== undefined) headers.set("content-type", reply.contentType)
        headers.set("content-length", String(new TextEncoder().encode(body).length))
      }
      return Effect.succeed(
        HttpClientResponse.fromWeb(request, new Response(body ?? null, { status: reply.status, headers }))
      )
    }
    case "Drop":
      return Effect.fail(transportError(request, "the sandbox closed the connection before responding"))
    case "CutBody": {
      const headers = new Headers(reply.headers)
      headers.set("content-type", reply.contentType)
      headers.set("content-length", String(reply.body.length))
      return Effect.succeed(
        HttpClientResponse.fromWeb(
          request,
          new Response(cutStream(reply.body, reply.sentBytes), { status: reply.status, headers })
        )
      )
    }
    case "Hang":
      // Interruptible: the caller's timeout or interruption ends it; closing the sandbox cuts it, as on a socket.
      return Effect.zipRight(
        Deferred.await(closed),
        Effect.fail(transportError(request, "the sandbox closed with the request unanswered"))
      )
  }
}

/**
 * An HttpClient answered by `core` for requests to `origin` (`https://host[:port]`); a request elsewhere, or after
 * the scope closed, fails as a refused connection. Closing the scope cuts the requests left hanging.
 *
 * @internal
 */
export const make = (core: Core.Core, origin: string): Effect.Effect<HttpClient.HttpClient, never, Scope.Scope> =>
  Effect.gen(function*() {
    const closed = yield* Deferred.make<void>()
    yield* Effect.addFinalizer(() => Deferred.succeed(closed, undefined))
    return HttpClient.make((request, url) =>
      Effect.flatMap(Deferred.isDone(closed), (isClosed) => {
        if (url.origin !== origin) {
          return Effect.fail(
            transportError(request, `connection refused: the in-memory sandbox answers ${origin}, not ${url.origin}`)
          )
        }
        if (isClosed) return Effect.fail(transportError(request, "connection refused: the in-memory sandbox is closed"))
        return core.handle(
          { method: request.method, url: `${url.pathname}${url.search}`, apiKey: request.headers["x-api-key"] ?? "" },
          (reply) => deliver(request, reply, closed)
        )
      })
    )
  })
