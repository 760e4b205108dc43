/**
 * The files a run writes beside what it replaces (`FILE.part`, `FILE.resume.json`, `FILE.lock`, a state's), opened so
 * that nothing put at their names by someone else is written through: created exclusively (`O_CREAT | O_EXCL`, which
 * never follows a link at the name), opened without following a link (`O_NOFOLLOW`), and changed through the open file
 * (`fchmod`, `fsync`), never by a name that may by then stand for another file. And what a name stands for, found once
 * through any symbolic links, so that a linked file is replaced where it is (docs/cli.md, "Files, resume and restart").
 *
 * Node's own `fs`, not the platform's `FileSystem`: that one has neither `O_NOFOLLOW` nor `fchmod`.
 */
import * as FileRules from "@erp-client/kernel/FileRules"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Fs from "node:fs"
import * as FsP from "node:fs/promises"
import * as Path from "node:path"

/** A file operation failed; `description` says how, readably. */
export class FileError extends Data.TaggedError("FileError")<{
  readonly path: string
  readonly description: string
  readonly code?: string | undefined
}> {
  override get message(): string {
    return `${this.path}: ${this.description}`
  }
}

const { O_CREAT, O_EXCL, O_RDONLY, O_RDWR, O_WRONLY } = Fs.constants
// Not on Windows, which has no symbolic links a user can plant without privileges.
const O_NOFOLLOW = Fs.constants.O_NOFOLLOW ?? 0

const DESCRIPTIONS: Record<string, string> = {
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EEXIST: "already exists",
  ENOENT: "does not exist",
  ENOTDIR: "a part of the path is not a directory",
  EISDIR: "is a directory",
  ELOOP: "is a symbolic link (never followed here), or its links loop",
  ENOSPC: "no space left on the device",
  EDQUOT: "over the disk quota",
  EROFS: "on a read-only file system",
  EIO: "input/output error",
  EMLINK: "too many links"
}

const codeOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string"
    ? error.code
    : undefined

/** `error` (Node's) as a `FileError` on `path`. */
export const fileError = (path: string) => (error: unknown): FileError => {
  const code = codeOf(error)
  const description = code !== undefined && code in DESCRIPTIONS
    ? DESCRIPTIONS[code]!
    : error instanceof Error
    ? error.message
    : String(error)
  return new FileError({ path, description, code })
}

const attempt = <A>(path: string, run: () => Promise<A>): Effect.Effect<A, FileError> =>
  Effect.tryPromise({ try: run, catch: fileError(path) })

const orNone = <A>(effect: Effect.Effect<A, FileError>): Effect.Effect<Option.Option<A>, FileError> =>
  effect.pipe(
    Effect.map(Option.some),
    Effect.catchIf((error) => error.code === "ENOENT", () => Effect.succeedNone)
  )

/** What `lstat` says of `path` (a link itself, not what it points to), or none when nothing is there. */
export const lstat = (path: string): Effect.Effect<Option.Option<Fs.Stats>, FileError> =>
  orNone(attempt(path, () => FsP.lstat(path)))

/** What `stat` says of `path` (through links), or none when nothing is there. */
export const stat = (path: string): Effect.Effect<Option.Option<Fs.Stats>, FileError> =>
  orNone(attempt(path, () => FsP.stat(path)))

/** Removes the name `path` (a link itself, never what it points to); nothing there is fine. */
export const remove = (path: string): Effect.Effect<void, FileError> =>
  Effect.asVoid(orNone(attempt(path, () => FsP.unlink(path))))

/** Renames `from` over `to` in one step: `to`, if a link, is replaced, not followed. */
export const rename = (from: string, to: string): Effect.Effect<void, FileError> =>
  attempt(to, () => FsP.rename(from, to))

/**
 * The file `path` stands for: its symbolic links followed (at most `FileRules.MAX_LINKS`), the last one to a name that
 * is not a link or does not exist yet. The directories on the way are left as they are (see `realDirectory`).
 */
