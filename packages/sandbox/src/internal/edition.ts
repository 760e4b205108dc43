// Per edition: the Effect APIs the in-memory ERP uses whose names or shapes differ between Effect 3 and Effect 4.
/**
 * The Effect 3 edition's side of the adapter the sandbox's shared source imports (docs/editions.md): the Effect 4 test
 * kit holds the sandbox (`Sandbox`, `Fault`, `internal/core.ts`, `internal/memoryClient.ts`, `internal/nodeServer.ts`,
 * copied there by `scripts/editions.ts`), so each name here has a twin of the same type in
 * `packages/effect4-testing/src/internal/edition.ts`, written with Effect 4's API.
 */
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpServer from "@effect/platform/HttpServer"
import type * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Http from "node:http"
import type { SandboxContract } from "./sandboxContract.js"

export * as HttpClient from "@effect/platform/HttpClient"
export * as HttpClientError from "@effect/platform/HttpClientError"
export * as HttpClientRequest from "@effect/platform/HttpClientRequest"
export * as HttpClientResponse from "@effect/platform/HttpClientResponse"
export * as HttpServer from "@effect/platform/HttpServer"
export * as HttpServerRequest from "@effect/platform/HttpServerRequest"
export * as HttpServerResponse from "@effect/platform/HttpServerResponse"

// The types that differ between the editions: the contract (`sandboxContract.ts`) names its functions' types by these.

/** The class a service's class extends: Effect 3's `Context.TagClass`. */
export type ServiceClass<Self, Key extends string, Shape> = Context.TagClass<Self, Key, Shape>

/** The key of a service: Effect 3's `Context.Tag`. */
export type ServiceKey<I, S> = Context.Tag<I, S>

/** What serving on a socket fails with (the port taken, say). */
export type ServeError = HttpServerError.ServeError

/** The Node response a request served on Node answers through. */
export type ServerResponse = Http.ServerResponse

/** A server, as its service gives it. */
export type HttpServerShape = HttpServer.HttpServer

/** A duration as users write it (`"5 minutes"`, a number of milliseconds, a `Duration`). */
export type DurationInput = Duration.DurationInput

/** The adapter, with Effect 3's API: what each function does is said once, in `SandboxContract`. */
const edition: SandboxContract = {
  // Generic in the types its body passes on, so written with them: Effect 3's `Context.Tag(key)<X, Shape>()`.
  Service: <Self, Shape>() => <const Key extends string>(key: Key) => Context.Tag(key)<Self, Shape>(),
  scopedLayer: (service, effect) => Layer.scoped(service, effect),
  scopedContext: Layer.scopedContext,
  jsonResponse: (body, options) => HttpServerResponse.unsafeJson(body, options),
  async: (register) => Effect.async((resume) => register(resume)),
  serverResponse: (request) => NodeHttpServerRequest.toServerResponse(request),
  tcpAddress: (server) =>
    server.address._tag === "TcpAddress" ? { hostname: server.address.hostname, port: server.address.port } : undefined,
  toMillis: (input) => Duration.toMillis(input),
  nowMillis: (clock) => clock.unsafeCurrentTimeMillis(),
  transportError: (request, description) =>
    new HttpClientError.RequestError({ request, reason: "Transport", description })
}

export const {
  async,
  jsonResponse,
  nowMillis,
  scopedContext,
  scopedLayer,
  serverResponse,
  Service,
  tcpAddress,
  toMillis,
  transportError
} = edition
