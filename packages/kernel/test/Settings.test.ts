import { describe, expect, it } from "@effect/vitest"
import * as ErrorText from "../src/ErrorText.js"
import * as Settings from "../src/Settings.js"

// The one line both editions' `ErpConfigError` and the command line say of settings that failed.

describe("Settings.fault and ErrorText.configError", () => {
  it("settings not set: named once each, with how to set them; those set wrong wait until they are", () => {
    const fault = Settings.fault([
      { reason: "Missing", path: "ERP_BASE_URL", message: "Expected ERP_BASE_URL to exist in the process context" },
      { reason: "Invalid", path: "retries", message: "must be an integer >= 0" },
      { reason: "Missing", path: "ERP_API_KEY", message: "Expected ERP_API_KEY to exist in the process context" },
      { reason: "Missing", path: "ERP_API_KEY", message: "again" }
    ])
    expect(fault).toEqual({ reason: "Missing", settings: ["ERP_BASE_URL", "ERP_API_KEY"], details: [] })
    expect(ErrorText.configError(fault)).toBe(
      "ERP_BASE_URL and ERP_API_KEY are not set: export ERP_BASE_URL=https://<your ERP's API address> " +
        "ERP_API_KEY=<your API key>"
    )
    expect(ErrorText.configError(Settings.fault([{ reason: "Missing", path: "ERP_API_KEY", message: "" }]))).toBe(
      "ERP_API_KEY is not set: export ERP_API_KEY=<your API key>"
    )
    expect(ErrorText.configError(Settings.fault([{ reason: "Missing", path: "CRM_ERP_KEY", message: "" }]))).toBe(
      "CRM_ERP_KEY is not set: export CRM_ERP_KEY=<value>"
    )
  })

  it("settings set wrong: each named by its variable, or by its option when given as a value, and why", () => {
    const problems: ReadonlyArray<Settings.Problem> = [
      { reason: "Invalid", path: "retries", message: "must be an integer >= 0" },
      { reason: "Invalid", path: "window", message: "must be a positive, finite duration" },
      { reason: "Invalid", path: "ERP_TIMEOUT", message: Settings.DURATION_MESSAGE },
      { reason: "Invalid", path: "baseUrl", message: "the base URL must use https, not ftp:" }
    ]
    const fromEnv = Settings.fault(problems)
    expect(fromEnv.settings).toEqual(["ERP_RETRIES", "ERP_RATE_WINDOW", "ERP_TIMEOUT", "ERP_BASE_URL"])
    expect(ErrorText.configError(fromEnv)).toBe(
      "ERP_RETRIES: must be an integer >= 0; " +
        "ERP_RATE_WINDOW must be a positive duration: seconds (30) or with a unit (\"500 millis\", \"2 minutes\"); " +
        "ERP_TIMEOUT must be a positive duration: seconds (30) or with a unit (\"500 millis\", \"2 minutes\"); " +
        "ERP_BASE_URL: the base URL must use https, not ftp:"
    )
    const asValues = Settings.fault(problems.slice(0, 2), (path) => path)
    expect(ErrorText.configError(asValues)).toBe(
      "retries: must be an integer >= 0; window: must be a positive, finite duration"
    )
  })
})
