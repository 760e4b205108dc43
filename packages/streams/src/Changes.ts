/**
 * The changes of a list since the last export (docs/changes.md): every record read drift-safe, compared with the state
 * the last complete run left (an id and a 64-bit digest of its exact text per record, `@erp-client/kernel/Changes`),
 * and handed on as `Added`, `Changed` or, once the end of the list is confirmed, `Removed`. The new state is written
 * to a `KeyValueStore` only when the stream completes: a run that fails or is interrupted leaves the state as it was
 * and has reported no removal. `Resource.changes` and `Partners.changes` are the usual way in.
 *
 * @since 0.1.0
 */
import * as KernelChanges from "@erp-client/kernel/Changes"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import {
  type FileSystem,
  getBytes,
  KeyValueStore,
  type KeyValueStoreError,
  mapConcat,
  type Path
} from "./internal/edition.js"
import * as StateFile from "./internal/stateFile.js"
import type * as Paginate from "./Paginate.js"

/**
 * What tells records apart: the value of the resource's id field.
 *
 * @since 0.1.0
 * @category Models
 */
export type Id = KernelChanges.Id

/**
 * The ids read in one run, each with the digest of its record's text: what drift-safe paging keeps of the records it
 * emitted (`Paginate.SafeOptions.seen`), and what `make` compares with the last state.
 *
 * @since 0.1.0
 * @category Models
 */
export type Table = KernelChanges.Table

/**
 * An empty table (`expected`: about how many ids it will hold, to size it once). Given to drift-safe paging as
 * `Paginate.SafeOptions.seen`, it says after the run which ids were emitted, each with the digest of its text.
 *
 * @example
 * ```ts
 * import { Changes } from "@erp-client/streams"
 *
 * const seen = Changes.makeTable()
 * seen.add(7, `{"id":7,"company_name":"Kovács Kft."}`)
 * console.log(seen.has(7), seen.has(8), seen.size) // => true false 1
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const makeTable: (expected?: number) => Table = KernelChanges.makeTable

/**
 * A record that was not in the last state.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Added<A> {
  readonly _tag: "Added"
  readonly id: Id
  /** The id as the server wrote it, as JSON (one beyond a double with its own digits, where `id` has them as a string). */
  readonly idJson: string
  readonly record: A
  /** The record's text exactly as the server wrote it. */
  readonly json: string
}

/**
 * A record whose text differs from the one the last state saw.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Changed<A> {
  readonly _tag: "Changed"
  readonly id: Id
  /** The id as the server wrote it, as JSON (one beyond a double with its own digits, where `id` has them as a string). */
  readonly idJson: string
  readonly record: A
  /** The record's text exactly as the server wrote it. */
  readonly json: string
}

/**
 * A record of the last state that the whole list, read to its confirmed end, no longer holds.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Removed {
  readonly _tag: "Removed"
  readonly id: Id
  /** The id as the server wrote it, as JSON (one beyond a double with its own digits, where `id` has them as a string). */
  readonly idJson: string
}

/**
 * One change since the last export.
 *
 * @since 0.1.0
 * @category Models
 */
export type Change<A> = Added<A> | Changed<A> | Removed

/**
 * How many records of a complete run were added, changed, removed and left unchanged.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Summary {
  readonly added: number
  readonly changed: number
  readonly removed: number
  readonly unchanged: number
  /** The state's size in the store, in bytes. */
  readonly stateBytes: number
  /**
   * Records left out of the state for the id of another, distinct record (only with `allowDuplicateIds`: otherwise
   * such a run fails with `DuplicateIds`), and their ids.
   */
  readonly duplicates: KernelChanges.Duplicates
}

