/**
 * The standard OpenTelemetry settings, read into what the exporters need: `otelSettings.ts` (which the Effect 4
 * edition reads too, from its copy), under the names this package's code and tests use. The layer reads the
 * variables through Effect's `Config`, so a `ConfigProvider` can stand in for the environment.
 */
import type * as OtelSettings from "./otelSettings.js"

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
} from "./otelSettings.js"

/** The variables' values, by name. */
export type Environment = OtelSettings.Variables

/** The settings, resolved. */
export type Settings = OtelSettings.Resolved
