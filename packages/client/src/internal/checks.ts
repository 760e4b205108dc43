/**
 * The checks and `Config` readers shared by the client's settings modules (`ErpConfig`, `ErpRateLimiter`,
 * `ErpRateLimiterRedis`): one definition of "a positive integer", "a duration" and "an optional setting". A failed
 * check names the option (`timeout`, `redis.url`): the command line says which variable that is (`Environment`).
 */
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import * as Option from "effect/Option"

/** Control characters (C0, DEL, C1): in a header value or a key they would let a value split or forge lines. */
// eslint-disable-next-line no-control-regex
export const CONTROL = /[\u0000-\u001f\u007f-\u009f]/

/** A setting that failed its check, named by its option. */
export const invalid = (option: string, message: string): ConfigError.ConfigError =>
  ConfigError.InvalidData([option], message)

export const positiveInt = (option: string, value: number): Either.Either<number, ConfigError.ConfigError> =>
  Number.isSafeInteger(value) && value > 0
    ? Either.right(value)
    : Either.left(invalid(option, "must be a positive integer"))

export const nonNegativeInt = (option: string, value: number): Either.Either<number, ConfigError.ConfigError> =>
  Number.isSafeInteger(value) && value >= 0
    ? Either.right(value)
    : Either.left(invalid(option, "must be an integer >= 0"))

export const positiveDuration = (
  option: string,
  input: Duration.DurationInput
): Either.Either<Duration.Duration, ConfigError.ConfigError> => {
  const duration = Duration.decodeUnknown(input)
  return Option.isSome(duration) && Duration.greaterThan(duration.value, Duration.zero) &&
      Duration.isFinite(duration.value)
    ? Either.right(duration.value)
    : Either.left(invalid(option, "must be a positive, finite duration"))
}

const BARE_NUMBER = /^\s*\d+(?:\.\d+)?\s*$/

/**
 * A duration read from a setting: `"30 seconds"`, `"500 millis"`, or a bare number, which means seconds
 * (`ERP_RATE_WINDOW=30`), as users of such variables expect.
 */
export const duration = (name: string): Config.Config<Duration.Duration> =>
  Config.string(name).pipe(
    Config.mapOrFail((text) => {
      const parsed = Duration.decodeUnknown(BARE_NUMBER.test(text) ? Number(text) * 1000 : text)
      return Option.isSome(parsed)
        ? Either.right(parsed.value)
        // The path is the setting's own: `Config` puts its name in front.
        : Either.left(
          ConfigError.InvalidData(
            [],
            `must be a duration: a number of seconds ("30") or "30 seconds", "500 millis"`
          )
        )
    })
  )

/** A setting that may be unset: `undefined` then, so the option's default applies. */
export const optional = <A>(config: Config.Config<A>): Config.Config<A | undefined> =>
  Config.map(Config.option(config), Option.getOrUndefined)
