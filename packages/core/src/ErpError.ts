/**
 * The typed failures of the ERP API v2 client: every way a call can fail is one of these values.
 *
 * None of them carries the request, its headers or the API key: only the endpoint and what went wrong. The messages
 * are `@erp-client/kernel/ErrorText`'s, so both editions word them alike.
 *
 * @since 0.1.0
 */
import * as ErrorText from "@erp-client/kernel/ErrorText"
import * as Schema from "effect/Schema"

/**
 * The fields every error of a request carries about its retries.
 *
 * @since 0.1.0
 * @category Errors
 */
export const Attempts = {
  /** Attempts the call made in all, retries included (absent: one). */
  attempts: Schema.optional(Schema.Number),
  /** Time from the call's first attempt to giving up, in milliseconds. */
  elapsedMillis: Schema.optional(Schema.Number)
}

/**
 * The server refused the API key (`result.code = 0`, `result.message = "Unauthorized"`), or an HTTP 401 or 403
 * answered the request (a gateway in front of the service refusing it).
 *
 * **Fields**
 *
 * - `endpoint` (string): the endpoint of the call, e.g. `partner/get`.
 * - `status` (number, optional): the HTTP status, when the refusal was a 401 or 403 rather than the envelope's.
 * - `serverMessage` (string, optional): what the refusal's body said (the envelope's `result.message`), when it said
 *   more than `Unauthorized`.
 *
 * @since 0.1.0
 * @category Errors
 */
export class Unauthorized extends Schema.TaggedError<Unauthorized>("@erp-client/core/Unauthorized")("Unauthorized", {
  endpoint: Schema.String,
  status: Schema.optional(Schema.Number),
  serverMessage: Schema.optional(Schema.String)
}) {
  override get message(): string {
    return ErrorText.unauthorized(this)
  }
}

/**
 * The record does not exist (`result.code = 0`, `result.message = "Not found"`).
 *
 * **Fields**
 *
 * - `endpoint` (string): the endpoint of the call, e.g. `partner/get`.
 * - `selector` (string, optional): what was looked up, e.g. `id=42`.
 *
 * @since 0.1.0
 * @category Errors
 */
export class NotFound extends Schema.TaggedError<NotFound>("@erp-client/core/NotFound")("NotFound", {
  endpoint: Schema.String,
  selector: Schema.optional(Schema.String)
}) {
  override get message(): string {
    return ErrorText.notFound(this)
  }
}

/**
 * The server kept answering 429 (or `X-RateLimit-Remaining: 0`) for longer than the client's retry budget, asked for
 * a wait past it (`Retry-After`, a reset), or a call bounded by `maxWait` could not start, or meet the server's
 * pause, within its bound.
 *
 * **Fields**
 *
 * - `endpoint` (string): the endpoint of the call, e.g. `partner/get`.
 * - `limit` (number, optional): `X-RateLimit-Limit` of the last response, when the server sent it.
 * - `remaining` (number, optional): `X-RateLimit-Remaining` of the last response, when the server sent it.
 * - `resetAt` (number, optional): when the server said its window resets, in epoch milliseconds (as read from
 *   `serverReset`).
 * - `serverReset` (string, optional): `X-RateLimit-Reset` of the last response exactly as the server wrote it (its
 *   unit is not given).
 * - `retryAfter` (string, optional): `Retry-After` of the last 429, exactly as the server wrote it.
 * - `waitedMillis` (number): how long the call already waited for the limit.
 * - `neededMillis` (number, optional): how much longer the call would have had to wait, when known.
 * - `budgetMillis` (number, optional): the retry budget for the server's waits (`rateLimitBudget`) that the wait
 *   would have gone past.
 * - `maxWaitMillis` (number, optional): the call's own bound on waiting for the limit (`maxWait`), when it had one
 *   and the limit would have kept it longer: it failed at once.
 * - `tooManyRequests` (number, optional): how many of the call's attempts the server answered 429.
 * - `askedMillis` (number, optional): past the budget, the wait the server itself asked for (`Retry-After`, its
 *   reset), when that is the wait that would have gone past it; absent when 429s one after another used the budget up.
 * - `attempts` (number, optional): attempts the call made in all, retries included (absent: one; 0: nothing was
 *   sent).
 * - `elapsedMillis` (number, optional): milliseconds from the call's first attempt to giving up.
 *
 * @since 0.1.0
 * @category Errors
 */
