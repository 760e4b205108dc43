/**
 * The `erp` command: `partners list`, `partners get` and `sandbox`, with the exit codes of DESIGN.md.
 *
 * @since 0.1.0
 */
import type * as CliApp from "@effect/cli/CliApp"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import * as ErpClient from "@erp-client/client/ErpClient"
import * as ErpRateLimiter from "@erp-client/client/ErpRateLimiter"
import * as ErpRateLimiterRedis from "@erp-client/client/ErpRateLimiterRedis"
import * as Envelope from "@erp-client/core/Envelope"
import * as ListQuery from "@erp-client/core/ListQuery"
import * as Partner from "@erp-client/core/Partner"
import * as Fault from "@erp-client/sandbox/Fault"
import type * as RateLimit from "@erp-client/sandbox/RateLimit"
import type * as Sandbox from "@erp-client/sandbox/Sandbox"
import * as Serve from "@erp-client/sandbox/Serve"
import * as Partners from "@erp-client/streams/Partners"
import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Output from "./Output.js"
import * as Progress from "./Progress.js"
import * as Sink from "./Sink.js"

/**
 * The exit codes scripts rely on.
 *
 * @since 0.1.0
 * @category Constants
 */
export const ExitCode = {
  ok: 0,
  failure: 1,
  usage: 2,
  unauthorized: 3,
  notFound: 4,
  rateLimited: 5,
  interrupted: 130
} as const

/**
 * A usage error found after parsing (a bad `--where`, a missing setting).
 *
 * @since 0.1.0
 * @category Errors
 */
export class UsageError extends Schema.TaggedError<UsageError>()("UsageError", { reason: Schema.String }) {
  override get message(): string {
    return this.reason
  }
}

const verbose = Options.boolean("verbose").pipe(
  Options.withDescription("log retries and rate-limit waits on stderr")
)

const redis = Options.redacted("redis").pipe(
  Options.optional,
  Options.withDescription(
    "redis://[:PASSWORD@]HOST[:PORT][/DB]: share the rate limit with every process using this Redis and key " +
      "(overrides ERP_REDIS_URL; never printed)"
  )
)

const parseWhere = (items: ReadonlyArray<string>): Either.Either<Record<string, string>, UsageError> => {
  const where: Record<string, string> = {}
  for (const item of items) {
    const eq = item.indexOf("=")
    if (eq < 1) return Either.left(new UsageError({ reason: `--where ${JSON.stringify(item)}: expected FIELD=VALUE` }))
    where[item.slice(0, eq)] = item.slice(eq + 1)
  }
  // The field names are checked by the same rule the client applies before any request.
  return Either.mapBoth(ListQuery.validateConditions(Partners.LIST, where), {
    onLeft: (error) => new UsageError({ reason: `--where: ${error.reason}` }),
    onRight: () => where
  })
}

// Logs go to stderr only (stdout carries data), and only with --verbose, where retries and waits show.
const logging = (isVerbose: boolean) =>
  Layer.mergeAll(
    Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.logfmtLogger)),
    Logger.minimumLogLevel(isVerbose ? LogLevel.Debug : LogLevel.Error)
  )

// The limiter is chosen here, at the edge: shared through Redis when `--redis` or `ERP_REDIS_URL` names one, in this
// process's memory otherwise. The flag overrides the variable, so the Redis settings are read as if it were set.
const limiterLayer = (redisFlag: Option.Option<Redacted.Redacted>) =>
  Layer.unwrapEffect(
    Effect.map(Config.option(Config.redacted("ERP_REDIS_URL")), (fromEnv) => {
      const url = Option.orElse(redisFlag, () => Option.filter(fromEnv, (url) => Redacted.value(url) !== ""))
      if (Option.isNone(url)) return ErpRateLimiter.layerConfig()
      const withUrl = ConfigProvider.fromMap(new Map([["ERP_REDIS_URL", Redacted.value(url.value)]])).pipe(
        ConfigProvider.orElse(() => ConfigProvider.fromEnv())
      )
      return ErpRateLimiterRedis.layerConfig().pipe(Layer.provide(Layer.setConfigProvider(withUrl)))
    })
  )

const clientLayer = <ROut>(observer: Layer.Layer<ROut>, redisUrl: Option.Option<Redacted.Redacted>) =>
  ErpClient.layerConfig().pipe(
    Layer.provide(limiterLayer(redisUrl).pipe(Layer.provide(observer))),
    Layer.provide(NodeHttpClient.layerUndici)
  )

