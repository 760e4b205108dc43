/**
 * What every command that talks to the ERP shares: `--redis`, `--verbose`, logging and the client.
 */
import * as Options from "@effect/cli/Options"
import type * as ErpClient from "@erp-client/client/ErpClient"
import type * as ErpConfig from "@erp-client/client/ErpConfig"
import type * as ErpRateLimiter from "@erp-client/client/ErpRateLimiter"
import type { WaitObserver } from "@erp-client/client/ErpRateLimiter"
import { askedSignals } from "@erp-client/otel/Variables"
import type * as Resource from "@erp-client/streams/Resource"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { visible } from "../Output.js"
import type * as Sink from "../Sink.js"
import { clientLayer } from "./clientLayer.js"
import { UsageError } from "./errors.js"

/**
 * Any JSON object: what the command line decodes a record with, so that it is written as the server sent it (an
 * object schema only checks) and checked against a contract on the side, if at all.
 */
export const AnyRecord = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/**
 * `NAME=VALUE` items of a repeatable flag (`-p`, `--where`) as pairs, in order: the name is what comes before the first
 * `=` (not empty), the value everything after it. `flag` and `shape` name the flag and its form in the error.
 */
export const parsePairs = (
  flag: string,
  shape: string,
  items: ReadonlyArray<string>
): Either.Either<Array<readonly [string, string]>, UsageError> => {
  const pairs: Array<readonly [string, string]> = []
  for (const item of items) {
    const eq = item.indexOf("=")
    if (eq < 1) return Either.left(new UsageError({ reason: `${flag} ${JSON.stringify(item)}: expected ${shape}` }))
    pairs.push([item.slice(0, eq), item.slice(eq + 1)])
  }
  return Either.right(pairs)
}

/** The default, said in `--help` (which shows no default of its own for a plain value). */
export const shownDefault = <A>(value: A, shown: string = String(value)) => (self: Options.Options<A>) =>
  self.pipe(Options.withDescription(`Default: ${shown}.`), Options.withDefault(value))

/** A repeatable option: optional in the usage line (`[--where FIELD=VALUE]...`), said in `--help`. */
export const repeatable = <A>(self: Options.Options<A>): Options.Options<ReadonlyArray<A>> =>
  self.pipe(
    Options.withDescription("Repeatable."),
    Options.repeated,
    Options.withDefault<ReadonlyArray<A>>([])
  )

export const verbose = Options.boolean("verbose").pipe(
  Options.withDescription("Log retries and rate-limit waits on stderr.")
)

export const redis = Options.redacted("redis").pipe(
  Options.withPseudoName("URL"),
  Options.withDescription(
    "Share the rate limit with every process using this Redis (redis://[:PASSWORD@]HOST[:PORT][/DB]) and API key " +
      "(overrides ERP_REDIS_URL; never printed)."
  ),
  Options.optional
)

/** The options of `common`, as the command's arguments carry them. */
export interface CommonArgs {
  readonly redis: Option.Option<Redacted.Redacted>
  readonly verbose: boolean
}

// Logs go to stderr only (stdout carries data), and only with --verbose, where retries and waits show: one logfmt
// line each. A fiber of a stream that fails is not logged (the runtime would, at Debug, with the error's stack): its
// failure reaches the command, which says it in its one line.
// When log records are exported (the OTEL_* variables ask for logs, internal/telemetry.ts), warnings reach the
// exporter too, and stderr still shows only what it would.
export const logging = (isVerbose: boolean) => {
  const exported = askedSignals(process.env).includes("logs")
  // logfmt quotes a value only when it holds a space, a quote or =, and JSON-escapes only C0: the line is escaped
  // like every other on stderr (Output.visible), so a server's text in a log cannot act on the terminal.
  const stderr = Logger.withConsoleError(Logger.map(Logger.logfmtLogger, visible))
  return Layer.mergeAll(
    Logger.replace(
      Logger.defaultLogger,
      isVerbose || !exported ? stderr : Logger.filterLogLevel(stderr, LogLevel.greaterThanEqual(LogLevel.Error))
    ),
    Logger.minimumLogLevel(isVerbose ? LogLevel.Debug : exported ? LogLevel.Warning : LogLevel.Error),
    Layer.setUnhandledErrorLogLevel(Option.none())
  )
}

/**
 * Runs a command's body with the client (and `observer` listening to the limiter's waits, `tapLimiter` seeing its
 * limiter: `clientLayer`) and the logging asked for.
 */
export const withClient = <A, E, R>(
  args: CommonArgs,
  body: Effect.Effect<A, E, R>,
  observer?: Layer.Layer<WaitObserver>,
  tapLimiter?: (limiter: ErpRateLimiter.Service) => ErpRateLimiter.Service
): Effect.Effect<A, E | ErpConfig.ErpConfigError | ConfigError.ConfigError, Exclude<R, ErpClient.ErpClient>> =>
  body.pipe(
    Effect.provide(clientLayer({ redisUrl: args.redis, observer, tapLimiter })),
    Effect.provide(logging(args.verbose))
  )

/** `n` things, counted as people read them: `1 record`, `1,000 records`. */
export const counted = (n: number, one: string, many: string = `${one}s`): string =>
  `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`

/**
 * One line on stderr that is not a failure (a note, one missing partner of many), `erp: ` first like every message.
 * Failure lines come here too. What it quotes (a company name, a server's message, a path) is escaped (see
 * `Output.visible`): no control character reaches the terminal, and the line stays one line.
 */
export const note = (line: string): Effect.Effect<void> =>
  Effect.sync(() => {
    process.stderr.write(`erp: ${visible(line)}\n`)
  })

/**
 * The command line's arguments (after the executable), for the one thing the parser does not keep: the order of
 * different repeated options (`--id 3 --company-name X --id 5`).
 */
export class Argv extends Context.Tag("@erp-client/cli/Argv")<Argv, ReadonlyArray<string>>() {}

/**
 * The kinds of record this command line has commands for (`Cli.resources`, or those `Cli.main` was given): `erp
 * sandbox` serves each one the sandbox has no records of its own for.
 */
export class Declared extends Context.Tag("@erp-client/cli/Declared")<Declared, ReadonlyArray<Resource.Any>>() {}

/**
 * What a command keeps on disk for a later run, asked once it has failed or stopped: an export to a file says where
 * to look (its `Sink.kept`), and the failure line ends with it (`Cli.describeFailure`).
 */
export class Leftover extends Context.Tag("@erp-client/cli/Leftover")<Leftover, {
  readonly watch: (kept: () => Sink.Kept | undefined) => void
  readonly kept: () => Sink.Kept | undefined
}>() {
  static readonly make = (): Context.Tag.Service<Leftover> => {
    let current: () => Sink.Kept | undefined = () => undefined
    return {
      watch: (kept) => {
        current = kept
      },
      kept: () => current()
    }
  }
}
