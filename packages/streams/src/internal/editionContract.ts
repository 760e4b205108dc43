/**
 * The contract of this package's adapter (docs/editions.md): each function `src/internal/edition.ts` gives the shared
 * source, with its signature and what it does, written once. Each edition's adapter implements it with its own
 * Effect's API (`const edition: Contract = { ... }`); the types that differ between the editions (what a `Result`, a
 * `Local` or a `Counter` is) are the adapter's own, named here from it.
 */
import type { TypeMember } from "@erp-client/kernel/SyncTable"
import type { MetricInfo } from "@erp-client/kernel/Telemetry"
import type * as Arr from "effect/Array"
import type * as Cause from "effect/Cause"
import type * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import type * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type {
  AnyDecoder,
  Counter,
  File,
  FileSystem,
  KeyValueStore,
  KeyValueStoreError,
  Local,
  PlatformError,
  Result
} from "./edition.js"

/** What the shared source of this package asks of its edition's Effect. */
export interface Contract {
  /** The outcome of `self` as a value: Effect 3's `Effect.either`, Effect 4's `Effect.result`. */
  readonly result: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<Result<A, E>, never, R>
  /**
   * The fields a struct's schema names, in order (of what it decodes to, through a filter or a transformation); none
   * for any other schema.
   */
  readonly fieldsOf: (schema: AnyDecoder) => ReadonlyArray<string>
  /**
   * What each field of a struct's schema may be as the server writes it (its encoded side, through filters and
   * transformations): the members of its type (`SyncTable.kindOf` reads them). Numbers are never `integer` here, as
   * Effect 4's filters do not say so. None for any other schema.
   */
  readonly fieldTypes: (schema: AnyDecoder) => Readonly<Record<string, ReadonlyArray<TypeMember>>>
  /** `self` with `local` set to `value` while it runs. */
  readonly locally: <A>(local: Local<A>, value: A) => <X, E, R>(self: Effect.Effect<X, E, R>) => Effect.Effect<X, E, R>
  /** The bytes stored under `key`, `undefined` when there are none. */
  readonly getBytes: (store: KeyValueStore, key: string) => Effect.Effect<Uint8Array | undefined, KeyValueStoreError>
  /** Whether `error` says there is no such file. */
  readonly isNotFound: (error: PlatformError) => boolean
  /**
   * A new file `file`, open for writing with permissions `mode`; fails if anything, even a link, is there already.
   */
  readonly openExclusive: (
    fs: FileSystem,
    file: string,
    mode: number
  ) => Effect.Effect<File, PlatformError, Scope.Scope>
  /** Each element of `self` replaced by the elements `f` gives it, in order. */
  readonly mapConcat: <A, B, E, R>(
    self: Stream.Stream<A, E, R>,
    f: (a: A) => Iterable<B>
  ) => Stream.Stream<B, E, R>
  /**
   * `self`, then `onExit` with how it ended (success, failure or interruption) when it ends, however it ends. Runs
   * inside whatever span `self` runs in.
   */
  readonly onExit: <A, E, R>(
    self: Stream.Stream<A, E, R>,
    onExit: (exit: Exit.Exit<unknown, E>) => Effect.Effect<void>
  ) => Stream.Stream<A, E, R>
  /**
   * A stream of the arrays `pull` gives, until it gives `undefined`. `open` makes `pull` when the stream starts, given
   * the stream's scope, which closes with how the stream ended.
   */
  readonly fromPull: <A, E, R>(
    open: (scope: Scope.Scope) => Effect.Effect<Effect.Effect<Arr.NonEmptyReadonlyArray<A> | undefined, E, R>, never, R>
  ) => Stream.Stream<A, E, R>
  /** The first failure of `cause`, if it has one (not a defect, not an interruption). */
  readonly failureOption: <E>(cause: Cause.Cause<E>) => Option.Option<E>
  /** Whether `cause` is interruptions only. */
  readonly isInterruptedOnly: <E>(cause: Cause.Cause<E>) => boolean
  /** A monotonic counter named by `info`, its unit an attribute. */
  readonly counter: (info: MetricInfo) => Counter
  /** `metric` with these attributes added. */
  readonly withAttributes: (metric: Counter, attributes: Readonly<Record<string, string>>) => Counter
}
