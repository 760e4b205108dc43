/**
 * The messages of the client's typed errors, as plain functions of their fields: each edition's `ErpError` classes
 * (`Schema.TaggedError` of Effect 3 or of Effect 4) say `get message() { return ErrorText.<kind>(this) }`, so a message
 * reads the same whichever edition raised it, and none of them ever holds the request, its headers or the key.
 *
 * @since 0.1.0
 */
import { seconds } from "./internal/text.js"

/**
 * How many attempts a call made and over how long: ` (4 attempts over 122.4 s)`; nothing for a call that failed at its
 * first attempt.
 */
const attemptsNote = (attempts: number | undefined, elapsedMillis: number | undefined): string =>
  attempts === undefined || attempts < 2
    ? ""
    : ` (${attempts} attempts${elapsedMillis === undefined ? "" : ` over ${(elapsedMillis / 1000).toFixed(1)} s`})`

const plural = (count: number, one: string, many: string): string => `${count} ${count === 1 ? one : many}`

/**
 * The fields every error of a request carries about its retries.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Attempts {
  readonly attempts?: number | undefined
  readonly elapsedMillis?: number | undefined
}

/**
 * @since 0.1.0
 * @category Models
 */
export interface UnauthorizedFields {
  readonly endpoint: string
  readonly status?: number | undefined
  readonly serverMessage?: string | undefined
}

/**
 * `Unauthorized`'s message.
 *
 * @example
 * ```ts
 * import { ErrorText } from "@erp-client/kernel"
 *
 * console.log(ErrorText.unauthorized({ endpoint: "partner/get", status: 403 }))
 * // => partner/get: the API key was refused (HTTP 403)
 * ```
 *
 * @since 0.1.0
 * @category Messages
 */
export const unauthorized = (error: UnauthorizedFields): string => {
  const said = error.serverMessage === undefined ? "" : `: ${error.serverMessage}`
  return error.status === undefined
    ? `${error.endpoint}: the API key was refused (Unauthorized)${said}`
    : `${error.endpoint}: the API key was refused (HTTP ${error.status}${said})`
}

/**
 * `NotFound`'s message.
 *
 * @example
 * ```ts
 * import { ErrorText } from "@erp-client/kernel"
 *
 * console.log(ErrorText.notFound({ endpoint: "partner/get", selector: "id=9" })) // => partner/get: not found (id=9)
 * ```
 *
 * @since 0.1.0
 * @category Messages
 */
export const notFound = (error: { readonly endpoint: string; readonly selector?: string | undefined }): string =>
  `${error.endpoint}: not found${error.selector === undefined ? "" : ` (${error.selector})`}`

/**
 * @since 0.1.0
 * @category Models
 */
export interface RateLimitedFields extends Attempts {
  readonly endpoint: string
  readonly limit?: number | undefined
  readonly remaining?: number | undefined
  readonly resetAt?: number | undefined
  readonly serverReset?: string | undefined
  readonly retryAfter?: string | undefined
  readonly waitedMillis: number
  readonly neededMillis?: number | undefined
  readonly budgetMillis?: number | undefined
  readonly maxWaitMillis?: number | undefined
  readonly tooManyRequests?: number | undefined
  /**
   * Past the rate-limit budget: the wait the server itself asked for (`Retry-After`, its reset), when that is the wait
   * that would have gone past it; absent when the client's own pause between repeated 429s would have.
   */
  readonly askedMillis?: number | undefined
}

/** What the server said of its limit, only what it said: `the server said: limit 10, remaining 0, …`. */
const serverSaid = (error: RateLimitedFields): string => {
  const said = [
    ...(error.retryAfter === undefined ? [] : [`Retry-After: ${error.retryAfter}`]),
    ...(error.limit === undefined ? [] : [`limit ${error.limit}`]),
    ...(error.remaining === undefined ? [] : [`remaining ${error.remaining}`]),
    ...(error.serverReset === undefined
      ? []
      : [
        `X-RateLimit-Reset: ${error.serverReset}${
          error.resetAt === undefined ? "" : ` (read as ${new Date(error.resetAt).toISOString()})`
        }`
      ])
  ]
  return said.length === 0
    ? "the server did not say its limit or when to come back"
    : `the server said: ${said.join(", ")}`
}

