/**
 * The checks and `Config` readers shared by the client's settings modules (`ErpConfig`, `ErpRateLimiter`,
 * `ErpRateLimiterRedis`): the kernel's checks (`@erp-client/kernel/Settings`) as Effect 4's `Config.ConfigError`,
 * which names the option (`timeout`, `redis.url`) in its path; the command line says which variable that is
 * (`Environment`).
 */
import * as Settings from "@erp-client/kernel/Settings"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"

/** A setting that failed its check, named by its option. */
export const invalid = (path: ReadonlyArray<string>, message: string): Config.ConfigError =>
  new Config.ConfigError(
    new Schema.SchemaError(new SchemaIssue.Pointer(path, new SchemaIssue.InvalidValue({ message })))
  )

/** A kernel check's answer as a `Result` of a `ConfigError` naming the option. */
export const checked = <A>(check: Settings.Checked<A>): Result.Result<A, Config.ConfigError> =>
  check.ok ? Result.succeed(check.value) : Result.fail(invalid([check.option], check.message))

export const positiveInt = (option: string, value: number): Result.Result<number, Config.ConfigError> =>
  checked(Settings.positiveInt(option, value))

export const nonNegativeInt = (option: string, value: number): Result.Result<number, Config.ConfigError> =>
  checked(Settings.nonNegativeInt(option, value))

export const positiveDuration = (
  option: string,
  input: Duration.Input
): Result.Result<Duration.Duration, Config.ConfigError> => millisChecked(option, input, Settings.positiveMillis)

/** A finite duration of 0 or more (`redis.grace`: 0 turns the wait off). */
export const nonNegativeDuration = (
  option: string,
  input: Duration.Input
): Result.Result<Duration.Duration, Config.ConfigError> => millisChecked(option, input, Settings.nonNegativeMillis)

const millisChecked = (
  option: string,
  input: Duration.Input,
  check: (option: string, millis: number | undefined) => Settings.Checked<number>
): Result.Result<Duration.Duration, Config.ConfigError> => {
  const duration = Duration.fromInput(input)
  return Result.map(
    checked(
      check(
        option,
        Option.isSome(duration) && Duration.isFinite(duration.value) ? Duration.toMillis(duration.value) : undefined
      )
    ),
    Duration.millis
  )
}

/**
 * A duration read from a setting: `"30 seconds"`, `"500 millis"`, or a bare number, which means seconds
 * (`ERP_RATE_WINDOW=30`), as users of such variables expect.
 */
export const duration = (name: string): Config.Config<Duration.Duration> =>
  Config.String(name).pipe(
    Config.mapEffect((text) => {
      const parsed = Duration.fromInput((Settings.bareSeconds(text) ?? text) as Duration.Input)
      return Option.isSome(parsed)
        ? Effect.succeed(parsed.value)
        : Effect.fail(invalid([name], Settings.DURATION_MESSAGE))
    })
  )

/**
 * What failed in a `ConfigError` (the kernel's `Settings.Problem`), as Effect 4 reports it: a schema issue at the
 * setting's path, said by Schema's own formatter; a value the provider does not have (or not as text) is an
 * `InvalidType` with no input, which is a setting not set. Reading names the variable; a check after reading names
 * the option.
 */
export const problems = (error: Config.ConfigError): ReadonlyArray<Settings.Problem> => {
  const cause = error.cause
  if (!Schema.isSchemaError(cause)) return [{ reason: "Invalid", path: "", message: cause.message }]
  const missing = new Set<string>()
  const walk = (issue: SchemaIssue.Issue, path: ReadonlyArray<PropertyKey>): void => {
    switch (issue._tag) {
      case "Pointer":
        return walk(issue.issue, [...path, ...issue.path])
      case "Filter":
      case "Encoding":
        return walk(issue.issue, path)
      case "Composite":
      case "AnyOf":
        return issue.issues.forEach((inner) => walk(inner, path))
      case "InvalidType":
        if (!SchemaIssue.hasInput(issue)) missing.add(path.map(String).join("."))
    }
  }
  walk(cause.issue, [])
  return formatter(cause.issue).issues.map((issue): Settings.Problem => {
    const path = (issue.path ?? []).map((key) => String(typeof key === "object" ? key.key : key)).join(".")
    return { reason: missing.has(path) ? "Missing" : "Invalid", path, message: issue.message }
  })
}

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

/** A setting that may be unset: `undefined` then, so the option's default applies. */
export const optional = <A>(config: Config.Config<A>): Config.Config<A | undefined> =>
  Config.map(Config.option(config), Option.getOrUndefined)
