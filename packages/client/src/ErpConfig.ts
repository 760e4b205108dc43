/**
 * The settings of an ERP client: where, with which key, and how patiently; their checks and defaults, how they are
 * read from the environment, and the error a setting that is missing or wrong fails with (`ErpConfigError`).
 * `ErpClient.make` / `layer` / `layerConfig` take them. The rate limit is the limiter's own setting (`ErpRateLimiter`,
 * `ErpRateLimiterRedis`), chosen beside this at the application's edge.
 *
 * @since 0.1.0
 */
import * as ErrorText from "@erp-client/kernel/ErrorText"
import * as Settings from "@erp-client/kernel/Settings"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import { identity } from "effect/Function"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Environment from "./Environment.js"
import * as Checks from "./internal/checks.js"
import {
  type ConfigError,
  configInteger,
  configRedacted,
  configString,
  type DurationInput,
  literals,
  Result,
  resultGen
} from "./internal/edition.js"

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
  readonly timeout?: DurationInput | undefined
  /**
   * Retries of a GET after a transient failure, at most: a reset connection, a timeout, 408/500/502/503/504, a 2xx
   * body that is not the envelope (default 8). 0 turns retries off.
   */
  readonly retries?: number | undefined
  /**
   * How long after a call's start a retry may still begin (default 60 seconds): long enough to ride out an outage of
   * seconds to tens of seconds. `Retry-After` is honoured within it.
   */
  readonly retryBudget?: DurationInput | undefined
  /** First backoff of those retries, doubled each time, jittered, at most 10 seconds (default 200 ms). */
  readonly retryBaseDelay?: DurationInput | undefined
  /** How long one call may wait in total for pauses the server asked for (429s) before `RateLimited` (default 5 minutes). */
  readonly rateLimitBudget?: DurationInput | undefined
  /**
   * The longest wait for `X-RateLimit-Reset` the client accepts (default two of the limiter's windows): a reset further
   * ahead (a wrong unit, a hostile header) is treated as unknown, and the client backs off by its own schedule.
   */
  readonly maxServerWait?: DurationInput | undefined
  /** Largest response body accepted, in bytes (default 8 MiB); a larger one is `ResponseTooLarge`, never buffered. */
  readonly maxBodyBytes?: number | undefined
  /**
   * A lower cap of retries for some statuses, as data: `{ 502: 2 }` retries a 502 at most twice in a call (its other
   * transient failures still count against `retries`). None by default.
   */
  readonly retriesByStatus?: Readonly<Record<number, number>> | undefined
  /**
   * Headers of the application's own on every request (`{ "X-Tenant": "north" }`), read from `Config` like any
   * setting (`ErpClient.layerConfig({ …, headers: { "X-Tenant": Config.string("TENANT") } })`). They may not name the
   * client's own (`X-API-KEY`, `Content-Type`, `Accept`, trace headers); values are never logged. None by default.
   */
  readonly headers?: Readonly<Record<string, string>> | undefined
}

/**
 * The settings, checked and with defaults filled in.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Resolved {
  /** Always ends with `/`, so an endpoint path is appended as is. */
  readonly baseUrl: string
  readonly apiKey: Redacted.Redacted<string>
  readonly timeout: Duration.Duration
  readonly retries: number
  readonly retryBudget: Duration.Duration
  readonly retryBaseDelay: Duration.Duration
  readonly rateLimitBudget: Duration.Duration
  readonly maxServerWait: Duration.Duration
  readonly maxBodyBytes: number
  readonly retriesByStatus: Readonly<Record<number, number>>
  readonly headers: Readonly<Record<string, string>>
}

/**
 * The default of every optional setting, as data: the kernel's (`Settings.defaults`, which both editions fill in from),
 * written as `Duration` reads it, as the configuration reference (docs/configuration.md, written from this by
 * `pnpm run docs`) shows them; `maxServerWait` is a number of the limiter's windows.
 *
 * @example
 * ```ts
 * import { ErpConfig } from "@erp-client/client"
 *
 * console.log(ErpConfig.defaults.retries, ErpConfig.defaults.retryBudget) // => 8 60 seconds
 * ```
 *
 * @since 0.1.0
 * @category Defaults
 */