const list = Command.make(
  "list",
  {
    customers: Options.boolean("customers").pipe(Options.withDescription("customers only (is_customer=1)")),
    where: Options.text("where").pipe(
      Options.repeated,
      Options.withDescription("FIELD=VALUE condition, sent as list_condition[FIELD]=VALUE (repeatable)")
    ),
    pageSize: Options.integer("page-size").pipe(
      Options.withDefault(100),
      Options.withDescription("records per request (list_count)")
    ),
    concurrency: Options.integer("concurrency").pipe(
      Options.withDefault(4),
      Options.withDescription("pages in flight at once; records stay in order")
    ),
    format: Options.choice("format", Output.formats).pipe(Options.withDefault("ndjson" as const)),
    output: Options.file("output").pipe(
      Options.optional,
      Options.withDescription("write to FILE, which appears only when the export is complete")
    ),
    resume: Options.boolean("resume").pipe(
      Options.withDescription("with --output: keep an interrupted export and continue it from its last complete page")
    ),
    safe: Options.boolean("safe").pipe(
      Options.withDescription(
        "drift-safe paging for a list that changes during the export: overlapping pages, each partner at most once, " +
          "none skipped; costs about 10% more requests"
      )
    ),
    redis,
    verbose
  },
  (args) =>
    Effect.gen(function*() {
      if (args.pageSize < 1 || args.pageSize > 10_000) {
        return yield* new UsageError({ reason: "--page-size must be from 1 to 10000" })
      }
      if (args.concurrency < 1 || args.concurrency > 64) {
        return yield* new UsageError({ reason: "--concurrency must be from 1 to 64" })
      }
      if (args.resume && Option.isNone(args.output)) {
        return yield* new UsageError({ reason: "--resume needs --output FILE" })
      }
      const where: ListQuery.Conditions = {
        ...(yield* parseWhere(args.where)),
        ...(args.customers ? { is_customer: 1 } : {})
      }
      const progress = Progress.make({ enabled: process.stderr.isTTY === true })
      yield* Effect.scoped(Effect.gen(function*() {
        const query = JSON.stringify({ where, pageSize: args.pageSize, format: args.format, safe: args.safe })
        const sink = Option.isSome(args.output)
          ? yield* Sink.file(args.output.value, { resume: args.resume, query, keepIds: args.safe })
          : Sink.stdout
        const resumed = Option.getOrUndefined(sink.resumed)
        const encoder = Output.encoder(args.format, resumed && { columns: resumed.columns })
        const shown = yield* progress.start
        let records = resumed?.records ?? 0
        let pages = resumed?.pages ?? 0
        yield* Partners.pages({
          where,
          pageSize: args.pageSize,
          concurrency: args.concurrency,
          startOffset: resumed?.nextOffset ?? 0,
          // Shifts and recoveries are logged by the library (see --verbose). A resume starts at the last page
          // written, and nothing already written comes out again.
          safe: args.safe ? { resumeAfter: sink.resumedIds } : undefined
        }).pipe(
          Stream.runForEach((page) => {
            records += page.raw.length
            pages += 1
            shown.page(page.raw.length)
            const columns = encoder.columns()
            return sink.write(encoder.page(page.raw), {
              nextOffset: page.next?.offset ?? page.offset + page.received,
              records,
              pages,
              ...(columns === undefined ? {} : { columns })
            }, args.safe ? page.records.map((partner) => partner.id) : undefined)
          })
        )
        yield* sink.commit
        yield* shown.done
      })).pipe(Effect.provide(clientLayer(progress.observer, args.redis)))
    }).pipe(Effect.provide(logging(args.verbose)))
).pipe(Command.withDescription("export partners: NDJSON (default), CSV or a table, to stdout or a file"))

const get = Command.make(
  "get",
  {
    selector: Options.integer("id").pipe(
      Options.withDescription("the partner's id"),
      Options.orElseEither(Options.text("company-name").pipe(Options.withDescription("the exact company name")))
    ),
    redis,
    verbose
  },
  (args) =>
    Effect.gen(function*() {
      const client = yield* ErpClient.ErpClient
      const by = Either.match(args.selector, {
        onLeft: (id): Partners.Selector => ({ id }),
        onRight: (companyName): Partners.Selector => ({ companyName })
      })
      // Fetched undecoded so the output is the server's JSON as sent; checked against Partner all the same.
      const raw = yield* client.get(Partners.GET, Schema.Unknown, Partners.query(by))
      yield* Envelope.guard(
        Partners.GET,
        "data",
        () => Either.mapLeft(decodePartner(raw), (error) => Envelope.decodeErrorFrom(Partners.GET, "data", error))
      )
      yield* Console.log(JSON.stringify(raw))
    }).pipe(Effect.provide(clientLayer(Layer.empty, args.redis)), Effect.provide(logging(args.verbose)))
).pipe(Command.withDescription("look up one partner by --id or --company-name; prints one JSON object"))

