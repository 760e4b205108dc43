/**
 * Export of the program's spans, metrics and logs over OTLP/HTTP, set by the standard OpenTelemetry variables
 * (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_SERVICE_NAME`, …) and the options given in code, through the OTLP exporters
 * of the edition's Effect (`@effect/opentelemetry`'s in the Effect 3 edition, `effect/observability`'s in the Effect 4
 * edition: `internal/exporters.ts`); they ride on Effect's HttpClient, and no OpenTelemetry SDK is loaded.
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Collector from "./internal/collector.js"
import * as CollectorGuard from "./internal/collectorGuard.js"
import { configString, type DurationInput, type LogLevelName, toMillis, unwrapScoped } from "./internal/edition.js"
import * as Exporters from "./internal/exporters.js"
import * as Exporting from "./internal/exporting.js"
import * as OtelSettings from "./internal/otelSettings.js"
import type * as Shape from "./internal/shape.js"
import * as Variables from "./Variables.js"

/**
 * This package's version: the resource's `telemetry.sdk.version`, and the version of the instrumentation scopes of the
 * client's and the streams' telemetry (`@erp-client/*` packages are released together, with one version:
 * `.changeset/config.json`).
 *
 * @since 0.1.0
 * @category Constants
 */
export const VERSION = "0.1.0"

/**
 * The instrumentation scopes of the library's own telemetry: the client's (its attempts and calls,
 * `http.client.request.duration` and its `erp.client.*` metrics) and the streams' (an export's span, records streamed,
 * drift, lookups), each with `VERSION`. Each edition files them under its own packages' names (the Effect 4
 * edition's begin `@erp-client/effect4-`): a dashboard tells the editions apart by them.
 *
 * @since 0.1.0
 * @category Constants
 */
export const SCOPES = {
  client: "@erp-client/client",
  streams: "@erp-client/streams"
} as const

/**
 * A collector that could not take an export: where it went, and what went wrong in a few words (`connection
 * refused`, `no answer within 10 s`, `HTTP 401`).
 *
 * @since 0.1.0
 * @category Models
 */
export type ExportFailure = CollectorGuard.ExportFailure

/**
 * An OTLP/HTTP encoding: `http/protobuf` (the default) or `http/json`.
 *
 * @since 0.1.0
 * @category Models
 */
export type Protocol = OtelSettings.Protocol

/**
 * One of the three signals.
 *
 * @since 0.1.0
 * @category Models
 */
export type Signal = OtelSettings.Signal

/**
 * The options of `layer`. Each wins over its standard variable; what is not given is read from the variables (through
 * the current `ConfigProvider`, the environment by default), and past them the specification's defaults.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Options {
  /** `service.name`; else `OTEL_SERVICE_NAME`, `service.name` in `OTEL_RESOURCE_ATTRIBUTES`, `unknown_service:node`. */
  readonly serviceName?: string | undefined
  /** `service.version`; else `service.version` in `OTEL_RESOURCE_ATTRIBUTES`. */
  readonly serviceVersion?: string | undefined
  /**
   * The instrumentation scope of the program's own telemetry: its spans and metrics (the client's are filed under
   * `@erp-client/client`, the streams' under `@erp-client/streams`, with their version: `SCOPES`) and every log
   * record. Default: the service's name and version.
   */
  readonly scope?: { readonly name: string; readonly version?: string | undefined } | undefined
  /** More resource attributes, over those of `OTEL_RESOURCE_ATTRIBUTES`. */
  readonly attributes?: Readonly<Record<string, string | number | boolean>> | undefined
  /**
   * The collector's base URL, each signal sent to `/v1/traces`, `/v1/metrics`, `/v1/logs` under it; else
   * `OTEL_EXPORTER_OTLP_ENDPOINT` (and a signal's own `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, … as it is), else
   * `http://localhost:4318`.
   */
  readonly endpoint?: string | undefined
  /** Else `OTEL_EXPORTER_OTLP_PROTOCOL` (or a signal's own), else `http/protobuf`. */
  readonly protocol?: Protocol | undefined
  /** Headers of every export (a collector's token), over those of `OTEL_EXPORTER_OTLP_HEADERS` (and a signal's own). */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** `false` sends no spans; else unless `OTEL_TRACES_EXPORTER=none`. */
  readonly traces?: boolean | undefined
  /** `false` sends no metrics; else unless `OTEL_METRICS_EXPORTER=none`. */
  readonly metrics?: boolean | undefined
  /** `false` sends no log records; else unless `OTEL_LOGS_EXPORTER=none`. */
  readonly logs?: boolean | undefined
  /**
   * The least level of the log records sent, by the edition's names (default warnings, errors and fatal: `"Warning"` in
   * the Effect 3 edition, `"Warn"` in the Effect 4 edition).
   */
  readonly logLevel?: LogLevelName | undefined
  /** `true` sends nothing (as `OTEL_SDK_DISABLED=true`). */
  readonly disabled?: boolean | undefined
  /**
   * Effect's fiber runtime metrics (`effect_fiber_*` in the Effect 3 edition, `child_fiber*` in the Effect 4 edition),
   * enabled and sent: not unless asked for.
   */
  readonly runtimeMetrics?: boolean | undefined
  /**
   * How long the program's end may wait for the last exports, in all (default 1.5 seconds). A collector that does not
   * answer within it is given up on, and said so (`onExportFailure`).
   */
  readonly shutdownTimeout?: DurationInput | undefined
  /**
   * Told once each time the collector is found failing (refused, silent past `OTEL_EXPORTER_OTLP_TIMEOUT`, or
   * answering with an error status); exports are then dropped for a minute. Default: a warning in the program's log.
   */
  readonly onExportFailure?: ((failure: ExportFailure) => Effect.Effect<void>) | undefined
}