export const defaults = {
  timeout: Settings.durationText(Settings.defaults.timeoutMillis),
  retries: Settings.defaults.retries,
  retryBudget: Settings.durationText(Settings.defaults.retryBudgetMillis),
  retryBaseDelay: Settings.durationText(Settings.defaults.retryBaseDelayMillis),
  rateLimitBudget: Settings.durationText(Settings.defaults.rateLimitBudgetMillis),
  maxServerWait: { windows: Settings.defaults.maxServerWaitWindows },
  maxBodyBytes: Settings.defaults.maxBodyBytes,
  retriesByStatus: {},
  headers: {}
} as const

/**
 * Checks a base URL: absolute, https (or http to a loopback address, where nothing crosses a network), no query,
 * no fragment, no credentials. Returns it ending with `/`.
 *
 * @example
 * ```ts
 * import { ErpConfig } from "@erp-client/client"
 * import { Either } from "effect"
 *
 * // Returned ending with "/", so endpoint paths append to it
 * console.log(Either.getOrThrow(ErpConfig.validateBaseUrl("https://erp.example.com/api")))
 * // => https://erp.example.com/api/
 *
 * // Plain http only to a loopback address
 * console.log(Either.isLeft(ErpConfig.validateBaseUrl("http://erp.example.com/api"))) // => true
 * ```
 *
 * @since 0.1.0
 * @category Validation
 */
export const validateBaseUrl = (input: string | URL): Result<string, ConfigError> =>
  Checks.checked(Settings.checkBaseUrl(input))

/**
 * Checks an API key without ever putting it in a message: not empty, no control characters (CR/LF would let it
 * forge header lines), no surrounding spaces.
 *
 * @example
 * ```ts
 * import { ErpConfig } from "@erp-client/client"
 * import { Either, Redacted } from "effect"
 *
 * // A key pasted with its line break is refused, and the message does not show it
 * const checked = ErpConfig.validateApiKey(Redacted.make("sk-live-4f9a2c\n"))
 * console.log(Either.isLeft(checked) && checked.left.message.includes("control characters")) // => true
 * ```
 *
 * @since 0.1.0
 * @category Validation
 */
export const validateApiKey = (
  key: Redacted.Redacted<string>
): Result<Redacted.Redacted<string>, ConfigError> =>
  Result.map(Checks.checked(Settings.checkApiKey(Redacted.value(key))), () => key)

/**
 * Checks options and fills in every default (from `defaults`), here and nowhere else. `window` is the rate limiter's: a
 * single wait for the server's reset is capped at two of them unless `maxServerWait` says otherwise.
 *
 * @example
 * ```ts
 * import { ErpConfig } from "@erp-client/client"
 * import { Duration, Either, Redacted } from "effect"
 *
 * const settings = Either.getOrThrow(
 *   ErpConfig.resolve(
 *     { baseUrl: "https://erp.example.com/api", apiKey: Redacted.make("sk-live-4f9a2c") },
 *     { window: Duration.seconds(30) }
 *   )
 * )
 * console.log(settings.baseUrl, settings.retries, Duration.toMillis(settings.maxServerWait))
 * // => https://erp.example.com/api/ 8 60000
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const resolve = (
  options: Options,
  limiter: { readonly window: Duration.Duration }
): Result<Resolved, ConfigError> =>
  resultGen(function*() {
    return {
      baseUrl: yield* validateBaseUrl(options.baseUrl),
      apiKey: yield* validateApiKey(options.apiKey),
      timeout: yield* Checks.positiveDuration("timeout", options.timeout ?? Settings.defaults.timeoutMillis),
      retries: yield* Checks.nonNegativeInt("retries", options.retries ?? Settings.defaults.retries),
      retryBudget: yield* Checks.positiveDuration(
        "retryBudget",
        options.retryBudget ?? Settings.defaults.retryBudgetMillis
      ),
      retryBaseDelay: yield* Checks.positiveDuration(
        "retryBaseDelay",
        options.retryBaseDelay ?? Settings.defaults.retryBaseDelayMillis
      ),
      rateLimitBudget: yield* Checks.positiveDuration(
        "rateLimitBudget",
        options.rateLimitBudget ?? Settings.defaults.rateLimitBudgetMillis
      ),
      maxServerWait: yield* Checks.positiveDuration(
        "maxServerWait",
        options.maxServerWait ?? Duration.times(limiter.window, Settings.defaults.maxServerWaitWindows)
      ),
      maxBodyBytes: yield* Checks.positiveInt("maxBodyBytes", options.maxBodyBytes ?? Settings.defaults.maxBodyBytes),
      retriesByStatus: yield* Checks.checked(Settings.checkRetriesByStatus(options.retriesByStatus ?? {})),
      headers: yield* Checks.checked(Settings.checkHeaders(options.headers ?? {}))
    }
  })

/**
 * The settings from the environment (the variables in `Environment.client`): `ERP_BASE_URL` and `ERP_API_KEY` (read
 * as `Redacted` from the start), and optionally the others; a duration is a bare number of seconds (`"30"`) or has a
 * unit (`"500 millis"`).
 *
 * @since 0.1.0
 * @category Config
 */
