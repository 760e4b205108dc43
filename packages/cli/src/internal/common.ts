/**
 * What every command that talks to the ERP shares: `--redis`, `--verbose`, logging and the client.
 */
import * as Options from "@effect/cli/Options"
import type * as ErpClient from "@erp-client/client/ErpClient"
import type { WaitObserver } from "@erp-client/client/ErpRateLimiter"
import type * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import type * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import { clientLayer } from "./clientLayer.js"

export const verbose = Options.boolean("verbose").pipe(
  Options.withDescription("log retries and rate-limit waits on stderr")
)

export const redis = Options.redacted("redis").pipe(
  Options.optional,
  Options.withDescription(
    "redis://[:PASSWORD@]HOST[:PORT][/DB]: share the rate limit with every process using this Redis and key " +
      "(overrides ERP_REDIS_URL; never printed)"
  )
)

/** The options of `common`, as the command's arguments carry them. */
export interface CommonArgs {
  readonly redis: Option.Option<Redacted.Redacted>
  readonly verbose: boolean
}

// Logs go to stderr only (stdout carries data), and only with --verbose, where retries and waits show.
const logging = (isVerbose: boolean) =>
  Layer.mergeAll(
    Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.logfmtLogger)),
    Logger.minimumLogLevel(isVerbose ? LogLevel.Debug : LogLevel.Error)
  )

/** Runs a command's body with the client (and `observer` listening to the limiter's waits) and the logging asked for. */
export const withClient = <A, E, R>(
  args: CommonArgs,
  body: Effect.Effect<A, E, R>,
  observer?: Layer.Layer<WaitObserver>
): Effect.Effect<A, E | ConfigError.ConfigError, Exclude<R, ErpClient.ErpClient>> =>
  body.pipe(
    Effect.provide(clientLayer({ redisUrl: args.redis, observer })),
    Effect.provide(logging(args.verbose))
  )
