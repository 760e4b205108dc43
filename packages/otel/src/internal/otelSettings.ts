/**
 * The standard OpenTelemetry settings (the SDK's environment variables,
 * https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/, and the OTLP exporter's,
 * https://opentelemetry.io/docs/specs/otel/protocol/exporter/) read into what an OTLP/HTTP exporter needs, the options
 * given in code winning over them: both editions' `ErpTelemetry.layer` and `Variables`, and the `erp` command.
 *
 * Plain functions over data, the same in both editions (the Effect 4 package's copy is generated from this file).
 *
 * @since 0.1.0
 */

/**
 * One of the three signals.
 *
 * @since 0.1.0
 * @category Models
 */
export type Signal = "traces" | "metrics" | "logs"

/**
 * The three signals, in the order they are listed.
 *
 * @since 0.1.0
 * @category Constants
 */
export const SIGNALS: ReadonlyArray<Signal> = ["traces", "metrics", "logs"]

/**
 * Every variable read, by name: an edition reads these (through its `Config`, so a `ConfigProvider` can stand in for
 * the environment) and hands them to `resolve`.
 *
 * @since 0.1.0
 * @category Constants
 */
export const VARIABLES = [
  "OTEL_SDK_DISABLED",
  "OTEL_SERVICE_NAME",
  "OTEL_RESOURCE_ATTRIBUTES",
  "OTEL_EXPORTER_OTLP_ENDPOINT",
  "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
  "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
  "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
  "OTEL_EXPORTER_OTLP_PROTOCOL",
  "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
  "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
  "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL",
  "OTEL_EXPORTER_OTLP_HEADERS",
  "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
  "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
  "OTEL_EXPORTER_OTLP_LOGS_HEADERS",
  "OTEL_EXPORTER_OTLP_TIMEOUT",
  "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
  "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT",
  "OTEL_EXPORTER_OTLP_LOGS_TIMEOUT",
  "OTEL_TRACES_EXPORTER",
  "OTEL_METRICS_EXPORTER",
  "OTEL_LOGS_EXPORTER",
  "OTEL_BSP_SCHEDULE_DELAY",
  "OTEL_BSP_MAX_EXPORT_BATCH_SIZE",
  "OTEL_METRIC_EXPORT_INTERVAL",
  "OTEL_BLRP_SCHEDULE_DELAY"
] as const

/**
 * One of `VARIABLES`.
 *
 * @since 0.1.0
 * @category Models
 */
export type Variable = typeof VARIABLES[number]

/**
 * The variables' values, by name (those unset left out).
 *
 * @since 0.1.0
 * @category Models
 */
export type Variables = Partial<Record<Variable, string>>

/**
 * An OTLP/HTTP encoding: `http/protobuf` (the default) or `http/json`. `grpc` is not spoken.
 *
 * @since 0.1.0
 * @category Models
 */
export type Protocol = "http/protobuf" | "http/json"

/**
 * Where one signal goes and how.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Destination {
  readonly url: string
  readonly protocol: Protocol
  /** Percent-decoded: the general headers, a signal's own over them, the options' over both. */
  readonly headers: Readonly<Record<string, string>>
  /** The bound on one export. */
  readonly timeoutMillis: number
}

/**
 * What the program passes in code (each edition's `ErpTelemetry.Options`); each wins over its variable.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Overrides {
  readonly disabled?: boolean | undefined
  readonly serviceName?: string | undefined
  readonly serviceVersion?: string | undefined
  readonly attributes?: Readonly<Record<string, string | number | boolean>> | undefined
  readonly endpoint?: string | undefined
  readonly protocol?: Protocol | undefined
  readonly headers?: Readonly<Record<string, string>> | undefined
  readonly traces?: boolean | undefined
  readonly metrics?: boolean | undefined
  readonly logs?: boolean | undefined
}

/**
 * The settings, resolved: what to send where, and what could not be followed.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Resolved {
  /** `OTEL_SDK_DISABLED=true` (or the option): nothing is sent. */
  readonly disabled: boolean
  readonly serviceName: string
  readonly serviceVersion: string | undefined
  /** The resource's other attributes (`OTEL_RESOURCE_ATTRIBUTES` and the options), without the service's name. */
  readonly attributes: Readonly<Record<string, string | number | boolean>>
  /** Where each signal goes, `undefined` when it is not sent. */
  readonly traces: Destination | undefined
  readonly metrics: Destination | undefined
  readonly logs: Destination | undefined
  readonly traceIntervalMillis: number
  readonly traceBatchSize: number
  readonly metricIntervalMillis: number
  readonly logIntervalMillis: number
  /** What could not be followed (a protocol or exporter not spoken), one sentence each: said as warnings. */
  readonly problems: ReadonlyArray<string>
}