const decodePartner = Schema.decodeUnknownEither(Partner.Partner)

const partners = Command.make("partners").pipe(
  Command.withDescription("export and look up partners"),
  Command.withSubcommands([list, get])
)

// The sandbox's fault kinds, by the name `--fault` takes.
const faultKinds = {
  "429": Fault.Fault.TooManyRequests({ resetAfter: "1 second" }),
  "500": Fault.Fault.Status({ status: 500 }),
  "502": Fault.Fault.Status({ status: 502 }),
  "503": Fault.Fault.Status({ status: 503 }),
  "504": Fault.Fault.Status({ status: 504 }),
  "drop": Fault.Fault.DropBeforeResponse(),
  "drop-mid-body": Fault.Fault.DropMidBody({}),
  "malformed": Fault.Fault.MalformedJson(),
  "not-envelope": Fault.Fault.NotEnvelope({}),
  "unknown-code": Fault.Fault.UnknownCode({}),
  "hang": Fault.Fault.Hang(),
  "unauthorized": Fault.Fault.Unauthorized()
} as const

const sandbox = Command.make(
  "sandbox",
  {
    port: Options.integer("port").pipe(Options.withDefault(8080), Options.withDescription("0 picks a free port")),
    host: Options.text("host").pipe(Options.withDefault("127.0.0.1")),
    partners: Options.integer("partners").pipe(Options.withDefault(1000)),
    seed: Options.integer("seed").pipe(Options.withDefault(1)),
    key: Options.text("key").pipe(Options.repeated, Options.withDescription("a valid API key (repeatable)")),
    limit: Options.integer("limit").pipe(Options.withDefault(100), Options.withDescription("requests per window")),
    window: Options.integer("window").pipe(Options.withDefault(30), Options.withDescription("window in seconds")),
    resetUnit: Options.choice("reset-unit", ["epoch-seconds", "epoch-millis", "seconds"]).pipe(
      Options.withDefault("epoch-seconds" as const)
    ),
    noRateLimit: Options.boolean("no-rate-limit"),
    maxListCount: Options.integer("max-list-count").pipe(Options.withDefault(500)),
    latency: Options.integer("latency").pipe(Options.withDefault(0), Options.withDescription("added ms per request")),
    jitter: Options.integer("jitter").pipe(Options.withDefault(0), Options.withDescription("random extra ms, up to")),
    faultRate: Options.float("fault-rate").pipe(
      Options.withDefault(0),
      Options.withDescription("share of requests (0 to 1) that get one of the --fault kinds, seeded")
    ),
    fault: Options.choice("fault", Object.keys(faultKinds) as Array<keyof typeof faultKinds>).pipe(
      Options.repeated,
      Options.withDescription("a fault to inject at random (repeatable)")
    ),
    inserts: Options.integer("inserts").pipe(
      Options.withDefault(0),
      Options.withDescription("partners inserted at random positions before every list answer (data that changes)")
    ),
    deletes: Options.integer("deletes").pipe(
      Options.withDefault(0),
      Options.withDescription("partners deleted at random positions before every list answer")
    )
  },
  (args) =>
    Effect.gen(function*() {
      const ranges: ReadonlyArray<readonly [string, number, number, number]> = [
        ["port", args.port, 0, 65_535],
        ["partners", args.partners, 0, 100_000_000],
        ["seed", args.seed, 0, 4_294_967_295],
        ["limit", args.limit, 1, 1_000_000],
        ["window", args.window, 1, 86_400],
        ["max-list-count", args.maxListCount, 1, 1_000_000],
        ["latency", args.latency, 0, 600_000],
        ["jitter", args.jitter, 0, 600_000],
        ["inserts", args.inserts, 0, 10_000],
        ["deletes", args.deletes, 0, 10_000]
      ]
      if (!(args.faultRate >= 0 && args.faultRate <= 1)) {
        return yield* new UsageError({ reason: `--fault-rate must be from 0 to 1, got ${args.faultRate}` })
      }
      if (args.faultRate > 0 && args.fault.length === 0) {
        return yield* new UsageError({ reason: "--fault-rate needs at least one --fault" })
      }
      for (const [name, value, min, max] of ranges) {
        if (value < min || value > max) {
          return yield* new UsageError({ reason: `--${name} must be from ${min} to ${max}, got ${value}` })
        }
      }
      const options: Sandbox.Options = {
        port: args.port,
        host: args.host,
        partners: args.partners,
        seed: args.seed,
        ...(args.key.length > 0 ? { apiKeys: args.key } : {}),
        rateLimit: args.noRateLimit
          ? false
          : { limit: args.limit, window: `${args.window} seconds`, resetUnit: args.resetUnit as RateLimit.ResetUnit },
        maxListCount: args.maxListCount,
        latency: { base: `${args.latency} millis`, jitter: `${args.jitter} millis` },
        ...(args.faultRate > 0
          ? {
            randomFaults: { rate: args.faultRate, faults: args.fault.map((kind) => faultKinds[kind]), seed: args.seed }
          }
          : {}),
        ...(args.inserts > 0 || args.deletes > 0
          ? { drift: { inserts: args.inserts, deletes: args.deletes, seed: args.seed } }
          : {})
      }
      return yield* Serve.serve(options)
    })
).pipe(Command.withDescription("run the built-in ERP sandbox server (prints its base URL and key)"))