export const followLinks = (path: string): Effect.Effect<string, FileError> =>
  Effect.gen(function*() {
    let current = Path.resolve(path)
    for (let hops = 0; hops <= FileRules.MAX_LINKS; hops++) {
      const info = yield* lstat(current)
      if (Option.isNone(info) || !info.value.isSymbolicLink()) return current
      const at = current
      const link = yield* attempt(at, () => FsP.readlink(at))
      current = Path.resolve(Path.dirname(current), link)
    }
    return yield* new FileError({ path, description: `more than ${FileRules.MAX_LINKS} symbolic links, or a loop` })
  })

/** `path` with its directory's links resolved (`realpath` of the directory, which must exist), its name kept. */
export const realDirectory = (path: string): Effect.Effect<string, FileError> =>
  Effect.map(
    attempt(Path.dirname(path), () => FsP.realpath(Path.dirname(path))),
    (directory) => Path.join(directory, Path.basename(path))
  )

/**
 * Makes the directory `path` and any missing ones above it: the ones it made, outermost first (none when it was
 * there), to remove again if the run leaves nothing in them (see `removeEmpty`).
 */
export const makeDirectories = (path: string): Effect.Effect<ReadonlyArray<string>, FileError> =>
  Effect.gen(function*() {
    const missing: Array<string> = []
    for (let at = Path.resolve(path);; at = Path.dirname(at)) {
      if (Option.isSome(yield* stat(at))) break
      missing.unshift(at)
      if (Path.dirname(at) === at) break
    }
    if (missing.length === 0) return []
    yield* attempt(path, () => FsP.mkdir(path, { recursive: true }))
    return missing
  })

/** Removes `directories` (outermost first, as `makeDirectories` gives them) from the innermost, while empty. */
export const removeEmpty = (directories: ReadonlyArray<string>): Effect.Effect<void> =>
  Effect.gen(function*() {
    for (const directory of [...directories].reverse()) {
      const removed = yield* Effect.option(attempt(directory, () => FsP.rmdir(directory)))
      if (Option.isNone(removed)) return
    }
  })

/** An open file: writes at given positions, synced and changed through its descriptor, never by name. */
export interface Handle {
  readonly path: string
  readonly write: (bytes: Uint8Array, position: number) => Effect.Effect<void, FileError>
  readonly read: (bytes: Uint8Array, position: number) => Effect.Effect<number, FileError>
  readonly sync: Effect.Effect<void, FileError>
  readonly truncate: (length: number) => Effect.Effect<void, FileError>
  readonly chmod: (mode: number) => Effect.Effect<void, FileError>
  readonly stat: Effect.Effect<Fs.Stats, FileError>
}

const handleOf = (path: string, file: FsP.FileHandle): Handle => ({
  path,
  write: (bytes, position) =>
    attempt(path, async () => {
      for (let done = 0; done < bytes.length;) {
        const { bytesWritten } = await file.write(bytes, done, bytes.length - done, position + done)
        done += bytesWritten
      }
    }),
  read: (bytes, position) => attempt(path, async () => (await file.read(bytes, 0, bytes.length, position)).bytesRead),
  sync: attempt(path, () => file.sync()),
  truncate: (length) => attempt(path, () => file.truncate(length)),
  chmod: (mode) => attempt(path, () => file.chmod(mode)),
  stat: attempt(path, () => file.stat())
})

const opened = (path: string, flags: number, mode?: number): Effect.Effect<Handle, FileError, Scope.Scope> =>
  Effect.map(
    Effect.acquireRelease(
      attempt(path, () => FsP.open(path, flags, mode)),
      (file) => Effect.promise(() => file.close().catch(() => undefined))
    ),
    (file) => handleOf(path, file)
  )

/**
 * Creates `path`, which must not exist: never a file that is there, nor through a link at the name (`EEXIST`, as
 * `O_EXCL` says). Closed with the scope.
 */
