/**
 * The sandbox's core served to an `HttpClient` without a socket: each request is handled in the calling fiber, on its
 * Effect `Clock` (so `TestClock` drives the windows, latency, outages and `Delay`), and each reply becomes what a
 * client on a real connection would see (`@erp-client/fake-erp`'s `WebReply`): a response; a transport error (Effect
 * 3's `RequestError` "Transport", Effect 4's `HttpClientError` whose reason is a `TransportError`) for a connection
 * dropped before a response; a response whose body fails after its first bytes for a body cut mid-way (reading it
 * fails); and no answer at all for a hang, until the caller gives up or the sandbox closes.
 */
import type * as ErpRules from "@erp-client/fake-erp/ErpRules"
import * as WebReply from "@erp-client/fake-erp/WebReply"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as Core from "./core.js"
import {
  HttpClient,
  type HttpClientError,
  type HttpClientRequest,
  HttpClientResponse,
  transportError
} from "./edition.js"

const deliver = (
  request: HttpClientRequest.HttpClientRequest,
  reply: ErpRules.Reply,
  closed: Deferred.Deferred<void>
): Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError> => {
  const delivery = WebReply.deliver(reply)
  switch (delivery._tag) {
    case "Response":
      return Effect.succeed(HttpClientResponse.fromWeb(request, delivery.response))
    case "Failed":
      return Effect.fail(transportError(request, delivery.description))
    case "Hang":
      // Interruptible: the caller's timeout or interruption ends it; closing the sandbox cuts it, as on a socket.
      return Effect.andThen(Deferred.await(closed), Effect.fail(transportError(request, WebReply.closedUnanswered)))
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
        const refused = WebReply.refusal(origin, url, isClosed)
        if (refused !== undefined) return Effect.fail(transportError(request, refused))
        return core.handle(
          WebReply.incoming(request.method, url, request.headers),
          (reply) => deliver(request, reply, closed)
        )
      })
    )
  })
