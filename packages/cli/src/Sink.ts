/**
 * Where an export goes: stdout, or a file written whole or not at all, optionally resumable page by page.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as OutputLock from "./internal/outputLock.js"
import * as SavedExport from "./internal/savedExport.js"
import * as Stdout from "./internal/stdout.js"
import * as Output from "./Output.js"

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
 * Another run writes the same file: `FILE.lock` names it (pid, host, since when, its command line), and the message
 * says so. Or this host cannot tell whether that run still goes on (it is on another host), or could not take over a
 * stale lock. Nothing was touched.
 *
 * @since 0.1.0
 * @category Errors
 */
export const OutputLocked = OutputLock.OutputLocked

/**
 * @since 0.1.0
 * @category Errors
 */
export type OutputLocked = OutputLock.OutputLocked

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
 * What a failed or interrupted export left on disk for a later run: `part` holds the `records` of its complete pages,
 * `FILE.resume.json` (and with `--safe` `FILE.ids.part`) beside it say where to go on. `mode` is how the run was
 * asked to treat a saved export, which decides how the way on is said (see `describeKept`).
 *
 * @since 0.1.0
 * @category Models
 */
export interface Kept {
  readonly part: string
  readonly records: number
  readonly mode: ResumeMode
}

/**
 * What a kept export is and how to go on, for the end of the failure line:
 * `kept 400 records in F.part: run the same command with --resume to continue, or --restart to start over`.
 *
 * @example
 * ```ts
 * import { Sink } from "@erp-client/cli"
 *
 * console.log(Sink.describeKept({ part: "partners.csv.part", records: 4000, mode: "resume" }))
 * // => kept 4000 records in partners.csv.part: run the same command again to continue, or with --restart instead of
 * //    --resume to start over
 * ```
 *
 * @since 0.1.0
 * @category Models
 */
export const describeKept = (kept: Kept): string => {
  const what = `kept ${kept.records} ${kept.records === 1 ? "record" : "records"} in ${kept.part}`
  switch (kept.mode) {
    case "none":
      return `${what}: run the same command with --resume to continue, or --restart to start over`
    case "resume":
      return `${what}: run the same command again to continue, or with --restart instead of --resume to start over`
    case "restart":
      // The same command again would discard it: --restart always starts over.
      return `${what}: run the same command with --resume instead of --restart to continue`
  }
}

/**
 * @since 0.1.0
 * @category Models
 */
export interface Sink {
  /** Where a resumed export starts, or none. */
  readonly resumed: Option.Option<ResumeState>
  /** With `keepIds`: every id the interrupted export wrote (drift-safe paging resumes with all of them). */
  readonly resumedIds: ReadonlyArray<string | number>
  /**
   * Appends one complete page, and with `keepIds` its `ids`; `state` is what a resume would continue from after it.
   * A page is written whole or not at all: an interruption waits for it (a few writes to a local file).
   */
  readonly write: (
    text: string,
    state: Omit<ResumeState, "version" | "flags" | "bytes" | "idsBytes">,
    ids?: ReadonlyArray<string | number>
  ) => Effect.Effect<void, OutputError | StdoutClosed>
  /** The export is complete: publish the file. */
  readonly commit: Effect.Effect<void, OutputError>
  /**
   * What is kept on disk for `--resume` if the export stops now (once it has stopped: what it kept), or `undefined`:
   * nothing to keep (stdout, no record written yet, or the file was published).
   */
  readonly kept: () => Kept | undefined
  /** A stale lock of the file this run took over (whose it was and why it was stale), to say so. */
  readonly tookOver?: string | undefined
}

