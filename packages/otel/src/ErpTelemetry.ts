/**
 * Optional export of the client's spans and metrics to OpenTelemetry, through `@effect/opentelemetry`.
 *
 * @since 0.1.0
 */
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import type * as Resource from "@effect/opentelemetry/Resource"
import type { MetricReader } from "@opentelemetry/sdk-metrics"
import type { SpanProcessor } from "@opentelemetry/sdk-trace-base"
import type * as Layer from "effect/Layer"

/**
 * @since 0.1.0
 * @category Models
 */
export interface Options {
  readonly serviceName: string
  readonly serviceVersion?: string | undefined
  /** Where spans go, e.g. `new BatchSpanProcessor(new OTLPTraceExporter())`. */
  readonly spanProcessor?: SpanProcessor | ReadonlyArray<SpanProcessor> | undefined
  /** Where metrics go, e.g. `new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter() })`. */
  readonly metricReader?: MetricReader | ReadonlyArray<MetricReader> | undefined
}

/**
 * Exports every Effect span (`ErpClient.get` / `list` / `post`, `http.client …`, `ListEndpoint.pages`) and metric
 * (`erp_client_*`) of the program it is provided to. Provide it once, at the edge of the application:
 * `program.pipe(Effect.provide(ErpTelemetry.layer({ serviceName: "crm-sync", spanProcessor, metricReader })))`.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layer = (options: Options): Layer.Layer<Resource.Resource> =>
  NodeSdk.layer(() => ({
    resource: {
      serviceName: options.serviceName,
      ...(options.serviceVersion === undefined ? {} : { serviceVersion: options.serviceVersion })
    },
    spanProcessor: options.spanProcessor,
    metricReader: options.metricReader
  }))