/**
 * `RateLimited`'s message: a call bounded by `maxWait` (what it sent and got); a wait the server asked for past the
 * budget, longer than all the call had waited (not waited for); 429s that used the budget up, one after another (how
 * many, over how long); or a pause beyond the budget set before the call.
 *
 * @example
 * ```ts
 * import { ErrorText } from "@erp-client/kernel"
 *
 * console.log(ErrorText.rateLimited({ endpoint: "partner/get", waitedMillis: 0, maxWaitMillis: 1_000, neededMillis: 4_200, attempts: 0 }))
 * // => partner/get: rate limited: the call may wait 1000 ms for the limit and would have waited 4200 ms; nothing was sent
 * console.log(ErrorText.rateLimited({ endpoint: "partner/get", waitedMillis: 1_800, budgetMillis: 2_000, neededMillis: 300, attempts: 7, elapsedMillis: 1_900, tooManyRequests: 7, retryAfter: "0" }))
 * // => partner/get: rate limited: 7 answers 429 over 1.9 s used up the rate-limit budget of 2 s (the next pause, 0.3 s, would have ended past it); the server said: Retry-After: 0
 * ```
 *
 * @since 0.1.0
 * @category Messages
 */
export const rateLimited = (error: RateLimitedFields): string => {
  const needed = error.neededMillis === undefined ? undefined : Math.round(error.neededMillis)
  if (error.maxWaitMillis !== undefined) {
    // Whether anything went out, and what came back: a bounded call fails at once, before or after a 429.
    const sent = error.attempts === 0
      ? "nothing was sent"
      : `${plural(error.attempts ?? 1, "request was", "requests were")} sent${
        error.tooManyRequests === undefined || error.tooManyRequests === 0
          ? ""
          : `, ${error.tooManyRequests === (error.attempts ?? 1) ? "" : `${error.tooManyRequests} `}answered 429; ${
            serverSaid(error)
          }`
      }`
    return `${error.endpoint}: rate limited: the call may wait ${Math.round(error.maxWaitMillis)} ms for the limit${
      needed === undefined ? "" : ` and would have waited ${needed} ms`
    }; ${sent}`
  }
  const elapsed = error.elapsedMillis ?? 0
  // The server's own wait is to blame only when it is longer than all the call had waited: otherwise the 429s before
  // it used the budget up, and saying "the server asked to wait 0.3 s" would send the reader to the wrong cause.
  if (error.askedMillis !== undefined && error.budgetMillis !== undefined && error.askedMillis >= elapsed) {
    const word = error.retryAfter !== undefined
      ? `Retry-After: ${error.retryAfter}`
      : error.serverReset !== undefined
      ? `X-RateLimit-Reset: ${error.serverReset}`
      : undefined
    return `${error.endpoint}: rate limited: the server asked to wait ${seconds(error.askedMillis)}${
      word === undefined ? "" : ` (${word})`
    }, past the rate-limit budget of ${seconds(error.budgetMillis)}: not waited for${
      attemptsNote(error.attempts, error.elapsedMillis)
    }`
  }
  if (error.budgetMillis !== undefined && (error.tooManyRequests ?? 0) > 0) {
    return `${error.endpoint}: rate limited: ${plural(error.tooManyRequests!, "answer", "answers")} 429 over ${
      seconds(elapsed)
    } used up the rate-limit budget of ${seconds(error.budgetMillis)}${
      needed === undefined ? "" : ` (the next pause, ${seconds(needed)}, would have ended past it)`
    }; ${serverSaid(error)}`
  }
  return `${error.endpoint}: rate limited past the rate-limit budget after waiting ${
    Math.round(error.waitedMillis)
  } ms${needed === undefined ? "" : `, would have waited ${needed} ms more`}${
    attemptsNote(error.attempts, error.elapsedMillis)
  }; ${serverSaid(error)}`
}

