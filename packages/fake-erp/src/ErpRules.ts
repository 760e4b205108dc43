/**
 * The in-memory ERP's rules: what a spec-faithful ERP REST API v2 server answers (docs/erp-api-v2.md), as plain
 * functions over data with no Effect in them. Seeded (or given) partners and invoices, and any kind of record declared
 * with its records (`Options.resources`), auth, paging with `list_offset` / `list_count` and `list_condition` filters
 * (clamped pages, hidden records, ignored offsets, a largest page that changes), the per-endpoint rate limit
 * (`SlidingWindow`) with its headers and 429s, faults, data that drifts under an export, and the request log and
 * stats that tests read.
 *
 * `make(options)` builds one server's state: `arrive` takes each request at a time the caller reads from its clock and
 * gives back a `Plan` (the reply, or a wait before the next step), and `controls` steer and inspect it. An edition only
 * sleeps the waits, delivers the reply (or cuts the connection, or never answers) and calls `finish`: the Effect 3
 * sandbox (`@erp-client/sandbox`, on a socket and in memory) and the Effect 4 edition's test kit serve the same ERP.
 *
 * @since 0.1.0
 */
import * as Duration from "./internal/duration.js"
import * as internal from "./internal/rules.js"
import type * as Seed from "./Seed.js"
import type * as SlidingWindow from "./SlidingWindow.js"

/**
 * The units of a duration written as text, as Effect's `Duration` names them.
 *
 * @since 0.1.0
 * @category Durations
 */
export type DurationUnit =
  | "nano"
  | "nanos"
  | "micro"
  | "micros"
  | "milli"
  | "millis"
  | "second"
  | "seconds"
  | "minute"
  | "minutes"
  | "hour"
  | "hours"
  | "day"
  | "days"
  | "week"
  | "weeks"

/**
 * A duration as the options write it by default: a number of milliseconds, or text such as `"2 seconds"` (the forms
 * Effect's `Duration.DurationInput` reads too). An edition that takes its own duration type passes its reader to
 * `make` instead (the rules' types take it as their parameter `D`).
 *
 * @since 0.1.0
 * @category Durations
 */
export type DurationInput = number | `${number} ${DurationUnit}`

/**
 * A `DurationInput` in milliseconds, read as Effect's `Duration.decode` reads it: a negative duration is 0, an
 * infinite one stays infinite. Text in any other form throws a `RangeError`.
 *
 * @example
 * ```ts
 * import { ErpRules } from "@erp-client/fake-erp"
 *
 * console.log(ErpRules.millis("2 seconds"), ErpRules.millis("1.5 minutes"), ErpRules.millis(250)) // => 2000 90000 250
 * ```
 *
 * @since 0.1.0
 * @category Durations
 */
export const millis: (input: DurationInput) => number = Duration.millis

/**
 * The endpoints the ERP serves besides those of `Options.resources`; every other path is answered 404.
 *
 * @since 0.1.0
 * @category Constants
 */
export const endpoints: readonly ["/partner/list", "/partner/get", "/invoice/list", "/invoice/get"] = internal.endpoints

/**
 * @since 0.1.0
 * @category Models
 */
export type Endpoint = typeof endpoints[number]

/**
 * A kind of record the ERP serves besides partners and invoices (`Options.resources`): its list endpoint, its get
 * endpoint, the field that tells its records apart, and the records themselves, given (a fixture) or made on demand
 * from the ERP's `seed` (a seed function). They are served in the same envelope, paging (`list_offset`, `list_count`,
 * `list_condition`, `maxListCount`, `ignoreOffset`), rate limit, latency and faults as partners; `get` finds a
 * record by its id field (or any of `lookups`), compared as text as a condition is, and answers `Not found` for none.
 * They do not drift or hide.
 *
 * @since 0.1.0
 * @category Models
 */
