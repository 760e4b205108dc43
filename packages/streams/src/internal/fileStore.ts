/**
 * The files of `Changes.layerFile`'s store (its documentation says what it promises), in a directory, one per key, each
 * replaced atomically by a temporary file renamed over it. Failing with the platform's errors and `Refused`: each
 * edition's `stateFile.ts` makes its `KeyValueStore` of them, with that store's errors.
 */
import * as FileRules from "@erp-client/kernel/FileRules"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type FileSystem, isNotFound, openExclusive, type Path, type PlatformError } from "./edition.js"

/** A state's file that is not replaced: not a regular file, or read-only. */
export class Refused {
  readonly _tag = "Refused"
  constructor(readonly file: string, readonly description: string) {}
}

/** The files of the states in one directory. */
export interface FileStore {
  /** The file of `key`, named by it. */
  readonly fileOf: (key: string) => string
  /** What `read` gives, `undefined` when there is no file to read. */
  readonly orUndefined: <A>(read: Effect.Effect<A, PlatformError>) => Effect.Effect<A | undefined, PlatformError>
  /** Replaces the file of `key` (where its links lead) atomically, keeping its permissions. */
  readonly set: (key: string, value: string | Uint8Array) => Effect.Effect<void, PlatformError | Refused>
}

/** The files of the states in `directory`. */
export const make = (fs: FileSystem, path: Path, directory: string): FileStore => {
  const fileOf = (key: string) => path.join(directory, key)
  const orUndefined = <A>(read: Effect.Effect<A, PlatformError>) =>
    read.pipe(Effect.catchIf(isNotFound, () => Effect.succeed(undefined)))
  const uid = globalThis.process?.getuid?.()
  // The file a state's name stands for: its links followed (readLink fails for what is not one), its directory's
  // resolved.
  const targetOf = (key: string) =>
    Effect.gen(function*() {
      let file = path.resolve(fileOf(key))
      for (let hops = 0; hops < FileRules.MAX_LINKS; hops++) {
        const link = yield* Effect.option(fs.readLink(file))
        if (Option.isNone(link)) break
        file = path.resolve(path.dirname(file), link.value)
      }
      return path.join(yield* fs.realPath(path.dirname(file)), path.basename(file))
    })
  const set = (key: string, value: string | Uint8Array) =>
    Effect.gen(function*() {
      const file = yield* targetOf(key)
      const existing = yield* orUndefined(fs.stat(file))
      let mode = 0o666
      if (existing !== undefined) {
        if (existing.type !== "File") {
          return yield* Effect.fail(new Refused(file, "not a regular file: it is not replaced"))
        }
        const writable = yield* fs.access(file, { writable: true }).pipe(
          Effect.as(true),
          Effect.orElseSucceed(() => false)
        )
        const owner = Option.getOrUndefined(existing.uid)
        if (FileRules.isReadOnly({ mode: existing.mode, uid: owner }, { uid, writable })) {
          return yield* Effect.fail(
            new Refused(file, `${FileRules.describeReadOnly(existing.mode)}: it is not replaced`)
          )
        }
        mode = existing.mode & 0o777
      }
      const nonce = Array.from(
        globalThis.crypto.getRandomValues(new Uint8Array(8)),
        (b) => b.toString(16).padStart(2, "0")
      ).join("")
      const temporary = `${file}.${nonce}.tmp`
      const bytes = typeof value === "string" ? new TextEncoder().encode(value) : value
      // Removed on failure only once made here: a file already at the name is someone else's.
      let made = false
      const write = Effect.scoped(Effect.gen(function*() {
        const handle = yield* openExclusive(fs, temporary, mode)
        made = true
        if (bytes.length > 0) yield* handle.writeAll(bytes)
        yield* handle.sync
        if (((yield* handle.stat).mode & 0o777) === mode) return
        const parent = yield* fs.stat(path.dirname(file))
        const others = FileRules.othersMayRename({ mode: parent.mode, uid: Option.getOrUndefined(parent.uid) }, {
          uid
        })
        if (!others) yield* fs.chmod(temporary, mode)
      }))
      return yield* Effect.andThen(write, fs.rename(temporary, file)).pipe(
        Effect.onError(() => made ? Effect.ignore(fs.remove(temporary)) : Effect.void)
      )
    })
  return { fileOf, orUndefined, set }
}
