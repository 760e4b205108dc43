/**
 * The standard OpenTelemetry settings, read into what the exporters need: the kernel's (`@erp-client/kernel/internal/otel/otelSettings`,
 * which the Effect 4 edition reads too), under the names this package's code and tests use. The layer reads the
 * variables through Effect's `Config`, so a `ConfigProvider` can stand in for the environment.
 */
import type * as OtelSettings from "@erp-client/kernel/internal/otel/otelSettings"

export {
  DEFAULT_ENDPOINT,
  type Destination,
  type Overrides,
  parseList,
  type Protocol,
  resolve,
  type Signal,
  SIGNALS,
  signalUrl,
  type Variable,
  VARIABLES
} from "@erp-client/kernel/internal/otel/otelSettings"

/** The variables' values, by name. */
export type Environment = OtelSettings.Variables

/** The settings, resolved. */
export type Settings = OtelSettings.Resolved