export interface ResourceOptions {
  /** The list endpoint (`"product/list"`; a leading `/` is optional). */
  readonly list: string
  /** The get endpoint (`"product/get"`), if there is one. */
  readonly get?: string | undefined
  /** The field that tells records apart, and the query parameter `get` takes first (default `"id"`). */
  readonly idField?: string | undefined
  /** More query parameters `get` finds a record by (`["sku"]`): each names a field. Every one given must match. */
  readonly lookups?: ReadonlyArray<string> | undefined
  /**
   * The records, in list order: given as they are (served as `JSON.stringify` writes them), or `count` of them made by
   * `record(index, seed)` (zero-based `index`; a pure function, called each time a record is served).
   */
  readonly records:
    | ReadonlyArray<Readonly<Record<string, unknown>>>
    | {
      readonly count: number
      readonly record: (index: number, seed: number) => Readonly<Record<string, unknown>>
    }
}

/**
 * One fault, served to one request (`D`: how its durations are written, see `DurationInput`):
 *
 * - `Status`: an HTTP `status` (500, 502, 503, 504, ...) with a small non-envelope body, as a proxy sends it, and
 *   `Retry-After` when `retryAfter` is given.
 * - `TooManyRequests`: a 429 whatever the window says; `headers` (default true) sends `X-RateLimit-*` with
 *   `X-RateLimit-Reset` `resetAfter` (default 1 second) from now in `resetUnit` (default the server's unit), and
 *   `Retry-After` when `retryAfter` is given (with or without the other headers). It is not counted in the window.
 * - `DropBeforeResponse`: the connection is closed before any byte of a response.
 * - `DropMidBody`: status 200, the headers (with the full `Content-Length`) and the first `fraction` (default 0.5)
 *   of the real body, then the connection is closed.
 * - `MalformedJson`: 200 with the real body cut short: not valid JSON.
 * - `NotEnvelope`: 200 with valid JSON that is not the envelope (`body`, default `{"items":[]}`).
 * - `UnknownCode`: 200 with an envelope whose `result.code` is `code` (default 2) and `message`.
 * - `Hang`: no response at all; the request ends when the client disconnects.
 * - `Delay`: the normal answer, `duration` later.
 * - `Unauthorized`: the `Unauthorized` envelope, even for a valid key.
 * - `Redirect`: a `status` (default 302) redirect to `location`, e.g. another origin, to check a client does not
 *   carry its key there.
 * - `EmptyPage`: 200 with the success envelope and no records (`data: []`), as a server that answers a list empty for
 *   a moment does; the list itself is unchanged (and no drift runs for it).
 * - `Outage`: the service is down for `duration` of the clock's time (the times `arrive` is given), from the first
 *   request that meets the fault: every request in that time (to any endpoint, or to the one `inject` names) gets
 *   `status` (default 503) with `body` (default `"html"`, see `OutageBody`), no `X-RateLimit-*` headers (a gateway
 *   answers, not the service), and `Retry-After` when `retryAfter` is given. None of them is counted in the rate-limit
 *   window; an outage already under way comes before the window and before every other fault. `inject`'s `times`
 *   counts outages: the next one starts at the first request after the previous one ended.
 *
 * A plain object: `{ _tag: "Status", status: 503 }`.
 *
 * @since 0.1.0
 * @category Faults
 */
export type Fault<D = DurationInput> =
  | {
    readonly _tag: "Status"
    readonly status: number
    readonly body?: string | undefined
    readonly retryAfter?: RetryAfter<D> | undefined
  }
  | {
    readonly _tag: "TooManyRequests"
    readonly headers?: boolean | undefined
    readonly resetAfter?: D | undefined
    readonly resetUnit?: SlidingWindow.ResetUnit | undefined
    readonly retryAfter?: RetryAfter<D> | undefined
  }
  | { readonly _tag: "DropBeforeResponse" }
  | { readonly _tag: "DropMidBody"; readonly fraction?: number | undefined }
  | { readonly _tag: "MalformedJson" }
  | { readonly _tag: "NotEnvelope"; readonly body?: unknown }
  | { readonly _tag: "UnknownCode"; readonly code?: number | undefined; readonly message?: string | undefined }
  | { readonly _tag: "Hang" }
  | { readonly _tag: "Delay"; readonly duration: D }
  | { readonly _tag: "Unauthorized" }
  | { readonly _tag: "Redirect"; readonly location: string; readonly status?: number | undefined }
  | { readonly _tag: "EmptyPage" }
  | {
    readonly _tag: "Outage"
    readonly duration: D
    readonly status?: number | undefined
    readonly retryAfter?: RetryAfter<D> | undefined
    readonly body?: OutageBody | undefined
  }

