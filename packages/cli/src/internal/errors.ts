/**
 * The command line's own failures, beside the client's typed errors.
 */
import * as Schema from "effect/Schema"

/**
 * A usage error found after parsing (a bad `--where`, a value out of range, flags that do not go together).
 */
export class UsageError extends Schema.TaggedError<UsageError>()("UsageError", { reason: Schema.String }) {
  override get message(): string {
    return this.reason
  }
}

/**
 * Reading the input failed (stdin, a `--data @FILE`).
 */
export class InputError extends Schema.TaggedError<InputError>()("InputError", { description: Schema.String }) {
  override get message(): string {
    return `cannot read the input: ${this.description}`
  }
}

/** The signals the command stops in order on: Ctrl-C, and the polite request of `kill`, `timeout` and supervisors. */
export const StopSignal = Schema.Literal("SIGINT", "SIGTERM")

export type StopSignal = typeof StopSignal.Type

/**
 * The command was stopped by a signal, after an orderly stop: requests cancelled, an export's complete pages kept.
 */
export class Interrupted extends Schema.TaggedError<Interrupted>()("Interrupted", {
  signal: StopSignal,
  /** Another signal came while stopping, and ended the process before the stop was through. */
  atOnce: Schema.optional(Schema.Boolean)
}) {
  override get message(): string {
    return `interrupted (${this.signal})${this.atOnce === true ? ", then stopped at once by another signal" : ""}`
  }
}
