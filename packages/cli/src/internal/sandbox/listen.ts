/**
 * `erp sandbox`'s flags of where it listens (`--port`, `--host`) and which keys it lets in (`--key`), and the error
 * that says why it could not listen.
 */
import * as Options from "@effect/cli/Options"
import * as Schema from "effect/Schema"
import { repeatable, shownDefault } from "../common.js"

/** Where the sandbox listens. */
export const listen = {
  port: Options.integer("port").pipe(
    Options.withPseudoName("N"),
    Options.withDescription("The port to listen on; 0 picks a free one."),
    shownDefault(8080)
  ),
  host: Options.text("host").pipe(
    Options.withPseudoName("ADDRESS"),
    Options.withDescription("The address to listen on."),
    shownDefault("127.0.0.1")
  )
}

/** The API keys it accepts. */
export const access = {
  key: Options.text("key").pipe(
    Options.withPseudoName("KEY"),
    Options.withDescription("A valid API key. Default: sandbox-key."),
    repeatable
  )
}

/**
 * The sandbox could not listen where it was told: the port is taken, not allowed, or the address is not this
 * machine's. One line says which (the platform's `ServeError` alone says nothing).
 */
export class SandboxListenError extends Schema.TaggedError<SandboxListenError>()("SandboxListenError", {
  host: Schema.String,
  port: Schema.Number,
  code: Schema.String
}) {
  override get message(): string {
    switch (this.code) {
      case "EADDRINUSE":
        return `port ${this.port} on ${this.host} is taken: another program listens on it (pick another with ` +
          "--port, or --port 0 for a free one)"
      case "EACCES":
        return `not allowed to listen on port ${this.port} on ${this.host}`
      case "EADDRNOTAVAIL":
        return `cannot listen on ${this.host}: not an address of this machine`
      default:
        return `cannot listen on ${this.host} port ${this.port}: ${this.code}`
    }
  }
}

/** The Node error code of why listening failed (`EADDRINUSE`, ...), or its message. */
export const listenFailure = (cause: unknown): string => {
  const error = cause as { readonly code?: unknown; readonly message?: unknown } | null
  return typeof error?.code === "string"
    ? error.code
    : typeof error?.message === "string" && error.message !== ""
    ? error.message
    : "unknown error"
}