/**
 * The tag of a fault, as recorded in the request log.
 *
 * @since 0.1.0
 * @category Faults
 */
export type FaultTag = Fault["_tag"]

/**
 * The `Retry-After` header of a fault: a string is sent as written (`"5"`, or an HTTP date such as
 * `"Wed, 21 Oct 2015 07:28:00 GMT"`, or anything a broken server sends); `{ after, format }` is worked out at each
 * response, `after` from the request's arrival, as whole seconds (rounded up; the default) or as an HTTP date.
 *
 * @since 0.1.0
 * @category Faults
 */
export type RetryAfter<D = DurationInput> = string | {
  readonly after: D
  readonly format?: "seconds" | "http-date" | undefined
}

/**
 * The body of an `Outage` response: `"html"`, a small page as a gateway sends it; `"envelope"`, the error envelope
 * (`result.code` 0, the status text as `result.message`, `data` null), as a service in maintenance mode sends it;
 * `"empty"`, no body.
 *
 * @since 0.1.0
 * @category Faults
 */
export type OutageBody = "html" | "envelope" | "empty"

/**
 * How a fault is queued (`Options.inject`, `Controls.inject`).
 *
 * @since 0.1.0
 * @category Faults
 */
export interface InjectOptions {
  /** How many matching requests get the fault (default 1; `Infinity` for every one). */
  readonly times?: number | undefined
  /** Only requests to this endpoint (`"/partner/list"`); any endpoint by default. */
  readonly endpoint?: string | undefined
  /** How many matching requests pass before the fault is served (default 0), e.g. to stage it from the third page. */
  readonly after?: number | undefined
}

/**
 * The `result.message` of the error envelopes. The contract shows `Unauthorized` and `Not found` and no message for a
 * 429 (docs/erp-api-v2.md, "Errors"); a real server may spell them otherwise.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Messages {
  /** For an invalid API key, and the `Unauthorized` fault (default `"Unauthorized"`; e.g. `"unauthorized"`). */
  readonly unauthorized?: string | undefined
  /** For a partner that does not exist (default `"Not found"`; e.g. `"Not Found"`). */
  readonly notFound?: string | undefined
  /** In the envelope of a 429, when `tooManyRequestsBody` is `"envelope"` (default `"Too Many Requests"`). */
  readonly tooManyRequests?: string | undefined
}

/**
 * The body of a 429, which the contract does not show (docs/erp-api-v2.md, "Errors"):
 *
 * - `"envelope"`: the error envelope (`result.code` 0, `messages.tooManyRequests`, `data` null) as JSON;
 * - `"html"`: a small HTML page, as a proxy or gateway sends it;
 * - `"empty"`: no body at all.
 *
 * @since 0.1.0
 * @category Models
 */
export type TooManyRequestsBody = "envelope" | "html" | "empty"

/**
 * The ERP's settings (`D`: how durations are written, see `DurationInput`).
 *
 * @since 0.1.0
 * @category Models
 */