/**
 * What drift-safe paging of a changes run is handed (`make`'s `pages`): the table it records every id emitted into,
 * with a digest of each record (`Paginate.SafeOptions.seen`), and the question it asks when the list seems to have
 * ended (`Paginate.SafeOptions.confirmEnd`: whether the last state holds records not read, which would be reported
 * removed; then the end is read again). Spread both into the `safe` options.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Tracking {
  readonly seen: KernelChanges.Table
  readonly confirmEnd: () => boolean
}

// How the library's errors say what to do: in its options' words.
const words: KernelChanges.Words = {
  startOver: "init: true",
  otherState: "use another key",
  allowDuplicateIds: "allowDuplicateIds: true",
  allowRemovals: "maxRemovedRatio: 1"
}

/**
 * The stored state cannot be read as one: another file under that key (never overwritten), or a state of erp changes
 * that is damaged (its checksum does not match) or of an earlier format (`ours`: `init` starts over there).
 *
 * @since 0.1.0
 * @category Errors
 */
export class StateUnreadable extends Data.TaggedError("StateUnreadable")<{
  readonly key: string
  readonly reason: string
  readonly ours: boolean
}> {
  override get message(): string {
    return KernelChanges.unreadableText(this.key, this.reason, this.ours, words)
  }
}

/**
 * The stored state was made for another list (`differences`: its server, endpoint, id field, conditions or
 * parameters, as `Changes.sourceDifferences` of `@erp-client/kernel` says them): refused and left as it was, since its
 * records would be reported as added and removed. `init` starts over there.
 *
 * @since 0.1.0
 * @category Errors
 */
export class StateMismatch extends Data.TaggedError("StateMismatch")<{
  readonly key: string
  readonly differences: ReadonlyArray<string>
}> {
  override get message(): string {
    return KernelChanges.mismatchText(this.key, this.differences, words)
  }
}

/**
 * The list holds records with the id of another, distinct record (`records` of them, `ids` each once, `read` records
 * in all): the state keeps one record per id, so those cannot be tracked, and the run commits nothing (`Removed` are
 * not handed on). `allowDuplicateIds` keeps the first record of each id instead (and `onSummary` counts the others).
 *
 * @since 0.1.0
 * @category Errors
 */
export class DuplicateIds extends Data.TaggedError("DuplicateIds")<{
  readonly key: string
  readonly idField: string
  readonly records: number
  /** The ids, each once, as `Change.id` says them. */
  readonly ids: ReadonlyArray<Id>
  /** The same ids as the server wrote them, as JSON. */
  readonly idsJson: ReadonlyArray<string>
  readonly read: number
}> {
  override get message(): string {
    return KernelChanges.duplicateIdsText(this.key, this, this.idField, words)
  }
}

/**
 * The run would report `removed` of the last state's `held` records removed, more than `maxRemovedRatio` of them: what
 * a list that answers empty or cut short for a while looks like. Nothing was removed and the state is as it was;
 * `maxRemovedRatio: 1` commits them.
 *
 * @since 0.1.0
 * @category Errors
 */
export class TooManyRemovals extends Data.TaggedError("TooManyRemovals")<{
  readonly key: string
  readonly removed: number
  readonly held: number
  readonly maxRemovedRatio: number
}> {
  override get message(): string {
    return KernelChanges.removalsText(this.key, this, words)
  }
}

/**
 * Why a run of `make` refused its state, or to commit one.
 *
 * @since 0.1.0
 * @category Errors
 */
export type Refused = StateUnreadable | StateMismatch | DuplicateIds | TooManyRemovals

/**
 * How a run of `make` goes: where its state is, what it is of, and what it does around the commit.
 *
 * @since 0.1.0
 * @category Models
 */