export class RateLimited extends Schema.TaggedError<RateLimited>("@erp-client/core/RateLimited")("RateLimited", {
  endpoint: Schema.String,
  limit: Schema.optional(Schema.Number),
  remaining: Schema.optional(Schema.Number),
  resetAt: Schema.optional(Schema.Number),
  serverReset: Schema.optional(Schema.String),
  retryAfter: Schema.optional(Schema.String),
  waitedMillis: Schema.Number,
  neededMillis: Schema.optional(Schema.Number),
  budgetMillis: Schema.optional(Schema.Number),
  maxWaitMillis: Schema.optional(Schema.Number),
  tooManyRequests: Schema.optional(Schema.Number),
  askedMillis: Schema.optional(Schema.Number),
  ...Attempts
}) {
  override get message(): string {
    return ErrorText.rateLimited(this)
  }
}

/**
 * The server answered with `result.code = 0` and a message other than `Unauthorized` / `Not found`, or with a
 * `result.code` the contract does not define.
 *
 * **Fields**
 *
 * - `endpoint` (string): the endpoint of the call, e.g. `partner/get`.
 * - `code` (number): `result.code` as the server sent it.
 * - `serverMessage` (string or null): `result.message` as the server sent it.
 *
 * @since 0.1.0
 * @category Errors
 */
export class ApiError extends Schema.TaggedError<ApiError>("@erp-client/core/ApiError")("ApiError", {
  endpoint: Schema.String,
  code: Schema.Number,
  serverMessage: Schema.NullOr(Schema.String)
}) {
  override get message(): string {
    return ErrorText.apiError(this)
  }
}

/**
 * The body was not JSON, not the envelope, or its data did not match the schema. `path` points into the body
 * (`data[3].tax_number`); for list records, `offset` is the record's position in the whole list.
 *
 * **Fields**
 *
 * - `endpoint` (string): the endpoint of the call, e.g. `partner/get`.
 * - `path` (string): where in the body decoding failed, e.g. `data[3].tax_number` (empty: the whole body).
 * - `reason` (string): what was wrong there.
 * - `offset` (number, optional): for a list record, its position in the whole list.
 * - `recordId` (unknown, optional): for a list record, its `id` when it had one.
 * - `attempts` (number, optional): attempts the call made in all, retries included (absent: one).
 * - `elapsedMillis` (number, optional): milliseconds from the call's first attempt to giving up.
 *
 * @since 0.1.0
 * @category Errors
 */
export class DecodeError extends Schema.TaggedError<DecodeError>("@erp-client/core/DecodeError")("DecodeError", {
  endpoint: Schema.String,
  path: Schema.String,
  reason: Schema.String,
  offset: Schema.optional(Schema.Number),
  recordId: Schema.optional(Schema.Unknown),
  ...Attempts
}) {
  override get message(): string {
    return ErrorText.decodeError(this)
  }
}

/**
 * The request never got a complete answer: connection refused or reset, or the body broke off.
 *
 * **Fields**
 *
 * - `endpoint` (string): the endpoint of the call, e.g. `partner/get`.
 * - `method` (string): the HTTP method, `GET` or `POST`.
 * - `description` (string): what broke (connection refused or reset, a body cut off), as the transport said it.
 * - `attempts` (number, optional): attempts the call made in all, retries included (absent: one).
 * - `elapsedMillis` (number, optional): milliseconds from the call's first attempt to giving up.
 *
 * @since 0.1.0
 * @category Errors
 */
export class TransportError extends Schema.TaggedError<TransportError>("@erp-client/core/TransportError")(
  "TransportError",
  {
    endpoint: Schema.String,
    method: Schema.String,
    description: Schema.String,
    ...Attempts
  }
) {
  override get message(): string {
    return ErrorText.transportError(this)
  }
}

