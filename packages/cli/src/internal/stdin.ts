/**
 * stdin as input: its lines, or all of it.
 */
import * as NodeStream from "@effect/platform-node/NodeStream"
import type * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { InputError } from "./errors.js"

const onError = (error: unknown) =>
  new InputError({ description: `stdin: ${error instanceof Error ? error.message : String(error)}` })

/** The lines of stdin as they arrive, without their line ends (`\n` or `\r\n`). */
export const lines: Stream.Stream<string, InputError> = NodeStream.fromReadable(() => process.stdin, onError, {
  closeOnDone: false
}).pipe(Stream.decodeText(), Stream.splitLines)

/** All of stdin, as text. */
export const text: Effect.Effect<string, InputError> = NodeStream.toString(() => process.stdin, { onFailure: onError })
