/**
 * Where an export goes: stdout, or a file written whole or not at all, optionally resumable page by page.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as SavedExport from "./internal/savedExport.js"
import * as Stdout from "./internal/stdout.js"

/**
 * Writing the output failed (disk full, permissions).
 *
 * @since 0.1.0
 * @category Errors
 */
export class OutputError extends Data.TaggedError("OutputError")<{ readonly description: string }> {
  override get message(): string {
    return `cannot write the output: ${this.description}`
  }
}

/**
 * The reader of stdout went away (`erp partners list | head -1`): not a failure, the export just ends.
 *
 * @since 0.1.0
 * @category Errors
 */
export class StdoutClosed extends Schema.TaggedError<StdoutClosed>()("StdoutClosed", {}) {
  override get message(): string {
    return "stdout was closed by its reader"
  }
}

/**
 * A saved export that this run would throw away: other flags, missing or unreadable files. Nothing was touched.
 *
 * @since 0.1.0
 * @category Errors
 */
export class ResumeRefused extends Data.TaggedError("ResumeRefused")<{ readonly reason: string }> {
  override get message(): string {
    return this.reason
  }
}

/**
 * The flags that shape an export (what is asked of the server and how it is written), by the name the user typed
 * (`"--page-size": 20`; `command` is the command itself): kept field by field so a resume with other flags is refused
 * naming the difference.
 *
 * @since 0.1.0
 * @category Models
 */
export const ResumeFlags = SavedExport.ResumeFlags

/**
 * @since 0.1.0
 * @category Models
 */
export type ResumeFlags = typeof ResumeFlags.Type

/**
 * What a resumable export records after each complete page, in `FILE.resume.json`.
 *
 * @since 0.1.0
 * @category Models
 */
export const ResumeState = SavedExport.ResumeState

/**
 * @since 0.1.0
 * @category Models
 */
export type ResumeState = typeof ResumeState.Type

/**
 * What a run does with a saved export of the same file (see `file`).
 *
 * @since 0.1.0
 * @category Models
 */
export type ResumeMode = "none" | "resume" | "restart"

/**
 * @since 0.1.0
 * @category Models
 */
export interface Sink {
  /** Where a resumed export starts, or none. */
  readonly resumed: Option.Option<ResumeState>
  /** With `keepIds`: every id the interrupted export wrote (drift-safe paging resumes with all of them). */
  readonly resumedIds: ReadonlyArray<string | number>
  /** Appends one complete page, and with `keepIds` its `ids`; `state` is what a resume would continue from after it. */
  readonly write: (
    text: string,
    state: Omit<ResumeState, "version" | "flags" | "bytes" | "idsBytes">,
    ids?: ReadonlyArray<string | number>
  ) => Effect.Effect<void, OutputError | StdoutClosed>
  /** The export is complete: publish the file. */
  readonly commit: Effect.Effect<void, OutputError>
}

/**
 * Watches stdout for a reader that closes it, for the rest of the process: the next write then ends the export
 * quietly (`StdoutClosed`), and no error on stdout crashes the process. `stdout` calls it on first use.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const watchStdout: () => void = Stdout.watch

/**
 * Writes `text` to stdout, handed to the OS before the effect ends (a slow reader holds the writer back instead of
 * filling memory). A reader that closed the pipe fails it with `StdoutClosed`.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const writeStdout = (text: string): Effect.Effect<void, OutputError | StdoutClosed> =>
  Effect.async<void, OutputError | StdoutClosed>((resume) =>
    Stdout.write(text, (outcome) =>
      resume(
        outcome === undefined
          ? Effect.void
          : outcome === "closed"
          ? Effect.fail(new StdoutClosed())
          : Effect.fail(new OutputError({ description: `stdout: ${outcome.description}` }))
      ))
  )

/**
 * An export to stdout, one page at a time (see `writeStdout`).
 *
 * @since 0.1.0
 * @category Constructors
 */
export const stdout: Sink = {
  resumed: Option.none(),
  resumedIds: [],
  write: writeStdout,
  commit: Effect.void
}

const errorText = (error: unknown): string =>
  error instanceof Error ? error.message : typeof error === "object" && error !== null && "message" in error
    ? String((error as { message: unknown }).message)
    : String(error)

// The ids file of a resumable drift-safe export: one JSON value a line, each a string or a number.
const IdLines = Schema.Array(Schema.parseJson(Schema.Union(Schema.String, Schema.Number)))

