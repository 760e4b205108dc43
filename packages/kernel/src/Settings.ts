/**
 * The client's settings as plain data: their defaults, and the checks a value must pass (docs/ARCHITECTURE.md, "The
 * data path", 1, and "Redaction"). A failed check names the option (`timeout`, `redis.url`) and says why, never the
 * value: each edition turns it into its `ConfigError`, and the settings that fail, read or checked, into its
 * `ErpConfigError` (`fault`), which names the variable to set (`Environment.variableOf`) and says how.
 *
 * @since 0.1.0
 */
import * as Environment from "./Environment.js"

/**
 * Every default, in one place: the contract's limit (100 per 30 s), the client's patience, the Redis limiter's.
 *
 * @since 0.1.0
 * @category Defaults
 */
export const defaults = {
  timeoutMillis: 30_000,
  retries: 8,
  retryBudgetMillis: 60_000,
  retryBaseDelayMillis: 200,
  maxRetryDelayMillis: 10_000,
  rateLimitBudgetMillis: 300_000,
  /** `maxServerWait`: this many of the limiter's windows. */
  maxServerWaitWindows: 2,
  maxBodyBytes: 8 * 1024 * 1024,
  limit: 100,
  windowMillis: 30_000,
  /** The limiter's margin when none is given: this share of the window, at least `marginAtLeastMillis`. */
  marginShare: 0.02,
  marginAtLeastMillis: 50,
  redisPrefix: "erp-client:",
  redisOnFailure: "fail",
  redisTimeoutMillis: 1_000,
  /** How long requests wait for a Redis that stops answering before `redisOnFailure` applies. */
  redisGraceMillis: 10_000
} as const

/**
 * The limiter's margin when none is given: 2% of the window, at least 50 ms.
 *
 * @example
 * ```ts
 * import { Settings } from "@erp-client/kernel"
 *
 * console.log(Settings.defaultMarginMillis(30_000), Settings.defaultMarginMillis(1_000)) // => 600 50
 * ```
 *
 * @since 0.1.0
 * @category Defaults
 */
export const defaultMarginMillis = (windowMillis: number): number =>
  Math.max(defaults.marginAtLeastMillis, Math.ceil(windowMillis * defaults.marginShare))

/**
 * A check's answer: the value, or which option failed and why.
 *
 * @since 0.1.0
 * @category Models
 */
export type Checked<A> =
  | { readonly ok: true; readonly value: A }
  | { readonly ok: false; readonly option: string; readonly message: string }

const ok = <A>(value: A): Checked<A> => ({ ok: true, value })

/** A failed check of `option`. */
const invalid = (option: string, message: string): Checked<never> => ({ ok: false, option, message })

/**
 * Control characters (C0, DEL, C1): in a header value or a key they would let a value split or forge lines.
 *
 * @since 0.1.0
 * @category Checks
 */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/

const LOOPBACK_HOST = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i

/**
 * Checks a base URL: absolute, https (or http to a loopback address, where nothing crosses a network), no query, no
 * fragment, no credentials. Returns it ending with `/`, so an endpoint path is appended as is.
 *
 * @example
 * ```ts
 * import { Settings } from "@erp-client/kernel"
 *
 * console.log(Settings.checkBaseUrl("https://erp.example.com/api")) // => { ok: true, value: 'https://erp.example.com/api/' }
 * console.log(Settings.checkBaseUrl("http://erp.example.com/api").ok) // => false
 * ```
 *
 * @since 0.1.0
 * @category Checks
 */
export const checkBaseUrl = (input: string | URL): Checked<string> => {
  let url: URL
  try {
    url = new URL(String(input))
  } catch {
    return invalid("baseUrl", "the base URL is not an absolute URL")
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return invalid("baseUrl", `the base URL must use https, not ${url.protocol}`)
  }
  if (url.protocol === "http:" && !LOOPBACK_HOST.test(url.hostname)) {
    return invalid(
      "baseUrl",
      "plain http is only allowed to a loopback address: the API key would cross the network in clear"
    )
  }
  if (url.username !== "" || url.password !== "" || url.search !== "" || url.hash !== "") {
    return invalid("baseUrl", "the base URL must not hold credentials, a query or a fragment")
  }
  const href = url.href
  return ok(href.endsWith("/") ? href : `${href}/`)
}

