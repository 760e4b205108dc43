/**
 * A setting that is missing or wrong, said in one line naming the variable. The settings themselves are read from
 * the environment and checked by the client (packages/client/src/ErpConfig.ts, ErpRateLimiter.ts).
 */
import type * as ConfigError from "effect/ConfigError"

/** The settings that take a duration: `30 seconds`, `500 millis`, or a bare number of seconds. */
const DURATIONS = ["ERP_RATE_WINDOW", "ERP_TIMEOUT", "ERP_RATE_LIMIT_BUDGET", "ERP_REDIS_TIMEOUT"]

// The client checks some settings after reading them and names them by option; say the variable instead.
const VARIABLES: Readonly<Record<string, string>> = {
  rateLimit: "ERP_RATE_LIMIT",
  rateWindow: "ERP_RATE_WINDOW",
  timeout: "ERP_TIMEOUT",
  retries: "ERP_RETRIES",
  rateLimitBudget: "ERP_RATE_LIMIT_BUDGET",
  maxBodyBytes: "ERP_MAX_BODY_BYTES",
  redisTimeout: "ERP_REDIS_TIMEOUT"
}

const PLACEHOLDERS: Readonly<Record<string, string>> = {
  ERP_BASE_URL: "https://<your ERP's API address>",
  ERP_API_KEY: "<your API key>"
}

const leaves = (error: ConfigError.ConfigError): ReadonlyArray<ConfigError.ConfigError> => {
  switch (error._op) {
    case "And":
    case "Or":
      return [...leaves(error.left), ...leaves(error.right)]
    default:
      return [error]
  }
}

/**
 * One line for a settings error: which variables to set (`ERP_API_KEY is not set: export ERP_API_KEY=<your API
 * key>`), or which one is wrong and why. The client's messages never hold a secret's value; this adds none.
 */
export const describeConfigError = (error: ConfigError.ConfigError): string => {
  const missing: Array<string> = []
  const invalid: Array<string> = []
  for (const leaf of leaves(error)) {
    const path = "path" in leaf ? leaf.path.join("_") : ""
    const name = VARIABLES[path] ?? path
    if (leaf._op === "MissingData") {
      if (!missing.includes(name)) missing.push(name)
    } else if (leaf._op === "InvalidData") {
      const message = leaf.message.replace(path, name)
      invalid.push(
        DURATIONS.includes(name) && /duration/i.test(message)
          ? `${name} must be a positive duration: seconds (30) or with a unit ("500 millis", "2 minutes")`
          : message.startsWith(name)
          ? message
          : `${name}: ${message}`
      )
    } else {
      invalid.push(leaf.message)
    }
  }
  if (missing.length > 0) {
    const exports = missing.map((name) => `${name}=${PLACEHOLDERS[name] ?? "<value>"}`).join(" ")
    return `${missing.join(" and ")} ${missing.length === 1 ? "is" : "are"} not set: export ${exports}`
  }
  return invalid.join("; ")
}
