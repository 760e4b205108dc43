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
