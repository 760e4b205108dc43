// Per edition: a store of Effect 4's KeyValueStore (it has `keys`), failing with its KeyValueStoreError.
/**
 * The store of `Changes.layerFile` (its documentation says what it promises): a `KeyValueStore` of the files of
 * `fileStore.ts`, one per key, each replaced atomically. Every failure is the store's `KeyValueStoreError`, the
 * platform's error its cause.
 */
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Path from "effect/Path"
import * as KeyValueStore from "effect/persistence/KeyValueStore"
import * as FileStore from "./fileStore.js"

/** A `KeyValueStore` of files in `directory`, one per key (named by it), each replaced atomically. */
export const layer = (
  directory: string
): Layer.Layer<KeyValueStore.KeyValueStore, never, FileSystem.FileSystem | Path.Path> =>
  Layer.effect(KeyValueStore.KeyValueStore)(
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const files = FileStore.make(fs, yield* Path.Path, directory)
      const failed = (method: string, key: string) => (cause: unknown) =>
        new KeyValueStore.KeyValueStoreError({ method, key, message: `Unable to ${method} the state ${key}`, cause })
      return KeyValueStore.make({
        get: (key) => Effect.mapError(files.orUndefined(fs.readFileString(files.fileOf(key))), failed("get", key)),
        getUint8Array: (key) =>
          Effect.mapError(files.orUndefined(fs.readFile(files.fileOf(key))), failed("getUint8Array", key)),
        set: (key, value) =>
          Effect.mapError(files.set(key, value), (error) =>
            error instanceof FileStore.Refused
              ? new KeyValueStore.KeyValueStoreError({
                method: "set",
                key,
                message: `the state ${error.file} is ${error.description}`
              })
              : failed("set", key)(error)),
        remove: (key) => Effect.mapError(fs.remove(files.fileOf(key), { force: true }), failed("remove", key)),
        clear: Effect.die("Changes.layerFile: clear is not supported (it would remove a whole directory)"),
        size: Effect.die("Changes.layerFile: size is not supported"),
        keys: Effect.die("Changes.layerFile: keys is not supported")
      })
    })
  )
