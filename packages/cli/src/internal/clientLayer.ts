/**
 * The one place the command line builds its ERP client: every command gets the client through `clientLayer`. The
 * limiter is chosen here, at the edge: shared through Redis when `--redis` or `ERP_REDIS_URL` names one, in this
 * process's memory otherwise.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as ErpClient from "@erp-client/client/ErpClient"
import type * as ErpConfig from "@erp-client/client/ErpConfig"
import * as ErpRateLimiter from "@erp-client/client/ErpRateLimiter"
import type { WaitObserver } from "@erp-client/client/ErpRateLimiter"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"

// The Redis module (and ioredis under it) is loaded only when a Redis URL is given: a memory-only run never pays for
// it. The flag overrides the variable, so the other Redis settings are read as if the variable held it.
const limiterLayer = (redisFlag: Option.Option<Redacted.Redacted>) =>
  Layer.unwrapEffect(
    Effect.flatMap(Config.option(Config.redacted("ERP_REDIS_URL")), (fromEnv) => {
      const url = Option.orElse(redisFlag, () => Option.filter(fromEnv, (url) => Redacted.value(url) !== ""))
      if (Option.isNone(url)) return Effect.succeed(ErpRateLimiter.layerConfig())
      const withUrl = ConfigProvider.fromMap(new Map([["ERP_REDIS_URL", Redacted.value(url.value)]])).pipe(
        ConfigProvider.orElse(() => ConfigProvider.fromEnv())
      )
      return Effect.map(
        Effect.promise(() => import("@erp-client/client/ErpRateLimiterRedis")),
        (Redis) => Redis.layerConfig().pipe(Layer.provide(Layer.setConfigProvider(withUrl)))
      )
    })
  )

/**
 * The HttpClient the command's ERP client sends with in place of Node's fetch, when one is given: `CliTest.run`'s
 * (an in-memory sandbox's, `Sandbox.makeHttpClient`). None by default.
 */
export class CommandHttpClient extends Context.Reference<CommandHttpClient>()("@erp-client/cli/CommandHttpClient", {
  defaultValue: (): HttpClient.HttpClient | undefined => undefined
}) {}

const httpLayer = Layer.unwrapEffect(
  Effect.map(
    CommandHttpClient,
    (client) => client === undefined ? FetchHttpClient.layer : Layer.succeed(HttpClient.HttpClient, client)
  )
)

/**
 * The client from the environment's settings (`ERP_BASE_URL`, `ERP_API_KEY`, … read from the current
 * `ConfigProvider`), its limiter in memory or shared through Redis (see above), on Node's own fetch
 * (`FetchHttpClient`: bundling the npm undici that `NodeHttpClient.layerUndici` brings added 560 KB of JavaScript to
 * every start, about a fifth of `erp partners get`'s time on Node 20; `pnpm bench startup`). `observer` hears the
 * limiter's waits (the progress line), when given; `tapLimiter` sees the limiter the client uses (`erp mcp` reads what
 * is left of the limit from it), and may wrap it.
 */
export const clientLayer = (options: {
  readonly redisUrl: Option.Option<Redacted.Redacted>
  readonly observer?: Layer.Layer<WaitObserver> | undefined
  readonly tapLimiter?: ((limiter: ErpRateLimiter.Service) => ErpRateLimiter.Service) | undefined
}): Layer.Layer<ErpClient.ErpClient, ErpConfig.ErpConfigError | ConfigError.ConfigError> => {
  const limiter = limiterLayer(options.redisUrl).pipe(Layer.provide(options.observer ?? Layer.empty))
  const tap = options.tapLimiter
  return ErpClient.layerConfig().pipe(
    Layer.provide(
      tap === undefined
        ? limiter
        : Layer.effect(ErpRateLimiter.ErpRateLimiter, Effect.map(ErpRateLimiter.ErpRateLimiter, tap)).pipe(
          Layer.provide(limiter)
        )
    ),
    Layer.provide(httpLayer)
  )
}
