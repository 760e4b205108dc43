/**
 * The `erp` command: `partners list`, `partners get` and `sandbox`, its exit codes, and one line for every failure.
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
import * as InternalErrors from "./internal/errors.js"
import { partnersGet } from "./internal/partnersGet.js"
import { partnersList } from "./internal/partnersList.js"
import { sandbox } from "./internal/sandbox.js"

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
export const UsageError = InternalErrors.UsageError

/**
 * @since 0.1.0
 * @category Errors
 */
export type UsageError = InternalErrors.UsageError

const partners = Command.make("partners").pipe(
  Command.withDescription("export and look up partners"),
  Command.withSubcommands([partnersList, partnersGet])
)

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
