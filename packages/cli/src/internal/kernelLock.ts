/**
 * A lock the operating system releases when its holder dies: a Unix socket bound to a name in Linux's abstract
 * namespace (`\0erp-lock/…`). One process at a time can bind a name, and the kernel unbinds it when the socket is
 * closed, which happens as its process exits however it exits (`kill -9` too): a process's files are closed before it
 * becomes a zombie, so a holder that is dead but not yet reaped by its parent holds nothing. That is what a pid check
 * cannot tell (`kill(pid, 0)` succeeds on a zombie) and what `flock(2)` gives, which Node does not offer without a
 * native module built for each platform; this needs none.
 *
 * The holder answers whoever connects with what its lock file says of it (pid, host, start, command), so a second run
 * can name it even when it came by another name of the same file (a hard link). The name is open to every process of
 * the same network namespace: one that binds it first can make a run refuse (naming whoever it claims to be), never
 * make it write anything. Where there is no abstract namespace (macOS, Windows), or the socket cannot be made, the
 * caller falls back to its lock file alone (outputLock.ts judges its holder by its pid).
 */
import * as Effect from "effect/Effect"
import * as Net from "node:net"

/** Whether this platform has the abstract namespace (Linux). */
export const available = process.platform === "linux"

/** A name held: released by `release` (or by the process's end). */
export interface Held {
  readonly name: string
  readonly release: Effect.Effect<void>
}

/** What `hold` found: the name held by this run, held by another (with what it says of itself), or no such lock here. */
export type Outcome =
  | { readonly _tag: "Held"; readonly held: Held }
  | { readonly _tag: "Busy"; readonly answer: string | undefined }
  | { readonly _tag: "Unavailable"; readonly why: string }

const codeOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string"
    ? error.code
    : undefined

// The longest answer read from a holder: a lock file's JSON is a few hundred bytes.
const MAX_ANSWER = 16_384
// A live holder answers at once; one whose event loop is stuck for longer is named as unknown.
const ANSWER_MILLIS = 2_000

const listen = (name: string, answer: string) =>
  Effect.async<Net.Server | "in use" | { readonly why: string }>((resume) => {
    const server = Net.createServer((socket) => {
      socket.on("error", () => undefined)
      socket.end(answer)
    })
    server.once("error", (error) => {
      resume(Effect.succeed(codeOf(error) === "EADDRINUSE" ? "in use" : { why: String(codeOf(error) ?? error) }))
    })
    server.listen({ path: `\0${name}` }, () => {
      // The lock never keeps the process alive by itself.
      server.unref()
      resume(Effect.succeed(server))
    })
  })

const ask = (name: string) =>
  Effect.async<string | "gone" | undefined>((resume) => {
    let text = ""
    const socket = Net.createConnection({ path: `\0${name}` })
    const timer = setTimeout(() => {
      socket.destroy()
      resume(Effect.succeed(undefined))
    }, ANSWER_MILLIS)
    socket.setEncoding("utf8")
    socket.on("data", (chunk: string) => {
      text += chunk
      if (text.length > MAX_ANSWER) socket.destroy()
    })
    socket.on("end", () => {
      clearTimeout(timer)
      resume(Effect.succeed(text))
    })
    socket.on("error", (error) => {
      clearTimeout(timer)
      // Refused: nothing is bound there any more (its holder has just ended).
      resume(Effect.succeed(codeOf(error) === "ECONNREFUSED" ? "gone" : undefined))
    })
  })

/**
 * Binds `name` (a few characters: an abstract name holds at most 107 bytes) for this run, answering `answer` to whoever
 * asks; or says who holds it; or that this platform has no such lock.
 */
export const hold = (name: string, answer: string): Effect.Effect<Outcome> =>
  Effect.gen(function*() {
    if (!available) return { _tag: "Unavailable", why: "no abstract Unix sockets on this platform" } as const
    // A holder that ends between our bind and our question is asked again: a few rounds settle it.
    for (let round = 0; round < 5; round++) {
      const bound = yield* listen(name, answer)
      if (bound === "in use") {
        const said = yield* ask(name)
        if (said === "gone") continue
        return { _tag: "Busy", answer: said } as const
      }
      if (typeof bound === "object" && "why" in bound) return { _tag: "Unavailable", why: bound.why } as const
      const server = bound
      // Closing the listening socket unbinds the name at once; answers under way finish on their own.
      const release = Effect.sync(() => void server.close())
      return { _tag: "Held", held: { name, release } } as const
    }
    return { _tag: "Busy", answer: undefined } as const
  })
