import type { Cause } from "effect"
import { Effect, Schedule } from "effect"
import { Sandbox } from "../src/index.js"

/** Each test's own bound: these tests talk to a real server on loopback. */
export const TIMEOUT = 10_000

/** Runs `f` against a sandbox built from `options`, closed when `f` ends. */
export const withSandbox = <A, E>(
  options: Sandbox.Options,
  f: (sandbox: Sandbox.Service) => Effect.Effect<A, E>
) => Effect.flatMap(Sandbox.Sandbox, f).pipe(Effect.provide(Sandbox.layer(options)))

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
  readonly signal?: AbortSignal
}

/** One request with real `fetch` on loopback; fails (as a value) when fetch or reading the body rejects. */
export const send = (
  baseUrl: string,
  path: string,
  params: ReadonlyArray<readonly [string, string]> | Record<string, string> = [],
  options: CallOptions = {}
): Effect.Effect<Reply, Cause.UnknownException> =>
  Effect.tryPromise(async () => {
    const query = new URLSearchParams(
      Array.isArray(params) ? params as Array<[string, string]> : Object.entries(params)
    ).toString()
    const headers: Record<string, string> = { "Content-Type": "application/json" }
    if (options.key !== null) headers["X-API-KEY"] = options.key ?? "sandbox-key"
    const response = await fetch(`${baseUrl}${path}${query === "" ? "" : `?${query}`}`, {
      method: options.method ?? "GET",
      headers,
      ...(options.signal === undefined ? {} : { signal: options.signal })
    })
    const text = await response.text()
    return { status: response.status, headers: response.headers, text } satisfies Reply
  })

/** Like `send`, for requests that must get a complete answer. */
export const call = (...args: Parameters<typeof send>): Effect.Effect<Reply> => Effect.orDie(send(...args))

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
