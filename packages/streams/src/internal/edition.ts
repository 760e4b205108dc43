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
import type { TypeMember } from "@erp-client/kernel/SyncTable"
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
import * as Stream from "effect/Stream"
import type { Contract } from "./editionContract.js"

/** A success or a failure: Effect 3's `Either`, Effect 4's `Result` (success first in both). */
export type Result<A, E> = Either.Either<A, E>

/** A duration as users write it (`"5 minutes"`, a number of milliseconds, a `Duration`). */
export type DurationInput = Duration.DurationInput

/** A schema that decodes to `A`, from whatever it is encoded as and needing nothing. */
export type Decoder<A> = Schema.Schema<A, any>

/** Any schema that needs nothing: what a resource of unknown records holds. */
export type AnyDecoder = Schema.Schema.AnyNoContext

/** A value of the fiber that runs an effect, set for one effect (Effect 3's `FiberRef`). */
export type Local<A> = FiberRef.FiberRef<A>

/** The key-value store module: `@effect/platform`'s in Effect 3, `effect/persistence`'s in Effect 4. */
export const KeyValueStore = KeyValueStoreModule.KeyValueStore

/** The key-value store service. */
export type KeyValueStore = KeyValueStoreModule.KeyValueStore

/** What a key-value store fails with. */
export type KeyValueStoreError = PlatformErrorModule.PlatformError

/** The platform's file system service. */
export type FileSystem = FileSystemModule.FileSystem

/** A file open on the platform's file system. */
export type File = FileSystemModule.File

/** The platform's paths service. */
export type Path = PathModule.Path

/** What the platform's services fail with. */
export type PlatformError = PlatformErrorModule.PlatformError

/** A counter of numbers. */
export type Counter = Metric.Metric.Counter<number>

// A struct's fields through refinements and transformations (the decoded side first).
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

// The members of a type as the server writes it: the encoded side of transformations, through filters.
const membersOfAst = (ast: SchemaAST.AST): ReadonlyArray<TypeMember> => {
  switch (ast._tag) {
    case "Union":
      return ast.types.flatMap(membersOfAst)
    case "Literal":
      return typeof ast.literal === "bigint" ? [{ _tag: "other" }] : [{ _tag: "literal", value: ast.literal }]
    case "StringKeyword":
    case "TemplateLiteral":
      return [{ _tag: "string" }]
    case "NumberKeyword":
      return [{ _tag: "number", integer: false }]
    case "BooleanKeyword":
      return [{ _tag: "boolean" }]
    case "UndefinedKeyword":
    case "VoidKeyword":
      return [{ _tag: "null" }]
    case "Refinement":
      return membersOfAst(ast.from)
    case "Transformation":
      return membersOfAst(ast.from)
    default:
      return [{ _tag: "other" }]
  }
}

const fieldTypesOfAst = (ast: SchemaAST.AST): Readonly<Record<string, ReadonlyArray<TypeMember>>> => {
  if (SchemaAST.isTypeLiteral(ast)) {
    const out: Record<string, ReadonlyArray<TypeMember>> = {}
    for (const signature of ast.propertySignatures) {
      if (typeof signature.name === "string") out[signature.name] = membersOfAst(signature.type)
    }
    return out
  }
  if (SchemaAST.isRefinement(ast)) return fieldTypesOfAst(ast.from)
  if (SchemaAST.isTransformation(ast)) return fieldTypesOfAst(ast.from)
  return {}
}

const edition: Contract = {
  result: Effect.either,
  fieldsOf: (schema) => fieldsOfAst(schema.ast),
  fieldTypes: (schema) => fieldTypesOfAst(schema.ast),
  locally: (local, value) => (self) => Effect.locally(self, local, value),
  getBytes: (store, key) => Effect.map(store.getUint8Array(key), Option.getOrUndefined),
  isNotFound: (error) => error._tag === "SystemError" && error.reason === "NotFound",
  openExclusive: (fs, file, mode) => fs.open(file, { flag: "wx", mode }),
  mapConcat: Stream.mapConcat,
  // A finalizer of the stream's scope sees how it ended: the stream's own failure, typed as Effect 3's finalizers are
  // not (its signature kept for `E`).
  onExit: <A, E, R>(self: Stream.Stream<A, E, R>, onExit: (exit: Exit.Exit<unknown, E>) => Effect.Effect<void>) =>
    Stream.unwrapScoped(Effect.as(Effect.addFinalizer((exit) => onExit(exit as Exit.Exit<unknown, E>)), self)),
  // Effect 3's pull fails with `Option.none()` to end.
  fromPull: (open) =>
    Stream.fromPull(Effect.flatMap(Effect.scope, (scope) =>
      Effect.map(open(scope), (pull) =>
        Effect.flatMap(
          Effect.mapError(pull, Option.some),
          (as) => as === undefined ? Effect.fail(Option.none()) : Effect.succeed(Chunk.unsafeFromArray(as))
        )))),
  failureOption: Cause.failureOption,
  isInterruptedOnly: Cause.isInterruptedOnly,
  // Made from its key, its unit already in it: a counter tagged after it is made joins its tags again at every update.
  counter: (info) =>
    Metric.fromMetricKey(
      MetricKey.tagged(
        MetricKey.counter(info.name, { description: info.description, incremental: true }),
        "unit",
        info.unit
      )
    ),
  withAttributes: (metric, attributes) =>
    Metric.taggedWithLabels(metric, Object.entries(attributes).map(([key, value]) => MetricLabel.make(key, value)))
}

export const {
  counter,
  failureOption,
  fieldsOf,
  fieldTypes,
  fromPull,
  getBytes,
  isInterruptedOnly,
  isNotFound,
  locally,
  mapConcat,
  onExit,
  openExclusive,
  result,
  withAttributes
} = edition
