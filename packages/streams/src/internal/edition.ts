// Per edition: the Effect APIs this package uses whose names or shapes differ between Effect 3 and Effect 4.
/**
 * The Effect 3 edition's side of the adapter the shared source imports (docs/editions.md): each name here has a twin
 * of the same type in `packages/effect4-streams/src/internal/edition.ts`, written with Effect 4's API. The shared
 * modules (`Paginate`, `Changes`, `ListEndpoint`, `Resource`, `Partners`, `Lookups`) import what differs from here and
 * everything else from `effect` itself, so that one source compiles against either edition's `effect`.
 */
import type * as PlatformErrorModule from "@effect/platform/Error"
import type * as FileSystemModule from "@effect/platform/FileSystem"
import * as KeyValueStoreModule from "@effect/platform/KeyValueStore"
import type * as PathModule from "@effect/platform/Path"
import type { MetricInfo } from "@erp-client/kernel/Telemetry"
import type * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Either from "effect/Either"
import type * as Exit from "effect/Exit"
import type * as FiberRef from "effect/FiberRef"
import * as Metric from "effect/Metric"
import * as MetricKey from "effect/MetricKey"
import * as MetricLabel from "effect/MetricLabel"
import * as Option from "effect/Option"
import type * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

/** A success or a failure: Effect 3's `Either`, Effect 4's `Result` (success first in both). */
export type Result<A, E> = Either.Either<A, E>

/** The outcome of `self` as a value: `Effect.either`, Effect 4's `Effect.result`. */
export const result: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<Result<A, E>, never, R> = Effect.either

/** A duration as users write it (`"5 minutes"`, a number of milliseconds, a `Duration`). */
export type DurationInput = Duration.DurationInput

/** A schema that decodes to `A`, from whatever it is encoded as and needing nothing. */
export type Decoder<A> = Schema.Schema<A, any>

/** Any schema that needs nothing: what a resource of unknown records holds. */
export type AnyDecoder = Schema.Schema.AnyNoContext

/**
 * The fields a struct's schema names, in order (a transformation's decoded side, else its encoded side; through a
 * filter); none for any other schema.
 */
export const fieldsOf = (schema: Schema.Schema.AnyNoContext): ReadonlyArray<string> => fieldsOfAst(schema.ast)

const fieldsOfAst = (ast: SchemaAST.AST): ReadonlyArray<string> => {
  if (SchemaAST.isTypeLiteral(ast)) {
    return ast.propertySignatures.flatMap((signature) => typeof signature.name === "string" ? [signature.name] : [])
  }
  if (SchemaAST.isRefinement(ast)) return fieldsOfAst(ast.from)
  if (SchemaAST.isTransformation(ast)) {
    const decoded = fieldsOfAst(ast.to)
    return decoded.length > 0 ? decoded : fieldsOfAst(ast.from)
  }
  return []
}

/** A value of the fiber that runs an effect, set for one effect (Effect 3's `FiberRef`). */
export type Local<A> = FiberRef.FiberRef<A>

/** `self` with `local` set to `value` while it runs. */
export const locally = <A>(local: Local<A>, value: A) => <X, E, R>(self: Effect.Effect<X, E, R>) =>
  Effect.locally(self, local, value)

/** The key-value store module: `@effect/platform`'s in Effect 3, `effect/persistence`'s in Effect 4. */
export const KeyValueStore = KeyValueStoreModule.KeyValueStore

/** The key-value store service. */
export type KeyValueStore = KeyValueStoreModule.KeyValueStore

/** What a key-value store fails with. */
export type KeyValueStoreError = PlatformErrorModule.PlatformError

/** The bytes stored under `key`, `undefined` when there are none. */
export const getBytes = (
  store: KeyValueStoreModule.KeyValueStore,
  key: string
): Effect.Effect<Uint8Array | undefined, KeyValueStoreError> =>
  Effect.map(store.getUint8Array(key), Option.getOrUndefined)

/** The platform's file system service. */
export type FileSystem = FileSystemModule.FileSystem

/** The platform's paths service. */
export type Path = PathModule.Path

/** What the platform's services fail with. */
export type PlatformError = PlatformErrorModule.PlatformError

/** Whether `error` says there is no such file. */
export const isNotFound = (error: PlatformError): boolean => error._tag === "SystemError" && error.reason === "NotFound"

/** A new file `file`, open for writing with permissions `mode`; fails if anything, even a link, is there already. */
export const openExclusive = (
  fs: FileSystem,
  file: string,
  mode: number
): Effect.Effect<FileSystemModule.File, PlatformError, Scope.Scope> => fs.open(file, { flag: "wx", mode })

/** Each element of `self` replaced by the elements `f` gives it, in order. */
export const mapConcat: <A, B, E, R>(
  self: Stream.Stream<A, E, R>,
  f: (a: A) => Iterable<B>
) => Stream.Stream<B, E, R> = Stream.mapConcat

/**
 * `self`, then `onExit` with how it ended (success, failure or interruption) when it ends, however it ends. Runs
 * inside whatever span `self` runs in.
 */
export const onExit = <A, E, R>(
  self: Stream.Stream<A, E, R>,
  onExit: (exit: Exit.Exit<unknown, E>) => Effect.Effect<void>
): Stream.Stream<A, E, R> =>
  Stream.unwrapScoped(Effect.as(Effect.addFinalizer((exit) => onExit(exit as Exit.Exit<unknown, E>)), self))

/**
 * A stream of the arrays `pull` gives, until it gives `undefined`. `open` makes `pull` when the stream starts, given the
 * stream's scope, which closes with how the stream ended.
 */
export const fromPull = <A, E, R>(
  open: (scope: Scope.Scope) => Effect.Effect<Effect.Effect<Arr.NonEmptyReadonlyArray<A> | undefined, E, R>, never, R>
): Stream.Stream<A, E, R> =>
  Stream.fromPull(Effect.flatMap(Effect.scope, (scope) =>
    Effect.map(open(scope), (pull) =>
      Effect.flatMap(
        Effect.mapError(pull, Option.some),
        (as) => as === undefined ? Effect.fail(Option.none()) : Effect.succeed(Chunk.unsafeFromArray(as))
      ))))

/** The first failure of `cause`, if it has one (not a defect, not an interruption). */
export const failureOption: <E>(cause: Cause.Cause<E>) => Option.Option<E> = Cause.failureOption

/** Whether `cause` is interruptions only. */
export const isInterruptedOnly: <E>(cause: Cause.Cause<E>) => boolean = Cause.isInterruptedOnly

/** A counter of numbers. */
export type Counter = Metric.Metric.Counter<number>

/**
 * A monotonic counter named by `info`, its unit an attribute. Made from its key, its unit already in it: a counter
 * tagged after it is made joins its tags again at every update.
 */
export const counter = (info: MetricInfo): Counter =>
  Metric.fromMetricKey(
    MetricKey.tagged(
      MetricKey.counter(info.name, { description: info.description, incremental: true }),
      "unit",
      info.unit
    )
  )

/** `metric` with these attributes added. */
export const withAttributes = (metric: Counter, attributes: Readonly<Record<string, string>>): Counter =>
  Metric.taggedWithLabels(metric, Object.entries(attributes).map(([key, value]) => MetricLabel.make(key, value)))
