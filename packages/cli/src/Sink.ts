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

/**
 * Writing the output failed (disk full, permissions, stdout closed).
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
 * What a resumable export records after each complete page, beside the output file.
 *
 * @since 0.1.0
 * @category Models
 */
export const ResumeState = Schema.Struct({
  version: Schema.Literal(1),
  /** What the export asks the server for and how it writes: a resume with other settings starts over. */
  query: Schema.String,
  nextOffset: Schema.Number,
  bytes: Schema.Number,
  records: Schema.Number,
  pages: Schema.Number,
  columns: Schema.optional(Schema.Array(Schema.String)),
  /** Drift-safe paging: the length of `FILE.ids.part` (every id written, one JSON value a line) after that page. */
  idsBytes: Schema.optional(Schema.Number)
})

/**
 * @since 0.1.0
 * @category Models
 */
export type ResumeState = typeof ResumeState.Type

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
    state: Omit<ResumeState, "version" | "query" | "bytes" | "idsBytes">,
    ids?: ReadonlyArray<string | number>
  ) => Effect.Effect<void, OutputError>
  /** The export is complete: publish the file. */
  readonly commit: Effect.Effect<void, OutputError>
}

/**
 * Writes to stdout, waiting for it to drain so a slow reader holds the export back instead of filling memory.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const stdout: Sink = {
  resumed: Option.none(),
  resumedIds: [],
  write: (text) =>
    Effect.async<void, OutputError>((resume) => {
      const onError = (error: Error) =>
        resume(Effect.fail(new OutputError({ description: `stdout: ${error.message}` })))
      process.stdout.once("error", onError)
      const done = () => {
        process.stdout.off("error", onError)
        resume(Effect.void)
      }
      if (process.stdout.write(text)) done()
      else process.stdout.once("drain", done)
    }),
  commit: Effect.void
}

const describe = (error: unknown): string =>
  error instanceof Error ? error.message : typeof error === "object" && error !== null && "message" in error
    ? String((error as { message: unknown }).message)
    : String(error)

// The ids file of a resumable drift-safe export: one JSON value a line, each a string or a number.
const IdLines = Schema.Array(Schema.parseJson(Schema.Union(Schema.String, Schema.Number)))

/**
 * A file that appears only when complete: records go to `FILE.part` and it is renamed to `FILE` at the end. A failed
 * or interrupted export removes the part file, unless `resume` is set: then the part file and `FILE.resume.json`
 * stay, and the next run with `resume` continues after the last complete page. With `keepIds` (drift-safe paging),
 * the ids written go to `FILE.ids.part` as well, for the resume; it is removed with the state file.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const file = (
  target: string,
  options: { readonly resume: boolean; readonly query: string; readonly keepIds?: boolean | undefined }
): Effect.Effect<Sink, OutputError, FileSystem.FileSystem | Path.Path | Scope.Scope> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const part = `${target}.part`
    const statePath = `${target}.resume.json`
    // Kept only for a resumable drift-safe export: the ids are what the resumed run must not write again.
    const idsPath = options.resume && options.keepIds === true ? `${target}.ids.part` : undefined
    const fail = (what: string) => (error: unknown) => new OutputError({ description: `${what}: ${describe(error)}` })

    const previous = options.resume
      ? yield* fs.readFileString(statePath).pipe(
        Effect.flatMap(Schema.decodeUnknown(Schema.parseJson(ResumeState))),
        Effect.option
      )
      : Option.none()
    const usable = Option.filter(previous, (state) => state.query === options.query)
    const present = (file: string | undefined) =>
      file === undefined ? Effect.succeed(true) : fs.exists(file).pipe(Effect.orElseSucceed(() => false))
    const resumed = Option.isSome(usable) && (yield* present(part)) && (yield* present(idsPath))
      ? usable
      : Option.none<ResumeState>()

    yield* fs.makeDirectory(path.dirname(part), { recursive: true }).pipe(Effect.mapError(fail(path.dirname(part))))
    let committed = false
    const handle = yield* Effect.acquireRelease(
      fs.open(part, { flag: Option.isSome(resumed) ? "r+" : "w" }).pipe(Effect.mapError(fail(part))),
      (_, exit) =>
        committed || (options.resume && Exit.isFailure(exit))
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
        if (!options.resume) return
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
          version: 1,
          query: options.query,
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
