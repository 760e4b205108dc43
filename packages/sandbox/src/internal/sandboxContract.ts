/**
 * The contract of the sandbox's adapter (docs/editions.md): each function `src/internal/edition.ts` gives the
 * sandbox's shared source, with its signature and what it does, written once. The Effect 3 sandbox's adapter and the
 * Effect 4 test kit's (which holds the sandbox, this file copied there by `scripts/editions.ts`) implement it with
 * their own Effect's API; the types that differ between the editions are the adapter's own, named here from it.
 */
import type * as Clock from "effect/Clock"
import type * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type {
  DurationInput,
  HttpClientError,
  HttpClientRequest,
  HttpServerRequest,
  HttpServerResponse,
  HttpServerShape,
  ServerResponse,
  ServiceClass,
  ServiceKey
} from "./edition.js"

/** The functions of the sandbox's adapter, by name. */
export interface SandboxContract {
  /** The base of a service's class, `class X extends Service<X, Shape>()(key) {}`. */
  readonly Service: <Self, Shape>() => <const Key extends string>(key: Key) => ServiceClass<Self, Key, Shape>
  /** A layer of the service `effect` makes, its resources released when the layer is. */
  readonly scopedLayer: <I, S, E, R>(
    service: ServiceKey<I, S>,
    effect: Effect.Effect<NoInfer<S>, E, R>
  ) => Layer.Layer<I, E, Exclude<R, Scope.Scope>>
  /** A layer of the services `effect` makes, its resources released when the layer is. */
  readonly scopedContext: <A, E, R>(
    effect: Effect.Effect<Context.Context<A>, E, R>
  ) => Layer.Layer<A, E, Exclude<R, Scope.Scope>>
  /** A response of JSON, `body` encoded at once. */
  readonly jsonResponse: (
    body: unknown,
    options?: { readonly status?: number | undefined }
  ) => HttpServerResponse.HttpServerResponse
  /** An effect that ends when `register` calls `resume`; what `register` returns runs if it is interrupted first. */
  readonly async: <A>(
    register: (resume: (effect: Effect.Effect<A>) => void) => void | Effect.Effect<void>
  ) => Effect.Effect<A>
  /** The Node response of `request`. */
  readonly serverResponse: (request: HttpServerRequest.HttpServerRequest) => ServerResponse
  /** The host and port a server listens on, when it listens on TCP. */
  readonly tcpAddress: (server: HttpServerShape) => { readonly hostname: string; readonly port: number } | undefined
  /**
   * A duration as users write it, in milliseconds: how the rules of `@erp-client/fake-erp` read the sandbox's options
   * and faults, which are written with Effect's durations.
   */
  readonly toMillis: (input: DurationInput) => number
  /** The time on `clock`, in milliseconds since the epoch, read at once. */
  readonly nowMillis: (clock: Clock.Clock) => number
  /** The failure of a request whose connection failed (refused, closed before or without an answer). */
  readonly transportError: (
    request: HttpClientRequest.HttpClientRequest,
    description: string
  ) => HttpClientError.HttpClientError
}