/**
 * The request (including reading its body) took longer than the configured timeout.
 *
 * **Fields**
 *
 * - `endpoint` (string): the endpoint of the call, e.g. `partner/get`.
 * - `method` (string): the HTTP method, `GET` or `POST`.
 * - `timeoutMillis` (number): the timeout an attempt had.
 * - `attempts` (number, optional): attempts the call made in all, retries included (absent: one).
 * - `elapsedMillis` (number, optional): milliseconds from the call's first attempt to giving up.
 *
 * @since 0.1.0
 * @category Errors
 */
export class TimeoutError extends Schema.TaggedError<TimeoutError>("@erp-client/core/TimeoutError")("TimeoutError", {
  endpoint: Schema.String,
  method: Schema.String,
  timeoutMillis: Schema.Number,
  ...Attempts
}) {
  override get message(): string {
    return ErrorText.timeoutError(this)
  }
}

/**
 * The server answered with an HTTP status the contract does not use (a 5xx past the retries, a 404, ...).
 *
 * **Fields**
 *
 * - `endpoint` (string): the endpoint of the call, e.g. `partner/get`.
 * - `method` (string): the HTTP method, `GET` or `POST`.
 * - `status` (number): the HTTP status of the last answer.
 * - `retryAfter` (string, optional): `Retry-After` of the last answer, as the server wrote it.
 * - `serverMessage` (string, optional): the message of the answer's body, when it was the envelope
 *   (`result.message`, e.g. `database unavailable`).
 * - `neededMillis` (number, optional): the wait the server asked for (`Retry-After`) when it would have ended past
 *   the retry budget, so the call gave up instead of waiting.
 * - `budgetMillis` (number, optional): that retry budget (`retryBudget`).
 * - `attempts` (number, optional): attempts the call made in all, retries included (absent: one).
 * - `elapsedMillis` (number, optional): milliseconds from the call's first attempt to giving up.
 *
 * @since 0.1.0
 * @category Errors
 */
export class HttpStatusError extends Schema.TaggedError<HttpStatusError>("@erp-client/core/HttpStatusError")(
  "HttpStatusError",
  {
    endpoint: Schema.String,
    method: Schema.String,
    status: Schema.Number,
    retryAfter: Schema.optional(Schema.String),
    serverMessage: Schema.optional(Schema.String),
    neededMillis: Schema.optional(Schema.Number),
    budgetMillis: Schema.optional(Schema.Number),
    ...Attempts
  }
) {
  override get message(): string {
    return ErrorText.httpStatusError(this)
  }
}

/**
 * The response body was larger than the configured cap: it was not buffered, and the request is not retried.
 *
 * **Fields**
 *
 * - `endpoint` (string): the endpoint of the call, e.g. `partner/get`.
 * - `method` (string): the HTTP method, `GET` or `POST`.
 * - `limitBytes` (number): the cap the body went past.
 *
 * @since 0.1.0
 * @category Errors
 */
export class ResponseTooLarge extends Schema.TaggedError<ResponseTooLarge>("@erp-client/core/ResponseTooLarge")(
  "ResponseTooLarge",
  {
    endpoint: Schema.String,
    method: Schema.String,
    limitBytes: Schema.Number
  }
) {
  override get message(): string {
    return ErrorText.responseTooLarge(this)
  }
}

/**
 * A request that was refused before anything was sent: a condition field outside `[A-Za-z0-9_]`, a bad page
 * size, an endpoint path that is not a relative path.
 *
 * **Fields**
 *
 * - `endpoint` (string): the endpoint of the call, e.g. `partner/get`.
 * - `reason` (string): what was refused, and why.
 *
 * @since 0.1.0
 * @category Errors
 */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>("@erp-client/core/InvalidRequest")(
  "InvalidRequest",
  {
    endpoint: Schema.String,
    reason: Schema.String
  }
) {
  override get message(): string {
    return ErrorText.invalidRequest(this)
  }
}

/**
 * Drift-safe paging lost its place: the list changed under the export so much that no page near `offset` overlaps
 * the records already read, even after `requests` extra requests looking for one. Nothing was emitted twice and no
 * record was skipped silently; restart the export, or page with a larger overlap.
 *
 * **Fields**
 *
 * - `endpoint` (string): the endpoint of the call, e.g. `partner/get`.
 * - `offset` (number): where paging lost its place.
 * - `requests` (number): the extra requests made looking for an overlapping page.
 *
 * @since 0.1.0
 * @category Errors
 */