/**
 * A file that appears only when complete: records go to `FILE.part` and it is renamed to `FILE` at the end.
 *
 * - `"none"`: a failed or interrupted export removes its part file. A saved export of `FILE` (left by an interrupted
 *   resumable run) is refused, never overwritten.
 * - `"resume"`: continues a saved export after its last complete page, when it was made with the same `flags`. One
 *   made with other flags, or whose files are missing or unreadable, is refused (`ResumeRefused`) and left byte for
 *   byte as it was. A failed or interrupted run keeps `FILE.part` and `FILE.resume.json` for the next resume.
 * - `"restart"`: discards a saved export on purpose, then runs as `"resume"` with nothing saved.
 *
 * With `keepIds` (drift-safe paging), the ids written also go to `FILE.ids.part`, which the resume needs.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const file = (
  target: string,
  options: { readonly mode: ResumeMode; readonly flags: ResumeFlags; readonly keepIds?: boolean | undefined }
): Effect.Effect<Sink, OutputError | ResumeRefused, FileSystem.FileSystem | Path.Path | Scope.Scope> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const { part, state: statePath } = SavedExport.paths(target)
    const resumable = options.mode !== "none"
    // Kept only for a resumable drift-safe export: the ids are what the resumed run must not write again.
    const idsPath = resumable && options.keepIds === true ? SavedExport.paths(target).ids : undefined
    const fail = (what: string) => (error: unknown) => new OutputError({ description: `${what}: ${errorText(error)}` })

    // Every check comes before anything is opened: a refused run leaves the saved export as it was.
    const saved = yield* SavedExport.inspect(target, { ...options, keepIds: idsPath !== undefined }).pipe(
      Effect.mapError(fail(target))
    )
    if ("refused" in saved) return yield* new ResumeRefused({ reason: saved.refused })
    const resumed = saved

    yield* fs.makeDirectory(path.dirname(part), { recursive: true }).pipe(Effect.mapError(fail(path.dirname(part))))
    let committed = false
    const handle = yield* Effect.acquireRelease(
      fs.open(part, { flag: Option.isSome(resumed) ? "r+" : "w" }).pipe(Effect.mapError(fail(part))),
      (_, exit) =>
        committed || (resumable && Exit.isFailure(exit))
          ? Effect.void
          : Effect.ignore(Effect.all([fs.remove(part), fs.remove(statePath)], { mode: "either" }))
    )
    let idsBytes = 0
    let resumedIds: ReadonlyArray<string | number> = []
    const idsFile = idsPath === undefined ? undefined : {
      path: idsPath,
      handle: yield* Effect.acquireRelease(
        fs.open(idsPath, { flag: Option.isSome(resumed) ? "r+" : "w" }).pipe(Effect.mapError(fail(idsPath))),
        (_, exit) => committed || Exit.isSuccess(exit) ? fs.remove(idsPath).pipe(Effect.ignore) : Effect.void
      )
    }
    if (idsFile !== undefined && Option.isSome(resumed)) {
      idsBytes = resumed.value.idsBytes ?? 0
      yield* idsFile.handle.truncate(FileSystem.Size(idsBytes)).pipe(Effect.mapError(fail(idsFile.path)))
      yield* idsFile.handle.seek(FileSystem.Size(idsBytes), "start")
      const text = yield* fs.readFileString(idsFile.path).pipe(Effect.mapError(fail(idsFile.path)))
      resumedIds = yield* Schema.decodeUnknown(IdLines)(text.split("\n").filter((line) => line !== "")).pipe(
        Effect.mapError(fail(idsFile.path))
      )
    }
    let bytes = 0
    if (Option.isSome(resumed)) {
      // Anything after the last complete page is a page cut short: drop it.
      bytes = resumed.value.bytes
      yield* handle.truncate(FileSystem.Size(bytes)).pipe(Effect.mapError(fail(part)))
      yield* handle.seek(FileSystem.Size(bytes), "start")
    }
    const encoder = new TextEncoder()

    const write: Sink["write"] = (text, state, ids) =>
      Effect.gen(function*() {
        const chunk = encoder.encode(text)
        // An empty page (the usual last one) has nothing to write, and writeAll refuses zero bytes.
        if (chunk.length > 0) {
          yield* handle.writeAll(chunk).pipe(Effect.mapError(fail(part)))
          bytes += chunk.length
        }
        if (!resumable) return
        if (idsFile !== undefined && ids !== undefined && ids.length > 0) {
          const lines = encoder.encode(ids.map((id) => `${JSON.stringify(id)}\n`).join(""))
          yield* idsFile.handle.writeAll(lines).pipe(
            Effect.zipRight(idsFile.handle.sync),
            Effect.mapError(fail(idsFile.path))
          )
          idsBytes += lines.length
        }
        // The page is on disk before the state says so: a crash between the two only repeats that page's write.
        yield* handle.sync.pipe(Effect.mapError(fail(part)))
        const next: ResumeState = {
          version: 2,
          flags: options.flags,
          bytes,
          ...state,
          ...(idsFile === undefined ? {} : { idsBytes })
        }
        yield* fs.writeFileString(`${statePath}.tmp`, JSON.stringify(next)).pipe(
          Effect.zipRight(fs.rename(`${statePath}.tmp`, statePath)),
          Effect.mapError(fail(statePath))
        )
      })

    const commit = Effect.gen(function*() {
      yield* handle.sync.pipe(Effect.mapError(fail(part)))
      yield* fs.rename(part, target).pipe(Effect.mapError(fail(target)))
      committed = true
      yield* fs.remove(statePath).pipe(Effect.ignore)
    })

    return { resumed, resumedIds, write, commit }
  })
