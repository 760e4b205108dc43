// Per edition: the Effect APIs the in-memory ERP uses whose names or shapes differ between Effect 3 and Effect 4.
/**
 * The Effect 3 edition's side of the adapter the sandbox's shared source imports (docs/editions.md): the Effect 4 test
 * kit holds the in-memory ERP (`Fault`, `internal/core.ts`, `internal/memoryClient.ts`, copied there by
 * `scripts/editions.ts`), so each name here has a twin of the same type in
 * `packages/effect4-testing/src/internal/edition.ts`, written with Effect 4's API.
 */
import * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"

export * as HttpClient from "@effect/platform/HttpClient"
export * as HttpClientError from "@effect/platform/HttpClientError"
export * as HttpClientRequest from "@effect/platform/HttpClientRequest"
export * as HttpClientResponse from "@effect/platform/HttpClientResponse"

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