/**
 * Checks an API key without ever putting it in a message: not empty, no control characters (CR/LF would let it
 * forge header lines), no surrounding spaces. The key stays where it was (a `Redacted`); only the verdict comes back.
 *
 * @example
 * ```ts
 * import { Settings } from "@erp-client/kernel"
 *
 * console.log(Settings.checkApiKey("sk-live-4f9a2c\n")) // => { ok: false, option: 'apiKey', message: 'the API key contains control characters' }
 * ```
 *
 * @since 0.1.0
 * @category Checks
 */
export const checkApiKey = (value: string): Checked<void> => {
  if (value.length === 0) return invalid("apiKey", "the API key is empty")
  if (CONTROL.test(value)) return invalid("apiKey", "the API key contains control characters")
  if (value.trim() !== value) return invalid("apiKey", "the API key has leading or trailing spaces")
  return ok(undefined)
}

/**
 * The headers the client sets on every request itself: an application's own headers may not name them (the key, the
 * body's and the answer's types, trace headers, which are never sent to a third party).
 */
const clientHeaders: ReadonlyArray<string> = [
  "x-api-key",
  "content-type",
  "accept",
  "traceparent",
  "tracestate",
  "b3"
]

/**
 * Checks an application's own headers (`ErpConfig.Options.headers`): each name a header name (RFC 9110 token), not one
 * of `clientHeaders`, each value without control characters. A message names the header, never its value (a token,
 * say).
 *
 * @example
 * ```ts
 * import { Settings } from "@erp-client/kernel"
 *
 * console.log(Settings.checkHeaders({ "X-Tenant": "north" }).ok) // => true
 * console.log(Settings.checkHeaders({ "X-API-KEY": "other" })) // => { ok: false, option: 'headers', message: 'X-API-KEY is set by the client itself' }
 * ```
 *
 * @since 0.1.0
 * @category Checks
 */
export const checkHeaders = (
  headers: Readonly<Record<string, string>>
): Checked<Readonly<Record<string, string>>> => {
  for (const [name, value] of Object.entries(headers)) {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
      return invalid("headers", `${JSON.stringify(name)} is not a header name`)
    }
    if (clientHeaders.includes(name.toLowerCase())) return invalid("headers", `${name} is set by the client itself`)
    if (typeof value !== "string" || CONTROL.test(value)) {
      return invalid("headers", `the value of ${name} is not text without control characters`)
    }
  }
  return ok(headers)
}

/**
 * Checks the caps of retries by status (`ErpConfig.Options.retriesByStatus`): HTTP statuses, each capped at a whole
 * number from 0 up.
 *
 * @example
 * ```ts
 * import { Settings } from "@erp-client/kernel"
 *
 * console.log(Settings.checkRetriesByStatus({ 502: 2 }).ok, Settings.checkRetriesByStatus({ 502: -1 }).ok) // => true false
 * ```
 *
 * @since 0.1.0
 * @category Checks
 */
export const checkRetriesByStatus = (
  caps: Readonly<Record<number, number>>
): Checked<Readonly<Record<number, number>>> => {
  for (const [status, cap] of Object.entries(caps)) {
    if (!/^[1-5]\d\d$/.test(status)) return invalid("retriesByStatus", `${status} is not an HTTP status`)
    if (!Number.isSafeInteger(cap) || cap < 0) {
      return invalid("retriesByStatus", `the cap of ${status} must be a whole number from 0 up`)
    }
  }
  return ok(caps)
}

/**
 * Checks a Redis URL without ever putting it in a message (it may hold a password): `redis://` or `rediss://`, a host,
 * and nothing after the database number but options in the query.
 *
 * @example
 * ```ts
 * import { Settings } from "@erp-client/kernel"
 *
 * console.log(Settings.checkRedisUrl("redis://:s3cret@redis.internal:6379/2").ok) // => true
 * console.log(Settings.checkRedisUrl("http://:s3cret@redis.internal:6379")) // => { ok: false, option: 'redis.url', message: 'the Redis URL must start with redis:// or rediss://' }
 * ```
 *
 * @since 0.1.0
 * @category Checks
 */
export const checkRedisUrl = (value: string): Checked<void> => {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return invalid("redis.url", "the Redis URL is not an absolute URL")
  }
  if (url.protocol !== "redis:" && url.protocol !== "rediss:") {
    return invalid("redis.url", "the Redis URL must start with redis:// or rediss://")
  }
  if (url.hostname === "") return invalid("redis.url", "the Redis URL has no host")
  if (!/^\/?\d*$/.test(url.pathname)) return invalid("redis.url", "the Redis URL's path must be a database number")
  if (CONTROL.test(value)) return invalid("redis.url", "the Redis URL contains control characters")
  return ok(undefined)
}