export const fromEnv: Config.Config<Options> = Config.all({
  baseUrl: configString(Environment.client.baseUrl),
  apiKey: configRedacted(Environment.client.apiKey),
  timeout: Checks.optional(Checks.duration(Environment.client.timeout)),
  retries: Checks.optional(configInteger(Environment.client.retries)),
  retryBudget: Checks.optional(Checks.duration(Environment.client.retryBudget)),
  retryBaseDelay: Checks.optional(Checks.duration(Environment.client.retryBaseDelay)),
  rateLimitBudget: Checks.optional(Checks.duration(Environment.client.rateLimitBudget)),
  maxServerWait: Checks.optional(Checks.duration(Environment.client.maxServerWait)),
  maxBodyBytes: Checks.optional(configInteger(Environment.client.maxBodyBytes))
})

/**
 * A setting that is missing or wrong, as the client's, the limiter's and the Redis limiter's `make`, `layer` and
 * `layerConfig` fail: which settings (`settings`: the variables read from the environment by `layerConfig()`, the
 * options given as values to `layer`), and what to do, in one line (`ERP_API_KEY is not set: export
 * ERP_API_KEY=<your API key>`, the command line's own). It never holds a setting's value.
 *
 * @example
 * ```ts
 * import { ErpConfig } from "@erp-client/client"
 *
 * const error = new ErpConfig.ErpConfigError({ reason: "Missing", settings: ["ERP_API_KEY"], details: [] })
 * console.log(error.message) // => ERP_API_KEY is not set: export ERP_API_KEY=<your API key>
 * ```
 *
 * @since 0.1.0
 * @category Errors
 */
export class ErpConfigError extends Schema.TaggedError<ErpConfigError>("@erp-client/client/ErpConfigError")(
  "ErpConfigError",
  {
    /** `Missing`: a setting is not set (those are said first); `Invalid`: a setting does not pass its check. */
    reason: literals(["Missing", "Invalid"]),
    settings: Schema.Array(Schema.String),
    /** For `Invalid`, one line for each setting: its name, and what is wrong with it. */
    details: Schema.Array(Schema.String)
  }
) {
  override get message(): string {
    return ErrorText.configError(this)
  }
}

/**
 * A `ConfigError` of settings (from `Config`, `resolve` or a `validate…`) as an `ErpConfigError`: each setting named
 * by its variable (`"variables"`, the default: `retries` is `ERP_RETRIES`), as when they were read from the
 * environment, or by the option's own name (`"options"`), as when they were given as values.
 *
 * @example
 * ```ts
 * import { ErpConfig } from "@erp-client/client"
 * import { Either, Redacted } from "effect"
 *
 * const checked = ErpConfig.validateApiKey(Redacted.make("sk-live-4f9a2c\n"))
 * if (Either.isLeft(checked)) console.log(ErpConfig.fromConfigError(checked.left).message)
 * // => ERP_API_KEY: the API key contains control characters
 * ```
 *
 * @since 0.1.0
 * @category Errors
 */
export const fromConfigError = (
  error: ConfigError,
  naming: "variables" | "options" = "variables"
): ErpConfigError =>
  new ErpConfigError(Settings.fault(Checks.problems(error), naming === "variables" ? Settings.variableName : identity))
