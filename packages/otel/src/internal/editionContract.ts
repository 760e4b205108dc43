/**
 * The contract of the otel package's adapter (docs/editions.md): each function `src/internal/edition.ts` gives the
 * shared source, with its signature and what it does, written once. Each edition's adapter implements it with its own
 * Effect's API (`const edition: Contract = { ... }`); the types that differ between the editions (a request, the data
 * the exporters hand the serialization) are the adapter's own, named here from it.
 */
import type * as Config from "effect/Config"
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type { DurationInput, HttpClientError, LogsInput, MetricsInput, Request, TracesInput } from "./edition.js"
import type * as OtlpShape from "./otlpShape.js"

/** The functions of the adapter, by name. */
export interface Contract {
  /** `input` in milliseconds. */
  readonly toMillis: (input: DurationInput) => number
  /** A text setting. */
  readonly configString: (name: string) => Config.Config<string>
  /** The layer `self` makes, its scope the layer's. */
  readonly unwrapScoped: (self: Effect.Effect<Layer.Layer<never>, never, Scope.Scope>) => Layer.Layer<never>
  /**
   * A request refused before it is sent, with `description`: not a transport error, so the exporter does not retry it,
   * and pauses.
   */
  readonly refuse: (request: Request, description: string) => HttpClientError.HttpClientError
  /** The cause of `error` when the connection failed, else `undefined`. */
  readonly connectionFailure: (error: HttpClientError.HttpClientError) => { readonly cause: unknown } | undefined
  /** How the edition's exporter writes a span's end, which `internal/otlpShape.ts` corrects. */
  readonly dialect: OtlpShape.Dialect
  /** The exporter's traces as the shaping steps read them. */
  readonly asTraces: (data: TracesInput) => TracesInput & OtlpShape.TracesData
  /** The exporter's metrics as the shaping steps read them. */
  readonly asMetrics: (data: MetricsInput) => MetricsInput & OtlpShape.MetricsData
  /** The exporter's log records as the shaping steps read them. */
  readonly asLogs: (data: LogsInput) => LogsInput & OtlpShape.LogsData
}
