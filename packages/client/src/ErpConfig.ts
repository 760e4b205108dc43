/**
 * The settings of an ERP client: where, with which key, and how patiently.
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"

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
  /** Requests per window and endpoint (default 100). */
  readonly rateLimit?: number | undefined
  /** The server's window (default 30 seconds). */
  readonly rateWindow?: Duration.DurationInput | undefined
  /** Gap added to each window for network jitter (default 2% of the window, at least 50 ms). */
  readonly rateMargin?: Duration.DurationInput | undefined
  /** How long one attempt, including reading its body, may take (default 30 seconds). */
  readonly timeout?: Duration.DurationInput | undefined
  /** Retries of a GET after a transient failure: reset connection, timeout, 5xx (default 3). */
  readonly retries?: number | undefined
  /** First backoff of those retries, doubled each time and jittered (default 200 ms). */
  readonly retryBaseDelay?: Duration.DurationInput | undefined
  /** How long one call may wait in total for pauses the server asked for (429s) before `RateLimited` (default 5 minutes). */
  readonly rateLimitBudget?: Duration.DurationInput | undefined
  /** Cap on a single wait derived from `X-RateLimit-Reset` (default 2 windows). */
  readonly maxServerWait?: Duration.DurationInput | undefined
  /** Largest response body accepted, in bytes (default 8 MiB); a larger one is `ResponseTooLarge`, never buffered. */
  readonly maxBodyBytes?: number | undefined
  /**
   * `redis://[[user]:password@]host[:port][/db]` (or `rediss://` for TLS): share the rate limit through this Redis
   * with every process that uses the same API key. Unset: the limit is kept in this process's memory. It may hold
   * a password, so pass it `Redacted`; a plain string is wrapped at once.
   */
  readonly redisUrl?: Redacted.Redacted<string> | string | undefined
  /** Prefix of every Redis key (default `"erp-client:"`); processes that share a budget must use the same one. */
  readonly redisPrefix?: string | undefined
  /**
   * When Redis cannot be reached or fails: `"fail"` (default) fails each request with `RateLimiterUnavailable` and
   * sends nothing; `"local"` falls back to this process's memory limiter, with a logged warning, until Redis answers.
   */
  readonly redisOnFailure?: RedisFailurePolicy | undefined
  /** Bound on connecting to Redis and on each Redis call (default 1 second). */
  readonly redisTimeout?: Duration.DurationInput | undefined
}

/**
 * What a request does when the shared limiter's Redis is unreachable or fails.
 *
 * @since 0.1.0
 * @category Models
 */
export type RedisFailurePolicy = "fail" | "local"

/**
 * The Redis settings, checked, with defaults filled in.
 *
 * @since 0.1.0
 * @category Models
 */
export interface RedisSettings {
  readonly url: Redacted.Redacted<string>
  readonly prefix: string
  readonly onFailure: RedisFailurePolicy
  readonly timeout: Duration.Duration
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
  readonly rateLimit: number
  readonly rateWindow: Duration.Duration
  readonly rateMargin: Duration.Duration | undefined
  readonly timeout: Duration.Duration
  readonly retries: number
  readonly retryBaseDelay: Duration.Duration
  readonly rateLimitBudget: Duration.Duration
  readonly maxServerWait: Duration.Duration
  readonly maxBodyBytes: number
  /** Set when the limit is shared through Redis; `undefined` keeps it in memory. */
  readonly redis: RedisSettings | undefined
}

/**
 * @since 0.1.0
 * @category Tags
 */
export class ErpConfig extends Context.Tag("@erp-client/client/ErpConfig")<ErpConfig, ErpConfigShape>() {}

const LOOPBACK_HOST = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i
// Control characters (C0, DEL, C1) would let a key split or forge header lines.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/

