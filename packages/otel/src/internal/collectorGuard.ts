/**
 * How an OTLP exporter keeps a collector out of the program's way, as plain data (docs/observability.md, "Exporting"):
 * every export bounded by its timeout, and once the program ends by what is left of the shutdown budget (1.5 s by
 * default); a collector that failed (refused, silent, or answering with an error status) said once and left alone for
 * a minute, its exports dropped rather than retried. Each edition's `ErpTelemetry` keeps one state per layer and wires
 * it to the HttpClient its exporters send on.
 *
 * Plain functions over data, the same in both editions (the Effect 4 package's copy is generated from this file).
 *
 * @since 0.1.0
 */

/**
 * A collector that could not take an export: where it went, and what went wrong in a few words (`connection
 * refused`, `no answer within 10 s`, `HTTP 401`).
 *
 * @since 0.1.0
 * @category Models
 */
export interface ExportFailure {
  /** Where the export went. */
  readonly url: string
  /** What went wrong, in a few words. */
  readonly reason: string
}

/**
 * One layer's guard (mutable: a layer's own).
 *
 * @since 0.1.0
 * @category Models
 */
export interface State {
  /** Epoch ms until which exports are dropped: the collector failed. */
  pausedUntil: number
  /** Epoch ms by which every export has to be done: the program is ending (`undefined` until then). */
  deadline: number | undefined
}

/**
 * How long a failed collector is left alone: its exports meanwhile are dropped, not sent.
 *
 * @since 0.1.0
 * @category Constants
 */
export const PAUSE_MILLIS = 60_000

/**
 * The default bound on what the program's end waits for the last exports, in all.
 *
 * @since 0.1.0
 * @category Constants
 */
export const SHUTDOWN_MILLIS = 1_500

/**
 * The default bound on one export (`OTEL_EXPORTER_OTLP_TIMEOUT`'s).
 *
 * @since 0.1.0
 * @category Constants
 */
export const EXPORT_TIMEOUT_MILLIS = 10_000

/**
 * A guard's state before any export.
 *
 * @example
 * ```ts
 * import * as CollectorGuard from "./collectorGuard.js"
 *
 * console.log(CollectorGuard.makeState()) // => { pausedUntil: 0, deadline: undefined }
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const makeState = (): State => ({ pausedUntil: 0, deadline: undefined })

/**
 * Whether an export at `now` is dropped without being sent: the collector failed less than a minute ago.
 *
 * @example
 * ```ts
 * import * as CollectorGuard from "./collectorGuard.js"
 *
 * const state = CollectorGuard.makeState()
 * CollectorGuard.failed(state, 1_000)
 * console.log(CollectorGuard.paused(state, 30_000), CollectorGuard.paused(state, 61_000)) // => true false
 * ```
 *
 * @since 0.1.0
 * @category Decisions
 */
export const paused = (state: State, now: number): boolean => now < state.pausedUntil

/**
 * How long an export sent at `now` may take: its timeout, or what is left of the shutdown budget once the program is
 * ending, whichever is less (never below 0).
 *
 * @example
 * ```ts
 * import * as CollectorGuard from "./collectorGuard.js"
 *
 * const state = CollectorGuard.makeState()
 * console.log(CollectorGuard.allowedMillis(state, 0, 10_000)) // => 10000
 * CollectorGuard.shutdown(state, 0, 1_500)
 * console.log(CollectorGuard.allowedMillis(state, 400, 10_000)) // => 1100
 * ```
 *
 * @since 0.1.0
 * @category Decisions
 */
export const allowedMillis = (state: State, now: number, timeoutMillis: number): number =>
  state.deadline === undefined ? timeoutMillis : Math.max(0, Math.min(timeoutMillis, state.deadline - now))

/**
 * Records a failed export at `now`: the collector is left alone for `PAUSE_MILLIS`. `true` when it is the first
 * failure since the collector last answered (or since the last pause ran out): the one to say.
 *
 * @example
 * ```ts
 * import * as CollectorGuard from "./collectorGuard.js"
 *
 * const state = CollectorGuard.makeState()
 * console.log(CollectorGuard.failed(state, 1_000), CollectorGuard.failed(state, 2_000)) // => true false
 * console.log(CollectorGuard.failed(state, 70_000)) // => true
 * ```
 *
 * @since 0.1.0
 * @category Decisions
 */
