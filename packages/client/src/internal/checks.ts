/**
 * The checks and `Config` readers shared by the client's settings modules (`ErpConfig`, `ErpRateLimiter`,
 * `ErpRateLimiterRedis`): one definition of "a positive integer", "a duration" and "an optional setting". A failed
 * check names the option (`timeout`, `redis.url`): the command line says which variable that is (`Environment`).
 */
import * as Settings from "@erp-client/kernel/Settings"
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import * as Option from "effect/Option"

/** A setting that failed its check, named by its option. */
export const invalid = (option: string, message: string): ConfigError.ConfigError =>
  ConfigError.InvalidData([option], message)

/** A kernel check's answer (`@erp-client/kernel/Settings`) as an `Either` of a `ConfigError` naming the option. */
export const checked = <A>(check: Settings.Checked<A>): Either.Either<A, ConfigError.ConfigError> =>
  check.ok ? Either.right(check.value) : Either.left(invalid(check.option, check.message))

export const positiveInt = (option: string, value: number): Either.Either<number, ConfigError.ConfigError> =>
  checked(Settings.positiveInt(option, value))

export const nonNegativeInt = (option: string, value: number): Either.Either<number, ConfigError.ConfigError> =>
  checked(Settings.nonNegativeInt(option, value))

export const positiveDuration = (
  option: string,
  input: Duration.DurationInput
): Either.Either<Duration.Duration, ConfigError.ConfigError> => millisChecked(option, input, Settings.positiveMillis)

/** A finite duration of 0 or more (`redis.grace`: 0 turns the wait off). */
export const nonNegativeDuration = (
  option: string,
  input: Duration.DurationInput
): Either.Either<Duration.Duration, ConfigError.ConfigError> => millisChecked(option, input, Settings.nonNegativeMillis)

const millisChecked = (
  option: string,
  input: Duration.DurationInput,
  check: (option: string, millis: number | undefined) => Settings.Checked<number>
): Either.Either<Duration.Duration, ConfigError.ConfigError> => {
  const duration = Duration.decodeUnknown(input)
  return Either.map(
    checked(
      check(
        option,
        Option.isSome(duration) && Duration.isFinite(duration.value) ? Duration.toMillis(duration.value) : undefined
      )
    ),
    () => Option.getOrThrow(duration)
  )
}

/**
 * A duration read from a setting: `"30 seconds"`, `"500 millis"`, or a bare number, which means seconds
 * (`ERP_RATE_WINDOW=30`), as users of such variables expect.
 */
export const duration = (name: string): Config.Config<Duration.Duration> =>
  Config.string(name).pipe(
    Config.mapOrFail((text) => {
      const parsed = Duration.decodeUnknown(Settings.bareSeconds(text) ?? text)
      return Option.isSome(parsed)
        ? Either.right(parsed.value)
        // The path is the setting's own: `Config` puts its name in front.
        : Either.left(ConfigError.InvalidData([], Settings.DURATION_MESSAGE))
    })
  )

/**
 * What failed in a `ConfigError`, leaf by leaf (the kernel's `Settings.Problem`): a variable not set, or a value read
 * or checked that failed. Reading names the variable; a check after reading names the option.
 */
export const problems = (error: ConfigError.ConfigError): ReadonlyArray<Settings.Problem> => {
  switch (error._op) {
    case "And":
    case "Or":
      return [...problems(error.left), ...problems(error.right)]
    case "MissingData":
      return [{ reason: "Missing", path: error.path.join("."), message: error.message }]
    default:
      return [{ reason: "Invalid", path: error.path.join("."), message: error.message }]
  }
}

/** A setting that may be unset: `undefined` then, so the option's default applies. */
export const optional = <A>(config: Config.Config<A>): Config.Config<A | undefined> =>
  Config.map(Config.option(config), Option.getOrUndefined)