const invalid = (path: string, message: string) => ConfigError.InvalidData([path], message)

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
    return Either.left(invalid("ERP_BASE_URL", "the base URL is not an absolute URL"))
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return Either.left(invalid("ERP_BASE_URL", `the base URL must use https, not ${url.protocol}`))
  }
  if (url.protocol === "http:" && !LOOPBACK_HOST.test(url.hostname)) {
    return Either.left(
      invalid(
        "ERP_BASE_URL",
        "plain http is only allowed to a loopback address: the API key would cross the network in clear"
      )
    )
  }
  if (url.username !== "" || url.password !== "" || url.search !== "" || url.hash !== "") {
    return Either.left(invalid("ERP_BASE_URL", "the base URL must not hold credentials, a query or a fragment"))
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
  if (value.length === 0) return Either.left(invalid("ERP_API_KEY", "the API key is empty"))
  if (CONTROL.test(value)) return Either.left(invalid("ERP_API_KEY", "the API key contains control characters"))
  if (value.trim() !== value) return Either.left(invalid("ERP_API_KEY", "the API key has leading or trailing spaces"))
  return Either.right(key)
}

/**
 * Checks a Redis URL without ever putting it in a message (it may hold a password): `redis://` or `rediss://`, a
 * host, and nothing after the database number but ioredis options in the query.
 *
 * @since 0.1.0
 * @category Validation
 */
export const validateRedisUrl = (
  input: Redacted.Redacted<string> | string
): Either.Either<Redacted.Redacted<string>, ConfigError.ConfigError> => {
  const redacted = Redacted.isRedacted(input) ? input : Redacted.make(input)
  let url: URL
  try {
    url = new URL(Redacted.value(redacted))
  } catch {
    return Either.left(invalid("ERP_REDIS_URL", "the Redis URL is not an absolute URL"))
  }
  if (url.protocol !== "redis:" && url.protocol !== "rediss:") {
    return Either.left(invalid("ERP_REDIS_URL", "the Redis URL must start with redis:// or rediss://"))
  }
  if (url.hostname === "") return Either.left(invalid("ERP_REDIS_URL", "the Redis URL has no host"))
  if (!/^\/?\d*$/.test(url.pathname)) {
    return Either.left(invalid("ERP_REDIS_URL", "the Redis URL's path must be a database number"))
  }
  if (CONTROL.test(Redacted.value(redacted))) {
    return Either.left(invalid("ERP_REDIS_URL", "the Redis URL contains control characters"))
  }
  return Either.right(redacted)
}

const redisSettings = (options: Options): Either.Either<RedisSettings | undefined, ConfigError.ConfigError> =>
  Either.gen(function*() {
    const raw = options.redisUrl
    if (raw === undefined || (Redacted.isRedacted(raw) ? Redacted.value(raw) : raw) === "") return undefined
    const onFailure = options.redisOnFailure ?? "fail"
    if (onFailure !== "fail" && onFailure !== "local") {
      return yield* Either.left(invalid("ERP_REDIS_ON_FAILURE", "ERP_REDIS_ON_FAILURE must be \"fail\" or \"local\""))
    }
    const prefix = options.redisPrefix ?? "erp-client:"
    if (CONTROL.test(prefix) || /\s/.test(prefix)) {
      return yield* Either.left(
        invalid("ERP_REDIS_PREFIX", "the Redis key prefix must not hold spaces or control characters")
      )
    }
    return {
      url: yield* validateRedisUrl(raw),
      prefix,
      onFailure,
      timeout: yield* positiveDuration("redisTimeout", options.redisTimeout ?? Duration.seconds(1))
    }
  })

const positiveInt = (name: string, value: number): Either.Either<number, ConfigError.ConfigError> =>
  Number.isSafeInteger(value) && value > 0
    ? Either.right(value)
    : Either.left(invalid(name, `${name} must be a positive integer`))

const nonNegativeInt = (name: string, value: number): Either.Either<number, ConfigError.ConfigError> =>
  Number.isSafeInteger(value) && value >= 0
    ? Either.right(value)
    : Either.left(invalid(name, `${name} must be an integer >= 0`))

const positiveDuration = (
  name: string,
  input: Duration.DurationInput
): Either.Either<Duration.Duration, ConfigError.ConfigError> => {
  const duration = Duration.decodeUnknown(input)
  return Option.isSome(duration) && Duration.greaterThan(duration.value, Duration.zero) &&
      Duration.isFinite(duration.value)
    ? Either.right(duration.value)
    : Either.left(invalid(name, `${name} must be a positive, finite duration`))
}