export const createNew = (path: string, mode = 0o666): Effect.Effect<Handle, FileError, Scope.Scope> =>
  opened(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode)

/** What was at a name this run replaced: a symbolic link (and where it pointed), which is worth saying. */
export interface Planted {
  readonly path: string
  readonly target: string
}

/**
 * Creates `path` anew: whatever is at the name (a file an earlier run left, or a link someone put there) is removed
 * first, the name itself and never what a link points to, then the file is created exclusively. A removed link is
 * handed to `onLink`. Fails if something keeps appearing at the name.
 */
export const replaceEntry = (
  path: string,
  onLink: (planted: Planted) => Effect.Effect<void>,
  mode = 0o666
): Effect.Effect<Handle, FileError, Scope.Scope> =>
  Effect.gen(function*() {
    for (let round = 0; round < 3; round++) {
      const there = yield* lstat(path)
      if (Option.isSome(there)) {
        if (there.value.isSymbolicLink()) {
          const target = yield* Effect.orElseSucceed(attempt(path, () => FsP.readlink(path)), () => "?")
          yield* remove(path)
          yield* onLink({ path, target })
        } else if (there.value.isDirectory()) {
          return yield* new FileError({ path, description: "is a directory" })
        } else {
          yield* remove(path)
        }
      }
      const created = yield* Effect.either(createNew(path, mode))
      if (created._tag === "Right") return created.right
      if (created.left.code !== "EEXIST") return yield* created.left
    }
    return yield* new FileError({
      path,
      description: "something keeps appearing at this name while this run creates it: another process writes there"
    })
  })

/**
 * Opens the existing regular file `path` for reading (`"r"`) or reading and writing (`"r+"`), never through a link at
 * the name. For writing it must have one name only: a file with another name (a hard link) is not one this run made.
 */
export const openExisting = (path: string, mode: "r" | "r+"): Effect.Effect<Handle, FileError, Scope.Scope> =>
  Effect.gen(function*() {
    const handle = yield* opened(path, (mode === "r" ? O_RDONLY : O_RDWR) | O_NOFOLLOW)
    const info = yield* handle.stat
    if (!info.isFile()) return yield* new FileError({ path, description: "is not a regular file" })
    if (mode === "r+" && info.nlink !== 1) {
      return yield* new FileError({ path, description: `has ${info.nlink} names (hard links): not one this run made` })
    }
    return handle
  })

/**
 * The text of `path`, never read through a link (`ELOOP`), or none when nothing is there; at most `maxBytes`. Read to
 * its end rather than to the size `fstat` gives, which is 0 for the files of /proc.
 */
export const readText = (path: string, maxBytes = 1 << 20): Effect.Effect<Option.Option<string>, FileError> =>
  orNone(Effect.scoped(Effect.gen(function*() {
    const handle = yield* openExisting(path, "r")
    const chunks: Array<Uint8Array> = []
    for (let done = 0; done < maxBytes;) {
      const chunk = new Uint8Array(Math.min(65_536, maxBytes - done))
      const read = yield* handle.read(chunk, done)
      if (read === 0) break
      chunks.push(chunk.subarray(0, read))
      done += read
    }
    return Buffer.concat(chunks).toString("utf8")
  })))

/** Whether the name `path` still stands for the file `info` describes (same device and inode, not a link). */
export const isSameFile = (path: string, info: Fs.Stats): Effect.Effect<boolean, FileError> =>
  Effect.map(
    lstat(path),
    Option.match({
      onNone: () => false,
      onSome: (now) => !now.isSymbolicLink() && now.dev === info.dev && now.ino === info.ino
    })
  )

/** Whether this user may write `path` (`access(W_OK)`, through links). */
export const writable = (path: string): Effect.Effect<boolean> =>
  Effect.promise(() => FsP.access(path, Fs.constants.W_OK).then(() => true, () => false))