/**
 * Watches stdout for a reader that closes it, for the rest of the process: the next write then ends the export
 * quietly (`StdoutClosed`), and no error on stdout crashes the process. `stdout` calls it on first use.
 *
 * @example
 * ```ts
 * import { Sink } from "@erp-client/cli"
 * import { Effect } from "effect"
 *
 * // Lines for `erp … | head -1`: once head has read its line and gone, the next write ends the command quietly
 * // with StdoutClosed instead of an EPIPE crash
 * Sink.watchStdout()
 * const program = Effect.forEach(["7\tKovács Kft.", "8\tMüller GmbH"], (line) => Sink.writeStdout(`${line}\n`), {
 *   discard: true
 * })
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const watchStdout: () => void = Stdout.watch

/**
 * Writes `text` to stdout, handed to the OS before the effect ends (a slow reader holds the writer back instead of
 * filling memory). A reader that closed the pipe fails it with `StdoutClosed`.
 *
 * @example
 * ```ts
 * import { Sink } from "@erp-client/cli"
 *
 * // One NDJSON line; fails with `StdoutClosed` when the reader has gone (`erp partners list | head -1`)
 * const write = Sink.writeStdout(`${JSON.stringify({ id: 7, company_name: "Acme GmbH" })}\n`)
 * ```
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
 * Whether stdout is a terminal, where a person reads it (rather than a file or a pipe): what the server sent is then
 * written escaped (see `writeStdoutData`, `Output.EncoderOptions.terminal`).
 *
 * @example
 * ```ts
 * import { Output, Sink } from "@erp-client/cli"
 *
 * // CSV for a person at a terminal is escaped as a table is; for a file or a pipe it is exact
 * const csv = Output.encoder("csv", { terminal: Sink.stdoutIsTerminal() })
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const stdoutIsTerminal: () => boolean = Stdout.isTerminal

/**
 * Writes data from the server to stdout (see `writeStdout`): exactly to a file or a pipe; on a terminal, every
 * character a terminal acts on but a line's end is written as JSON's `\u` escape (`Output.terminalJson`), so nothing
 * the server sent reaches the terminal raw, and JSON and NDJSON stay the same JSON.
 *
 * @example
 * ```ts
 * import { Sink } from "@erp-client/cli"
 *
 * // A record as the server wrote it: exact in a pipe, its right-to-left override escaped on a terminal
 * const write = Sink.writeStdoutData(`{"id":7,"company_name":"Acme \u202eKft."}\n`)
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const writeStdoutData = (text: string): Effect.Effect<void, OutputError | StdoutClosed> =>
  writeStdout(Stdout.isTerminal() ? Output.terminalJson(text) : text)

/**
 * An export to stdout, one page at a time (see `writeStdoutData`).
 *
 * @since 0.1.0
 * @category Constructors
 */
export const stdout: Sink = {
  resumed: Option.none(),
  resumedIds: [],
  write: writeStdoutData,
  commit: Effect.void,
  kept: () => undefined
}

const errorText = (error: unknown): string =>
  error instanceof Error ? error.message : typeof error === "object" && error !== null && "message" in error
    ? String((error as { message: unknown }).message)
    : String(error)

// The ids file of a resumable drift-safe export: one JSON value a line, each a string or a number.
const IdLines = Schema.Array(Schema.parseJson(Schema.Union(Schema.String, Schema.Number)))

