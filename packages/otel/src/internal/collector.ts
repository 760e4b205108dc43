/**
 * The HttpClient the exporters send on, kept out of the program's way by `internal/collectorGuard.ts`: every request
 * bounded, its answer's body included (the export timeout, and once the program ends, what is left of the shutdown
 * budget); a collector that failed (refused, silent, or answering with an error status) is left alone for a minute,
 * the exporters told at once with an error they do not retry (the adapter's `refuse`: the exporter then drops its data
 * for that minute, and sends nothing more at shutdown), and the failure said once.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Guard from "./collectorGuard.js"
import { type AnyHttpClient, connectionFailure, HttpClient, HttpClientError, refuse, type Request } from "./edition.js"

/** A collector that could not take an export. */
export type ExportFailure = Guard.ExportFailure

export interface Collector {
  /** `client`, guarded (see the module's comment), each request bounded by `timeoutMillis`. */
  readonly guard: (client: AnyHttpClient, timeoutMillis: number) => AnyHttpClient
  /** From now on, requests get what is left of `budgetMillis` at most: the program is ending. */
  readonly shutdown: (budgetMillis: number) => Effect.Effect<void>
}

export const make = (options: {
  /** Told once for each time the collector is found failing. */
  readonly onFailure: (failure: ExportFailure) => Effect.Effect<void>
}): Collector => {
  const state = Guard.makeState()

  const failed = (request: Request, reason: string) =>
    Effect.suspend(() =>
      Effect.andThen(
        Guard.failed(state, Date.now()) ? options.onFailure({ url: request.url, reason }) : Effect.void,
        Effect.fail(refuse(request, `the collector failed: ${reason}`))
      )
    )

  const guard = (client: AnyHttpClient, timeoutMillis: number): AnyHttpClient =>
    HttpClient.transform(client, (effect, request) =>
      Effect.suspend(() => {
        const now = Date.now()
        if (Guard.paused(state, now)) return Effect.fail(refuse(request, Guard.PAUSED))
        const left = Guard.allowedMillis(state, now, timeoutMillis)
        return effect.pipe(
          // The answer, its body read within the bound (the exporter reads it next, if at all, from the response's
          // cache): a collector that sends its headers and then stalls is as silent as one that never answers.
          Effect.flatMap((response) => Effect.as(response.arrayBuffer, response)),
          Effect.timeoutOption(Duration.millis(left)),
          Effect.catchIf(HttpClientError.isHttpClientError, (error) => {
            const connection = connectionFailure(error)
            return failed(
              request,
              connection === undefined ? Guard.BROKEN_ANSWER : Guard.describeTransport(connection.cause)
            )
          }),
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