export interface RunOptions<E2 = never, R2 = never> {
  /** The key of the state in the `KeyValueStore` (with `layerFile`: the file's name in its directory). */
  readonly key: string
  /** The field that tells records apart (`Resource.idField`). */
  readonly idField: string
  /**
   * What the list is (its server, endpoint, id field and filters: `Changes.sourceOf` of `@erp-client/kernel`): written
   * in the state, and a state of another source is refused (`StateMismatch`). `Resource.changes` fills it in; without
   * it, a state is not checked against its source.
   */
  readonly source?: KernelChanges.Source | undefined
  /**
   * Write the state of this run and hand on no change (a first run that only sets the baseline). A stored state that
   * is of another list, damaged or of an earlier format is replaced (any other stored value is still refused).
   */
  readonly init?: boolean | undefined
  /**
   * Keep the first record of each id when the list holds records with the id of another, distinct record, and commit
   * (default `false`: such a run fails with `DuplicateIds` and commits nothing). The state keeps one record per id.
   */
  readonly allowDuplicateIds?: boolean | undefined
  /**
   * The share of the last state's records a run may report removed (default 0.5, `Changes.DEFAULT_MAX_REMOVED_RATIO`);
   * more fails with `TooManyRemovals` and commits nothing. `1` allows any.
   */
  readonly maxRemovedRatio?: number | undefined
  /**
   * Runs after the last change was handed on and before the state is committed: commit what the changes went to (an
   * output file written atomically), so that a failure there leaves the state as it was and the next run reports the
   * same changes again.
   */
  readonly beforeCommit?: Effect.Effect<void, E2, R2> | undefined
  /** Told the run's counts once the state is committed. */
  readonly onSummary?: ((summary: Summary) => Effect.Effect<void>) | undefined
}

/**
 * The changes of a list whose drift-safe pages `pages` streams, handed the run's `Tracking` (spread it into the `safe`
 * options: the table every id emitted goes into, and the question asked at the end of the list), each page carrying
 * its records' exact texts (`exact`).
 *
 * The stored state is read first: one that is not a state, damaged, of an earlier format (`StateUnreadable`) or of
 * another list (`StateMismatch`, with `source`) is refused and left as it was, unless `init` (which starts over on a
 * state of erp changes). Each record is judged as its page comes (`Added`, `Changed`, or unchanged and not handed on).
 * Once the pages' stream completed, that is once the end of the list is confirmed (read twice when the last state
 * holds records not read), the run is checked: records that share an id (`DuplicateIds`, unless `allowDuplicateIds`)
 * and removals of more than `maxRemovedRatio` of the last state (`TooManyRemovals`) are refused; then `Removed` come,
 * `beforeCommit` runs and the new state replaces the old one in the store. A failure, a refusal or an interruption
 * before that leaves the store as it was, so the next run reports again every change this one handed on. Drift-safe
 * paging emits each id at most once and never skips a record present for the whole run: a record moved between pages
 * by inserts and deletes ahead of it is neither removed nor added; one inserted during the run may be reported now or
 * by the next run, never both.
 *
 * @example
 * ```ts
 * import { KeyValueStore } from "@effect/platform"
 * import { Changes, ListEndpoint } from "@erp-client/streams"
 * import { Effect, Schema, Stream } from "effect"
 *
 * // The products changed since the last run, the state kept in memory (any KeyValueStore will do)
 * const Product = Schema.Struct({ id: Schema.Number, name: Schema.String })
 * const changes = Changes.make(
 *   (tracking) => ListEndpoint.pages("product/list", Product, { safe: { idField: "id", ...tracking }, exact: true }),
 *   { key: "products", idField: "id" }
 * )
 * const program = changes.pipe(Stream.runCollect, Effect.provide(KeyValueStore.layerMemory))
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const make = <A, E, R, E2 = never, R2 = never>(
  pages: (tracking: Tracking) => Stream.Stream<Paginate.ResumablePage<A>, E, R>,
  options: RunOptions<E2, R2>
): Stream.Stream<
  Change<A>,
  E | E2 | Refused | KeyValueStoreError,
  R | R2 | KeyValueStore
> =>
  Stream.unwrap(Effect.gen(function*() {
    const store = yield* KeyValueStore
    const stored = yield* getBytes(store, options.key)
    const init = options.init === true
    let before = KernelChanges.empty
    if (stored !== undefined) {
      const decoded = KernelChanges.decode(stored)
      if (!decoded.ok) {
        if (!(init && decoded.ours)) {
          return yield* new StateUnreadable({ key: options.key, reason: decoded.reason, ours: decoded.ours })
        }
      } else {
        const differences = options.source === undefined
          ? []
          : decoded.source === undefined
          ? ["the state does not say which list it was made for"]
          : KernelChanges.sourceDifferences(options.source, decoded.source)
        if (differences.length > 0 && !init) return yield* new StateMismatch({ key: options.key, differences })
        if (differences.length === 0) before = decoded.state
      }
    }
    return makeWith(pages, {
      ...options,
      before,
      commit: (seen, summary) =>
        Effect.gen(function*() {
          if (options.beforeCommit !== undefined) yield* options.beforeCommit
          const bytes = KernelChanges.encodeTable(seen, options.source)
          yield* store.set(options.key, bytes)
          if (options.onSummary !== undefined) yield* options.onSummary({ ...summary, stateBytes: bytes.length })
        })
    })
  }))

/**
 * How a run of `makeWith` goes: the state before it (`before`), and what it does once the list was read to its end
 * and the run was not refused (`commit`: keep the next state, which `seen` holds, and what the changes went to).
 *
 * @since 0.1.0
 * @category Models
 */
