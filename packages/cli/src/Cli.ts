/**
 * The `erp` command (`<resource> list | get` for every declared resource, `api get | list | post`, `mcp`, `sandbox`):
 * its help, its exit codes, and one line for every failure.
 *
 * @since 0.1.0
 */
import type * as CliApp from "@effect/cli/CliApp"
import * as Command from "@effect/cli/Command"
import * as ValidationError from "@effect/cli/ValidationError"
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import * as Environment from "@erp-client/client/Environment"
import * as ErpConfig from "@erp-client/client/ErpConfig"
import { askedSignals } from "@erp-client/otel/Variables"
import * as Partners from "@erp-client/streams/Partners"
import type * as Resource from "@erp-client/streams/Resource"
import * as Cause from "effect/Cause"
import * as ConfigError from "effect/ConfigError"
import * as Console from "effect/Console"
import type * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import { apiGet, apiList, apiPost } from "./internal/api.js"
import { apiInfer } from "./internal/apiInfer.js"
import { apiChanges, changesCommand, changesSummary } from "./internal/changesCommand.js"
import { Argv, Declared, Leftover, note } from "./internal/common.js"
import * as InternalErrors from "./internal/errors.js"
import * as Help from "./internal/help.js"
import type * as HelpPath from "./internal/helpPath.js"
import { mcpCommand, mcpSummary } from "./internal/mcpCommand.js"
import { getCommand, getSummary, LookupsFailed } from "./internal/resourceGet.js"
import { listCommand, listSummary } from "./internal/resourceList.js"
import { sandbox } from "./internal/sandbox.js"
import * as Settings from "./internal/settings.js"
import { apiSync, apiSyncSummary, syncCommand, syncSummary } from "./internal/syncCommand.js"
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
  /** SIGINT (Ctrl-C): 128 + 2, as shells report a process the signal ended. */
  interrupted: 130,
  /** SIGTERM (`kill`, `timeout`, a supervisor): 128 + 15. */
  terminated: 143
} as const

/**
 * The signals the command stops on in order.
 *
 * @since 0.1.0
 * @category Models
 */
export type StopSignal = InternalErrors.StopSignal

/**
 * The command was stopped by a signal, after an orderly stop (see `main`).
 *
 * @since 0.1.0
 * @category Errors
 */
export const Interrupted = InternalErrors.Interrupted

/**
 * @since 0.1.0
 * @category Errors
 */
export type Interrupted = InternalErrors.Interrupted

/**
 * A usage error found after parsing (a bad `--where`, flags that do not go together).
 *
 * @since 0.1.0
 * @category Errors
 */
export const UsageError = InternalErrors.UsageError

/**
 * @since 0.1.0
 * @category Errors
 */
export type UsageError = InternalErrors.UsageError

/**
 * The kinds of record `erp` has commands for, one declaration each (`@erp-client/streams/Resource`): every one gets
 * `erp <name> list` and, with a get endpoint and selectors, `erp <name> get`, their help and their output. A new kind
 * of record is its declaration and one line here.
 *
 * @since 0.1.0
 * @category Constants
 */
export const resources: ReadonlyArray<Resource.Any> = [Partners.resource]

const summaries = {
  erp: "ERP REST API v2 from the shell (reads ERP_BASE_URL and ERP_API_KEY)",
  api: "Any endpoint of the service, by its path",
  apiGet: "GET an endpoint; prints its data as JSON",
  apiList: "Every record of a list endpoint, with the options of partners list",
  apiPost: "POST JSON to an endpoint (never retried after a transient failure); prints its data as JSON",
  apiInfer: "Draft an Effect Schema and a Resource from the records a list endpoint serves",
  apiChanges: "The records of a list endpoint added, changed and removed since the last run",
  apiSync: apiSyncSummary,
  sync: "Keep a kind of record in a table of SQLite or PostgreSQL (the same as erp RESOURCE sync)",
  mcp: mcpSummary,
  sandbox: "Run the built-in ERP sandbox server (prints its base URL and key)"
}

const api = Command.make("api").pipe(
  Command.withDescription(summaries.api),
  Command.withSubcommands([apiGet, apiList, apiPost, apiInfer, apiChanges, apiSync])
)