/**
 * `ApiError`'s message.
 *
 * @example
 * ```ts
 * import { ErrorText } from "@erp-client/kernel"
 *
 * console.log(ErrorText.apiError({ endpoint: "partner/get", code: 0, serverMessage: "Database is down" }))
 * // => partner/get: the server reported an error (code 0): Database is down
 * ```
 *
 * @since 0.1.0
 * @category Messages
 */
export const apiError = (
  error: { readonly endpoint: string; readonly code: number; readonly serverMessage: string | null }
): string =>
  `${error.endpoint}: the server reported an error (code ${error.code}): ${error.serverMessage ?? "no message"}`

/**
 * @since 0.1.0
 * @category Models
 */
export interface DecodeErrorFields extends Attempts {
  readonly endpoint: string
  readonly path: string
  readonly reason: string
  readonly offset?: number | undefined
  readonly recordId?: unknown
}

/**
 * `DecodeError`'s message.
 *
 * @example
 * ```ts
 * import { ErrorText } from "@erp-client/kernel"
 *
 * console.log(ErrorText.decodeError({ endpoint: "partner/list", path: "data[1].id", reason: "is missing", offset: 51 }))
 * // => partner/list: cannot decode data[1].id (record at offset 51): is missing
 * ```
 *
 * @since 0.1.0
 * @category Messages
 */
export const decodeError = (error: DecodeErrorFields): string => {
  const record = error.offset === undefined
    ? ""
    : ` (record at offset ${error.offset}${error.recordId === undefined ? "" : `, id ${String(error.recordId)}`})`
  return `${error.endpoint}: cannot decode ${error.path === "" ? "the body" : error.path}${record}: ${error.reason}${
    attemptsNote(error.attempts, error.elapsedMillis)
  }`
}

/**
 * @since 0.1.0
 * @category Models
 */
export interface RequestFields extends Attempts {
  readonly endpoint: string
  readonly method: string
}

/**
 * `TransportError`'s message.
 *
 * @example
 * ```ts
 * import { ErrorText } from "@erp-client/kernel"
 *
 * console.log(ErrorText.transportError({ endpoint: "partner/get", method: "GET", description: "connection refused" }))
 * // => GET partner/get: transport failure: connection refused
 * ```
 *
 * @since 0.1.0
 * @category Messages
 */
export const transportError = (error: RequestFields & { readonly description: string }): string =>
  `${error.method} ${error.endpoint}: transport failure: ${error.description}${
    attemptsNote(error.attempts, error.elapsedMillis)
  }`

/**
 * `TimeoutError`'s message.
 *
 * @example
 * ```ts
 * import { ErrorText } from "@erp-client/kernel"
 *
 * console.log(ErrorText.timeoutError({ endpoint: "partner/get", method: "GET", timeoutMillis: 10_000, attempts: 3, elapsedMillis: 30_400 }))
 * // => GET partner/get: no complete response within 10000 ms (3 attempts over 30.4 s)
 * ```
 *
 * @since 0.1.0
 * @category Messages
 */
export const timeoutError = (error: RequestFields & { readonly timeoutMillis: number }): string =>
  `${error.method} ${error.endpoint}: no complete response within ${error.timeoutMillis} ms${
    attemptsNote(error.attempts, error.elapsedMillis)
  }`

/**
 * @since 0.1.0
 * @category Models
 */
export interface HttpStatusErrorFields extends RequestFields {
  readonly status: number
  readonly retryAfter?: string | undefined
  readonly serverMessage?: string | undefined
  readonly neededMillis?: number | undefined
  readonly budgetMillis?: number | undefined
}

