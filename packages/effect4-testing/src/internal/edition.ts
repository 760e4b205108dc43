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
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpServer from "effect/http/HttpServer"
import type * as HttpServerError from "effect/http/HttpServerError"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as NetAddress from "effect/net/NetAddress"
import type * as TestClockModule from "effect/testing/TestClock"
import type * as Http from "node:http"
import type * as Http2 from "node:http2"

export * as HttpClient from "effect/http/HttpClient"
export * as HttpClientError from "effect/http/HttpClientError"
export * as HttpClientRequest from "effect/http/HttpClientRequest"
export * as HttpClientResponse from "effect/http/HttpClientResponse"
export * as HttpServer from "effect/http/HttpServer"
export * as HttpServerRequest from "effect/http/HttpServerRequest"
export * as HttpServerResponse from "effect/http/HttpServerResponse"

/** The base of a service's class, `class X extends Service<X, Shape>()(key) {}`: Effect 4's `Context.Service`. */
export const Service = <Self, Shape>() => <const Key extends string>(key: Key) => Context.Service<Self, Shape>()(key)

/** A layer of the service `effect` makes, its resources released when the layer is: Effect 4's `Layer.effect`. */
export const scopedLayer = Layer.effect

/** What serving on a socket fails with (the port taken, say). */
export type ServeError = HttpServerError.ServeError

/** A response of JSON, `body` encoded at once. */
export const jsonResponse = (body: unknown, options?: { readonly status?: number | undefined }) =>
  HttpServerResponse.jsonUnsafe(body, options)

/** An effect that ends when `register` calls `resume`; what `register` returns runs if it is interrupted first. */
export const async = <A>(
  register: (resume: (effect: Effect.Effect<A>) => void) => void | Effect.Effect<void>
): Effect.Effect<A> => Effect.callback<A>((resume) => register(resume))

/** The Node response a request served on Node answers through. */
export type ServerResponse = Http.ServerResponse | Http2.Http2ServerResponse

/** The Node response of `request`. */
export const serverResponse = (request: HttpServerRequest.HttpServerRequest): ServerResponse =>
  NodeHttpServerRequest.toServerResponse(request)

/** The host and port a server listens on, when it listens on TCP. */
export const tcpAddress = (
  server: Context.Service.Shape<typeof HttpServer.HttpServer>
): { readonly hostname: string; readonly port: number } | undefined =>
  server.address._tag === "UnixPathAddress"
    ? undefined
    : { hostname: NetAddress.formatIp(server.address.address), port: server.address.port }

/** A duration as users write it (`"5 minutes"`, a number of milliseconds, a `Duration`). */
export type DurationInput = Duration.Input

/**
 * A duration as users write it, in milliseconds: how the rules of `@erp-client/fake-erp` read the in-memory ERP's
 * options and faults, which are written with Effect's durations.
 */
export const toMillis = (input: DurationInput): number => Duration.toMillis(input)

/** The failure of a request whose connection failed (refused, closed before or without an answer). */
export const transportError = (
  request: HttpClientRequest.HttpClientRequest,
  description: string
): HttpClientError.HttpClientError =>
  new HttpClientError.HttpClientError({ reason: new HttpClientError.TransportError({ request, description }) })

/** `input` as a `Duration`: Effect 4's `Duration.fromInputUnsafe`. */
export const toDuration: (input: DurationInput) => Duration.Duration = Duration.fromInputUnsafe

/** A layer of the services `effect` makes, its resources released when the layer is: Effect 4's `Layer.effectContext`. */
export const scopedContext = Layer.effectContext

/** What the rate limiter tells about each wait. */
export type WaitObserver = Context.Service.Shape<typeof ErpRateLimiter.WaitObserver>

/** A fiber `fork` started. */
export type Fiber<A, E> = FiberModule.Fiber<A, E>

/** Runs `self` in a fiber of its own, a child of the current one: Effect 4's `Effect.forkChild`. */
export const fork = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<Fiber<A, E>, never, R> =>
  Effect.forkChild(self)

/** Whether `fiber` is still running, read at once. */
export const isRunning = <A, E>(fiber: Fiber<A, E>): boolean => fiber.pollUnsafe() === undefined

/** A defect saying `message` (shown by the exit's text, as a test prints it). */
export const dieMessage = (message: string): Effect.Effect<never> => Effect.die(new Error(message))

/** The clock `it.effect` provides, which moves only when the test moves it. */
export type TestClock = TestClockModule.TestClock

/** Whether `clock` is a `TestClock`. */
export const isTestClock = (clock: Clock.Clock): clock is TestClock =>
  typeof (clock as Partial<TestClock>).adjust === "function" &&
  typeof (clock as Partial<TestClock>).setTime === "function" &&
  typeof (clock as Partial<TestClock>).withLive === "function"

/** The time on `clock`, in milliseconds since the epoch, read at once. */
export const nowMillis = (clock: Clock.Clock): number => clock.currentTimeMillisUnsafe()

/** Sleeps `duration` of real time, whatever clock the test's fibers have. */
export const sleepLive = (clock: TestClock, duration: Duration.Duration): Effect.Effect<void> =>
  clock.withLive(Effect.sleep(duration))

/** The sleeps on a `TestClock`: the calls run through `run`, and when the sleeps in progress end. */
export interface Sleeps {
  /** `effect`, its sleeps on the test's clock known to `wakes`. */
  readonly run: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** When each sleep in progress ends, in milliseconds since the epoch. */
  readonly wakes: Effect.Effect<ReadonlyArray<number>>
}

/**
 * The sleeps of `clock`. Effect 4's `TestClock` keeps the times its sleepers wake up to itself, so `run` runs an
 * effect on a clock that is the test's in all but one thing: a sleep is noted while it lasts.
 */
export const sleepsOf = (clock: TestClock): Sleeps => {
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
