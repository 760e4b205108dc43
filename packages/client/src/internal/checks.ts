/**
 * The checks and `Config` readers shared by the client's settings modules (`ErpConfig`, `ErpRateLimiter`,
 * `ErpRateLimiterRedis`): the kernel's checks (`@erp-client/kernel/Settings`) as a `ConfigError`, one definition of
 * "a positive integer", "a duration" and "an optional setting". A failed check names the option (`timeout`,
 * `redis.url`): the command line says which variable that is (`Environment`).
 */
import * as Settings from "@erp-client/kernel/Settings"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"
import {
  type ConfigError,
  configParsed,
  configProblems,
  decodeDuration,
  type DurationInput,
  invalidSetting,
  Result
} from "./edition.js"

/** A setting that failed its check, named by its option. */
export const invalid = (option: string, message: string): ConfigError => invalidSetting([option], message)

/** A kernel check's answer (`@erp-client/kernel/Settings`) as a `Result` of a `ConfigError` naming the option. */
export const checked = <A>(check: Settings.Checked<A>): Result<A, ConfigError> =>
  check.ok ? Result.succeed(check.value) : Result.fail(invalid(check.option, check.message))

export const positiveInt = (option: string, value: number): Result<number, ConfigError> =>
  checked(Settings.positiveInt(option, value))

export const nonNegativeInt = (option: string, value: number): Result<number, ConfigError> =>
  checked(Settings.nonNegativeInt(option, value))

export const positiveDuration = (option: string, input: DurationInput): Result<Duration.Duration, ConfigError> =>
  millisChecked(option, input, Settings.positiveMillis)

/** A finite duration of 0 or more (`redis.grace`: 0 turns the wait off). */
export const nonNegativeDuration = (option: string, input: DurationInput): Result<Duration.Duration, ConfigError> =>
  millisChecked(option, input, Settings.nonNegativeMillis)

// The duration as given, once its milliseconds pass the check.
const millisChecked = (
  option: string,
  input: DurationInput,
  check: (option: string, millis: number | undefined) => Settings.Checked<number>
): Result<Duration.Duration, ConfigError> => {
  const decoded = decodeDuration(input)
  const finite = decoded !== undefined && Duration.isFinite(decoded) ? decoded : undefined
  // A check passes a finite duration only.
  return Result.map(
    checked(check(option, finite === undefined ? undefined : Duration.toMillis(finite))),
    (millis) => finite ?? Duration.millis(millis)
  )
}

/**
 * A duration read from a setting: `"30 seconds"`, `"500 millis"`, or a bare number, which means seconds
 * (`ERP_RATE_WINDOW=30`), as users of such variables expect.
 */
export const duration = (name: string): Config.Config<Duration.Duration> =>
  configParsed(name, (text) => decodeDuration(Settings.bareSeconds(text) ?? text), Settings.DURATION_MESSAGE)

/**
 * What failed in a `ConfigError`, leaf by leaf (the kernel's `Settings.Problem`): a variable not set, or a value read
 * or checked that failed. Reading names the variable; a check after reading names the option.
 */
export const problems: (error: ConfigError) => ReadonlyArray<Settings.Problem> = configProblems

/** A setting that may be unset: `undefined` then, so the option's default applies. */
export const optional = <A>(config: Config.Config<A>): Config.Config<A | undefined> =>
  Config.map(Config.option(config), Option.getOrUndefined)
