/**
 * Retries after a transient failure, for GET only: a POST may have been acted on before its answer was lost, so it
 * is never sent twice (a 429 is another matter: the server refused it before acting; see `limits.ts`).
 */
import * as HttpClient from "@effect/platform/HttpClient"
import { HttpStatusError, TimeoutError, TransportError } from "@erp-client/core/ErpError"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Schedule from "effect/Schedule"
import * as Observe from "./observe.js"

/** A reset connection, a timeout, or a status a proxy sends while the service is briefly away. */
export const isTransient = (error: unknown): boolean =>
  error instanceof TransportError || error instanceof TimeoutError ||
  (error instanceof HttpStatusError && [408, 500, 502, 503, 504].includes(error.status))

/** `retries` retries at most, jittered exponential from `baseDelay`: always bounded, never a tight loop. */
export const schedule = (retries: number, baseDelay: Duration.Duration) =>
  Schedule.exponential(baseDelay, 2).pipe(
    Schedule.jittered,
    Schedule.intersect(Schedule.recurs(retries)),
    Schedule.tapOutput(() => Metric.increment(Observe.retries))
  )

/** Retries a GET at the same request (same offset, same parameters) while it fails transiently, logging each. */
export const retryTransientGets =
  (retrySchedule: Schedule.Schedule<unknown, unknown>) =>
  <E, R>(client: HttpClient.HttpClient.With<E, R>): HttpClient.HttpClient.With<E, R> =>
    HttpClient.transform(client, (effect, request) =>
      request.method === "GET"
        ? Effect.retry(
          Effect.tapError(effect, (error) =>
            isTransient(error)
              ? Effect.logWarning(`${(error as { readonly message: string }).message}; retrying`)
              : Effect.void),
          { schedule: retrySchedule, while: isTransient }
        )
        : effect)