export interface Options<D = DurationInput> {
  /**
   * The partners the list starts with: how many seeded ones (default 1000; see `seed`), or your own records, served
   * in this order as `JSON.stringify` writes them (`[{ id: 1, company_name: "Acme Kft.", tax_number: "12345678-2-42",
   * is_customer: 1 }]`). `partner/get` finds a given record by its `id` (a number, or a string of digits) and its
   * `company_name`; `list_condition` compares its fields as for seeded ones. A given record's own id (`partnerIds`,
   * `deletePartners`) is its `id` when that is a positive safe integer no earlier record has, else a fresh one past
   * the largest. `oddRecords` does not apply to given records (they stray as you wrote them); `hidden` does, by
   * position.
   */
  readonly partners?: number | ReadonlyArray<Readonly<Record<string, unknown>>> | undefined
  /** Seed of the partners and invoices (default 1). */
  readonly seed?: number | undefined
  /**
   * How many seeded invoices `invoice/list` and `invoice/get` serve (default 100; see `Seed.InvoiceRecord`): a second
   * kind of record, in the same envelope, paging (`list_offset`, `list_count`, `list_condition`, `maxListCount`),
   * rate limit and faults as partners. `invoice/get` finds one by `id` or `number`. They do not drift or hide.
   */
  readonly invoices?: number | undefined
  /**
   * More kinds of record, each with its list and get endpoint and its records (none by default; see
   * `ResourceOptions`): `[{ list: "product/list", get: "product/get", records: [{ id: 1, name: "Widget" }] }]`. An
   * endpoint the ERP already serves (`partner/list`, …) or that two of them name is a `TypeError` from `make`.
   */
  readonly resources?: ReadonlyArray<ResourceOptions> | undefined
  /**
   * A seeded share of the partners stray from the contract's table the way real ERP data does (empty, null, absent
   * or VAT-form tax numbers, null names, the customer flag as a string or boolean, an extra nested object; see
   * `Seed.OddKind`). None by default. `partnerAt` and `oddKindAt` give what list and get serve.
   */
  readonly oddRecords?: Seed.OddRecords | undefined
  /**
   * Partners the server holds but does not serve, as permissions or soft deletes do (none by default; see
   * `Seed.HiddenRecords`). The server cuts a page at `[list_offset, list_offset + served)` of the list (of the
   * partners matching `list_condition`, when given) with them, then drops them: a page comes back shorter than asked
   * although more follow, the next page at `list_offset + list_count` is right, and one at `list_offset` plus the
   * records received repeats records. `partner/get` answers `Not found` for them. `size`, `partnerIds` and list
   * positions count them; `visiblePartners` is what the server serves.
   */
  readonly hidden?: Seed.HiddenRecords | undefined
  /**
   * Serve every list page from offset 0, whatever `list_offset` says (default false), as a broken server does: a
   * client that pages on gets the first page again and again.
   */
  readonly ignoreOffset?: boolean | undefined
  /**
   * List conditions the server does not apply, as one that does not know them answers (default: each applied):
   * `"all"` ignores every `list_condition`; `"unknown"` ignores those naming a field none of the list's first 100
   * records has (read once per list). The page is then cut from the list as if they were not sent.
   */
  readonly ignoreConditions?: "all" | "unknown" | undefined
  /**
   * The largest page changes mid-list: from the `fromRequest`-th list page on (1-based, counting the list requests
   * answered with a page, faults that cut the page included), at most `max` records a page, in place of
   * `maxListCount` (the latest step reached wins). `[{ fromRequest: 4, max: 50 }]` with `maxListCount: 100` serves
   * 100, 100, 100, then 50.
   */
  readonly maxListCountSchedule?:
    | ReadonlyArray<{ readonly fromRequest: number; readonly max: number }>
    | undefined
  /** The valid API keys (default `["sandbox-key"]`). */
  readonly apiKeys?: ReadonlyArray<string> | undefined
  /** The rate limit per (API key, endpoint) (default 100 per 30 seconds, epoch-seconds reset), or `false`. */
  readonly rateLimit?: SlidingWindow.Options<D> | false | undefined
  /**
   * The largest page served (default 500): a request for a larger `list_count` gets this many records, as a server
   * that clamps pages does. The contract does not give the maximum (docs/erp-api-v2.md, "Gaps in the endpoint list"),
   * so it may be any value from 1 up, below the page a client asks for too (7 when it asks for 50): a client that
   * takes such a short page for the end of the list loses records.
   */
  readonly maxListCount?: number | undefined
  /**
   * The page served when a list request has no `list_count`, as some servers do (at most `maxListCount`). By default
   * there is none and such a request is refused with an error envelope: the contract has clients send `list_count`
   * on every list call and does not give a default (docs/erp-api-v2.md, "Gaps in the endpoint list").
   */
  readonly defaultListCount?: number | undefined
  /** The `result.message` texts of the error envelopes (default: the contract's, see `Messages`). */
  readonly messages?: Messages | undefined
  /**
   * The body of every 429, from the window or the `TooManyRequests` fault (default `"envelope"`); the contract does
   * not show it. See `TooManyRequestsBody`.
   */
  readonly tooManyRequestsBody?: TooManyRequestsBody | undefined
  /** Added to every answer of an endpoint: `base` plus a seeded random share of `jitter`. */
  readonly latency?: {
    readonly base?: D | undefined
    readonly jitter?: D | undefined
    readonly seed?: number | undefined
  } | undefined
  /**
   * Faults queued at start, in order, as `Controls.inject` queues them: e.g. an outage from the fifth request on,
   * `[{ fault: { _tag: "Outage", duration: "10 seconds" }, after: 4 }]`.
   */
  readonly inject?: ReadonlyArray<{ readonly fault: Fault<D> } & InjectOptions> | undefined
  /** Serves a fault picked from `faults` to a `rate` share of the requests (seeded, so runs repeat). */
  readonly randomFaults?: {
    readonly rate: number
    readonly faults: ReadonlyArray<Fault<D>>
    readonly seed?: number | undefined
  } | undefined
  /**
   * Records that cannot be read: `partner/get` of one of these ids (`ids`, or every id divisible by `every`) answers
   * HTTP `status` (default 500) with the error envelope saying `message` (default `"Internal error"`), every time, as
   * a server does for records it fails on. Such an answer is counted in the rate-limit window like any other.
   */
  readonly failingIds?: {
    readonly ids?: ReadonlyArray<number> | undefined
    readonly every?: number | undefined
    readonly status?: number | undefined
    readonly message?: string | undefined
  } | undefined
  /** How many entries the request log keeps, newest last (default 10,000). */
  readonly maxLogEntries?: number | undefined
  /**
   * Data that changes under a running export: right before answering each list request, the server inserts
   * `inserts` new partners and deletes `deletes` partners, each at a seeded random position of the list. Positions
   * before the page shift it: deletes make a plain export skip records, inserts make it repeat them.
   */
  readonly drift?: {
    readonly inserts?: number | undefined
    readonly deletes?: number | undefined
    readonly seed?: number | undefined
  } | undefined
}

