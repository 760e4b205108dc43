/**
 * The Model Context Protocol's stdio transport for `erp mcp`: JSON-RPC 2.0 messages, one a line, read from stdin and
 * written to stdout, each handled by one connection of `mcpProtocol.ts`.
 *
 * Messages are handled as they come, many at once; the lines said (answers, progress) are written one at a time in
 * the order they were said, so a slow reader holds the server back in order. When stdin ends, the requests already
 * read are answered before `done` succeeds.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Mailbox from "effect/Mailbox"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Protocol from "./mcpProtocol.js"

/** What the transport needs of the process: stdin's lines, and writing one line to stdout. */
export interface Io<E> {
  readonly lines: Stream.Stream<string, E>
  /** Writes `line` (a newline follows); fails once the reader has gone. */
  readonly write: (line: string) => Effect.Effect<void, unknown>
}

/**
 * Serves `connection` on `io` until stdin has ended and every request read from it has been answered and written,
 * or stdout's reader has gone (nothing more can be said). Interrupted (a signal), the requests in flight are
 * cancelled.
 */
export const serve = <E>(
  connection: Protocol.Connection,
  io: Io<E>
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    const finished = yield* Deferred.make<void>()
    const out = yield* Mailbox.make<string>()
    const say: Protocol.Reply = (line) => Effect.asVoid(out.offer(line))
    let open = 0
    let inputEnded = false
    const settle = () => {
      if (inputEnded && open === 0) out.unsafeDone(Exit.void)
    }

    const readLine = (line: string): Effect.Effect<void, never, Scope.Scope> => {
      if (line.trim() === "") return Effect.void
      const parsed = Protocol.parse(line)
      if (parsed._tag === "Invalid") return say(parsed.line)
      // A batch (MCP 2025-03-26): each message is handled, and answered, on its own. `initialize` is handled before
      // the next line is read: the lines after it (`printf '…' | erp mcp`) belong to the session it begins.
      return Effect.forEach(parsed.messages, (message) => {
        if (Protocol.isInitialize(message)) return connection.handle(message, say)
        open++
        return connection.handle(message, say).pipe(
          Effect.ensuring(Effect.sync(() => {
            open--
            settle()
          })),
          Effect.forkScoped
        )
      }, { discard: true })
    }

    yield* io.lines.pipe(
      Stream.runForEach(readLine),
      Effect.tapErrorCause((cause) => Effect.logError("stdin failed; answering what was asked", cause)),
      Effect.ignore,
      Effect.ensuring(Effect.sync(() => {
        inputEnded = true
        settle()
      })),
      Effect.forkScoped,
      Effect.interruptible
    )

    yield* Mailbox.toStream(out).pipe(
      Stream.runForEach(io.write),
      // A reader that went away (the client ended): nothing more can be said.
      Effect.ignore,
      Effect.ensuring(Deferred.done(finished, Exit.void)),
      Effect.forkScoped,
      Effect.interruptible
    )

    yield* Effect.addFinalizer(() => connection.cancelAll)
    yield* Deferred.await(finished)
  })