/**
 * A file that appears only when complete: records go to `FILE.part`, and after each complete page
 * `FILE.resume.json` says where a later run goes on; `FILE.part` is renamed to `FILE` at the end and the rest removed.
 *
 * One writer per file: the export holds `FILE.lock` from before it looks at anything of `FILE` until the scope closes
 * (exclusive create; it records the pid, host, start, `command` and a random nonce). Another run's lock fails it with
 * `OutputLocked`, touching nothing; a lock whose holder is gone (killed, on this host) is taken over, and `tookOver`
 * says so. Each page and the publishing first check that the lock still names this run: one removed or replaced by
 * hand fails the export, which then leaves every file as it is. An existing `FILE` that this user may not write, or
 * whose owner write bit is off (for its owner and for root, whom access checks do not stop), is refused before
 * anything; a replaced `FILE` keeps its mode.
 *
 * Work is never thrown away (README.md, "Files, resume and restart"): an export that fails or is interrupted
 * after writing records keeps `FILE.part` and `FILE.resume.json` (see `kept`), whatever `mode`; one that wrote none
 * removes what it opened.
 *
 * - `"none"`: a saved export of `FILE` (left by an earlier run that failed) is refused, never overwritten.
 * - `"resume"`: continues a saved export after its last complete page, when it was made with the same `flags`. One
 *   made with other flags, or whose files are missing or unreadable, is refused (`ResumeRefused`) and left byte for
 *   byte as it was.
 * - `"restart"`: discards a saved export on purpose, then runs as `"resume"` with nothing saved.
 *
 * Each page is forced to disk (fsync) before the state says it is there, in every mode, so a kept export survives a
 * crash of the machine too. A flush took about 8 ms for a page of 330 kB on a virtual disk, and the pages in flight
 * hide it: 200,000 partners from a sandbox without a limit took 33 to 46 s with it and without (the noise of a shared
 * host); at the contract's rate limit a page comes every 300 ms.
 *
 * With `keepIds` (drift-safe paging), the ids written also go to `FILE.ids.part`, which the resume needs.
 *
 * @example
 * ```ts
 * import { Sink } from "@erp-client/cli"
 * import { Effect } from "effect"
 *
 * // partners.ndjson appears only when complete; a saved export made with the same flags is continued
 * // (needs `FileSystem` and `Path`: `NodeContext.layer` of @effect/platform-node)
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const sink = yield* Sink.file("partners.ndjson", {
 *     mode: "resume",
 *     flags: { command: "erp partners list", "--format": "ndjson" }
 *   })
 *   yield* sink.write(`${JSON.stringify({ id: 7, company_name: "Acme GmbH" })}\n`, { records: 1, pages: 1 })
 *   yield* sink.commit
 * }))
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const file = (
  target: string,
  options: {
    readonly mode: ResumeMode
    readonly flags: ResumeFlags
    readonly keepIds?: boolean | undefined
    /** What this run is, for a second run's refusal: its command line, never a secret (default: `flags.command`). */
    readonly command?: string | undefined
  }
): Effect.Effect<Sink, OutputError | ResumeRefused | OutputLocked, FileSystem.FileSystem | Path.Path | Scope.Scope> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const files = SavedExport.paths(target)
    const { part, state: statePath } = files
    const stateTemp = `${statePath}.tmp`
    const idsPath = options.keepIds === true ? files.ids : undefined
    const fail = (what: string) => (error: unknown) => new OutputError({ description: `${what}: ${errorText(error)}` })

    // A read-only FILE was made so on purpose: refused before anything, not replaced.
    const refuseReadOnly = Effect.flatMap(
      OutputLock.readOnly(target).pipe(Effect.provideService(FileSystem.FileSystem, fs), Effect.mapError(fail(target))),
      Option.match({
        onNone: () => Effect.void,
        onSome: (why) =>
          new OutputError({
            description: `${target} is ${why}: it is not replaced; make it writable to replace it, or write elsewhere`
          })
      })
    )
    yield* refuseReadOnly
    yield* fs.makeDirectory(path.dirname(part), { recursive: true }).pipe(Effect.mapError(fail(path.dirname(part))))
    // One writer per file: the lock comes before any look at the saved export and any file opened or removed, and is
    // released last, once the finalizers below have settled the files.
    const command = options.command ?? (typeof options.flags.command === "string" ? options.flags.command : "an export")
    const lock = yield* OutputLock.acquire(target, { command }).pipe(
      Effect.mapError((error) => error._tag === "OutputLocked" ? error : fail(`${target}.lock`)(error))
    )

    // Every check comes before anything is opened: a refused run leaves the saved export as it was.
    const saved = yield* SavedExport.inspect(target, { ...options, keepIds: idsPath !== undefined }).pipe(
      Effect.mapError(fail(target))
    )
    if ("refused" in saved) return yield* new ResumeRefused({ reason: saved.refused })
    const resumed = saved

    // What the state file on disk says was written (a resumed export's, until this run records a page).
    let recorded = Option.match(resumed, { onNone: () => 0, onSome: (state) => state.records })
    // "lost": the lock no longer names this run; the files may be another run's now, and are left as they are.
    let phase: "open" | "committed" | "kept" | "removed" | "lost" = "open"
    const kept = (): Kept | undefined =>
      (phase === "open" || phase === "kept") && recorded > 0
        ? { part, records: recorded, mode: options.mode }
        : undefined
    // How the export ends on disk, whatever ends it: published (commit), kept for a later run, or removed.
    const settle = Effect.suspend(() => {
      if (phase !== "open") return Effect.void
      if (recorded > 0) {
        phase = "kept"
        return fs.remove(stateTemp, { force: true }).pipe(Effect.ignore)
      }
      phase = "removed"
      return Effect.forEach(
        [part, statePath, stateTemp, ...(idsPath === undefined ? [] : [idsPath])],
        (file) => Effect.ignore(fs.remove(file, { force: true })),
        { discard: true }
      )
    })

    // Added before the files are opened, so it runs after they are closed (finalizers run last first).
    yield* Effect.addFinalizer(() => settle)
    const handle = yield* fs.open(part, { flag: Option.isSome(resumed) ? "r+" : "w" }).pipe(Effect.mapError(fail(part)))
    let idsBytes = 0
    let resumedIds: ReadonlyArray<string | number> = []
    const idsFile = idsPath === undefined ? undefined : {
      path: idsPath,
      handle: yield* fs.open(idsPath, { flag: Option.isSome(resumed) ? "r+" : "w" }).pipe(
        Effect.mapError(fail(idsPath))
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
    // Before each page and the publishing: the lock still names this run.
    const stillOurs = lock.verify.pipe(Effect.mapError((error) => {
      if (error._tag !== "Lost") return fail(lock.path)(error)
      phase = "lost"
      return new OutputError({
        description: `${OutputLock.describeLost(error)}; nothing was published, and ${part} and the files beside it ` +
          "are left as they are"
      })
    }))

    const write: Sink["write"] = (text, state, ids) =>
      Effect.gen(function*() {
        yield* stillOurs
        const chunk = encoder.encode(text)
        // An empty page (the usual last one) has nothing to write, and writeAll refuses zero bytes.
        if (chunk.length > 0) {
          yield* handle.writeAll(chunk).pipe(Effect.mapError(fail(part)))
          bytes += chunk.length
        }
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
        yield* fs.writeFileString(stateTemp, JSON.stringify(next)).pipe(
          Effect.zipRight(fs.rename(stateTemp, statePath)),
          Effect.mapError(fail(statePath))
        )
        recorded = next.records
      }).pipe(Effect.uninterruptible)

    const commit = Effect.gen(function*() {
      yield* handle.sync.pipe(Effect.mapError(fail(part)))
      yield* stillOurs
      // Made read-only during the export: not replaced either (the export is kept for a resume).
      yield* refuseReadOnly
      // The file it replaces keeps its mode (the part was created with the default one).
      const replaced = yield* fs.stat(target).pipe(Effect.option)
      if (Option.isSome(replaced) && replaced.value.type === "File") {
        yield* fs.chmod(part, replaced.value.mode & 0o777).pipe(Effect.mapError(fail(part)))
      }
      yield* fs.rename(part, target).pipe(Effect.mapError(fail(target)))
      phase = "committed"
      yield* Effect.forEach(
        [statePath, ...(idsPath === undefined ? [] : [idsPath])],
        (file) => Effect.ignore(fs.remove(file, { force: true })),
        { discard: true }
      )
    }).pipe(Effect.uninterruptible)

    return { resumed, resumedIds, write, commit, kept, tookOver: lock.tookOver }
  })
