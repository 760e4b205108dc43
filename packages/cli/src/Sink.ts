/**
 * Where an export goes: stdout, or a file written whole or not at all, optionally resumable page by page.
 *
 * @since 0.1.0
 */
import * as ResumeFile from "@erp-client/kernel/ResumeFile"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as NodePath from "node:path"
import * as Files from "./internal/files.js"
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
 * What a resumable export records after each complete page, in `FILE.resume.json` (with a header, format and version,
 * and a checksum over the file: `@erp-client/kernel/ResumeFile`): the server and endpoint it reads, its flags, where
 * paging goes on, and the length and checksum of what it wrote.
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
 * What the caller tells of a page it writes, for the resume state: where paging goes on, the counts, the layout. The
 * rest (flags, server, lengths, checksums) the sink records itself.
 *
 * @since 0.1.0
 * @category Models
 */
export type PageState = Omit<
  ResumeState,
  "server" | "endpoint" | "flags" | "bytes" | "partCrc" | "idsBytes" | "idsCrc"
>

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
    state: PageState,
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
 * The file a name stands for. A `FILE` that is a symbolic link (or whose directory is one) is written through: the
 * links are followed once, at the start, and every file of the export (`.part`, `.resume.json`, `.lock`, …) lives
 * beside the file they lead to, which is replaced in place; the link stays a link to it. The files beside it are never
 * written through a link: `FILE.part` and the state's temporary file are created exclusively (a file or link left at
 * the name is removed first, the name and not what it points to; a removed link is said through `onNote`), an existing
 * part is opened only if it is not a link and has no other name, and the mode a replaced `FILE` had is set through the
 * open part, not by its name.
 *
 * One writer per file: the export holds the file's lock from before it looks at anything of `FILE` until the scope
 * closes (see `internal/outputLock.ts`: where the platform has one, a lock the kernel releases when its holder dies,
 * on the file's path and on its device and inode, so a second name of the file meets it too; and `FILE.lock`, which
 * records the pid, host, start, `command` and a random nonce). Another run's lock fails it with `OutputLocked`,
 * touching nothing; a lock whose holder is gone (killed, on this host, also while a zombie) is taken over, and
 * `tookOver` says so. Each page and the publishing first check that the lock still names this run: one removed or
 * replaced by hand fails the export, which then leaves every file as it is. An existing `FILE` that this user may not
 * write, or whose owner write bit is off (for its owner and for root, whom access checks do not stop), is refused
 * before anything; a replaced `FILE` keeps its mode. Directories made for `FILE` are removed again when the run ends
 * with nothing in them (refused, or failed before its first page).
 *
 * Work is never thrown away (README.md, "Files, resume and restart"): an export that fails or is interrupted
 * after writing records keeps `FILE.part` and `FILE.resume.json` (see `kept`), whatever `mode`; one that wrote none
 * removes what it opened. With `resumable: false` (a `changes` run, which starts over every time) no state is written
 * and nothing is kept.
 *
 * - `"none"`: a saved export of `FILE` (left by an earlier run that failed) is refused, never overwritten.
 * - `"resume"`: continues a saved export after its last complete page, when its file is whole (its checksum) and it
 *   was made against the same `server` and `endpoint` with the same `flags`, and the part it describes is unchanged
 *   (its length and checksum). Otherwise refused (`ResumeRefused`, naming what differs) and left byte for byte as it
 *   was.
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
 * // partners.ndjson appears only when complete; a saved export made with the same flags, against the same server,
 * // is continued
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const sink = yield* Sink.file("partners.ndjson", {
 *     mode: "resume",
 *     flags: { command: "erp partners list", "--format": "ndjson" },
 *     server: "https://erp.example.com:443/",
 *     endpoint: "partner/list"
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
    /** The server the records come from (`ResumeFile.serverOf` of the base URL): a resume elsewhere is refused. */
    readonly server?: string | undefined
    /** The endpoint the records come from: a resume of another one is refused. */
    readonly endpoint?: string | undefined
    /** `false`: nothing is kept for a resume (default `true`). */
    readonly resumable?: boolean | undefined
    /** Told what is worth a line on stderr that is no failure (a link removed from a temporary file's name). */
    readonly onNote?: ((line: string) => Effect.Effect<void>) | undefined
  }
): Effect.Effect<Sink, OutputError | ResumeRefused | OutputLocked, Scope.Scope> =>
  Effect.gen(function*() {
    const resumable = options.resumable !== false
    const failed = (error: Files.FileError) => new OutputError({ description: error.message })
    // The file the name stands for: its links followed once; everything after acts beside it.
    const followed = yield* Files.followLinks(target).pipe(Effect.mapError(failed))
    const existing = yield* Files.lstat(followed).pipe(Effect.mapError(failed))
    if (Option.isSome(existing) && !existing.value.isFile()) {
      return yield* new OutputError({ description: `${target} is not a regular file: it is not replaced` })
    }
    // A read-only FILE was made so on purpose: refused before anything, not replaced.
    const refuseReadOnly = (file: string) =>
      Effect.flatMap(
        OutputLock.readOnly(file).pipe(Effect.mapError(failed)),
        Option.match({
          onNone: () => Effect.void,
          onSome: (why) =>
            new OutputError({
              description: `${target} is ${why}: it is not replaced; make it writable to replace it, or write elsewhere`
            })
        })
      )
    yield* refuseReadOnly(followed)

    // How the export ends on disk, whatever ends it: published (commit), kept for a later run, or removed.
    let phase: "open" | "committed" | "kept" | "removed" | "lost" = "open"
    // Directories made for the file go again with the run unless it left something in them; added first, so it runs
    // last, after the lock is released.
    const made = yield* Files.makeDirectories(NodePath.dirname(followed)).pipe(Effect.mapError(failed))
    if (made.length > 0) {
      yield* Effect.addFinalizer(() =>
        phase === "committed" || phase === "kept" ? Effect.void : Files.removeEmpty(made)
      )
    }
    const resolved = yield* Files.realDirectory(followed).pipe(Effect.mapError(failed))
    const files = SavedExport.paths(resolved)
    const { part, state: statePath } = files
    // Named in messages as the user named it, unless that name leads elsewhere (a link).
    const shown = NodePath.resolve(target) === resolved ? target : resolved
    const onLink = (planted: Files.Planted) =>
      (options.onNote ?? (() => Effect.void))(
        `removed ${shown}${planted.path.slice(resolved.length)}, a symbolic link to ${planted.target} that this ` +
          "run did not make (nothing was written through it)"
      )
    const stateTemp = `${statePath}.tmp`
    const idsPath = options.keepIds === true ? files.ids : undefined

    // One writer per file: the lock comes before any look at the saved export and any file opened or removed, and is
    // released last but the directories, once the finalizers below have settled the files.
    const command = options.command ?? (typeof options.flags.command === "string" ? options.flags.command : "an export")
    const identity = Option.getOrUndefined(Option.map(existing, (info) => ({ dev: info.dev, ino: info.ino })))
    const lock = yield* OutputLock.acquire(resolved, { command, name: target, identity }).pipe(
      Effect.mapError((error) => error._tag === "OutputLocked" ? error : failed(error))
    )

    // Every check comes before anything is opened: a refused run leaves the saved export as it was.
    const header: ResumeFile.Header = { server: options.server, endpoint: options.endpoint, flags: options.flags }
    const saved = yield* SavedExport.inspect(resolved, {
      mode: options.mode,
      header,
      keepIds: idsPath !== undefined,
      name: target,
      shown
    }).pipe(Effect.mapError(failed))
    if ("refused" in saved) return yield* new ResumeRefused({ reason: saved.refused })
    const resumed = saved

    // What the state file on disk says was written (a resumed export's, until this run records a page).
    let recorded = Option.match(resumed, { onNone: () => 0, onSome: (state) => state.records })
    const kept = (): Kept | undefined =>
      resumable && (phase === "open" || phase === "kept") && recorded > 0
        ? { part: `${shown}.part`, records: recorded, mode: options.mode }
        : undefined
    const settle = Effect.suspend(() => {
      if (phase !== "open") return Effect.void
      if (resumable && recorded > 0) {
        phase = "kept"
        return Effect.ignore(Files.remove(stateTemp))
      }
      phase = "removed"
      return Effect.forEach(
        [part, statePath, stateTemp, ...(idsPath === undefined ? [] : [idsPath])],
        (file) => Effect.ignore(Files.remove(file)),
        { discard: true }
      )
    })

    // Added before the files are opened, so it runs after they are closed (finalizers run last first).
    yield* Effect.addFinalizer(() => settle)
    const openPart = (path: string) =>
      (Option.isSome(resumed) ? Files.openExisting(path, "r+") : Files.replaceEntry(path, onLink)).pipe(
        Effect.mapError(failed)
      )
    const handle = yield* openPart(part)
    const partInfo = yield* handle.stat.pipe(Effect.mapError(failed))
    const crcOf = (text: string | undefined) => text === undefined ? 0 : Number.parseInt(text, 16)
    let bytes = 0
    let partCrc = 0
    let idsBytes = 0
    let idsCrc = 0
    let resumedIds: ReadonlyArray<string | number> = []
    const idsFile = idsPath === undefined ? undefined : { path: idsPath, handle: yield* openPart(idsPath) }
    if (Option.isSome(resumed)) {
      // Anything after the last complete page is a page cut short: drop it.
      bytes = resumed.value.bytes
      partCrc = crcOf(resumed.value.partCrc)
      yield* handle.truncate(bytes).pipe(Effect.mapError(failed))
      if (idsFile !== undefined) {
        idsBytes = resumed.value.idsBytes ?? 0
        idsCrc = crcOf(resumed.value.idsCrc)
        yield* idsFile.handle.truncate(idsBytes).pipe(Effect.mapError(failed))
        const text = yield* Files.readText(idsFile.path, Number.MAX_SAFE_INTEGER).pipe(Effect.mapError(failed))
        resumedIds = yield* Schema.decodeUnknown(IdLines)(
          Option.getOrElse(text, () => "").split("\n").filter((line) => line !== "")
        ).pipe(Effect.mapError((error) => new OutputError({ description: `${idsFile.path}: ${errorText(error)}` })))
      }
    }
    const encoder = new TextEncoder()
    // Before each page and the publishing: the lock still names this run.
    const stillOurs = lock.verify.pipe(Effect.mapError((error) => {
      if (error._tag !== "Lost") return failed(error)
      phase = "lost"
      return new OutputError({
        description: `${OutputLock.describeLost(error)}; nothing was published, and ${shown}.part and the files ` +
          "beside it are left as they are"
      })
    }))
    // The state, written whole beside its file and renamed over it: a reader sees the last one or the one before.
    const record = (state: SavedExport.ResumeState) =>
      Effect.scoped(Effect.gen(function*() {
        const temporary = yield* Files.replaceEntry(stateTemp, onLink, 0o644)
        yield* temporary.write(encoder.encode(SavedExport.encode(state)), 0)
        yield* temporary.sync
      })).pipe(Effect.zipRight(Files.rename(stateTemp, statePath)), Effect.mapError(failed))

    const write: Sink["write"] = (text, state, ids) =>
      Effect.gen(function*() {
        yield* stillOurs
        const chunk = encoder.encode(text)
        // An empty page (the usual last one) has nothing to write.
        if (chunk.length > 0) {
          yield* handle.write(chunk, bytes).pipe(Effect.mapError(failed))
          bytes += chunk.length
          partCrc = ResumeFile.crc32(chunk, partCrc)
        }
        if (idsFile !== undefined && ids !== undefined && ids.length > 0) {
          const lines = encoder.encode(ids.map((id) => `${JSON.stringify(id)}\n`).join(""))
          yield* idsFile.handle.write(lines, idsBytes).pipe(
            Effect.zipRight(idsFile.handle.sync),
            Effect.mapError(failed)
          )
          idsBytes += lines.length
          idsCrc = ResumeFile.crc32(lines, idsCrc)
        }
        if (resumable) {
          // The page is on disk before the state says so: a crash between the two only repeats that page's write.
          yield* handle.sync.pipe(Effect.mapError(failed))
          yield* record({
            ...(options.server === undefined ? {} : { server: options.server }),
            ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
            flags: options.flags,
            ...state,
            bytes,
            partCrc: ResumeFile.crcText(partCrc),
            ...(idsFile === undefined ? {} : { idsBytes, idsCrc: ResumeFile.crcText(idsCrc) })
          })
        }
        recorded = state.records
      }).pipe(Effect.uninterruptible)

    const commit = Effect.gen(function*() {
      yield* handle.sync.pipe(Effect.mapError(failed))
      yield* stillOurs
      // Made read-only during the export: not replaced either (the export is kept for a resume).
      yield* refuseReadOnly(resolved)
      // The file it replaces keeps its mode (the part was created with the default one), set through the open part.
      const replaced = yield* Files.lstat(resolved).pipe(Effect.mapError(failed))
      if (Option.isSome(replaced) && replaced.value.isFile()) {
        yield* handle.chmod(replaced.value.mode & 0o777).pipe(Effect.mapError(failed))
      }
      // The name still stands for the part this run wrote: a file put in its place is not published.
      if (!(yield* Files.isSameFile(part, partInfo).pipe(Effect.mapError(failed)))) {
        phase = "lost"
        return yield* new OutputError({
          description: `${shown}.part was replaced while this run wrote it: nothing was published, and the files ` +
            `beside ${target} are left as they are`
        })
      }
      yield* Files.rename(part, resolved).pipe(Effect.mapError(failed))
      phase = "committed"
      yield* Effect.forEach(
        [statePath, ...(idsPath === undefined ? [] : [idsPath])],
        (file) => Effect.ignore(Files.remove(file)),
        { discard: true }
      )
    }).pipe(Effect.uninterruptible)

    return { resumed, resumedIds, write, commit, kept, tookOver: lock.tookOver }
  })
