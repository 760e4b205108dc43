// Per edition: the Effect APIs this package uses whose names or shapes differ between Effect 3 and Effect 4.
/**
 * The Effect 4 edition's side of the adapters the shared source imports (docs/editions.md): each name here has a twin
 * of the same type in `packages/testing/src/internal/edition.ts` (for `ErpTest` and `internal/watch.ts`) or in
 * `packages/sandbox/src/internal/edition.ts` (for the sandbox: `Sandbox`, `Fault`, `internal/core.ts`,
 * `internal/memoryClient.ts`, `internal/nodeServer.ts`), written with Effect 3's API. The shared modules, copied here from the Effect 3 packages
 * by `scripts/editions.ts`, import what differs from here and everything else from `effect` itself.
 */
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import type * as ErpRateLimiter from "@erp-client/effect4-client/ErpRateLimiter"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as FiberModule from "effect/Fiber"
import * as HttpClientError from "effect/http/HttpClientError"
import type * as HttpServer from "effect/http/HttpServer"
import type * as HttpServerError from "effect/http/HttpServerError"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as NetAddress from "effect/net/NetAddress"
import type * as TestClockModule from "effect/testing/TestClock"
import type * as Http from "node:http"
import type * as Http2 from "node:http2"
import type { Contract } from "./editionContract.js"
import type { SandboxContract } from "./sandboxContract.js"

export * as HttpClient from "effect/http/HttpClient"
export * as HttpClientError from "effect/http/HttpClientError"
export * as HttpClientRequest from "effect/http/HttpClientRequest"
export * as HttpClientResponse from "effect/http/HttpClientResponse"
export * as HttpServer from "effect/http/HttpServer"
export * as HttpServerRequest from "effect/http/HttpServerRequest"
export * as HttpServerResponse from "effect/http/HttpServerResponse"

export type { Sleeps } from "./editionContract.js"

// The types that differ between the editions: the contracts (`editionContract.ts`, `sandboxContract.ts`) name their
// functions' types by these.

/** The class a service's class extends: Effect 4's `Context.ServiceClass`. */
export type ServiceClass<Self, Key extends string, Shape> = Context.ServiceClass<Self, Key, Shape>

/** The key of a service: Effect 4's `Context.Key`. */
export type ServiceKey<I, S> = Context.Key<I, S>

/** What serving on a socket fails with (the port taken, say). */
export type ServeError = HttpServerError.ServeError

/** The Node response a request served on Node answers through. */
export type ServerResponse = Http.ServerResponse | Http2.Http2ServerResponse

/** A server, as its service gives it. */
export type HttpServerShape = Context.Service.Shape<typeof HttpServer.HttpServer>

/** A duration as users write it (`"5 minutes"`, a number of milliseconds, a `Duration`). */
export type DurationInput = Duration.Input

/** What the rate limiter tells about each wait. */
export type WaitObserver = Context.Service.Shape<typeof ErpRateLimiter.WaitObserver>

/** A fiber `fork` started. */
export type Fiber<A, E> = FiberModule.Fiber<A, E>

/** The clock `it.effect` provides, which moves only when the test moves it. */
export type TestClock = TestClockModule.TestClock

/**
 * The adapter, with Effect 4's API: the test kit's (`Contract`) and the sandbox's (`SandboxContract`), what each
 * function does said once in its contract.
 */
const edition: Contract & SandboxContract = {
  // Generic in the types its body passes on, so written with them: Effect 4's `Context.Service`.
  Service: <Self, Shape>() => <const Key extends string>(key: Key) => Context.Service<Self, Shape>()(key),
  scopedLayer: (service, effect) => Layer.effect(service, effect),
  scopedContext: Layer.effectContext,
  jsonResponse: (body, options) => HttpServerResponse.jsonUnsafe(body, options),
  async: (register) => Effect.callback((resume) => register(resume)),
  serverResponse: (request) => NodeHttpServerRequest.toServerResponse(request),
  tcpAddress: (server) =>
    server.address._tag === "UnixPathAddress"
      ? undefined
      : { hostname: NetAddress.formatIp(server.address.address), port: server.address.port },
  toMillis: (input) => Duration.toMillis(input),
  transportError: (request, description) =>
    new HttpClientError.HttpClientError({ reason: new HttpClientError.TransportError({ request, description }) }),
  toDuration: Duration.fromInputUnsafe,
  fork: Effect.forkChild,
  isRunning: (fiber) => fiber.pollUnsafe() === undefined,
  dieMessage: (message) => Effect.die(new Error(message)),
  isTestClock: (clock): clock is TestClock =>
    typeof (clock as Partial<TestClock>).adjust === "function" &&
    typeof (clock as Partial<TestClock>).setTime === "function" &&
    typeof (clock as Partial<TestClock>).withLive === "function",
  nowMillis: (clock) => clock.currentTimeMillisUnsafe(),
  sleepLive: (clock, duration) => clock.withLive(Effect.sleep(duration)),
  // Effect 4's `TestClock` keeps the times its sleepers wake up to itself, so `run` runs an effect on a clock that is
  // the test's in all but one thing: a sleep is noted while it lasts.
  sleepsOf: (clock) => {
    const sleeps = new Map<number, number>()
    let nextSleep = 0
    const noting: Clock.Clock = {
      ...clock,
      sleep: (duration) =>
        Effect.suspend(() => {
          const id = nextSleep++
          sleeps.set(id, clock.currentTimeMillisUnsafe() + Duration.toMillis(duration))
          return Effect.ensuring(clock.sleep(duration), Effect.sync(() => sleeps.delete(id)))
        })
    }
    return {
      run: (effect) =>
        Clock.clockWith((current) => current === clock ? Effect.provideService(effect, Clock.Clock, noting) : effect),
      wakes: Effect.sync(() => [...sleeps.values()])
    }
  }
}

export const {
  async,
  dieMessage,
  fork,
  isRunning,
  isTestClock,
  jsonResponse,
  nowMillis,
  scopedContext,
  scopedLayer,
  serverResponse,
  Service,
  sleepLive,
  sleepsOf,
  tcpAddress,
  toDuration,
  toMillis,
  transportError
} = edition
