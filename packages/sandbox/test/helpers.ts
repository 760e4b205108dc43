import { FetchHttpClient, HttpClient, HttpClientRequest } from "@effect/platform"
import type { HttpClientError } from "@effect/platform"
import { Effect, Layer, Schedule } from "effect"
import { Sandbox } from "../src/index.js"

/** Each test's own bound: these tests talk to a real server on loopback, or to the sandbox in memory. */
export const TIMEOUT = 10_000

/**
 * How the tests reach the sandbox: on a loopback socket (`Sandbox.layer`, the platform's fetch client), or in memory
 * (`Sandbox.layerHttpClient`). Every behaviour is the same over both, so the suites run over both.
 */
export type Transport = "socket" | "memory"

export const transports: ReadonlyArray<Transport> = ["socket", "memory"]

/** Runs `f` against a sandbox built from `options`, reached over `transport`, closed when `f` ends. */
export const withSandboxOver = (transport: Transport) =>
<A, E>(
  options: Sandbox.Options,
  f: (sandbox: Sandbox.Service) => Effect.Effect<A, E, HttpClient.HttpClient>
) =>
  Effect.flatMap(Sandbox.Sandbox, f).pipe(
    Effect.provide(
      transport === "socket"
        ? Layer.merge(Sandbox.layer(options), FetchHttpClient.layer)
        : Sandbox.layerHttpClient(options)
    )
  )

/** Runs `f` against a sandbox on a loopback socket. */
export const withSandbox = withSandboxOver("socket")

/** A value as it comes back from JSON: what the sandbox serves for a record it generated. */
export const roundTrip = (u: unknown): unknown => JSON.parse(JSON.stringify(u))

export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly text: string
}

export interface CallOptions {
  /** The API key to send; `null` sends no header. */
  readonly key?: string | null
  readonly method?: string
}

/** One request with the HttpClient of the transport; fails (as a value) when sending it or reading the body fails. */
export const send = (
  baseUrl: string,
  path: string,
  params: ReadonlyArray<readonly [string, string]> | Record<string, string> = [],
  options: CallOptions = {}
): Effect.Effect<Reply, HttpClientError.HttpClientError, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    let request = HttpClientRequest.make(options.method === "POST" ? "POST" : "GET")(`${baseUrl}${path}`).pipe(
      HttpClientRequest.setUrlParams(Array.isArray(params) ? params : Object.entries(params)),
      HttpClientRequest.setHeader("Content-Type", "application/json")
    )
    if (options.key !== null) request = HttpClientRequest.setHeader(request, "X-API-KEY", options.key ?? "sandbox-key")
    const response = yield* client.execute(request)
    const text = yield* response.text
    return { status: response.status, headers: new Headers(Object.entries(response.headers)), text } satisfies Reply
  })

/** Like `send`, for requests that must get a complete answer. */
export const call = (...args: Parameters<typeof send>): Effect.Effect<Reply, never, HttpClient.HttpClient> =>
  Effect.orDie(send(...args))

export const json = (reply: Reply): any => JSON.parse(reply.text)

/** Re-runs `effect` until `predicate` holds (up to about 3 seconds): for effects of events on other fibers. */
export const eventually = <A>(effect: Effect.Effect<A>, predicate: (a: A) => boolean) =>
  effect.pipe(
    Effect.filterOrFail(predicate, () => "condition not reached"),
    Effect.retry({ times: 150, schedule: Schedule.spaced("20 millis") }),
    Effect.orDie
  )

/** The company name of the seeded partner at `index`; fails the test when that partner has none (an odd record). */
export const companyNameAt = (sandbox: Sandbox.Service, index: number): string => {
  const name = sandbox.partnerAt(index).company_name
  if (typeof name !== "string" || name === "") throw new Error(`partner ${index} has no company name`)
  return name
}
