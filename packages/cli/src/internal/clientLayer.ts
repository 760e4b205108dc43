/**
 * The one place the command line builds its ERP client: every command gets the client through `clientLayer`.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as ErpClient from "@erp-client/client/ErpClient"
import type { WaitObserver } from "@erp-client/client/ErpRateLimiter"
import type * as ConfigError from "effect/ConfigError"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"

/**
 * The client from the environment's settings (`ERP_BASE_URL`, `ERP_API_KEY`, … read from the current
 * `ConfigProvider`), its limiter shared through Redis when `redisUrl` (the `--redis` flag) or `ERP_REDIS_URL` is set,
 * on undici. `observer` hears the limiter's waits (the progress line), when given.
 */
export const clientLayer = (options: {
  readonly redisUrl: Option.Option<Redacted.Redacted>
  readonly observer?: Layer.Layer<WaitObserver> | undefined
}): Layer.Layer<ErpClient.ErpClient, ConfigError.ConfigError> =>
  ErpClient.layerConfig(Option.isSome(options.redisUrl) ? { redisUrl: options.redisUrl.value } : {}).pipe(
    Layer.provide(NodeHttpClient.layerUndici),
    Layer.provide(options.observer ?? Layer.empty)
  )
