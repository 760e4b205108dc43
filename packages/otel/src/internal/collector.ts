/**
 * The HttpClient the exporters send on, kept out of the program's way by `internal/collectorGuard.ts` (the same in
 * both editions): every request bounded (the export timeout, and once the program ends, what is left of the shutdown
 * budget), a collector that failed (refused, silent, or answering with an error status) is left alone for a minute,
 * the exporters told at once and not retried (@effect/opentelemetry's exporter then drops its data for that minute,
 * and sends nothing more at shutdown), and the failure said once.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Guard from "./collectorGuard.js"

/** A collector that could not take an export. */
export type ExportFailure = Guard.ExportFailure

export interface Collector {
  /** `client`, guarded (see the module's comment), each request bounded by `timeoutMillis`. */
  readonly guard: (client: HttpClient.HttpClient, timeoutMillis: number) => HttpClient.HttpClient
  /** From now on, requests get what is left of `budgetMillis` at most: the program is ending. */
  readonly shutdown: (budgetMillis: number) => Effect.Effect<void>
}

export const make = (options: {
  /** Told once for each time the collector is found failing. */
  readonly onFailure: (failure: ExportFailure) => Effect.Effect<void>
}): Collector => {
  const state = Guard.makeState()

  const refuse = (request: HttpClientRequest.HttpClientRequest, description: string) =>
    // Not a transport error: the exporter does not retry it, and pauses.
    new HttpClientError.RequestError({ request, reason: "Encode", description })

  const failed = (request: HttpClientRequest.HttpClientRequest, reason: string) =>
    Effect.suspend(() =>
      Effect.zipRight(
        Guard.failed(state, Date.now()) ? options.onFailure({ url: request.url, reason }) : Effect.void,
        Effect.fail(refuse(request, `the collector failed: ${reason}`))
      )
    )

  const guard = (client: HttpClient.HttpClient, timeoutMillis: number): HttpClient.HttpClient =>
    HttpClient.transform(client, (effect, request) =>
      Effect.suspend(() => {
        const now = Date.now()
        if (Guard.paused(state, now)) return Effect.fail(refuse(request, Guard.PAUSED))
        const left = Guard.allowedMillis(state, now, timeoutMillis)
        return effect.pipe(
          Effect.timeoutFail({
            duration: Duration.millis(left),
            onTimeout: () => "timeout" as const
          }),
          Effect.catchAll((error) =>
            failed(
              request,
              error === "timeout"
                ? Guard.noAnswer(left)
                : error._tag === "RequestError"
                ? Guard.describeTransport(error.cause)
                : Guard.BROKEN_ANSWER
            )
          ),
          Effect.flatMap((response) =>
            response.status >= 200 && response.status < 300
              ? Effect.succeed(response)
              : failed(request, Guard.statusReason(response.status))
          )
        )
      }))

  return {
    guard,
    shutdown: (budgetMillis) => Effect.sync(() => Guard.shutdown(state, Date.now(), budgetMillis))
  }
}
