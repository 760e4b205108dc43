/**
 * The HttpClient the exporters send on, kept out of the program's way by `internal/collectorGuard.ts` (as the Effect 3
 * edition's): every request bounded, its answer's body included (the export timeout, and once the program ends, what
 * is left of the shutdown budget); a collector that failed (refused, silent, or answering with an error status) is
 * left alone for a minute, the exporters told at once with an error `effect/observability`'s exporter does not retry
 * (an `EncodeError`: it then drops its data for that minute, and sends nothing more at shutdown), and the failure said
 * once.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Option from "effect/Option"
import * as Guard from "./collectorGuard.js"

/** A collector that could not take an export. */
export type ExportFailure = Guard.ExportFailure

export interface Collector {
  /** `client`, guarded (see the module's comment), each request bounded by `timeoutMillis`. */
  readonly guard: (client: HttpClient.HttpClient, timeoutMillis: number) => HttpClient.HttpClient
  /** From now on, requests get what is left of `budgetMillis` at most: the program is ending. */
  readonly shutdown: (budgetMillis: number) => Effect.Effect<void>
}

const refuse = (request: HttpClientRequest.HttpClientRequest, description: string) =>
  new HttpClientError.HttpClientError({ reason: new HttpClientError.EncodeError({ request, description }) })

export const make = (options: {
  /** Told once for each time the collector is found failing. */
  readonly onFailure: (failure: ExportFailure) => Effect.Effect<void>
}): Collector => {
  const state = Guard.makeState()

  const failed = (request: HttpClientRequest.HttpClientRequest, reason: string) =>
    Effect.suspend(() =>
      Effect.andThen(
        Guard.failed(state, Date.now()) ? options.onFailure({ url: request.url, reason }) : Effect.void,
        Effect.fail(refuse(request, `the collector failed: ${reason}`))
      )
    )

  // The answer, its body read (the exporter reads it next, from the response's cache).
  const answered = (
    response: HttpClientResponse.HttpClientResponse
  ): Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError> =>
    Effect.as(response.arrayBuffer, response)

  const guard = (client: HttpClient.HttpClient, timeoutMillis: number): HttpClient.HttpClient =>
    HttpClient.transform(client, (effect, request) =>
      Effect.suspend(() => {
        const now = Date.now()
        if (Guard.paused(state, now)) return Effect.fail(refuse(request, Guard.PAUSED))
        const left = Guard.allowedMillis(state, now, timeoutMillis)
        return effect.pipe(
          Effect.flatMap(answered),
          Effect.timeoutOption(Duration.millis(left)),
          Effect.catch((error) =>
            failed(
              request,
              error.reason._tag === "TransportError" ? Guard.describeTransport(error.reason.cause) : Guard.BROKEN_ANSWER
            )
          ),
          Effect.flatMap((response) =>
            Option.isNone(response)
              ? failed(request, Guard.noAnswer(left))
              : response.value.status >= 200 && response.value.status < 300
              ? Effect.succeed(response.value)
              : failed(request, Guard.statusReason(response.value.status))
          )
        )
      }))

  return {
    guard,
    shutdown: (budgetMillis) => Effect.sync(() => Guard.shutdown(state, Date.now(), budgetMillis))
  }
}
