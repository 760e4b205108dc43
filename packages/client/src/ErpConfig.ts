/**
 * The settings of an ERP client: where, with which key, and how patiently. The rate limit is the limiter's own
 * setting (`ErpRateLimiter`, `ErpRateLimiterRedis`), chosen beside this at the application's edge.
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Settings from "./internal/settings.js"

/**
 * What a user passes in. Only `baseUrl` and `apiKey` are required.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Options {
  /** `https://…` of the ERP; plain `http://` is accepted only for loopback addresses. */
  readonly baseUrl: string | URL
  readonly apiKey: Redacted.Redacted<string>
  /** How long one attempt, including reading its body, may take (default 30 seconds). */
  readonly timeout?: Duration.DurationInput | undefined
  /**
   * Retries of a GET after a transient failure, at most: a reset connection, a timeout, 408/500/502/503/504, a 2xx
   * body that is not the envelope (default 8). 0 turns retries off.
   */
  readonly retries?: number | undefined
  /**
   * How long after a call's start a retry may still begin (default 60 seconds): long enough to ride out an outage of
   * seconds to tens of seconds. `Retry-After` is honoured within it.
   */
  readonly retryBudget?: Duration.DurationInput | undefined
  /** First backoff of those retries, doubled each time, jittered, at most 10 seconds (default 200 ms). */
  readonly retryBaseDelay?: Duration.DurationInput | undefined
  /** How long one call may wait in total for pauses the server asked for (429s) before `RateLimited` (default 5 minutes). */
  readonly rateLimitBudget?: Duration.DurationInput | undefined
  /** Cap on a single wait derived from `X-RateLimit-Reset` (default two of the limiter's windows). */
  readonly maxServerWait?: Duration.DurationInput | undefined
  /** Largest response body accepted, in bytes (default 8 MiB); a larger one is `ResponseTooLarge`, never buffered. */
  readonly maxBodyBytes?: number | undefined
}

/**
 * The settings, checked and with defaults filled in.
 *
 * @since 0.1.0
 * @category Models
 */
export interface ErpConfigShape {
  /** Always ends with `/`, so an endpoint path is appended as is. */
  readonly baseUrl: string
  readonly apiKey: Redacted.Redacted<string>
  readonly timeout: Duration.Duration
  readonly retries: number
  readonly retryBudget: Duration.Duration
  readonly retryBaseDelay: Duration.Duration
  readonly rateLimitBudget: Duration.Duration
  /** `undefined`: two of the limiter's windows. */
  readonly maxServerWait: Duration.Duration | undefined
  readonly maxBodyBytes: number
}

/**
 * @since 0.1.0
 * @category Tags
 */
export class ErpConfig extends Context.Tag("@erp-client/client/ErpConfig")<ErpConfig, ErpConfigShape>() {}

const LOOPBACK_HOST = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i

/**
 * Checks a base URL: absolute, https (or http to a loopback address, where nothing crosses a network), no query,
 * no fragment, no credentials. Returns it ending with `/`.
 *
 * @since 0.1.0
 * @category Validation
 */
export const validateBaseUrl = (input: string | URL): Either.Either<string, ConfigError.ConfigError> => {
  let url: URL
  try {
    url = new URL(String(input))
  } catch {
    return Either.left(Settings.invalid("ERP_BASE_URL", "the base URL is not an absolute URL"))
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return Either.left(Settings.invalid("ERP_BASE_URL", `the base URL must use https, not ${url.protocol}`))
  }
  if (url.protocol === "http:" && !LOOPBACK_HOST.test(url.hostname)) {
    return Either.left(
      Settings.invalid(
        "ERP_BASE_URL",
        "plain http is only allowed to a loopback address: the API key would cross the network in clear"
      )
    )
  }
  if (url.username !== "" || url.password !== "" || url.search !== "" || url.hash !== "") {
    return Either.left(
      Settings.invalid("ERP_BASE_URL", "the base URL must not hold credentials, a query or a fragment")
    )
  }
  const href = url.href
  return Either.right(href.endsWith("/") ? href : `${href}/`)
}

