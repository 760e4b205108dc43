/**
 * The HttpClient the exporters send on, kept out of the program's way: every request bounded (the export timeout, and
 * once the program ends, what is left of the shutdown budget), a collector that failed (refused, silent, or answering
 * with an error status) is left alone for a minute, the exporters told at once and not retried (@effect/opentelemetry's
 * exporter then drops its data for that minute, and sends nothing more at shutdown), and the failure said once.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"

/** A collector that could not take an export. */
export interface ExportFailure {
  /** Where the export went. */
  readonly url: string
  /** What went wrong, in a few words: `connection refused`, `no answer within 10 s`, `HTTP 401`. */
  readonly reason: string
}

export interface Collector {
  /** `client`, guarded (see the module's comment), each request bounded by `timeoutMillis`. */
  readonly guard: (client: HttpClient.HttpClient, timeoutMillis: number) => HttpClient.HttpClient
  /** From now on, requests get what is left of `budgetMillis` at most: the program is ending. */
  readonly shutdown: (budgetMillis: number) => Effect.Effect<void>
}

const PAUSE_MILLIS = 60_000

const codes: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host not found",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  ETIMEDOUT: "connection timed out",
  EPIPE: "connection closed",
  UND_ERR_SOCKET: "connection closed"
}

// The cause of a failed fetch, as Node's fetch nests it (`TypeError: fetch failed`, its cause the socket's error, or
// fetch's own reason: `bad port`): a known code in words, else the innermost message.
const describeTransport = (error: unknown): string => {
  let at: unknown = error
  let message = "the connection failed"
  for (let depth = 0; depth < 4 && at !== undefined; depth++) {
    if (Predicate.hasProperty(at, "code") && typeof at.code === "string" && codes[at.code] !== undefined) {
      return codes[at.code]!
    }
    if (Predicate.hasProperty(at, "message") && typeof at.message === "string" && at.message !== "") {
      message = at.message
    }
    at = Predicate.hasProperty(at, "cause") ? at.cause : undefined
  }
  return message
}

const seconds = (millis: number) => `${Math.round(millis / 100) / 10} s`

export const make = (options: {
  /** Told once for each time the collector is found failing. */
  readonly onFailure: (failure: ExportFailure) => Effect.Effect<void>
}): Collector => {
  let pausedUntil = 0
  let deadline: number | undefined = undefined

  const refuse = (request: HttpClientRequest.HttpClientRequest, description: string) =>
    // Not a transport error: the exporter does not retry it, and pauses.
    new HttpClientError.RequestError({ request, reason: "Encode", description })

  const failed = (request: HttpClientRequest.HttpClientRequest, reason: string) =>
    Effect.suspend(() => {
      const first = Date.now() >= pausedUntil
      pausedUntil = Date.now() + PAUSE_MILLIS
      return Effect.zipRight(
        first ? options.onFailure({ url: request.url, reason }) : Effect.void,
        Effect.fail(refuse(request, `the collector failed: ${reason}`))
      )
    })

  const guard = (client: HttpClient.HttpClient, timeoutMillis: number): HttpClient.HttpClient =>
    HttpClient.transform(client, (effect, request) =>
      Effect.suspend(() => {
        const now = Date.now()
        if (now < pausedUntil) return Effect.fail(refuse(request, "the collector failed a moment ago"))
        const left = deadline === undefined ? timeoutMillis : Math.max(0, Math.min(timeoutMillis, deadline - now))
        return effect.pipe(
          Effect.timeoutFail({
            duration: Duration.millis(left),
            onTimeout: () => "timeout" as const
          }),
          Effect.catchAll((error) =>
            failed(
              request,
              error === "timeout"
                ? `no answer within ${seconds(left)}`
                : error._tag === "RequestError"
                ? describeTransport(error.cause)
                : `the answer broke off`
            )
          ),
          Effect.flatMap((response) =>
            response.status >= 200 && response.status < 300
              ? Effect.succeed(response)
              : failed(request, `HTTP ${response.status}`)
          )
        )
      }))

  return {
    guard,
    shutdown: (budgetMillis) =>
      Effect.sync(() => {
        deadline = Date.now() + budgetMillis
      })
  }
}