/**
 * `HttpStatusError`'s message.
 *
 * @example
 * ```ts
 * import { ErrorText } from "@erp-client/kernel"
 *
 * console.log(ErrorText.httpStatusError({ endpoint: "partner/get", method: "GET", status: 302 }))
 * // => GET partner/get: unexpected HTTP status 302 (redirects are not followed: the API key stays with the base URL)
 * ```
 *
 * @since 0.1.0
 * @category Messages
 */
export const httpStatusError = (error: HttpStatusErrorFields): string => {
  const asked = error.neededMillis === undefined || error.budgetMillis === undefined
    ? ""
    : `; the server asked to wait ${seconds(error.neededMillis)}, which would end past the retry budget of ${
      seconds(error.budgetMillis)
    }: not waited for`
  return `${error.method} ${error.endpoint}: unexpected HTTP status ${error.status}${
    error.serverMessage === undefined ? "" : ` (the server said: ${error.serverMessage})`
  }${
    error.status >= 300 && error.status < 400
      ? " (redirects are not followed: the API key stays with the base URL)"
      : ""
  }${error.retryAfter === undefined ? "" : ` (Retry-After: ${error.retryAfter})`}${asked}${
    attemptsNote(error.attempts, error.elapsedMillis)
  }`
}

/**
 * `ResponseTooLarge`'s message.
 *
 * @example
 * ```ts
 * import { ErrorText } from "@erp-client/kernel"
 *
 * console.log(ErrorText.responseTooLarge({ endpoint: "partner/list", method: "GET", limitBytes: 16_384 }))
 * // => GET partner/list: the response body is larger than 16384 bytes
 * ```
 *
 * @since 0.1.0
 * @category Messages
 */
export const responseTooLarge = (error: RequestFields & { readonly limitBytes: number }): string =>
  `${error.method} ${error.endpoint}: the response body is larger than ${error.limitBytes} bytes`

/**
 * `InvalidRequest`'s message.
 *
 * @example
 * ```ts
 * import { ErrorText } from "@erp-client/kernel"
 *
 * console.log(ErrorText.invalidRequest({ endpoint: "partner/list", reason: "list_count must be an integer >= 1, got 0" }))
 * // => partner/list: invalid request: list_count must be an integer >= 1, got 0
 * ```
 *
 * @since 0.1.0
 * @category Messages
 */
export const invalidRequest = (error: { readonly endpoint: string; readonly reason: string }): string =>
  `${error.endpoint}: invalid request: ${error.reason}`

/**
 * `PagingDrift`'s message.
 *
 * @example
 * ```ts
 * import { ErrorText } from "@erp-client/kernel"
 *
 * console.log(ErrorText.pagingDrift({ endpoint: "partner/list", offset: 300, requests: 4 }).slice(0, 62))
 * // => partner/list: the list changed faster than paging could follow
 * ```
 *
 * @since 0.1.0
 * @category Messages
 */
export const pagingDrift = (
  error: { readonly endpoint: string; readonly offset: number; readonly requests: number }
): string =>
  `${error.endpoint}: the list changed faster than paging could follow: near offset ${error.offset}, ` +
  `${error.requests} requests did not find its place again or reach its end (a larger overlap tolerates more change)`

/**
 * `PagingLoop`'s message.
 *
 * @example
 * ```ts
 * import { ErrorText } from "@erp-client/kernel"
 *
 * console.log(ErrorText.pagingLoop({ endpoint: "partner/list", offset: 200, reason: "the server ignores list_offset" }))
 * // => partner/list: paging stopped at offset 200: the server ignores list_offset
 * ```
 *
 * @since 0.1.0
 * @category Messages
 */
export const pagingLoop = (
  error: { readonly endpoint: string; readonly offset: number; readonly reason: string }
): string => `${error.endpoint}: paging stopped at offset ${error.offset}: ${error.reason}`

