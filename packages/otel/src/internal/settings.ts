/**
 * The standard OpenTelemetry settings (the SDK's environment variables,
 * https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/ and
 * https://opentelemetry.io/docs/specs/otel/protocol/exporter/), read into what the exporters need. Pure: the layer
 * reads the variables through Effect's `Config`, so a `ConfigProvider` can stand in for the environment.
 */

import { type Signal, SIGNALS } from "../Variables.js"

/** The variables read, by name. */
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

export type Variable = typeof VARIABLES[number]

export type Environment = Partial<Record<Variable, string>>

export { type Signal, SIGNALS }

export type Protocol = "http/protobuf" | "http/json"

/** Where one signal goes and how. */
export interface Destination {
  readonly url: string
  readonly protocol: Protocol
  readonly headers: Readonly<Record<string, string>>
  readonly timeoutMillis: number
}

/** What the user passes in code; each wins over its variable. */
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

export interface Settings {
  readonly disabled: boolean
  readonly serviceName: string
  readonly serviceVersion: string | undefined
  /** The resource's other attributes (`OTEL_RESOURCE_ATTRIBUTES` and the options), without the service's name. */
  readonly attributes: Readonly<Record<string, string | number | boolean>>
  readonly traces: Destination | undefined
  readonly metrics: Destination | undefined
  readonly logs: Destination | undefined
  readonly traceIntervalMillis: number
  readonly traceBatchSize: number
  readonly metricIntervalMillis: number
  readonly logIntervalMillis: number
  /** What could not be followed (a protocol or exporter this layer does not speak), one sentence each. */
  readonly problems: ReadonlyArray<string>
}

/** The spec's default endpoint of OTLP/HTTP. */
export const DEFAULT_ENDPOINT = "http://localhost:4318"

const decode = (text: string): string => {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

/** `key1=value1,key2=value2`, percent-encoded values (the W3C Baggage form the spec uses for both lists). */
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

/** The signal's path under a base endpoint, as the spec appends it. */
export const signalUrl = (base: string, signal: Signal): string => `${base.replace(/\/+$/, "")}/v1/${signal}`

/** The settings from the environment's variables and the options given in code (which win). */
export const resolve = (env: Environment, overrides: Overrides = {}): Settings => {
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