const leaf = <Name extends string, R, E, A>(
  name: string,
  summary: string,
  command: Command.Command<Name, R, E, A>
): Help.Node => ({
  name,
  summary,
  command: Help.described(command),
  children: []
})

// A resource's commands, as the parser and `--help` walk them.
const resourceNode = (resource: Resource.Any) => {
  const list = listCommand(resource)
  const changes = changesCommand(resource)
  const sync = syncCommand(resource, "sync")
  const get = resource.get === undefined || resource.selectors.length === 0
    ? undefined
    : getCommand(resource, resource.get)
  const command = Command.make(resource.name).pipe(
    Command.withDescription(Help.sentence(resource.description)),
    Command.withSubcommands(get === undefined ? [list, changes, sync] : [list, get, changes, sync])
  )
  const node: Help.Node = {
    name: resource.name,
    summary: Help.sentence(resource.description),
    command: Help.described(command),
    children: [
      leaf("list", listSummary(resource), list),
      ...(get === undefined ? [] : [leaf("get", getSummary(resource), get)]),
      leaf("changes", changesSummary(resource), changes),
      leaf("sync", syncSummary(resource), sync)
    ]
  }
  // `erp sync <resource>`: the same command, named as the task is said.
  const synced = syncCommand(resource, resource.name)
  return { command, node, sync: { command: synced, node: leaf(resource.name, syncSummary(resource), synced) } }
}

// The package's version, written in by the build (scripts/build-cli.ts); "dev" when run from source.
declare const ERP_CLI_VERSION: string | undefined

// The commands, as the parser (`cli`) and `--help` (`tree`) walk them.
const commandsOf = (resources: ReadonlyArray<Resource.Any>) => {
  const nodes = resources.map(resourceNode)
  const [first, ...more] = nodes.map((n) => n.sync.command)
  const sync = Command.make("sync").pipe(
    Command.withDescription(summaries.sync),
    Command.withSubcommands([first!, ...more])
  )
  const erp = Command.make("erp").pipe(
    Command.withDescription(summaries.erp),
    Command.withSubcommands([api, mcpCommand, sandbox, sync, ...nodes.map((n) => n.command)])
  )
  const tree: Help.Node = {
    name: "erp",
    summary: summaries.erp,
    command: Help.described(erp),
    children: [
      ...nodes.map((n) => n.node),
      {
        name: "api",
        summary: summaries.api,
        command: Help.described(api),
        children: [
          leaf("get", summaries.apiGet, apiGet),
          leaf("list", summaries.apiList, apiList),
          leaf("post", summaries.apiPost, apiPost),
          leaf("infer", summaries.apiInfer, apiInfer),
          leaf("changes", summaries.apiChanges, apiChanges),
          leaf("sync", summaries.apiSync, apiSync)
        ]
      },
      { name: "sync", summary: summaries.sync, command: Help.described(sync), children: nodes.map((n) => n.sync.node) },
      leaf("mcp", summaries.mcp, mcpCommand),
      leaf("sandbox", summaries.sandbox, sandbox)
    ]
  }
  const cli = Command.run(erp, {
    name: "erp",
    version: typeof ERP_CLI_VERSION === "string" ? ERP_CLI_VERSION : "dev"
  })
  return { tree, cli }
}

const standard = commandsOf(resources)
const tree = standard.tree

// Every settings variable, from the client's one table of them (Environment.ts): the two required ones first.
const required: ReadonlyArray<string> = [Environment.client.baseUrl, Environment.client.apiKey]
const optional = [
  ...Object.values(Environment.limiter),
  ...Object.values(Environment.client),
  ...Object.values(Environment.redis)
].filter((name) => !required.includes(name))