/**
 * Checks options and fills in the defaults.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const make = (options: Options): Either.Either<ErpConfigShape, ConfigError.ConfigError> =>
  Either.gen(function*() {
    const rateWindow = yield* positiveDuration("rateWindow", options.rateWindow ?? Duration.seconds(30))
    return {
      baseUrl: yield* validateBaseUrl(options.baseUrl),
      apiKey: yield* validateApiKey(options.apiKey),
      rateLimit: yield* positiveInt("rateLimit", options.rateLimit ?? 100),
      rateWindow,
      rateMargin: options.rateMargin === undefined
        ? undefined
        : Duration.decode(options.rateMargin),
      timeout: yield* positiveDuration("timeout", options.timeout ?? Duration.seconds(30)),
      retries: yield* nonNegativeInt("retries", options.retries ?? 3),
      retryBaseDelay: yield* positiveDuration("retryBaseDelay", options.retryBaseDelay ?? Duration.millis(200)),
      rateLimitBudget: yield* positiveDuration("rateLimitBudget", options.rateLimitBudget ?? Duration.minutes(5)),
      maxServerWait: yield* positiveDuration("maxServerWait", options.maxServerWait ?? Duration.times(rateWindow, 2)),
      maxBodyBytes: yield* positiveInt("maxBodyBytes", options.maxBodyBytes ?? 8 * 1024 * 1024),
      redis: yield* redisSettings(options)
    }
  })

/**
 * @since 0.1.0
 * @category Layers
 */
export const layer = (options: Options): Layer.Layer<ErpConfig, ConfigError.ConfigError> =>
  Layer.effect(ErpConfig, make(options))

/**
 * Reads the settings from the environment (or any `ConfigProvider`): `ERP_BASE_URL`, `ERP_API_KEY` (read as
 * `Redacted` from the start), and optionally `ERP_RATE_LIMIT`, `ERP_RATE_WINDOW` ("30 seconds"),
 * `ERP_TIMEOUT`, `ERP_RETRIES`, `ERP_RATE_LIMIT_BUDGET`, `ERP_MAX_BODY_BYTES`, and for a limit shared through Redis `ERP_REDIS_URL` (read as
 * `Redacted`: it may hold a password), `ERP_REDIS_PREFIX`, `ERP_REDIS_ON_FAILURE` (`fail` or `local`) and
 * `ERP_REDIS_TIMEOUT`. Explicit `overrides` win over the environment.
 *
 * @since 0.1.0
 * @category Layers
 */
export const layerConfig = (overrides: Partial<Options> = {}): Layer.Layer<ErpConfig, ConfigError.ConfigError> =>
  Layer.effect(
    ErpConfig,
    Effect.gen(function*() {
      const env = yield* Config.all({
        baseUrl: Config.string("ERP_BASE_URL"),
        apiKey: Config.redacted("ERP_API_KEY"),
        rateLimit: Config.option(Config.integer("ERP_RATE_LIMIT")),
        rateWindow: Config.option(Config.duration("ERP_RATE_WINDOW")),
        timeout: Config.option(Config.duration("ERP_TIMEOUT")),
        retries: Config.option(Config.integer("ERP_RETRIES")),
        rateLimitBudget: Config.option(Config.duration("ERP_RATE_LIMIT_BUDGET")),
        maxBodyBytes: Config.option(Config.integer("ERP_MAX_BODY_BYTES")),
        redisUrl: Config.option(Config.redacted("ERP_REDIS_URL")),
        redisPrefix: Config.option(Config.string("ERP_REDIS_PREFIX")),
        redisOnFailure: Config.option(Config.literal("fail", "local")("ERP_REDIS_ON_FAILURE")),
        redisTimeout: Config.option(Config.duration("ERP_REDIS_TIMEOUT"))
      })
      return yield* make({
        baseUrl: env.baseUrl,
        apiKey: env.apiKey,
        rateLimit: Option.getOrUndefined(env.rateLimit),
        rateWindow: Option.getOrUndefined(env.rateWindow),
        timeout: Option.getOrUndefined(env.timeout),
        retries: Option.getOrUndefined(env.retries),
        rateLimitBudget: Option.getOrUndefined(env.rateLimitBudget),
        maxBodyBytes: Option.getOrUndefined(env.maxBodyBytes),
        redisUrl: Option.getOrUndefined(env.redisUrl),
        redisPrefix: Option.getOrUndefined(env.redisPrefix),
        redisOnFailure: Option.getOrUndefined(env.redisOnFailure),
        redisTimeout: Option.getOrUndefined(env.redisTimeout),
        ...overrides
      })
    })
  )