/**
 * One request, as the ERP saw it. The API key is never recorded: only whether it was valid.
 *
 * @since 0.1.0
 * @category Models
 */
export interface RequestLogEntry {
  readonly method: string
  /** The path, e.g. `/partner/list`. */
  readonly endpoint: string
  /** Query parameters as decoded by the server, in order; a value equal to an API key is replaced. */
  readonly query: ReadonlyArray<readonly [name: string, value: string]>
  /** The HTTP status sent; 0 while in flight, or when no status line was sent (dropped, hung). */
  readonly status: number
  readonly keyValid: boolean
  /** Arrival time, epoch milliseconds from the caller's clock. */
  readonly timeMillis: number
  /** Time until the answer was sent or the request ended; absent while in flight. */
  readonly durationMillis?: number
  /** The fault served, if any. */
  readonly fault?: FaultTag
  /** For a list page the server served (or cut with a fault): how many records it held. */
  readonly records?: number
  /** For such a page: how many hidden partners its cut held and the server dropped (see `Options.hidden`). */
  readonly hidden?: number
}

/**
 * @since 0.1.0
 * @category Models
 */
export interface Stats {
  /** Every request received, any path. */
  readonly requests: number
  readonly byEndpoint: Readonly<Record<string, number>>
  /** Requests by the HTTP status sent (`"0"`: none sent). */
  readonly byStatus: Readonly<Record<string, number>>
  /** 429 responses sent, from the window or from a fault. */
  readonly tooManyRequests: number
  readonly faultsServed: number
  /** Faults served, by kind (`Status`, `Hang`, …). */
  readonly faultsByKind: Readonly<Partial<Record<FaultTag, number>>>
  /** Requests whose API key was not a valid one (answered `Unauthorized`, or refused before that). */
  readonly refusedKeys: number
  /** Requests being handled now (hung requests included until the client goes). */
  readonly inFlight: number
  readonly maxInFlight: number
  /**
   * Per endpoint, the most requests one API key started within any one window (rejected ones included): above the
   * limit means a client did not keep to it.
   */
  readonly maxObservedInWindow: Readonly<Record<string, number>>
  /** Partners inserted and deleted since the start (by `drift` or the controls). */
  readonly inserted: number
  readonly deleted: number
}