/**
 * Checks the Redis key prefix and the failure policy, filling in their defaults.
 *
 * @example
 * ```ts
 * import { Settings } from "@erp-client/kernel"
 *
 * console.log(Settings.checkRedisKeys({})) // => { ok: true, value: { prefix: 'erp-client:', onFailure: 'fail' } }
 * console.log(Settings.checkRedisKeys({ prefix: "team a:" }).ok) // => false
 * ```
 *
 * @since 0.1.0
 * @category Checks
 */
export const checkRedisKeys = (
  options: { readonly prefix?: string | undefined; readonly onFailure?: string | undefined }
): Checked<{ readonly prefix: string; readonly onFailure: "fail" | "local" }> => {
  const onFailure = options.onFailure ?? defaults.redisOnFailure
  if (onFailure !== "fail" && onFailure !== "local") return invalid("redis.onFailure", "must be \"fail\" or \"local\"")
  const prefix = options.prefix ?? defaults.redisPrefix
  if (CONTROL.test(prefix) || /\s/.test(prefix)) {
    return invalid("redis.prefix", "the Redis key prefix must not hold spaces or control characters")
  }
  return ok({ prefix, onFailure })
}

/**
 * A positive integer (`limit`, `maxBodyBytes`).
 *
 * @example
 * ```ts
 * import { Settings } from "@erp-client/kernel"
 *
 * console.log(Settings.positiveInt("limit", 0)) // => { ok: false, option: 'limit', message: 'must be a positive integer' }
 * ```
 *
 * @since 0.1.0
 * @category Checks
 */
export const positiveInt = (option: string, value: number): Checked<number> =>
  Number.isSafeInteger(value) && value > 0 ? ok(value) : invalid(option, "must be a positive integer")

/**
 * An integer of at least 0 (`retries`).
 *
 * @example
 * ```ts
 * import { Settings } from "@erp-client/kernel"
 *
 * console.log(Settings.nonNegativeInt("retries", 0)) // => { ok: true, value: 0 }
 * ```
 *
 * @since 0.1.0
 * @category Checks
 */
export const nonNegativeInt = (option: string, value: number): Checked<number> =>
  Number.isSafeInteger(value) && value >= 0 ? ok(value) : invalid(option, "must be an integer >= 0")

/**
 * A duration in milliseconds that is positive and finite (`timeout`, `window`).
 *
 * @example
 * ```ts
 * import { Settings } from "@erp-client/kernel"
 *
 * console.log(Settings.positiveMillis("timeout", Infinity).ok, Settings.positiveMillis("timeout", 500).ok) // => false true
 * ```
 *
 * @since 0.1.0
 * @category Checks
 */
export const positiveMillis = (option: string, millis: number | undefined): Checked<number> =>
  millis !== undefined && millis > 0 && Number.isFinite(millis)
    ? ok(millis)
    : invalid(option, "must be a positive, finite duration")

/**
 * A duration in milliseconds that is finite and not negative (`redis.grace`, where 0 turns the wait off).
 *
 * @example
 * ```ts
 * import { Settings } from "@erp-client/kernel"
 *
 * console.log(Settings.nonNegativeMillis("redis.grace", 0).ok, Settings.nonNegativeMillis("redis.grace", -1).ok) // => true false
 * ```
 *
 * @since 0.1.0
 * @category Checks
 */
export const nonNegativeMillis = (option: string, millis: number | undefined): Checked<number> =>
  millis !== undefined && millis >= 0 && Number.isFinite(millis)
    ? ok(millis)
    : invalid(option, "must be a finite duration, 0 or more")

const BARE_NUMBER = /^\s*\d+(?:\.\d+)?\s*$/

/**
 * A duration setting that is a bare number means seconds (`ERP_RATE_WINDOW=30`), as users of such variables expect:
 * its milliseconds, or `undefined` for a text with a unit (`"500 millis"`), which the edition's `Duration` reads.
 *
 * @example
 * ```ts
 * import { Settings } from "@erp-client/kernel"
 *
 * console.log(Settings.bareSeconds("30"), Settings.bareSeconds("500 millis")) // => 30000 undefined
 * ```
 *
 * @since 0.1.0
 * @category Checks
 */
export const bareSeconds = (text: string): number | undefined =>
  BARE_NUMBER.test(text) ? Number(text) * 1000 : undefined

/**
 * Why a duration setting could not be read (the setting's name is put in front by the edition's `Config`).
 *
 * @since 0.1.0
 * @category Checks
 */