/**
 * Checks an API key without ever putting it in a message: not empty, no control characters (CR/LF would let it
 * forge header lines), no surrounding spaces.
 *
 * @since 0.1.0
 * @category Validation
 */
export const validateApiKey = (
  key: Redacted.Redacted<string>
): Either.Either<Redacted.Redacted<string>, ConfigError.ConfigError> => {
  const value = Redacted.value(key)
  if (value.length === 0) return Either.left(Settings.invalid("ERP_API_KEY", "the API key is empty"))
  if (Settings.CONTROL.test(value)) {
    return Either.left(Settings.invalid("ERP_API_KEY", "the API key contains control characters"))
  }
  if (value.trim() !== value) {
    return Either.left(Settings.invalid("ERP_API_KEY", "the API key has leading or trailing spaces"))
  }
  return Either.right(key)
}

/**
 * Checks options and fills in the defaults.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const make = (options: Options): Either.Either<ErpConfigShape, ConfigError.ConfigError> =>
  Either.gen(function*() {
    return {
      baseUrl: yield* validateBaseUrl(options.baseUrl),
      apiKey: yield* validateApiKey(options.apiKey),
      timeout: yield* Settings.positiveDuration("timeout", options.timeout ?? Duration.seconds(30)),
      retries: yield* Settings.nonNegativeInt("retries", options.retries ?? 8),
      retryBudget: yield* Settings.positiveDuration("retryBudget", options.retryBudget ?? Duration.seconds(60)),
      retryBaseDelay: yield* Settings.positiveDuration(
        "retryBaseDelay",
        options.retryBaseDelay ?? Duration.millis(200)
      ),
      rateLimitBudget: yield* Settings.positiveDuration(
        "rateLimitBudget",
        options.rateLimitBudget ?? Duration.minutes(5)
      ),
      maxServerWait: options.maxServerWait === undefined
        ? undefined
        : yield* Settings.positiveDuration("maxServerWait", options.maxServerWait),
      maxBodyBytes: yield* Settings.positiveInt("maxBodyBytes", options.maxBodyBytes ?? 8 * 1024 * 1024)
    }
  })

/**
 * The settings from the environment: `ERP_BASE_URL`, `ERP_API_KEY` (read as `Redacted` from the start), and
 * optionally `ERP_TIMEOUT`, `ERP_RETRIES`, `ERP_RETRY_BUDGET`, `ERP_RATE_LIMIT_BUDGET` (durations: `"30 seconds"`,
 * or a bare number of seconds) and `ERP_MAX_BODY_BYTES`.
 *
 * @since 0.1.0
 * @category Config
 */
export const fromEnv: Config.Config<Options> = Config.all({
  baseUrl: Config.string("ERP_BASE_URL"),
  apiKey: Config.redacted("ERP_API_KEY"),
  timeout: Settings.optional(Settings.duration("ERP_TIMEOUT")),
  retries: Settings.optional(Config.integer("ERP_RETRIES")),
  retryBudget: Settings.optional(Settings.duration("ERP_RETRY_BUDGET")),
  rateLimitBudget: Settings.optional(Settings.duration("ERP_RATE_LIMIT_BUDGET")),
  maxBodyBytes: Settings.optional(Config.integer("ERP_MAX_BODY_BYTES"))
})

/**
 * @since 0.1.0
 * @category Layers
 */
export const layer = (options: Options): Layer.Layer<ErpConfig, ConfigError.ConfigError> =>
  Layer.effect(ErpConfig, make(options))

/**
 * The settings read through `Config`: from the environment by default (see `fromEnv`), or from any structure of
 * `Config` values, e.g. `{ baseUrl: Config.string("CRM_ERP_URL"), apiKey: Config.redacted("CRM_ERP_KEY") }`.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layerConfig = (
  config: Config.Config.Wrap<Options> = fromEnv
): Layer.Layer<ErpConfig, ConfigError.ConfigError> =>
  Layer.effect(ErpConfig, Effect.flatMap(Config.unwrap(config), make))
