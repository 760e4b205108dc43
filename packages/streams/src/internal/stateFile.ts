// Per edition: a store of Effect 3's KeyValueStore, failing with the platform's PlatformError.
/**
 * The store of `Changes.layerFile` (its documentation says what it promises): a `KeyValueStore` of the files of
 * `fileStore.ts`, one per key, each replaced atomically. A refused replacement fails as the platform's `SystemError`.
 */
import * as PlatformError from "@effect/platform/Error"
import * as FileSystem from "@effect/platform/FileSystem"
import * as KeyValueStore from "@effect/platform/KeyValueStore"
import * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as FileStore from "./fileStore.js"

/** A `KeyValueStore` of files in `directory`, one per key (named by it), each replaced atomically. */
export const layer = (
  directory: string
): Layer.Layer<KeyValueStore.KeyValueStore, never, FileSystem.FileSystem | Path.Path> =>
  Layer.effect(
    KeyValueStore.KeyValueStore,
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const files = FileStore.make(fs, yield* Path.Path, directory)
      const orNone = <A>(read: Effect.Effect<A, PlatformError.PlatformError>) =>
        Effect.map(files.orUndefined(read), Option.fromNullable)
      return KeyValueStore.make({
        get: (key) => orNone(fs.readFileString(files.fileOf(key))),
        getUint8Array: (key) => orNone(fs.readFile(files.fileOf(key))),
        set: (key, value) =>
          Effect.mapError(files.set(key, value), (error) =>
            error instanceof FileStore.Refused
              ? new PlatformError.SystemError({
                reason: "PermissionDenied",
                module: "KeyValueStore",
                method: "set",
                pathOrDescriptor: error.file,
                description: error.description
              })
              : error),
        remove: (key) => Effect.asVoid(orNone(fs.remove(files.fileOf(key)))),
        clear: Effect.dieMessage("Changes.layerFile: clear is not supported (it would remove a whole directory)"),
        size: Effect.dieMessage("Changes.layerFile: size is not supported")
      })
    })
  )