/**
 * The signals an environment asks a program for that exports only when told (as the `erp` command does): an OTLP
 * endpoint is set (`OTEL_EXPORTER_OTLP_ENDPOINT` for all signals, a signal's own endpoint for that one), less those
 * whose exporter is `none`; none when `OTEL_SDK_DISABLED=true`.
 *
 * @example
 * ```ts
 * import { ErpTelemetry } from "@erp-client/otel"
 *
 * // Only a traces endpoint is set: only spans are asked for
 * const traces = { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://localhost:4318/v1/traces" }
 * console.log(ErpTelemetry.askedSignals(traces)) // => [ 'traces' ]
 *
 * // OTEL_SDK_DISABLED=true turns everything off
 * console.log(ErpTelemetry.askedSignals({ ...traces, OTEL_SDK_DISABLED: "true" })) // => []
 * ```
 *
 * @since 0.1.0
 * @category Settings
 */
export const askedSignals: (env: Readonly<Record<string, string | undefined>>) => ReadonlyArray<Signal> =
  Variables.askedSignals

const readVariables: Effect.Effect<OtelSettings.Variables> = Effect.map(
  Effect.orDie(Config.all(OtelSettings.VARIABLES.map((name) => Config.option(configString(name))))),
  (values) => {
    const env: OtelSettings.Variables = {}
    values.forEach((value, i) => {
      if (Option.isSome(value)) env[OtelSettings.VARIABLES[i]!] = value.value
    })
    return env
  }
)

/**
 * Exports every span, metric and log of the program it is provided to over OTLP/HTTP, as the standard variables and
 * `options` say (see `Options`): the client's attempt spans by the HTTP conventions under its calls and the export's
 * span, `http.client.request.duration` and the `erp.client.*` metrics, warnings and errors as log records. Provide it
 * once, at the edge of the application: `program.pipe(Effect.provide(ErpTelemetry.layer()))`. On the program's end it
 * sends what is left, within `shutdownTimeout`. With `OTEL_SDK_DISABLED=true` (or `disabled`) it sends nothing and
 * loads no exporter.
 *
 * @example
 * ```ts
 * import { ErpTelemetry } from "@erp-client/otel"
 * import { Effect } from "effect"
 *
 * // A nightly sync's spans, metrics and warnings, sent to a local collector as "partner-sync"
 * const sync = Effect.logWarning("3 partner records set aside").pipe(Effect.withSpan("partner-sync"))
 * const program = sync.pipe(
 *   Effect.provide(ErpTelemetry.layer({ serviceName: "partner-sync", endpoint: "http://localhost:4318" }))
 * )
 * ```
 *
 * @since 0.1.0
 * @category Layers
 */
export const layer = (options: Options = {}): Layer.Layer<never> =>
  unwrapScoped(Effect.gen(function*() {
    const settings = OtelSettings.resolve(yield* readVariables, options)
    const onFailure = options.onExportFailure ??
      ((failure: ExportFailure) => Effect.logWarning(CollectorGuard.warning(failure)))
    for (const problem of settings.problems) yield* Effect.logWarning(`OpenTelemetry: ${problem}`)
    if (settings.disabled) return Layer.empty
    const shutdownMillis = toMillis(options.shutdownTimeout ?? Duration.millis(CollectorGuard.SHUTDOWN_MILLIS))
    const resource = {
      serviceName: settings.serviceName,
      serviceVersion: settings.serviceVersion,
      attributes: {
        "telemetry.sdk.name": "@erp-client/otel",
        "telemetry.sdk.language": "nodejs",
        "telemetry.sdk.version": VERSION,
        "service.instance.id": globalThis.crypto.randomUUID(),
        ...settings.attributes
      }
    }
    const scopes: Shape.Scopes = {
      ...SCOPES,
      version: VERSION,
      program: options.scope ?? { name: settings.serviceName, version: settings.serviceVersion }
    }
    const collector = Collector.make({ onFailure })
    const plan = Exporting.plan(settings, {
      resource,
      shutdownMillis,
      logLevel: options.logLevel,
      runtimeMetrics: options.runtimeMetrics === true,
      scopes,
      collector
    })
    const layers = yield* Exporting.start(plan, yield* Exporters.make(plan))
    // Added last, run first when the program ends: from then on the last exports share the shutdown budget.
    yield* Effect.addFinalizer(() => collector.shutdown(shutdownMillis))
    return layers.length === 0 ? Layer.empty : Layer.mergeAll(layers[0]!, ...layers.slice(1))
  }))
