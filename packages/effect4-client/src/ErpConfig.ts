/**
 * The settings of an ERP client: where, with which key, and how patiently; their checks and defaults
 * (`@erp-client/kernel/Settings`, the Effect 3 edition's), and how they are read from the environment. `ErpClient.make`
 * / `layer` / `layerConfig` take them. The rate limit is the limiter's own setting (`ErpRateLimiter`,
 * `ErpRateLimiterRedis`), chosen beside this at the application's edge.
 *
 * @since 0.1.0
 */
import * as Settings from "@erp-client/kernel/Settings"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Environment from "./Environment.js"
import * as Checks from "./internal/checks.js"

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
  readonly timeout?: Duration.Input | undefined
  /**
   * Retries of a GET after a transient failure, at most: a reset connection, a timeout, 408/500/502/503/504, a 2xx
   * body that is not the envelope (default 8). 0 turns retries off.
   */
  readonly retries?: number | undefined
  /**
   * How long after a call's start a retry may still begin (default 60 seconds): long enough to ride out an outage of
   * seconds to tens of seconds. `Retry-After` is honoured within it.
   */
  readonly retryBudget?: Duration.Input | undefined
  /** First backoff of those retries, doubled each time, jittered, at most 10 seconds (default 200 ms). */
  readonly retryBaseDelay?: Duration.Input | undefined
  /** How long one call may wait in total for pauses the server asked for (429s) before `RateLimited` (default 5 minutes). */
  readonly rateLimitBudget?: Duration.Input | undefined
  /**
   * The longest wait for `X-RateLimit-Reset` the client accepts (default two of the limiter's windows): a reset further
   * ahead (a wrong unit, a hostile header) is treated as unknown, and the client backs off by its own schedule.
   */
  readonly maxServerWait?: Duration.Input | undefined
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
 * Checks a base URL: absolute, https (or http to a loopback address, where nothing crosses a network), no query,
 * no fragment, no credentials. Returns it ending with `/`.
 *
 * @example
 * ```ts
 * import { ErpConfig } from "@erp-client/effect4-client"
 * import { Result } from "effect"
 *
 * // Returned ending with "/", so endpoint paths append to it
 * console.log(Result.getOrThrow(ErpConfig.validateBaseUrl("https://erp.example.com/api")))
 * // => https://erp.example.com/api/
 *
 * // Plain http only to a loopback address
 * console.log(Result.isFailure(ErpConfig.validateBaseUrl("http://erp.example.com/api"))) // => true
 * ```
 *
 * @since 0.1.0
 * @category Validation
 */
export const validateBaseUrl = (input: string | URL): Result.Result<string, Config.ConfigError> =>
  Checks.checked(Settings.checkBaseUrl(input))

/**
 * Checks an API key without ever putting it in a message: not empty, no control characters (CR/LF would let it
 * forge header lines), no surrounding spaces.
 *
 * @example
 * ```ts
 * import { ErpConfig } from "@erp-client/effect4-client"
 * import { Redacted, Result } from "effect"
 *
 * // A key pasted with its line break is refused, and the message does not show it
 * const checked = ErpConfig.validateApiKey(Redacted.make("sk-live-4f9a2c\n"))
 * console.log(Result.isFailure(checked) && checked.failure.message.includes("control characters")) // => true
 * ```
 *
 * @since 0.1.0
 * @category Validation
 */
export const validateApiKey = (
  key: Redacted.Redacted<string>
): Result.Result<Redacted.Redacted<string>, Config.ConfigError> =>
  Result.map(Checks.checked(Settings.checkApiKey(Redacted.value(key))), () => key)

/**
 * Checks options and fills in every default, here and nowhere else. `window` is the rate limiter's: a single wait for
 * the server's reset is capped at two of them unless `maxServerWait` says otherwise.
 *
 * @example
 * ```ts
 * import { ErpConfig } from "@erp-client/effect4-client"
 * import { Duration, Redacted, Result } from "effect"
 *
 * const settings = Result.getOrThrow(
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
): Result.Result<Resolved, Config.ConfigError> =>
  Result.gen(function*() {
    const { defaults } = Settings
    return {
      baseUrl: yield* validateBaseUrl(options.baseUrl),
      apiKey: yield* validateApiKey(options.apiKey),
      timeout: yield* Checks.positiveDuration("timeout", options.timeout ?? defaults.timeoutMillis),
      retries: yield* Checks.nonNegativeInt("retries", options.retries ?? defaults.retries),
      retryBudget: yield* Checks.positiveDuration("retryBudget", options.retryBudget ?? defaults.retryBudgetMillis),
      retryBaseDelay: yield* Checks.positiveDuration(
        "retryBaseDelay",
        options.retryBaseDelay ?? defaults.retryBaseDelayMillis
      ),
      rateLimitBudget: yield* Checks.positiveDuration(
        "rateLimitBudget",
        options.rateLimitBudget ?? defaults.rateLimitBudgetMillis
      ),
      maxServerWait: yield* Checks.positiveDuration(
        "maxServerWait",
        options.maxServerWait ?? Duration.times(limiter.window, defaults.maxServerWaitWindows)
      ),
      maxBodyBytes: yield* Checks.positiveInt("maxBodyBytes", options.maxBodyBytes ?? defaults.maxBodyBytes),
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
  baseUrl: Config.String(Environment.client.baseUrl),
  apiKey: Config.Redacted(Environment.client.apiKey),
  timeout: Checks.optional(Checks.duration(Environment.client.timeout)),
  retries: Checks.optional(Config.Int(Environment.client.retries)),
  retryBudget: Checks.optional(Checks.duration(Environment.client.retryBudget)),
  retryBaseDelay: Checks.optional(Checks.duration(Environment.client.retryBaseDelay)),
  rateLimitBudget: Checks.optional(Checks.duration(Environment.client.rateLimitBudget)),
  maxServerWait: Checks.optional(Checks.duration(Environment.client.maxServerWait)),
  maxBodyBytes: Checks.optional(Config.Int(Environment.client.maxBodyBytes))
})