/**
 * The specification's default endpoint of OTLP/HTTP.
 *
 * @since 0.1.0
 * @category Constants
 */
export const DEFAULT_ENDPOINT = "http://localhost:4318"

const decode = (text: string): string => {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

/**
 * `key1=value1,key2=value2` with percent-encoded keys and values (the W3C Baggage form the specification uses for
 * `OTEL_EXPORTER_OTLP_HEADERS` and `OTEL_RESOURCE_ATTRIBUTES`), decoded; an entry without `=` or key is skipped.
 *
 * @example
 * ```ts
 * import * as OtelSettings from "./otelSettings.js"
 *
 * console.log(OtelSettings.parseList("api-key=a%2Cb, team = data%20sync,broken"))
 * // => { 'api-key': 'a,b', team: 'data sync' }
 * ```
 *
 * @since 0.1.0
 * @category Parsing
 */
export const parseList = (text: string | undefined): Record<string, string> => {
  const out: Record<string, string> = {}
  if (text === undefined) return out
  for (const part of text.split(",")) {
    const at = part.indexOf("=")
    if (at <= 0) continue
    const key = decode(part.slice(0, at).trim())
    if (key !== "") out[key] = decode(part.slice(at + 1).trim())
  }
  return out
}

const set = (text: string | undefined): string | undefined => {
  const trimmed = text?.trim()
  return trimmed === undefined || trimmed === "" ? undefined : trimmed
}

const positive = (text: string | undefined, fallback: number): number => {
  const value = Number(set(text))
  return Number.isFinite(value) && value > 0 ? value : fallback
}

const upper = (signal: Signal) => signal.toUpperCase() as "TRACES" | "METRICS" | "LOGS"

/**
 * A signal's URL under a base endpoint, as the specification appends it (`/v1/traces`, …).
 *
 * @example
 * ```ts
 * import * as OtelSettings from "./otelSettings.js"
 *
 * console.log(OtelSettings.signalUrl("https://collector.example:4318/base/", "metrics"))
 * // => https://collector.example:4318/base/v1/metrics
 * ```
 *
 * @since 0.1.0
 * @category Parsing
 */
export const signalUrl = (base: string, signal: Signal): string => `${base.replace(/\/+$/, "")}/v1/${signal}`

/**
 * The settings from the variables and the options given in code (which win): each signal's URL (a signal's own
 * endpoint as it is, else the general one with `/v1/<signal>`, else `http://localhost:4318`), protocol, headers and
 * timeout; the resource's service name, version and attributes; the export intervals. A protocol other than
 * `http/protobuf` and `http/json` (`grpc`), or an exporter other than `otlp` and `none`, is a problem said in words,
 * and that signal is not sent.
 *
 * @example
 * ```ts
 * import * as OtelSettings from "./otelSettings.js"
 *
 * const settings = OtelSettings.resolve({
 *   OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
 *   OTEL_EXPORTER_OTLP_HEADERS: "x-token=t%20ok",
 *   OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: "grpc",
 *   OTEL_LOGS_EXPORTER: "none"
 * }, { serviceName: "crm-sync" })
 * console.log(settings.serviceName, settings.traces)
 * // => crm-sync { url: 'http://collector:4318/v1/traces', protocol: 'http/protobuf', headers: { 'x-token': 't ok' }, timeoutMillis: 10000 }
 * console.log(settings.metrics, settings.logs, settings.problems)
 * // => undefined undefined [ 'the OTLP protocol grpc is not supported (http/protobuf or http/json): no metrics are sent' ]
 * ```
 *
 * @since 0.1.0
 * @category Settings
 */
export const resolve = (env: Variables, overrides: Overrides = {}): Resolved => {
  const problems: Array<string> = []
  const disabled = overrides.disabled ?? set(env.OTEL_SDK_DISABLED)?.toLowerCase() === "true"
  const fromEnv = parseList(env.OTEL_RESOURCE_ATTRIBUTES)
  const attributes: Record<string, string | number | boolean> = { ...fromEnv, ...overrides.attributes }
  const serviceName = overrides.serviceName ?? set(env.OTEL_SERVICE_NAME) ??
    (typeof attributes["service.name"] === "string" && attributes["service.name"] !== ""
      ? attributes["service.name"]
      : "unknown_service:node")
  const version = attributes["service.version"]
  const serviceVersion = overrides.serviceVersion ?? (version === undefined ? undefined : String(version))
  delete attributes["service.name"]
  delete attributes["service.version"]

  const base = overrides.endpoint ?? set(env.OTEL_EXPORTER_OTLP_ENDPOINT) ?? DEFAULT_ENDPOINT
  const headers = { ...parseList(env.OTEL_EXPORTER_OTLP_HEADERS) }
  const destination = (signal: Signal): Destination | undefined => {
    const S = upper(signal)
    const wanted = overrides[signal]
    if (wanted === false) return undefined
    if (wanted === undefined) {
      const exporter = set(env[`OTEL_${S}_EXPORTER`])?.toLowerCase()
      if (exporter === "none") return undefined
      if (exporter !== undefined && exporter !== "otlp") {
        problems.push(`OTEL_${S}_EXPORTER=${exporter} is not supported (otlp or none): no ${signal} are sent`)
        return undefined
      }
    }
    const protocol = overrides.protocol ?? set(env[`OTEL_EXPORTER_OTLP_${S}_PROTOCOL`]) ??
      set(env.OTEL_EXPORTER_OTLP_PROTOCOL) ?? "http/protobuf"
    if (protocol !== "http/protobuf" && protocol !== "http/json") {
      problems.push(
        `the OTLP protocol ${protocol} is not supported (http/protobuf or http/json): no ${signal} are sent`
      )
      return undefined
    }
    const own = overrides.endpoint === undefined ? set(env[`OTEL_EXPORTER_OTLP_${S}_ENDPOINT`]) : undefined
    return {
      url: own ?? signalUrl(base, signal),
      protocol,
      headers: { ...headers, ...parseList(env[`OTEL_EXPORTER_OTLP_${S}_HEADERS`]), ...overrides.headers },
      timeoutMillis: positive(env[`OTEL_EXPORTER_OTLP_${S}_TIMEOUT`], positive(env.OTEL_EXPORTER_OTLP_TIMEOUT, 10_000))
    }
  }
  const [traces, metrics, logs] = SIGNALS.map(destination)
  return {
    disabled,
    serviceName,
    serviceVersion,
    attributes,
    traces,
    metrics,
    logs,
    traceIntervalMillis: positive(env.OTEL_BSP_SCHEDULE_DELAY, 5_000),
    traceBatchSize: positive(env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE, 512),
    metricIntervalMillis: positive(env.OTEL_METRIC_EXPORT_INTERVAL, 60_000),
    logIntervalMillis: positive(env.OTEL_BLRP_SCHEDULE_DELAY, 1_000),
    problems
  }
}

const isSet = (text: string | undefined): boolean => set(text) !== undefined

/**
 * The signals an environment asks a program for that exports only when told (the `erp` command): an OTLP endpoint is
 * set (`OTEL_EXPORTER_OTLP_ENDPOINT` for every signal, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, … for that one), less
 * those whose exporter is `none` (`OTEL_TRACES_EXPORTER=none`, …); none at all with `OTEL_SDK_DISABLED=true`.
 *
 * @example
 * ```ts
 * import * as OtelSettings from "./otelSettings.js"
 *
 * // A collector for every signal, but no log records
 * const env = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://localhost:4318", OTEL_LOGS_EXPORTER: "none" }
 * console.log(OtelSettings.askedSignals(env)) // => [ 'traces', 'metrics' ]
 * console.log(OtelSettings.askedSignals({ ...env, OTEL_SDK_DISABLED: "true" })) // => []
 * ```
 *
 * @since 0.1.0
 * @category Settings
 */
export const askedSignals = (env: Readonly<Record<string, string | undefined>>): ReadonlyArray<Signal> => {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return []
  const general = isSet(env.OTEL_EXPORTER_OTLP_ENDPOINT)
  return SIGNALS.filter((signal) =>
    env[`OTEL_${upper(signal)}_EXPORTER`]?.trim().toLowerCase() !== "none" &&
    (general || isSet(env[`OTEL_EXPORTER_OTLP_${upper(signal)}_ENDPOINT`]))
  )
}

/**
 * Whether the environment names the service (`OTEL_SERVICE_NAME`, or `service.name` in `OTEL_RESOURCE_ATTRIBUTES`):
 * a program with a name of its own uses it only when not.
 *
 * @example
 * ```ts
 * import * as OtelSettings from "./otelSettings.js"
 *
 * const env = { OTEL_RESOURCE_ATTRIBUTES: "service.name=partner-sync,deployment.environment=production" }
 * console.log(OtelSettings.namesService(env), OtelSettings.namesService({})) // => true false
 * ```
 *
 * @since 0.1.0
 * @category Settings
 */
export const namesService = (env: Readonly<Record<string, string | undefined>>): boolean =>
  isSet(env.OTEL_SERVICE_NAME) || /(^|,)\s*service\.name\s*=\s*[^\s,]/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? "")
