/**
 * A setting that is missing or wrong, said in one line naming the variable: the client's own `ErpConfigError` message
 * (`ERP_API_KEY is not set: export ERP_API_KEY=<your API key>`), which the client's layers fail with, made here of a
 * `ConfigError` the command line meets reading a setting itself.
 */
import * as ErpConfig from "@erp-client/client/ErpConfig"
import type * as ConfigError from "effect/ConfigError"

/**
 * One line for a settings error: which variables to set, or which one is wrong and why. The client's messages never
 * hold a secret's value; this adds none.
 */
export const describeConfigError = (error: ConfigError.ConfigError): string => ErpConfig.fromConfigError(error).message
