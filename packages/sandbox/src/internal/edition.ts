// Per edition: the Effect APIs the in-memory ERP uses whose names or shapes differ between Effect 3 and Effect 4.
/**
 * The Effect 3 edition's side of the adapter the sandbox's shared source imports (docs/editions.md): the Effect 4 test
 * kit holds the sandbox (`Sandbox`, `Fault`, `internal/core.ts`, `internal/memoryClient.ts`, `internal/nodeServer.ts`,
 * copied there by `scripts/editions.ts`), so each name here has a twin of the same type in
 * `packages/effect4-testing/src/internal/edition.ts`, written with Effect 4's API.
 */
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpServer from "@effect/platform/HttpServer"
import type * as HttpServerError from "@effect/platform/HttpServerError"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Http from "node:http"

export * as HttpClient from "@effect/platform/HttpClient"
export * as HttpClientError from "@effect/platform/HttpClientError"
export * as HttpClientRequest from "@effect/platform/HttpClientRequest"
export * as HttpClientResponse from "@effect/platform/HttpClientResponse"
export * as HttpServer from "@effect/platform/HttpServer"
export * as HttpServerRequest from "@effect/platform/HttpServerRequest"
export * as HttpServerResponse from "@effect/platform/HttpServerResponse"

/**
 * The base of a service's class, `class X extends Service<X, Shape>()(key) {}`: Effect 3's `Context.Tag(key)<X, Shape>()`.
 */
export const Service = <Self, Shape>() => <const Key extends string>(key: Key): Context.TagClass<Self, Key, Shape> =>
  Context.Tag(key)<Self, Shape>()

/** A layer of the service `effect` makes, its resources released when the layer is: Effect 3's `Layer.scoped`. */
export const scopedLayer = Layer.scoped

/** A layer of the services `effect` makes, its resources released when the layer is: Effect 3's `Layer.scopedContext`. */
export const scopedContext = Layer.scopedContext

/** What serving on a socket fails with (the port taken, say). */
export type ServeError = HttpServerError.ServeError

/** A response of JSON, `body` encoded at once. */
export const jsonResponse = (body: unknown, options?: { readonly status?: number | undefined }) =>
  HttpServerResponse.unsafeJson(body, options)

/** An effect that ends when `register` calls `resume`; what `register` returns runs if it is interrupted first. */
export const async = <A>(
  register: (resume: (effect: Effect.Effect<A>) => void) => void | Effect.Effect<void>
): Effect.Effect<A> => Effect.async<A>((resume) => register(resume))

/** The Node response a request served on Node answers through. */
export type ServerResponse = Http.ServerResponse

/** The Node response of `request`. */
export const serverResponse = (request: HttpServerRequest.HttpServerRequest): ServerResponse =>
  NodeHttpServerRequest.toServerResponse(request)

/** The host and port a server listens on, when it listens on TCP. */
export const tcpAddress = (
  server: HttpServer.HttpServer
): { readonly hostname: string; readonly port: number } | undefined =>
  server.address._tag === "TcpAddress" ? { hostname: server.address.hostname, port: server.address.port } : undefined

/** A duration as users write it (`"5 minutes"`, a number of milliseconds, a `Duration`). */
export type DurationInput = Duration.DurationInput

/**
 * A duration as users write it, in milliseconds: how the rules of `@erp-client/fake-erp` read the sandbox's options
 * and faults, which are written with Effect's durations.
 */
export const toMillis = (input: DurationInput): number => Duration.toMillis(input)

/** The time on `clock`, in milliseconds since the epoch, read at once. */
export const nowMillis = (clock: Clock.Clock): number => clock.unsafeCurrentTimeMillis()

/** The failure of a request whose connection failed (refused, closed before or without an answer). */
export const transportError = (
  request: HttpClientRequest.HttpClientRequest,
  description: string
): HttpClientError.HttpClientError => new HttpClientError.RequestError({ request, reason: "Transport", description })
