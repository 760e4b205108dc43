/**
 * The STATE of a `changes` run (`--since STATE`, docs/changes.md): the file its name stands for, through symbolic
 * links (written through to it, as an `--output` is), refused when read-only, and locked for the whole run as an
 * `--output` is (`outputLock.ts`), so that two runs on one state cannot both report the same changes, nor the slower
 * one write back an older state.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as NodePath from "node:path"
import * as Files from "./files.js"
import * as OutputLock from "./outputLock.js"

/** The STATE cannot be used: read-only, not a file, or its directory cannot be made. Nothing was touched. */
export class StateRefused extends Data.TaggedError("StateRefused")<{ readonly reason: string }> {
  override get message(): string {
    return this.reason
  }
}

/**
 * Holds the STATE named `name` for the scope: the path of the file it stands for (its links followed, its directory
 * made if missing and removed again if the run leaves nothing in it), locked, and the stale lock it took over, if any
 * (whose it was and why it was stale). Fails before anything is read when another run holds it (`OutputLocked`,
 * naming that run) or it may not be replaced (`StateRefused`).
 */
export const hold = (
  name: string,
  options: { readonly command: string }
): Effect.Effect<
  { readonly path: string; readonly tookOver: string | undefined },
  StateRefused | OutputLock.OutputLocked,
  Scope.Scope
> =>
  Effect.gen(function*() {
    const refused = (error: Files.FileError) => new StateRefused({ reason: `the state ${error.message}` })
    const followed = yield* Files.followLinks(name).pipe(Effect.mapError(refused))
    const existing = yield* Files.lstat(followed).pipe(Effect.mapError(refused))
    if (Option.isSome(existing) && !existing.value.isFile()) {
      return yield* new StateRefused({ reason: `the state ${name} is not a regular file: it is not replaced` })
    }
    const readOnly = yield* OutputLock.readOnly(followed).pipe(Effect.mapError(refused))
    if (Option.isSome(readOnly)) {
      return yield* new StateRefused({
        reason: `the state ${name} is ${readOnly.value}: it is not replaced, and nothing was read; make it writable, ` +
          "or give another --since"
      })
    }
    const made = yield* Files.makeDirectories(NodePath.dirname(followed)).pipe(Effect.mapError(refused))
    if (made.length > 0) yield* Effect.addFinalizer(() => Files.removeEmpty(made))
    const resolved = yield* Files.realDirectory(followed).pipe(Effect.mapError(refused))
    const identity = Option.getOrUndefined(Option.map(existing, (info) => ({ dev: info.dev, ino: info.ino })))
    const lock = yield* OutputLock.acquire(resolved, { command: options.command, name, identity }).pipe(
      Effect.mapError((error) => error._tag === "OutputLocked" ? error : refused(error))
    )
    return { path: resolved, tookOver: lock.tookOver }
  })
