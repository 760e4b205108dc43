/**
 * The `erp` command (`partners list | get`, `api get | list | post`, `sandbox`): its help, its exit codes, and one
 * line for every failure.
 *
 * @since 0.1.0
 */
import type * as CliApp from "@effect/cli/CliApp"
import * as Command from "@effect/cli/Command"
import * as ValidationError from "@effect/cli/ValidationError"
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import * as Cause from "effect/Cause"
import * as ConfigError from "effect/ConfigError"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import { apiGet, apiList, apiPost } from "./internal/api.js"
import { Argv, note } from "./internal/common.js"
import * as InternalErrors from "./internal/errors.js"
import * as Help from "./internal/help.js"
import { partnersGet } from "./internal/partnersGet.js"
import { partnersList } from "./internal/partnersList.js"
import { sandbox } from "./internal/sandbox.js"
import * as Settings from "./internal/settings.js"
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

const summaries = {
  erp: "ERP REST API v2 from the shell (reads ERP_BASE_URL and ERP_API_KEY)",
  partners: "export and look up partners",
  partnersList: "export partners: NDJSON (default), CSV or a table, to stdout or a file",
  partnersGet: "look up partners by id or company name (many in one run), one JSON object a line",
  api: "any endpoint of the service, by its path",
  apiGet: "GET an endpoint; prints its data as JSON",
  apiList: "every record of a list endpoint, with the options of partners list",
  apiPost: "POST JSON to an endpoint (never retried after a transient failure); prints its data as JSON",
  sandbox: "run the built-in ERP sandbox server (prints its base URL and key)"
}

const partners = Command.make("partners").pipe(
  Command.withDescription(summaries.partners),
  Command.withSubcommands([partnersList, partnersGet])
)

const api = Command.make("api").pipe(
  Command.withDescription(summaries.api),
  Command.withSubcommands([apiGet, apiList, apiPost])
)

const erp = Command.make("erp").pipe(
  Command.withDescription(summaries.erp),
  Command.withSubcommands([partners, api, sandbox])
)

const leaf = (name: string, summary: string, command: Help.Node["command"]): Help.Node => ({
  name,
  summary,
  command,
  children: []
})

// The same commands, as `--help` walks them.
const tree: Help.Node = {
  name: "erp",
  summary: summaries.erp,
  command: erp,
  children: [
    {
      name: "partners",
      summary: summaries.partners,
      command: partners,
      children: [
        leaf("list", summaries.partnersList, partnersList),
        leaf("get", summaries.partnersGet, partnersGet)
      ]
    },
    {
      name: "api",
      summary: summaries.api,
      command: api,
      children: [
        leaf("get", summaries.apiGet, apiGet),
        leaf("list", summaries.apiList, apiList),
        leaf("post", summaries.apiPost, apiPost)
      ]
    },
    leaf("sandbox", summaries.sandbox, sandbox)
  ]
}

const rootFooter = [
  "Settings (environment): ERP_BASE_URL and ERP_API_KEY, required; ERP_RATE_LIMIT, ERP_RATE_WINDOW, ERP_TIMEOUT, " +
  "ERP_RETRIES, ERP_RATE_LIMIT_BUDGET, ERP_MAX_BODY_BYTES, ERP_REDIS_URL, ERP_REDIS_PREFIX, ERP_REDIS_ON_FAILURE, " +
  "ERP_REDIS_TIMEOUT. A duration is seconds (30) or has a unit (\"500 millis\").",
  "Exit codes: 0 success (also when the reader of stdout stops early), 1 failure, 2 usage, 3 Unauthorized, " +
  "4 Not found, 5 rate limited, 130 interrupted."
]

// The package's version, written in by the build (scripts/build-cli.ts); "dev" when run from source.
declare const ERP_CLI_VERSION: string | undefined

const cli = Command.run(erp, { name: "erp", version: typeof ERP_CLI_VERSION === "string" ? ERP_CLI_VERSION : "dev" })

/**
 * The `--help` page `args` (the arguments after the executable) ask for: with `--help` or `-h`, or naming a group of
 * commands without one of its commands; `undefined` when they ask for none. `color` adds bold headings.
 *
 * @since 0.1.0
 * @category Programs
 */
export const helpPage = (args: ReadonlyArray<string>, options: { readonly color: boolean }): string | undefined =>
  Help.wantsHelp(tree, args)
    ? Help.page(tree, args, {
      color: options.color,
      footer: Help.locate(tree, args).path.length === 1 ? rootFooter : []
    })
    : undefined

/**
 * The exit code and the one line to print for a failure (none when there is nothing to say).
 *
 * @since 0.1.0
 * @category Errors
 */
export const describeFailure = (error: unknown): { readonly code: number; readonly line: string | undefined } => {
  if (ValidationError.isValidationError(error)) return { code: ExitCode.usage, line: Help.oneLine(error.error) }
  if (ConfigError.isConfigError(error)) return { code: ExitCode.usage, line: Settings.describeConfigError(error) }
  const tagged = error as { readonly _tag?: unknown; readonly message?: unknown }
  const line = typeof tagged.message === "string" && tagged.message !== "" ? tagged.message : String(error)
  switch (tagged._tag) {
    case "StdoutClosed":
      // The reader has all it wanted (`erp partners list | head -1`): the export ends quietly, as a success.
      return { code: ExitCode.ok, line: undefined }
    case "SomeNotFound":
      // Each missing one has had its own line already.
      return { code: ExitCode.notFound, line: undefined }
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
 * Runs the command line and returns its exit code; every failure becomes one line on stderr.
 *
 * @since 0.1.0
 * @category Programs
 */
export const main = (
  argv: ReadonlyArray<string>
): Effect.Effect<number, never, FileSystem.FileSystem | Path.Path | CliApp.CliApp.Environment> =>
  Effect.suspend(() => {
    Sink.watchStdout()
    const args = argv.slice(2)
    const color = Help.colorEnabled(process.stdout.isTTY, process.env)
    const help = helpPage(args, { color })
    const run = help !== undefined
      ? Sink.writeStdout(help)
      : Console.consoleWith((console) => Effect.withConsole(cli(argv), Help.parserConsole(console, color))).pipe(
        Effect.provideService(Argv, args)
      )
    return run.pipe(
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
        const hint = Option.isSome(failure) && ValidationError.isValidationError(failure.value)
          ? ` (${Help.locate(tree, args).path.map((node) => node.name).join(" ")} --help)`
          : ""
        return Effect.as(line === undefined ? Effect.void : note(line + hint), code)
      })
    )
  })

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
