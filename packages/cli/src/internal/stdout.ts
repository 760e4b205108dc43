/**
 * stdout as the command line writes data to it: a reader that closes the pipe early is noticed, never fatal.
 */

let watched = false
let closed = false

const isClosedPipe = (error: unknown): boolean => {
  const code = (error as { readonly code?: unknown } | undefined)?.code
  return code === "EPIPE" || code === "ERR_STREAM_DESTROYED" || code === "ERR_STREAM_WRITE_AFTER_END"
}

/**
 * Listens for stdout's errors for the rest of the process: a closed pipe is remembered (the next write reports it),
 * and no error on stdout can crash the process as an unhandled `error` event.
 */
export const watch = (): void => {
  if (watched) return
  watched = true
  process.stdout.on("error", (error) => {
    if (isClosedPipe(error)) closed = true
  })
}

/** Whether stdout is a terminal (a person reads it), rather than a file or a pipe. */
export const isTerminal = (): boolean => process.stdout.isTTY === true

/** Hands `text` to the OS; `done` hears `"closed"` when the reader went away, or the error's description. */
export const write = (
  text: string,
  done: (outcome: undefined | "closed" | { readonly description: string }) => void
) => {
  watch()
  if (closed) return done("closed")
  process.stdout.write(text, (error) => {
    if (error === null || error === undefined) done(undefined)
    else if (closed || isClosedPipe(error)) done("closed")
    else done({ description: error.message })
  })
}