export const DURATION_MESSAGE = `must be a duration: a number of seconds ("30") or "30 seconds", "500 millis"`

/**
 * A default in milliseconds as both editions' `Duration` read it and people write it: `5 minutes`, `60 seconds`,
 * `200 millis` (the editions' `defaults`, and the configuration reference, show the defaults so).
 *
 * @example
 * ```ts
 * import { Settings } from "@erp-client/kernel"
 *
 * console.log(Settings.durationText(300_000), Settings.durationText(1_000), Settings.durationText(200))
 * // => 5 minutes 1 second 200 millis
 * ```
 *
 * @since 0.1.0
 * @category Defaults
 */
export const durationText = (
  millis: number
): `${number} minutes` | `${number} seconds` | `${number} second` | `${number} millis` =>
  millis % 60_000 === 0 && millis >= 120_000
    ? `${millis / 60_000} minutes`
    : millis % 1000 === 0
    ? `${millis / 1000} ${millis === 1000 ? "second" : "seconds"}`
    : `${millis} millis`

/**
 * One setting that failed, as an edition's `Config` reported it: not set (`Missing`), or set to something that failed
 * its reading or its check (`Invalid`; `message` says why, never the value).
 *
 * @since 0.1.0
 * @category Models
 */
export interface Problem {
  readonly reason: "Missing" | "Invalid"
  /** The setting as the report names it: the variable read (`ERP_API_KEY`), or the option checked (`timeout`). */
  readonly path: string
  readonly message: string
}

/**
 * The settings that failed, said for a person (`ErpConfigError`'s fields, its message `ErrorText.configError`): the
 * ones not set, when any is (setting them comes first), else the ones set wrong, each with why.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Fault {
  readonly reason: "Missing" | "Invalid"
  /** The variables (or options) at fault, each once, in the order reported. */
  readonly settings: ReadonlyArray<string>
  /** For `Invalid`, one line for each: the setting, and what is wrong with it. */
  readonly details: ReadonlyArray<string>
}

/**
 * The name a fault gives a setting reported by `path`: its variable (`ERP_TIMEOUT` for the option `timeout`,
 * `ERP_REDIS_TIMEOUT` for `redis.timeout`) when it has one, else `path` as it is: the right name for settings read
 * from the environment by `fromEnv`.
 *
 * @example
 * ```ts
 * import { Settings } from "@erp-client/kernel"
 *
 * console.log(Settings.variableName("timeout"), Settings.variableName("CRM_ERP_KEY")) // => ERP_TIMEOUT CRM_ERP_KEY
 * ```
 *
 * @since 0.1.0
 * @category Faults
 */
export const variableName = (path: string): string => Environment.variableOf(path) ?? path

const DURATION_HINT = `must be a positive duration: seconds (30) or with a unit ("500 millis", "2 minutes")`

const detail = (name: string, path: string, message: string): string => {
  if (name === "") return message
  const said = path === "" ? message : message.replace(path, name)
  if (Environment.durations.includes(name) && /duration/i.test(said)) return `${name} ${DURATION_HINT}`
  return said.startsWith(name) ? said : `${name}: ${said}`
}

/**
 * The fault of the settings reported: `nameOf` names each (`variableName` for settings read from the environment;
 * the option's own name, `(path) => path`, for options given as values).
 *
 * @example
 * ```ts
 * import { Settings } from "@erp-client/kernel"
 *
 * console.log(Settings.fault([{ reason: "Missing", path: "ERP_API_KEY", message: "Expected ERP_API_KEY to exist" }]))
 * // => { reason: 'Missing', settings: [ 'ERP_API_KEY' ], details: [] }
 *
 * console.log(Settings.fault([{ reason: "Invalid", path: "retries", message: "must be an integer >= 0" }]).details)
 * // => [ 'ERP_RETRIES: must be an integer >= 0' ]
 * ```
 *
 * @since 0.1.0
 * @category Faults
 */
export const fault = (
  problems: ReadonlyArray<Problem>,
  nameOf: (path: string) => string = variableName
): Fault => {
  const missing = problems.filter((problem) => problem.reason === "Missing")
  const named = (list: ReadonlyArray<Problem>) => [...new Set(list.map((problem) => nameOf(problem.path)))]
  if (missing.length > 0) return { reason: "Missing", settings: named(missing), details: [] }
  return {
    reason: "Invalid",
    settings: named(problems).filter((name) => name !== ""),
    details: problems.map((problem) => detail(nameOf(problem.path), problem.path, problem.message))
  }
}