/**
 * A request as the ERP sees it, whatever carried it.
 *
 * @since 0.1.0
 * @category Serving
 */
export interface Incoming {
  readonly method: string
  /** The path and query as sent, e.g. `/partner/list?list_offset=0&list_count=100`. */
  readonly url: string
  /** The `X-API-KEY` header, `""` when there is none. */
  readonly apiKey: string
}

/**
 * How a request is answered, for the edition to carry out:
 *
 * - `Respond`: a whole response; `body` absent for none (`contentType` then absent too).
 * - `Drop`: the connection closes before any byte of a response.
 * - `CutBody`: the status line, the headers with the whole body's `Content-Length`, the first `sentBytes` bytes of
 *   `body`, then the connection closes.
 * - `Hang`: nothing, until the client gives up (or the server closes).
 *
 * @since 0.1.0
 * @category Serving
 */
export type Reply =
  | {
    readonly _tag: "Respond"
    readonly status: number
    readonly headers: Readonly<Record<string, string>>
    readonly contentType?: string | undefined
    readonly body?: string | undefined
  }
  | { readonly _tag: "Drop" }
  | {
    readonly _tag: "CutBody"
    readonly status: number
    readonly headers: Readonly<Record<string, string>>
    readonly contentType: string
    readonly body: Uint8Array
    readonly sentBytes: number
  }
  | { readonly _tag: "Hang" }

/**
 * What to do with a request: carry out a `Reply`, or `Delay`: wait `millis` on the clock (the answer's latency, a
 * `Delay` fault), then call `next` for what follows (the answer is computed then: the answer of that time).
 *
 * @since 0.1.0
 * @category Serving
 */
export type Plan = Reply | { readonly _tag: "Delay"; readonly millis: number; readonly next: () => Plan }

/**
 * A request that has arrived: counted, logged, and judged by the rate limit and the fault queue.
 *
 * @since 0.1.0
 * @category Serving
 */
export interface Arrival {
  /**
   * The endpoint it is for (an `Endpoint`, or one of `Options.resources`); `undefined` for any other path or method
   * (answered 404).
   */
  readonly endpoint: Endpoint | (string & {}) | undefined
  /** When it arrived (epoch milliseconds). */
  readonly nowMillis: number
  /**
   * What to do, from the arrival on: call it once. The reply it ends with is logged as sent (its status) when it is
   * handed out.
   */
  readonly plan: () => Plan
  /**
   * The request ended at `nowMillis` (answered, cut, or given up by the client): the log records its duration and it
   * is no longer in flight. Call it once, however the request ended.
   */
  readonly finish: (nowMillis: number) => void
}

/**
 * Steering and inspecting one ERP while it serves.
 *
 * @since 0.1.0
 * @category Serving
 */