export interface WithOptions<E2 = never, R2 = never>
  extends Pick<RunOptions, "key" | "idField" | "init" | "allowDuplicateIds" | "maxRemovedRatio">
{
  /** What the last complete run left (`Changes.empty` of `@erp-client/kernel` for a first run). */
  readonly before: KernelChanges.State
  /**
   * Runs after the last change was handed on, with the table of every id read and its digest (the next state) and the
   * run's counts: a failure here fails the stream.
   */
  readonly commit: (seen: KernelChanges.Table, summary: Omit<Summary, "stateBytes">) => Effect.Effect<void, E2, R2>
}

/**
 * The changes of a list against a state kept elsewhere (`before`: in a database beside the records, as `Sync` keeps
 * it): `make` without its store. Each record is judged as its page comes; once the end of the list is confirmed, the
 * run is checked as `make` checks it (`DuplicateIds`, `TooManyRemovals`), then `Removed` come and `commit` runs. A
 * failure, a refusal or an interruption before `commit` has reported no removal.
 *
 * @example
 * ```ts
 * import { Changes as KernelChanges } from "@erp-client/kernel"
 * import { Changes, ListEndpoint } from "@erp-client/streams"
 * import { Console, Effect, Schema, Stream } from "effect"
 *
 * // Every product is added against an empty state; the next state is handed to `commit`
 * const Product = Schema.Struct({ id: Schema.Number, name: Schema.String })
 * const changes = Changes.makeWith(
 *   (tracking) => ListEndpoint.pages("product/list", Product, { safe: { idField: "id", ...tracking }, exact: true }),
 *   {
 *     key: "products",
 *     idField: "id",
 *     before: KernelChanges.empty,
 *     commit: (seen, summary) => Console.log(`${seen.size} products, ${summary.added} added`)
 *   }
 * )
 * const program = Stream.runDrain(changes)
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const makeWith = <A, E, R, E2 = never, R2 = never>(
  pages: (tracking: Tracking) => Stream.Stream<Paginate.ResumablePage<A>, E, R>,
  options: WithOptions<E2, R2>
): Stream.Stream<Change<A>, E | E2 | DuplicateIds | TooManyRemovals, R | R2> =>
  Stream.suspend(() => {
    const init = options.init === true
    let before = options.before
    // Sized for about as many records as the last run saw: it grows nothing on the way (no copies at a million).
    const seen = KernelChanges.makeTable(Math.ceil(KernelChanges.size(before) * 1.01) + 1024)
    // Let go once the removals are known (`undefined`): the last state need not stay beside the next at the end.
    let comparison: KernelChanges.Comparison | undefined = KernelChanges.compare(before)
    const idField = options.idField
    // Records of the last state not read would be reported removed: the end of the list is read again first.
    const confirmEnd = () => KernelChanges.notRead(before, seen) > 0
    const judged = mapConcat(pages({ seen, confirmEnd }), (page): ReadonlyArray<Change<A>> => {
      const judged = KernelChanges.judgePage(comparison!, page, idField, !init)
      return judged.map(({ index, ...change }): Change<A> => ({ ...change, record: page.records[index] }))
    })
    let removed = 0
    let counts = { added: 0, changed: 0, unchanged: 0 }
    const duplicates = seen.duplicates
    // Only now is the end of the list confirmed: what was not read is gone, unless the run is refused.
    const removals = Stream.unwrap(Effect.suspend((): Effect.Effect<
      Stream.Stream<Change<A>>,
      DuplicateIds | TooManyRemovals
    > => {
      const ids = comparison!.removed()
      counts = comparison!.counts()
      const held = KernelChanges.size(before)
      comparison = undefined
      before = KernelChanges.empty
      removed = ids.length
      const refused = KernelChanges.refusal({
        held,
        removed,
        read: seen.size,
        duplicates: duplicates(),
        init,
        allowDuplicateIds: options.allowDuplicateIds === true,
        maxRemovedRatio: options.maxRemovedRatio ?? KernelChanges.DEFAULT_MAX_REMOVED_RATIO
      })
      if (refused?._tag === "DuplicateIds") {
        return Effect.fail(
          new DuplicateIds({
            key: options.key,
            idField,
            records: refused.records,
            ids: refused.ids.map(KernelChanges.idValue),
            idsJson: refused.ids.map(KernelChanges.idJson),
            read: refused.read
          })
        )
      }
      if (refused?._tag === "TooManyRemovals") {
        const { maxRemovedRatio } = refused
        return Effect.fail(new TooManyRemovals({ key: options.key, removed: refused.removed, held, maxRemovedRatio }))
      }
      return Effect.succeed(
        init ? Stream.empty : Stream.fromIterable(ids.map((id): Change<A> => ({
          _tag: "Removed",
          id: KernelChanges.idValue(id),
          idJson: KernelChanges.idJson(id)
        })))
      )
    }))
    const commit = Effect.suspend(() => options.commit(seen, { ...counts, removed, duplicates: duplicates() }))
    return Stream.concat(Stream.concat(judged, removals), Stream.drain(Stream.fromEffect(commit)))
  })

/**
 * A `KeyValueStore` of files in `directory`, one per key (named by it), each replaced atomically: written to a
 * temporary file beside it, then renamed over it, so a reader (or a run killed meanwhile) sees the old state or the
 * new one, never part of one. `KeyValueStore.layerFileSystem` writes the file in place, which a kill can leave half
 * written: hence this one.
 *
 * A state that is a symbolic link is written through: the link is followed (once per write) and the file it leads to
 * is replaced beside itself, the link left as it was. A state this user may not write, or whose owner write bit is off
 * (`FileRules.isReadOnly`), is refused (Effect 3: a `PermissionDenied` `SystemError`; Effect 4: a
 * `KeyValueStoreError`), never replaced; a replaced one keeps its mode. The temporary file has a random name and is
 * created exclusively (`wx`: never a file or a link already there); its mode is set at its creation, and set again by
 * name (where the process's umask narrowed it) only in a directory where no one else may rename its entries
 * (`FileRules.othersMayRename`): elsewhere a name this run just made may already stand for another file, and `chmod`
 * follows links.
 *
 * @example
 * ```ts
 * import { NodeContext } from "@effect/platform-node"
 * import { Changes, Partners } from "@erp-client/streams"
 * import { Console, Effect, Layer, Stream } from "effect"
 *
 * // The partners changed since the last run, the state in ./state/partners
 * const program = Partners.changes({ key: "partners" }).pipe(
 *   Stream.runForEach((change) => Console.log(change._tag, change.id)),
 *   Effect.provide(Changes.layerFile("state").pipe(Layer.provide(NodeContext.layer)))
 * )
 * ```
 *
 * @since 0.1.0
 * @category Layers
 */
export const layerFile = (directory: string): Layer.Layer<KeyValueStore, never, FileSystem | Path> =>
  StateFile.layer(directory)