export class PagingDrift extends Schema.TaggedError<PagingDrift>("@erp-client/core/PagingDrift")("PagingDrift", {
  endpoint: Schema.String,
  offset: Schema.Number,
  requests: Schema.Number
}) {
  override get message(): string {
    return ErrorText.pagingDrift(this)
  }
}

/**
 * Paging stopped because the server does not move through the list: a page holds exactly the records of the page
 * before it at a later offset (the server ignores `list_offset`), or page after page brings nothing not already read.
 * Going on would loop forever, and ending would pass a partial list off as whole. `offset` is where it stopped.
 *
 * **Fields**
 *
 * - `endpoint` (string): the endpoint of the call, e.g. `partner/get`.
 * - `offset` (number): where paging stopped.
 * - `reason` (string): what the server did.
 *
 * @since 0.1.0
 * @category Errors
 */
export class PagingLoop extends Schema.TaggedError<PagingLoop>("@erp-client/core/PagingLoop")("PagingLoop", {
  endpoint: Schema.String,
  offset: Schema.Number,
  reason: Schema.String
}) {
  override get message(): string {
    return ErrorText.pagingLoop(this)
  }
}

/**
 * A list was asked with a condition (`list_condition[field]=value`) and served a record that does not satisfy it: the
 * server did not apply the condition (it does not know the field, or ignores conditions), and its answer is not the
 * filtered list. Records are compared by `@erp-client/kernel/ConditionCheck` (docs/paging.md, "Conditions checked
 * against the records"), which fails only a record whose value clearly differs; `checkConditions: false` of
 * `ListEndpoint.ListOptions` takes the records as served, for a server that matches more loosely.
 *
 * **Fields**
 *
 * - `endpoint` (string): the list endpoint, e.g. `partner/list`.
 * - `field` (string): the condition's field.
 * - `asked` (string): the condition's value as it was sent (`true` as `1`).
 * - `had` (string, optional): the record's value of the field as the server wrote it (JSON text, a string quoted, cut
 *   to 200 characters); absent when the record has no such field.
 * - `offset` (number): the record's position in the list.
 * - `recordId` (unknown, optional): the record's `id` when it has one.
 *
 * @since 0.1.0
 * @category Errors
 */
export class ConditionIgnored extends Schema.TaggedError<ConditionIgnored>("@erp-client/core/ConditionIgnored")(
  "ConditionIgnored",
  {
    endpoint: Schema.String,
    field: Schema.String,
    asked: Schema.String,
    had: Schema.optional(Schema.String),
    offset: Schema.Number,
    recordId: Schema.optional(Schema.Unknown)
  }
) {
  override get message(): string {
    return ErrorText.conditionIgnored(this)
  }
}

/**
 * Any failure of an ERP call.
 *
 * @since 0.1.0
 * @category Errors
 */
export type ErpError =
  | Unauthorized
  | NotFound
  | RateLimited
  | ApiError
  | DecodeError
  | TransportError
  | TimeoutError
  | HttpStatusError
  | ResponseTooLarge
  | InvalidRequest
  | RateLimiterUnavailable
  | PagingDrift
  | PagingLoop
  | ConditionIgnored

/**
 * The shared rate-limit state could not be read or written (e.g. its Redis store is unreachable): the request was
 * not sent, since sending it blind could break the server's limit.
 *
 * **Fields**
 *
 * - `endpoint` (string): the endpoint of the call, e.g. `partner/get`.
 * - `description` (string): what the store said.
 *
 * @since 0.1.0
 * @category Errors
 */
export class RateLimiterUnavailable extends Schema.TaggedError<RateLimiterUnavailable>(
  "@erp-client/core/RateLimiterUnavailable"
)("RateLimiterUnavailable", {
  endpoint: Schema.String,
  description: Schema.String
}) {
  override get message(): string {
    return ErrorText.rateLimiterUnavailable(this)
  }
}