export interface Controls<D = DurationInput> {
  /** The first valid API key at start. */
  readonly apiKey: string
  readonly seed: number
  /** How many partners the list started with, seeded or given (see `size` for now). */
  readonly partnerCount: number
  readonly maxListCount: number
  /** The rate limit in force, or `false`. */
  readonly rateLimit: SlidingWindow.Resolved | false
  /**
   * The seeded partner at `index` (zero-based), as list and get serve it (strayed when `oddRecords` says so): what the
   * list holds there until partners are inserted or deleted. With `partners` given as records, the record given at
   * `index` as served (its fields are the ones you gave, whatever the type says; a `RangeError` past the last).
   */
  readonly partnerAt: (index: number) => Seed.ServedRecord
  /** The seeded invoice at `index` (zero-based; its `id` is `index + 1`), as `invoice/list` and `invoice/get` serve it. */
  readonly invoiceAt: (index: number) => Seed.InvoiceRecord
  /**
   * The records a declared resource serves (`Options.resources`, named by its list endpoint, `"product/list"`), in
   * list order; a `RangeError` for an endpoint that is not one of them.
   */
  readonly recordsOf: (list: string) => ReadonlyArray<Readonly<Record<string, unknown>>>
  /** How the seeded partner at `index` strays from the contract (`oddRecords`), or `undefined`. */
  readonly oddKindAt: (index: number) => Seed.OddKind | undefined
  /** Whether the seeded partner at `index` is hidden (`hidden`): held in the list, never served. */
  readonly hiddenAt: (index: number) => boolean
  /**
   * Every partner the list serves now, in list order: the list without its hidden partners. What an export that loses
   * nothing writes (with `Seed.recordJson` for the text of each, exact numbers as written).
   */
  readonly visiblePartners: () => ReadonlyArray<Seed.ServedRecord>
  /** Queues `fault` for the next `times` matching requests (after the rate limit let them through). */
  readonly inject: (fault: Fault<D>, options?: InjectOptions) => void
  readonly clearFaults: () => void
  readonly stats: () => Stats
  readonly requests: () => ReadonlyArray<RequestLogEntry>
  /** Clears the counters and the request log (not the rate-limit windows). */
  readonly resetStats: () => void
  readonly resetRateLimits: () => void
  /** Makes `key` invalid from the next request on, e.g. a key revoked in the middle of an export. */
  readonly revokeKey: (key: string) => void
  readonly setKeys: (keys: ReadonlyArray<string>) => void
  /** How many partners the list holds now, hidden ones included (they hold list positions). */
  readonly size: () => number
  /**
   * The ids of the partners, in list order, now, hidden ones included: each partner's own id (the seeded `index + 1`
   * or an inserted partner's), which `deletePartners` takes. An `id-beyond-double` or `duplicate-id` partner serves
   * another id (see `Seed.OddKind`).
   */
  readonly partnerIds: () => ReadonlyArray<number>
  /** Inserts `count` new partners (fresh ids) before list position `at`; returns their ids. */
  readonly insertPartners: (count: number, at: number) => ReadonlyArray<number>
  /** Deletes the partners with these ids; returns how many existed. */
  readonly deletePartners: (ids: Iterable<number>) => number
  /**
   * Renames the partners with these ids: ` (renamed)` is added to each one's company name (a changed record for
   * `erp partners changes`); returns how many existed.
   */
  readonly renamePartners: (ids: Iterable<number>) => number
}

/**
 * One ERP: `arrive` for each request, `controls` to steer and inspect it.
 *
 * @since 0.1.0
 * @category Serving
 */
export interface Rules<D = DurationInput> {
  /** A request arrives at `nowMillis` (epoch milliseconds, from the caller's clock). */
  readonly arrive: (incoming: Incoming, nowMillis: number) => Arrival
  readonly controls: Controls<D>
}

