/**
 * Faults the sandbox serves instead of (or around) its normal answer, to prove your code survives them.
 *
 * @since 0.1.0
 */
import type * as ErpRules from "@erp-client/fake-erp/ErpRules"
import * as Data from "effect/Data"
import type * as Edition from "./internal/edition.js"

/**
 * One fault, served to one request:
 *
 * - `Status`: an HTTP `status` (500, 502, 503, 504, ...) with a small non-envelope body, as a proxy sends it, and
 *   `Retry-After` when `retryAfter` is given.
 * - `TooManyRequests`: a 429 whatever the window says; `headers` (default true) sends `X-RateLimit-*` with
 *   `X-RateLimit-Reset` `resetAfter` (default 1 second) from now in `resetUnit` (default the server's unit), and
 *   `Retry-After` when `retryAfter` is given (with or without the other headers). It is not counted in the window.
 * - `DropBeforeResponse`: the connection is closed before any byte of a response (in memory, the request fails as
 *   a transport error).
 * - `DropMidBody`: status 200, the headers (with the full `Content-Length`) and the first `fraction` (default 0.5)
 *   of the real body, then the connection is closed (reading the body fails).
 * - `MalformedJson`: 200 with the real body cut short: not valid JSON.
 * - `NotEnvelope`: 200 with valid JSON that is not the envelope (`body`, default `{"items":[]}`).
 * - `UnknownCode`: 200 with an envelope whose `result.code` is `code` (default 2) and `message`.
 * - `Hang`: no response at all; the request ends when the client gives up.
 * - `Delay`: the normal answer, `duration` later.
 * - `Unauthorized`: the `Unauthorized` envelope, even for a valid key.
 * - `Redirect`: a `status` (default 302) redirect to `location`, e.g. another origin, to check a client does not
 *   carry its key there.
 * - `EmptyPage`: 200 with the success envelope and no records (`data: []`), as a server that answers a list empty for
 *   a moment does; the list itself is unchanged.
 * - `Outage`: the service is down for `duration` of Effect clock time, from the first request that meets the fault:
 *   every request in that time (to any endpoint, or to the one `inject` names) gets `status` (default 503) with
 *   `body` (default `"html"`, see `OutageBody`), no `X-RateLimit-*` headers (a gateway answers, not the service), and
 *   `Retry-After` when `retryAfter` is given. None of them is counted in the rate-limit window; an outage already
 *   under way comes before the window and before every other fault. `inject`'s `times` counts outages: the next
 *   one starts at the first request after the previous one ended.
 *
 * The faults of the in-memory ERP's rules (`ErpRules.Fault` of `@erp-client/fake-erp`), their durations as Effect's
 * (`"2 seconds"`, `Duration.seconds(2)`, `2000`).
 *
 * @since 0.1.0
 * @category Models
 */
export type Fault = ErpRules.Fault<Edition.DurationInput>

/**
 * The `Retry-After` header of a fault: a string is sent as written (`"5"`, or an HTTP date such as
 * `"Wed, 21 Oct 2015 07:28:00 GMT"`, or anything a broken server sends); `{ after, format }` is worked out at each
 * response, `after` from the Effect clock's now, as whole seconds (rounded up; the default) or as an HTTP date.
 *
 * @since 0.1.0
 * @category Models
 */
export type RetryAfter = ErpRules.RetryAfter<Edition.DurationInput>

/**
 * The body of an `Outage` response: `"html"`, a small page as a gateway sends it; `"envelope"`, the error envelope
 * (`result.code` 0, the status text as `result.message`, `data` null), as a service in maintenance mode sends it;
 * `"empty"`, no body.
 *
 * @since 0.1.0
 * @category Models
 */
export type OutageBody = ErpRules.OutageBody

/**
 * Constructors and matchers: `Fault.Status({ status: 503 })`, `Fault.Hang()`, `Fault.$is("Hang")`. A plain object
 * with the same `_tag` and fields is a `Fault` too.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const Fault = Data.taggedEnum<Fault>()

/**
 * The tag of a fault, as recorded in the request log.
 *
 * @since 0.1.0
 * @category Models
 */
export type Tag = ErpRules.FaultTag
