/**
 * A setting that is missing or wrong, said in one line naming the variable. The settings themselves are read from
 * the environment and checked by the client (packages/client/src/ErpConfig.ts, ErpRateLimiter.ts).
 */
import * as Environment from "@erp-client/client/Environment"
import type * as ConfigError from "effect/ConfigError"

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
    // Reading names the variable; a check after reading names the option, which the client's table maps back.
    const path = "path" in leaf ? leaf.path.join(".") : ""
    const name = Environment.variableOf(path) ?? path
    if (leaf._op === "MissingData") {
      if (!missing.includes(name)) missing.push(name)
    } else if (leaf._op === "InvalidData") {
      const message = leaf.message.replace(path, name)
      invalid.push(
        Environment.durations.includes(name) && /duration/i.test(message)
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
