// Per edition: the Effect APIs this package uses whose names or shapes differ between Effect 3 and Effect 4.
/**
 * The Effect 4 edition's side of the adapter the shared source imports (docs/editions.md): each name here has a twin
 * of the same type in `packages/streams/src/internal/edition.ts`, written with Effect 3's API. The shared modules
 * (`Paginate`, `Changes`, `ListEndpoint`, `Resource`, `Partners`, `Lookups`), copied here from the Effect 3 package by
 * `scripts/editions.ts`, import what differs from here and everything else from `effect` itself.
 */
import type { MetricInfo } from "@erp-client/kernel/Telemetry"
import type * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Channel from "effect/Channel"
import type * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import type * as FileSystemModule from "effect/FileSystem"
import * as Metric from "effect/Metric"
import type * as Option from "effect/Option"
import type * as PathModule from "effect/Path"
import * as KeyValueStoreModule from "effect/persistence/KeyValueStore"
import type * as PlatformErrorModule from "effect/PlatformError"
import type * as ResultModule from "effect/Result"
import type * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

/** A success or a failure: Effect 3's `Either`, Effect 4's `Result` (success first in both). */
export type Result<A, E> = ResultModule.Result<A, E>

/** The outcome of `self` as a value: `Effect.result`, Effect 3's `Effect.either`. */
export const result: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<Result<A, E>, never, R> = Effect.result

/** A duration as users write it (`"5 minutes"`, a number of milliseconds, a `Duration`). */
export type DurationInput = Duration.Input

/** A schema that decodes to `A`, from whatever it is encoded as and needing nothing. */
export type Decoder<A> = Schema.Decoder<A>

/** Any schema that needs nothing: what a resource of unknown records holds (decoders are covariant in Effect 4). */
export type AnyDecoder = Schema.Decoder<unknown>

/** The fields a struct's schema names, in order (of what it decodes to); none for any other schema. */
export const fieldsOf = (schema: AnyDecoder): ReadonlyArray<string> => {
  const decoded = SchemaAST.toType(schema.ast)
  return SchemaAST.isObjects(decoded)
    ? decoded.propertySignatures.flatMap((signature) => typeof signature.name === "string" ? [signature.name] : [])
    : []
}

/** A value of the fiber that runs an effect, set for one effect (Effect 4's `Context.Reference`). */
export type Local<A> = Context.Reference<A>

/** `self` with `local` set to `value` while it runs. */
export const locally = <A>(local: Local<A>, value: A) => <X, E, R>(self: Effect.Effect<X, E, R>) =>
  Effect.provideService(self, local, value)

/** The key-value store module: `@effect/platform`'s in Effect 3, `effect/persistence`'s in Effect 4. */
export const KeyValueStore = KeyValueStoreModule.KeyValueStore

/** The key-value store service. */
export type KeyValueStore = KeyValueStoreModule.KeyValueStore

/** What a key-value store fails with. */
export type KeyValueStoreError = KeyValueStoreModule.KeyValueStoreError

/** The bytes stored under `key`, `undefined` when there are none. */
export const getBytes = (
  store: KeyValueStoreModule.KeyValueStore,
  key: string
): Effect.Effect<Uint8Array | undefined, KeyValueStoreError> => store.getUint8Array(key)

/** The platform's file system service. */
export type FileSystem = FileSystemModule.FileSystem

/** The platform's paths service. */
export type Path = PathModule.Path

/** What the platform's services fail with. */
export type PlatformError = PlatformErrorModule.PlatformError

/** Whether `error` says there is no such file. */
export const isNotFound = (error: PlatformError): boolean => error.reason._tag === "NotFound"

/** A new file `file`, open for writing with permissions `mode`; fails if anything, even a link, is there already. */
export const openExclusive = (
  fs: FileSystem,
  file: string,
  mode: number
): Effect.Effect<FileSystemModule.File, PlatformError, Scope.Scope> =>
  fs.open(file, { flag: "wx", mode, noFollow: true })

/** Each element of `self` replaced by the elements `f` gives it, in order. */
export const mapConcat = <A, B, E, R>(
  self: Stream.Stream<A, E, R>,
  f: (a: A) => Iterable<B>
): Stream.Stream<B, E, R> => Stream.flattenIterable(Stream.map(self, f))

/**
 * `self`, then `onExit` with how it ended (success, failure or interruption) when it ends, however it ends. Runs
 * inside whatever span `self` runs in.
 */
export const onExit = <A, E, R>(
  self: Stream.Stream<A, E, R>,
  onExit: (exit: Exit.Exit<unknown, E>) => Effect.Effect<void>
): Stream.Stream<A, E, R> => Stream.onExit(self, onExit)

/**
 * A stream of the arrays `pull` gives, until it gives `undefined`. `open` makes `pull` when the stream starts, given the
 * stream's scope, which closes with how the stream ended.
 */
export const fromPull = <A, E, R>(
  open: (scope: Scope.Scope) => Effect.Effect<Effect.Effect<Arr.NonEmptyReadonlyArray<A> | undefined, E, R>, never, R>
): Stream.Stream<A, E, R> =>
  Stream.fromChannel(Channel.fromTransform((_upstream, scope) =>
    Effect.map(
      open(scope),
      (pull) => Effect.flatMap(pull, (as) => as === undefined ? Cause.done() : Effect.succeed(as))
    )
  ))

/** The first failure of `cause`, if it has one (not a defect, not an interruption). */
export const failureOption: <E>(cause: Cause.Cause<E>) => Option.Option<E> = Cause.findErrorOption

/** Whether `cause` is interruptions only. */
export const isInterruptedOnly: <E>(cause: Cause.Cause<E>) => boolean = Cause.hasInterruptsOnly

/** A counter of numbers. */
export type Counter = Metric.Counter<number>

/** A monotonic counter named by `info`, its unit an attribute. */
export const counter = (info: MetricInfo): Counter =>
  Metric.counter(info.name, { description: info.description, incremental: true, attributes: { unit: info.unit } })

/** `metric` with these attributes added. */
export const withAttributes = (metric: Counter, attributes: Readonly<Record<string, string>>): Counter =>
  Metric.withAttributes(metric, attributes)