const erp = Command.make("erp").pipe(
  Command.withDescription("ERP REST API v2 from the shell (reads ERP_BASE_URL and ERP_API_KEY)"),
  Command.withSubcommands([partners, sandbox])
)

const cli = Command.run(erp, { name: "erp", version: "0.1.0" })

/**
 * The exit code and the one line to print for a failure.
 *
 * @since 0.1.0
 * @category Errors
 */
export const describeFailure = (error: unknown): { readonly code: number; readonly line: string | undefined } => {
  if (ValidationError.isValidationError(error)) {
    // @effect/cli has already printed what was wrong, on stderr.
    return { code: ExitCode.usage, line: undefined }
  }
  if (ConfigError.isConfigError(error)) {
    return { code: ExitCode.usage, line: `configuration: ${String(error).replace(/^\(|\)$/g, "")}` }
  }
  const tagged = error as { readonly _tag?: unknown; readonly message?: unknown }
  const line = typeof tagged.message === "string" && tagged.message !== "" ? tagged.message : String(error)
  switch (tagged._tag) {
    case "UsageError":
    case "InvalidRequest":
      return { code: ExitCode.usage, line }
    case "Unauthorized":
      return { code: ExitCode.unauthorized, line }
    case "NotFound":
      return { code: ExitCode.notFound, line }
    case "RateLimited":
      return { code: ExitCode.rateLimited, line }
    default:
      return { code: ExitCode.failure, line }
  }
}

/**
 * Runs the command line and returns its exit code; every failure becomes one line on stderr.
 *
 * @since 0.1.0
 * @category Programs
 */
export const main = (
  argv: ReadonlyArray<string>
): Effect.Effect<number, never, FileSystem.FileSystem | Path.Path | CliApp.CliApp.Environment> =>
  cli(argv).pipe(
    Effect.as(ExitCode.ok as number),
    Effect.catchAllCause((cause) => {
      if (Cause.isInterruptedOnly(cause)) return Effect.interrupt
      const failure = Cause.failureOption(cause)
      const { code, line } = Option.isSome(failure)
        ? describeFailure(failure.value)
        : {
          code: ExitCode.failure,
          line: `unexpected failure: ${Cause.pretty(Cause.stripFailures(cause)).split("\n")[0]}`
        }
      return Effect.as(line === undefined ? Effect.void : Console.error(`erp: ${line}`), code)
    })
  )

/**
 * Maps how the main fiber ended to the process exit code: its value, or 130 when interrupted (Ctrl-C, SIGTERM).
 *
 * @since 0.1.0
 * @category Programs
 */
export const teardown = <E, A>(exit: Exit.Exit<E, A>, onExit: (code: number) => void): void =>
  onExit(
    Exit.isSuccess(exit)
      ? typeof exit.value === "number" ? exit.value : ExitCode.ok
      : Cause.isInterruptedOnly(exit.cause)
      ? ExitCode.interrupted
      : ExitCode.failure
  )
