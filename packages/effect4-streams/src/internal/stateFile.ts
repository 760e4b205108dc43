// Per edition: a store of Effect 4's KeyValueStore (it has `keys`), failing with its KeyValueStoreError.
/**
 * The store of `Changes.layerFile` (its documentation says what it promises): a `KeyValueStore` of files in a
 * directory, one per key, each replaced atomically by a temporary file renamed over it.
 */
import * as FileRules from "@erp-client/kernel/FileRules"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Path from "effect/Path"
import * as KeyValueStore from "effect/persistence/KeyValueStore"

/** A `KeyValueStore` of files in `directory`, one per key (named by it), each replaced atomically. */
export const layer = (
  directory: string
): Layer.Layer<KeyValueStore.KeyValueStore, never, FileSystem.FileSystem | Path.Path> =>
  Layer.effect(KeyValueStore.KeyValueStore)(
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const fileOf = (key: string) => path.join(directory, key)
      const failed = (method: string, key: string) => (cause: unknown) =>
        new KeyValueStore.KeyValueStoreError({ method, key, message: `Unable to ${method} the state ${key}`, cause })
      const orUndefined = <A>(method: string, key: string, read: Effect.Effect<A, unknown>) =>
        read.pipe(
          Effect.catchIf(
            (error) =>
              typeof error === "object" && error !== null && "reason" in error &&
              (error as { readonly reason: { readonly _tag: string } }).reason._tag === "NotFound",
            () => Effect.succeed(undefined)
          ),
          Effect.mapError(failed(method, key))
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
      const refused = (key: string, file: string, description: string) =>
        new KeyValueStore.KeyValueStoreError({ method: "set", key, message: `the state ${file} is ${description}` })
      const set = (key: string, value: string | Uint8Array) =>
        Effect.gen(function*() {
          const file = yield* targetOf(key)
          const existing = yield* orUndefined("set", key, fs.stat(file))
          let mode = 0o666
          if (existing !== undefined) {
            if (existing.type !== "File") return yield* refused(key, file, "not a regular file: it is not replaced")
            const writable = yield* fs.access(file, { writable: true }).pipe(
              Effect.as(true),
              Effect.orElseSucceed(() => false)
            )
            const owner = Option.getOrUndefined(existing.uid)
            if (FileRules.isReadOnly({ mode: existing.mode, uid: owner }, { uid, writable })) {
              return yield* refused(key, file, `${FileRules.describeReadOnly(existing.mode)}: it is not replaced`)
            }
            mode = existing.mode & 0o777
          }
          const nonce = Array.from(globalThis.crypto.getRandomValues(new Uint8Array(8)), (b) =>
            b.toString(16).padStart(2, "0")).join("")
          const temporary = `${file}.${nonce}.tmp`
          const bytes = typeof value === "string" ? new TextEncoder().encode(value) : value
          // Removed on failure only once made here: a file already at the name is someone else's.
          let made = false
          const write = Effect.scoped(Effect.gen(function*() {
            const handle = yield* fs.open(temporary, { flag: "wx", mode, noFollow: true })
            made = true
            if (bytes.length > 0) {
              yield* handle.writeAll(bytes)
            }
            yield* handle.sync
            if (((yield* handle.stat).mode & 0o777) === mode) {
              return
            }
            const parent = yield* fs.stat(path.dirname(file))
            const others = FileRules.othersMayRename({ mode: parent.mode, uid: Option.getOrUndefined(parent.uid) }, {
              uid
            })
            if (!others) {
              yield* fs.chmod(temporary, mode)
            }
          }))
          return yield* Effect.andThen(write, fs.rename(temporary, file)).pipe(
            Effect.onError(() =>
              made ? Effect.ignore(fs.remove(temporary)) : Effect.void
            ),
            Effect.mapError(failed("set", key))
          )
        }).pipe(
          Effect.mapError((error) =>
            error instanceof KeyValueStore.KeyValueStoreError ? error : failed("set", key)(error)
          )
        )
      return KeyValueStore.make({
        get: (key) => orUndefined("get", key, fs.readFileString(fileOf(key))),
        getUint8Array: (key) => orUndefined("getUint8Array", key, fs.readFile(fileOf(key))),
        set,
        remove: (key) => Effect.mapError(fs.remove(fileOf(key), { force: true }), failed("remove", key)),
        clear: Effect.die("Changes.layerFile: clear is not supported (it would remove a whole directory)"),
        size: Effect.die("Changes.layerFile: size is not supported"),
        keys: Effect.die("Changes.layerFile: keys is not supported")
      })
    })
  )