const rootFooter = [
  `Settings (environment): ${required.join(" and ")}, required; ${optional.join(", ")}. A duration is seconds (30) ` +
  "or has a unit (\"500 millis\"). OTEL_EXPORTER_OTLP_ENDPOINT and the other standard OTEL_* variables export the " +
  "command's trace, metrics and warnings over OTLP/HTTP. ERP_SYNC_URL is the database erp sync writes into when " +
  "--to is not given (never printed with its password).",
  "Exit codes: 0 success (also when the reader of stdout stops early), 1 failure (also: another run is writing " +
  "the same --output FILE or changes STATE, or it is read-only; another sync of the same table; for partners get: " +
  "a lookup failed for another " +
  "reason than not found), 2 usage (also a refused --resume), 3 Unauthorized, 4 Not found, 5 rate limited, 130 " +
  "interrupted " +
  "(Ctrl-C, SIGINT), 143 terminated (SIGTERM).",
  "Signals: SIGINT and SIGTERM stop the command in order: requests are cancelled, an export to --output FILE keeps " +
  "the records of its complete pages in FILE.part for --resume, and one line says so. A signal a second or more " +
  "after the first, while stopping, ends the command at once.",
  "Failures: one line on stderr each, starting with erp:. An export to --output FILE that fails or is interrupted " +
  "keeps FILE.part and FILE.resume.json (and with --safe FILE.ids.part), says so in that line and how to go on " +
  "(--resume continues, --restart starts over); on success only FILE is left, and one line says what it holds " +
  "(--quiet: none)."
]

/**
 * The `--help` page `args` (the arguments after the executable) ask for: with `--help` or `-h`, or naming a group of
 * commands without one of its commands; `undefined` when they ask for none. `color` adds bold headings.
 *
 * @example
 * ```ts
 * import { Cli } from "@erp-client/cli"
 *
 * const page = Cli.helpPage(["partners", "list", "--help"], { color: false })
 * console.log(page?.split("\n")[0]) // => erp partners list
 * // Arguments that run a command ask for no page
 * console.log(Cli.helpPage(["partners", "list", "--customers"], { color: false })) // => undefined
 * ```
 *
 * @since 0.1.0
 * @category Programs
 */
export const helpPage = (args: ReadonlyArray<string>, options: { readonly color: boolean }): string | undefined =>
  pageOf(tree, args, options)

const pageOf = (tree: Help.Node, args: ReadonlyArray<string>, options: { readonly color: boolean }) =>
  Help.wantsHelp(tree, args)
    ? Help.page(tree, args, {
      color: options.color,
      footer: Help.locate(tree, args).path.length === 1 ? rootFooter : []
    })
    : undefined

/**
 * The help pages of every command, plain and with colour, keyed by the command's path (`erp partners list`), and the
 * tree of command names that `--help` arguments are located in.
 *
 * @since 0.1.0
 * @category Models
 */
export type HelpIndex = HelpPath.HelpIndex

/**
 * Every `--help` page of the command, plain and with colour, keyed by the command's path, with the tree of command
 * names that `--help` arguments are located in: what the build writes to `dist/help.json`, so that the executable
 * answers `--help` without loading the command (`internal/quick.ts`).
 *
 * @example
 * ```ts
 * import { Cli } from "@erp-client/cli"
 *
 * const index = Cli.helpIndex()
 * console.log(Object.keys(index.pages).length) // => 17
 * console.log(index.pages["erp partners get"]?.plain === Cli.helpPage(["partners", "get", "--help"], { color: false }))
 * // => true
 * ```
 *
 * @since 0.1.0
 * @category Programs
 */
export const helpIndex = (): HelpIndex => {
  const pages: Record<string, { plain: string; ansi: string }> = {}
  const names = (node: Help.Node, path: ReadonlyArray<string>): HelpPath.PathNode => {
    const args = [...path.slice(1), "--help"]
    pages[path.join(" ")] = { plain: helpPage(args, { color: false })!, ansi: helpPage(args, { color: true })! }
    return { name: node.name, children: node.children.map((child) => names(child, [...path, child.name])) }
  }
  return { tree: names(tree, [tree.name]), pages }
}

/**
 * What `describeFailure` needs besides the failure: the arguments (to name the command and a bad option), and what
 * a failed or stopped export kept on disk (said at the end of the line).
 *
 * @since 0.1.0
 * @category Models
 */
export interface FailureContext {
  readonly args?: ReadonlyArray<string> | undefined
  readonly kept?: Sink.Kept | undefined
}

/**
 * The exit code and the one line to print for a failure (none when there is nothing to say). The one place failures
 * become exit codes and lines.
 *
 * @example
 * ```ts
 * import { Cli } from "@erp-client/cli"
 *
 * // Ctrl-C during `erp partners list --output partners.csv`, after 4000 partners were written
 * const { code, line } = Cli.describeFailure(new Cli.Interrupted({ signal: "SIGINT" }), {
 *   args: ["partners", "list", "--output", "partners.csv"],
 *   kept: { part: "partners.csv.part", records: 4000, mode: "none" }
 * })
 * console.log(code) // => 130
 * console.log(line)
 * // => interrupted (SIGINT); kept 4000 records in partners.csv.part: run the same command with --resume to
 * //    continue, or --restart to start over
 * ```
 *
 * @since 0.1.0
 * @category Errors
 */
