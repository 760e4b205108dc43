// Per edition: a store of Effect 3's KeyValueStore, failing with the platform's PlatformError.
/**
 * The store of `Changes.layerFile` (its documentation says what it promises): a `KeyValueStore` of files in a
 * directory, one per key, each replaced atomically by a temporary file renamed over it.
 */
import * as PlatformError from "@effect/platform/Error"
import * as FileSystem from "@effect/platform/FileSystem"
import * as KeyValueStore from "@effect/platform/KeyValueStore"
import * as Path from "@effect/platform/Path"
import * as FileRules from "@erp-client/kernel/FileRules"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

/** A `KeyValueStore` of files in `directory`, one per key (named by it), each replaced atomically. */
export const layer = (
  directory: string
): Layer.Layer<KeyValueStore.KeyValueStore, never, FileSystem.FileSystem | Path.Path> =>
  Layer.effect(
    KeyValueStore.KeyValueStore,
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const fileOf = (key: string) => path.join(directory, key)
      const orNone = <A>(read: Effect.Effect<A, PlatformError.PlatformError>) =>
        read.pipe(
          Effect.map(Option.some),
          Effect.catchIf(
            (error) => error._tag === "SystemError" && error.reason === "NotFound",
            () => Effect.succeed(Option.none<A>())
          )
        )
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
      const refused = (file: string, description: string) =>
        new PlatformError.SystemError({
          reason: "PermissionDenied",
          module: "KeyValueStore",
          method: "set",
          pathOrDescriptor: file,
          description
        })
      const set = (key: string, value: string | Uint8Array) =>
        Effect.gen(function*() {
          const file = yield* targetOf(key)
          const existing = yield* orNone(fs.stat(file))
          let mode = 0o666
          if (Option.isSome(existing)) {
            if (existing.value.type !== "File") return yield* refused(file, "not a regular file: it is not replaced")
            const writable = yield* fs.access(file, { writable: true }).pipe(
              Effect.as(true),
              Effect.orElseSucceed(() => false)
            )
            const owner = Option.getOrUndefined(existing.value.uid)
            if (FileRules.isReadOnly({ mode: existing.value.mode, uid: owner }, { uid, writable })) {
              return yield* refused(file, `${FileRules.describeReadOnly(existing.value.mode)}: it is not replaced`)
            }
            mode = existing.value.mode & 0o777
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
            const handle = yield* fs.open(temporary, { flag: "wx", mode })
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
          return yield* Effect.zipRight(write, fs.rename(temporary, file)).pipe(
            Effect.onError(() => made ? Effect.ignore(fs.remove(temporary)) : Effect.void)
          )
        })
      return KeyValueStore.make({
        get: (key) => orNone(fs.readFileString(fileOf(key))),
        getUint8Array: (key) => orNone(fs.readFile(fileOf(key))),
        set,
        remove: (key) => Effect.asVoid(orNone(fs.remove(fileOf(key)))),
        clear: Effect.dieMessage("Changes.layerFile: clear is not supported (it would remove a whole directory)"),
        size: Effect.dieMessage("Changes.layerFile: size is not supported")
      })
    })
  )
