/**
 * The command's telemetry, loaded only when the standard OpenTelemetry variables ask for it (`Cli.main` imports this
 * module then; the bundle keeps it, `@effect/opentelemetry` and its exporters in a chunk of their own). One trace per
 * command: its span over everything it did, named by the command (`erp partners list`), ending with the exit status.
 * A collector that fails is said in one line on stderr, once; the command's data and exit status are its own.
 */
import * as ErpTelemetry from "@erp-client/otel/ErpTelemetry"
import * as Variables from "@erp-client/otel/Variables"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { note } from "./common.js"

// The package's version, written in by the build (scripts/build-cli.ts); "dev" when run from source.
declare const ERP_CLI_VERSION: string | undefined

/** A command that ended with another status than 0: the command's span ends with an error that says it. */
class ExitStatus extends Data.TaggedError("ExitStatus")<{ readonly code: number }> {
  override get message(): string {
    return this.code === 130
      ? "interrupted (SIGINT)"
      : this.code === 143
      ? "terminated (SIGTERM)"
      : `exit status ${this.code}`
  }
}

/**
 * `command` (its exit code), in the command's span, with the telemetry the environment asks for: sent on the way out,
 * within the shutdown budget (1.5 s), before the code is handed back.
 */
export const observe = <R>(
  command: Effect.Effect<number, never, R>,
  options: { readonly name: string; readonly env: Readonly<Record<string, string | undefined>> }
): Effect.Effect<number, never, R> => {
  const signals = Variables.askedSignals(options.env)
  let said = false
  const version = typeof ERP_CLI_VERSION === "string" ? ERP_CLI_VERSION : "dev"
  const telemetry = ErpTelemetry.layer({
    serviceName: Variables.namesService(options.env) ? undefined : "erp",
    serviceVersion: version,
    // The command's own span and the log records: this package's (the client's are filed under its own scope).
    scope: { name: "@erp-client/cli", version },
    traces: signals.includes("traces"),
    metrics: signals.includes("metrics"),
    logs: signals.includes("logs"),
    onExportFailure: (failure) =>
      Effect.suspend(() => {
        if (said) return Effect.void
        said = true
        return note(`telemetry not sent: ${failure.url}: ${failure.reason}`)
      })
  })
  return command.pipe(
    Effect.tap((code) => Effect.annotateCurrentSpan("process.exit.code", code)),
    Effect.flatMap((code) =>
      code === 0
        ? Effect.succeed(code)
        : Effect.zipRight(Effect.annotateCurrentSpan("error.type", String(code)), Effect.fail(new ExitStatus({ code })))
    ),
    Effect.withSpan(options.name, {
      kind: "internal",
      captureStackTrace: false,
      attributes: { "process.executable.name": "erp", "process.pid": process.pid }
    }),
    Effect.catchTag("ExitStatus", (status) => Effect.succeed(status.code)),
    Effect.provide(telemetry)
  )
}