/**
 * One ERP's state, empty of requests, from `options`. Durations are `DurationInput`s, read by `millis`; an edition
 * with a duration type of its own passes its reader as `toMillis` (the Effect 3 sandbox:
 * `(input) => Duration.toMillis(input)`), and its options and faults then take that type.
 *
 * Serving a request: `arrive` it at the clock's time, carry out its plan (sleep each `Delay`, then follow `next`),
 * deliver the reply, and `finish` it at the clock's time when it ends, however it ends.
 *
 * @example
 * ```ts
 * import { ErpRules } from "@erp-client/fake-erp"
 *
 * // A server with 50 partners at 2 requests per second; a clock of our own
 * const erp = ErpRules.make({ partners: 50, rateLimit: { limit: 2, window: "1 second" } })
 * let now = 1_700_000_000_000
 * const serve = (url: string): ErpRules.Reply => {
 *   const arrival = erp.arrive({ method: "GET", url, apiKey: erp.controls.apiKey }, now)
 *   let plan = arrival.plan()
 *   while (plan._tag === "Delay") {
 *     now += plan.millis
 *     plan = plan.next()
 *   }
 *   arrival.finish(now)
 *   return plan
 * }
 * const page = serve("/partner/list?list_offset=0&list_count=10")
 * console.log(page._tag === "Respond" && page.status, page._tag === "Respond" && page.headers["x-ratelimit-remaining"])
 * // => 200 1
 * // The next answer 2 seconds late, on our clock; then three at once, the third over the limit
 * erp.controls.inject({ _tag: "Delay", duration: "2 seconds" })
 * serve("/partner/get?id=7")
 * console.log(now - 1_700_000_000_000) // => 2000
 * for (const id of [8, 9, 10]) serve(`/partner/get?id=${id}`)
 * console.log(erp.controls.stats().byStatus) // => { '200': 4, '429': 1 }
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const make: {
  (options?: Options): Rules
  <D>(options: Options<D>, toMillis: (input: D) => number): Rules<D>
} = <D>(options: Options<D> = {}, toMillis?: (input: D) => number): Rules<D> =>
  internal.make(options, toMillis ?? (Duration.millis as (input: D) => number))

const count = (n: number, one: string, many = `${one}s`): string =>
  `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`

const listed = (counts: Readonly<Record<string, number | undefined>>): string =>
  Object.entries(counts)
    .filter((entry): entry is [string, number] => entry[1] !== undefined && entry[1] > 0)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([name, n]) => `${name} ${n.toLocaleString("en-US")}`)
    .join(", ")

/**
 * What the ERP saw, in a few lines for a person: requests by endpoint and by status, refused keys, 429s, faults served
 * by kind, and per endpoint the most requests one key started in any window against the limit. What `erp sandbox`
 * prints when it stops (and on SIGUSR1), and what `GET /_sandbox/stats` answers beside the numbers.
 *
 * @example
 * ```ts
 * import { ErpRules } from "@erp-client/fake-erp"
 *
 * const erp = ErpRules.make({ partners: 5, rateLimit: { limit: 2, window: 1_000 } })
 * for (const [i, key] of ["sandbox-key", "sandbox-key", "sandbox-key", "stolen"].entries()) {
 *   const arrival = erp.arrive({ method: "GET", url: `/partner/get?id=${i + 1}`, apiKey: key }, 0)
 *   arrival.plan()
 *   arrival.finish(0)
 * }
 * console.log(ErpRules.describeStats(erp.controls.stats(), { limit: 2, windowMillis: 1_000 }).join("\n"))
 * // => 4 requests: /partner/get 4
 * // => by status: 200 3, 429 1
 * // => 1 with a refused key, 1 answered 429, no fault served
 * // => at most 3 requests of one key in any 1 s window: /partner/get 3 (limit 2)
 * ```
 *
 * @since 0.1.0
 * @category Serving
 */
export const describeStats = (
  stats: Stats,
  rateLimit: { readonly limit: number; readonly windowMillis: number } | false
): ReadonlyArray<string> => {
  const lines = [
    `${count(stats.requests, "request")}${stats.requests === 0 ? "" : `: ${listed(stats.byEndpoint)}`}`
  ]
  if (stats.requests > 0) lines.push(`by status: ${listed(stats.byStatus)}`)
  const faults = listed(stats.faultsByKind)
  lines.push(
    `${count(stats.refusedKeys, "with a refused key", "with a refused key")}, ${
      count(stats.tooManyRequests, "answered 429", "answered 429")
    }, ${stats.faultsServed === 0 ? "no fault served" : `${count(stats.faultsServed, "fault")} served (${faults})`}`
  )
  const windows = listed(stats.maxObservedInWindow)
  if (windows !== "") {
    const window = rateLimit === false ? 30_000 : rateLimit.windowMillis
    lines.push(
      `at most ${Math.max(...Object.values(stats.maxObservedInWindow))} requests of one key in any ${
        window % 1000 === 0 ? `${window / 1000} s` : `${window} ms`
      } window: ${windows}${rateLimit === false ? " (no limit)" : ` (limit ${rateLimit.limit})`}`
    )
  }
  if (stats.inserted + stats.deleted > 0) {
    lines.push(`${count(stats.inserted, "partner")} inserted, ${stats.deleted.toLocaleString("en-US")} deleted`)
  }
  return lines
}