export const describeFailure = (
  error: unknown,
  context: FailureContext = {}
): { readonly code: number; readonly line: string | undefined } => {
  const args = context.args ?? []
  if (ValidationError.isValidationError(error)) {
    const command = Help.locate(tree, args).path.map((node) => node.name).join(" ")
    return { code: ExitCode.usage, line: `${Help.describeValidation(tree, args, error)} (${command} --help)` }
  }
  if (error instanceof ErpConfig.ErpConfigError) return { code: ExitCode.usage, line: error.message }
  if (ConfigError.isConfigError(error)) return { code: ExitCode.usage, line: Settings.describeConfigError(error) }
  const message = Predicate.hasProperty(error, "message") && typeof error.message === "string" && error.message !== ""
    ? error.message
    : String(error)
  // A server that matches more loosely than the check allows has a way out, said where the check fails.
  const said = Predicate.isTagged(error, "ConditionIgnored")
    ? `${message} (--no-check-where takes the records as served)`
    : message
  // Work kept for a later run is said in the same line, after what went wrong.
  const line = context.kept === undefined ? said : `${said}; ${Sink.describeKept(context.kept)}`
  // The reader has all it wanted (`erp partners list | head -1`): the export ends quietly, as a success.
  if (error instanceof Sink.StdoutClosed) return { code: ExitCode.ok, line: undefined }
  // Each lookup that failed has had its own line already. Not found only: 4; any other failure among them: 1, which
  // wins (a partner that may exist was not shown).
  if (error instanceof LookupsFailed) {
    return { code: error.failed > 0 ? ExitCode.failure : ExitCode.notFound, line: undefined }
  }
  if (error instanceof InternalErrors.Interrupted) {
    return { code: error.signal === "SIGTERM" ? ExitCode.terminated : ExitCode.interrupted, line }
  }
  switch (Predicate.hasProperty(error, "_tag") ? error._tag : undefined) {
    case "UsageError":
    case "ResumeRefused":
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
 * The process's signals, as `main` listens to them (`bin.ts` binds them to Node's `process`).
 *
 * @since 0.1.0
 * @category Models
 */
export interface Signals {
  /** Calls `listener` for every SIGINT and SIGTERM from now on, and for any heard before. */
  readonly listen: (listener: (signal: StopSignal) => void) => void
  /** Ends the process now with `code`. */
  readonly exitNow: (code: number) => void
}

/**
 * What one more signal does while the command stops after a first one at `firstMillis`: a signal within a second of
 * the first is a copy of it (`timeout` signals the command, then its process group; `pnpm` passes on the Ctrl-C the
 * terminal already sent), and changes nothing; a later one ends the process at once.
 *
 * @example
 * ```ts
 * import { Cli } from "@erp-client/cli"
 *
 * // The first SIGINT came at 10 s: a copy of it 400 ms later changes nothing, a Ctrl-C 2 s later ends the process
 * console.log(Cli.againAfter(10_000, 10_400)) // => copy
 * console.log(Cli.againAfter(10_000, 12_000)) // => at once
 * ```
 *
 * @since 0.1.0
 * @category Models
 */
export const againAfter = (firstMillis: number, nowMillis: number): "copy" | "at once" =>
  nowMillis - firstMillis < 1_000 ? "copy" : "at once"

/**
 * Runs the command line and returns its exit code; every failure becomes one line on stderr.
 *
 * With `signals`, the first SIGINT or SIGTERM stops the command in order: its requests are cancelled, its finalizers
 * run (an export to a file keeps its complete pages, see `Sink.file`), and it ends as `Interrupted`, 130 or 143, with
 * one line. A later signal ends the process at once (see `againAfter`), with a line saying so and what is kept.
 *
 * @example
 * ```ts
 * import { Cli } from "@erp-client/cli"
 *
 * // `erp partners list --customers --format csv --output customers.csv`, as a program that ends with the exit code
 * // (argv as `process.argv` has it; run it with `NodeContext.layer` of @effect/platform-node, as bin.ts does)
 * const argv = ["node", "erp", "partners", "list", "--customers", "--format", "csv", "--output", "customers.csv"]
 * const program = Cli.main(argv)
 * ```
 *
 * @since 0.1.0
 * @category Programs
 */
export const main = (
  argv: ReadonlyArray<string>,
  options: {
    readonly signals?: Signals | undefined
    /** The kinds of record with commands of their own, if not `resources`. */
    readonly resources?: ReadonlyArray<Resource.Any> | undefined
  } = {}
): Effect.Effect<number, never, FileSystem.FileSystem | Path.Path | CliApp.CliApp.Environment> =>
  Effect.suspend(() => {
    Sink.watchStdout()
    const { cli, tree } = options.resources === undefined ? standard : commandsOf(options.resources)
    const args = argv.slice(2)
    const leftover = Leftover.make()
    const color = Help.colorEnabled(process.stdout.isTTY, process.env)
    const help = pageOf(tree, args, { color })
    const missing = Help.missingValue(tree, args)
    const command = help !== undefined
      ? Sink.writeStdout(help)
      : missing !== undefined
      ? Effect.fail(missing)
      : Console.consoleWith((console) => Effect.withConsole(cli(argv), Help.parserConsole(console, color))).pipe(
        Effect.provideService(Argv, args),
        Effect.provideService(Declared, options.resources ?? resources),
        Effect.provideService(Leftover, leftover)
      )
    const run = options.signals === undefined ? command : stoppable(command, options.signals, leftover)
    const exit = run.pipe(
      Effect.as(ExitCode.ok as number),
      Effect.catchAllCause((cause) => {
        if (Cause.isInterruptedOnly(cause)) return Effect.interrupt
        const failure = Cause.failureOption(cause)
        const { code, line } = Option.isSome(failure)
          ? describeFailure(failure.value, { args, kept: leftover.kept() })
          : {
            code: ExitCode.failure,
            line: `unexpected failure: ${Cause.pretty(Cause.stripFailures(cause)).split("\n")[0]}`
          }
        return Effect.as(line === undefined ? Effect.void : note(line), code)
      })
    )
    // Telemetry, when the standard OTEL_* variables ask for it: loaded only then (internal/telemetry.ts).
    if (askedSignals(process.env).length === 0) return exit
    const name = Help.locate(tree, args).path.map((node) => node.name).join(" ")
    return Effect.flatMap(
      Effect.promise(() => import("./internal/telemetry.js")),
      (telemetry) => telemetry.observe(exit, { name, env: process.env })
    )
  })

// `command`, stopped in order by the first signal: it is interrupted (and waited for), then fails as `Interrupted`.
const stoppable = <A, E, R>(
  command: Effect.Effect<A, E, R>,
  signals: Signals,
  leftover: Context.Tag.Service<typeof Leftover>
): Effect.Effect<A, E | Interrupted, R> => {
  const stop = Deferred.unsafeMake<StopSignal>(FiberId.none)
  let first: { readonly signal: StopSignal; readonly atMillis: number } | undefined
  signals.listen((signal) => {
    const now = Date.now()
    if (first === undefined) {
      first = { signal, atMillis: now }
      Deferred.unsafeDone(stop, Effect.succeed(signal))
    } else if (againAfter(first.atMillis, now) === "at once") {
      const { code, line } = describeFailure(new Interrupted({ signal: first.signal, atOnce: true }), {
        kept: leftover.kept()
      })
      Effect.runSync(note(line!))
      signals.exitNow(code)
    }
  })
  return Effect.raceFirst(
    command,
    Effect.flatMap(Deferred.await(stop), (signal) => new Interrupted({ signal }))
  )
}

/**
 * Maps how the main fiber ended to the process exit code: its value (`main` says every failure and signal in it), or
 * 130 if it was interrupted from outside all the same.
 *
 * @example
 * ```ts
 * import { Cli } from "@erp-client/cli"
 * import { Exit } from "effect"
 *
 * // The exit code `main` returned (4: not found), and a failure that escaped it (bin.ts sets `process.exitCode`)
 * Cli.teardown(Exit.succeed(4), (code) => console.log(code)) // => 4
 * Cli.teardown(Exit.die(new Error("out of memory")), (code) => console.log(code)) // => 1
 * ```
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