export const failed = (state: State, now: number): boolean => {
  const first = now >= state.pausedUntil
  state.pausedUntil = now + PAUSE_MILLIS
  return first
}

/**
 * Records that the program is ending at `now`: from then on exports get what is left of `budgetMillis` at most.
 *
 * @example
 * ```ts
 * import * as CollectorGuard from "./collectorGuard.js"
 *
 * const state = CollectorGuard.makeState()
 * CollectorGuard.shutdown(state, 5_000, CollectorGuard.SHUTDOWN_MILLIS)
 * console.log(state.deadline) // => 6500
 * ```
 *
 * @since 0.1.0
 * @category Decisions
 */
export const shutdown = (state: State, now: number, budgetMillis: number): void => {
  state.deadline = now + budgetMillis
}

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

const field = (value: unknown, name: string): unknown =>
  typeof value === "object" && value !== null && name in value ? (value as Record<string, unknown>)[name] : undefined

/**
 * A failed connection in a few words, from the error as Node's `fetch` nests it (`TypeError: fetch failed`, its cause
 * the socket's error, or fetch's own reason: `bad port`): a known code in words, else the innermost message.
 *
 * @example
 * ```ts
 * import * as CollectorGuard from "./collectorGuard.js"
 *
 * const refused = new TypeError("fetch failed", { cause: Object.assign(new Error("connect"), { code: "ECONNREFUSED" }) })
 * console.log(CollectorGuard.describeTransport(refused)) // => connection refused
 * console.log(CollectorGuard.describeTransport(new TypeError("fetch failed", { cause: new Error("bad port") })))
 * // => bad port
 * ```
 *
 * @since 0.1.0
 * @category Text
 */
export const describeTransport = (error: unknown): string => {
  let at: unknown = error
  let message = "the connection failed"
  for (let depth = 0; depth < 4 && at !== undefined; depth++) {
    const code = field(at, "code")
    if (typeof code === "string" && codes[code] !== undefined) return codes[code]!
    const text = field(at, "message")
    if (typeof text === "string" && text !== "") message = text
    at = field(at, "cause")
  }
  return message
}

/**
 * The reason of an export that got no answer within `millis`.
 *
 * @example
 * ```ts
 * import * as CollectorGuard from "./collectorGuard.js"
 *
 * console.log(CollectorGuard.noAnswer(10_000), CollectorGuard.noAnswer(1_234)) // => no answer within 10 s no answer within 1.2 s
 * ```
 *
 * @since 0.1.0
 * @category Text
 */
export const noAnswer = (millis: number): string => `no answer within ${Math.round(millis / 100) / 10} s`

/**
 * The reason of an export answered with `status` (anything but a 2xx is a failure).
 *
 * @example
 * ```ts
 * import * as CollectorGuard from "./collectorGuard.js"
 *
 * console.log(CollectorGuard.statusReason(401)) // => HTTP 401
 * ```
 *
 * @since 0.1.0
 * @category Text
 */
export const statusReason = (status: number): string => `HTTP ${status}`

/**
 * The reason of an export whose answer broke off before its end.
 *
 * @since 0.1.0
 * @category Text
 */
export const BROKEN_ANSWER = "the answer broke off"

/**
 * What the exporter is told of an export dropped because the collector failed a moment ago.
 *
 * @since 0.1.0
 * @category Text
 */
export const PAUSED = "the collector failed a moment ago"

/**
 * The warning said once each time the collector is found failing, when the program gave no `onExportFailure`.
 *
 * @example
 * ```ts
 * import * as CollectorGuard from "./collectorGuard.js"
 *
 * console.log(CollectorGuard.warning({ url: "http://127.0.0.1:4318/v1/traces", reason: "connection refused" }))
 * // => OpenTelemetry export to http://127.0.0.1:4318/v1/traces failed (connection refused); exports are dropped for a minute
 * ```
 *
 * @since 0.1.0
 * @category Text
 */
export const warning = (failure: ExportFailure): string =>
  `OpenTelemetry export to ${failure.url} failed (${failure.reason}); exports are dropped for a minute`