/**
 * @since 0.1.0
 * @category Models
 */
export interface ConditionIgnoredFields {
  readonly endpoint: string
  readonly field: string
  readonly asked: string
  readonly had?: string | undefined
  readonly offset: number
  readonly recordId?: unknown
}

// A condition as the command line's `--where` writes it; a value with spaces or symbols quoted as JSON.
const conditionShown = (field: string, asked: string): string =>
  `${field}=${/^[\w.+-]+$/.test(asked) ? asked : JSON.stringify(asked)}`

/**
 * `ConditionIgnored`'s message.
 *
 * @example
 * ```ts
 * import { ErrorText } from "@erp-client/kernel"
 *
 * console.log(ErrorText.conditionIgnored({
 *   endpoint: "partner/list",
 *   field: "nonexistent_field",
 *   asked: "1",
 *   offset: 0,
 *   recordId: 1
 * }))
 * // => partner/list: the server ignored the condition nonexistent_field=1: the record at offset 0 (id 1) has no field nonexistent_field
 * console.log(ErrorText.conditionIgnored({ endpoint: "partner/list", field: "is_customer", asked: "1", had: "0", offset: 3 }))
 * // => partner/list: the server ignored the condition is_customer=1: the record at offset 3 has is_customer 0
 * ```
 *
 * @since 0.1.0
 * @category Messages
 */
export const conditionIgnored = (error: ConditionIgnoredFields): string => {
  const id = error.recordId === undefined || error.recordId === null ? "" : ` (id ${String(error.recordId)})`
  const had = error.had === undefined ? `no field ${error.field}` : `${error.field} ${error.had}`
  return `${error.endpoint}: the server ignored the condition ${conditionShown(error.field, error.asked)}: the ` +
    `record at offset ${error.offset}${id} has ${had}`
}

/**
 * `RateLimiterUnavailable`'s message.
 *
 * @example
 * ```ts
 * import { ErrorText } from "@erp-client/kernel"
 *
 * console.log(ErrorText.rateLimiterUnavailable({ endpoint: "partner/get", description: "Redis fixedWindow: not connected" }))
 * // => partner/get: the rate limiter's store failed: Redis fixedWindow: not connected
 * ```
 *
 * @since 0.1.0
 * @category Messages
 */
export const rateLimiterUnavailable = (error: { readonly endpoint: string; readonly description: string }): string =>
  `${error.endpoint}: the rate limiter's store failed: ${error.description}`

// What to export for each variable a user is told to set; any other gets `<value>`.
const PLACEHOLDERS: Readonly<Record<string, string>> = {
  ERP_BASE_URL: "https://<your ERP's API address>",
  ERP_API_KEY: "<your API key>",
  ERP_REDIS_URL: "redis://<host>:6379"
}

/**
 * `ErpConfigError`'s message (its fields are `Settings.fault`'s): the variables not set and how to set them, or each
 * setting set wrong and why. It holds no value of any setting.
 *
 * @example
 * ```ts
 * import { ErrorText } from "@erp-client/kernel"
 *
 * console.log(ErrorText.configError({ reason: "Missing", settings: ["ERP_API_KEY"], details: [] }))
 * // => ERP_API_KEY is not set: export ERP_API_KEY=<your API key>
 * ```
 *
 * @since 0.1.0
 * @category Messages
 */
export const configError = (error: {
  readonly reason: "Missing" | "Invalid"
  readonly settings: ReadonlyArray<string>
  readonly details: ReadonlyArray<string>
}): string => {
  if (error.reason === "Invalid") {
    return error.details.length > 0 ? error.details.join("; ") : `a setting is not valid: ${error.settings.join(", ")}`
  }
  const exports = error.settings.map((name) => `${name}=${PLACEHOLDERS[name] ?? "<value>"}`).join(" ")
  return `${error.settings.join(" and ")} ${error.settings.length === 1 ? "is" : "are"} not set: export ${exports}`
}
