// Per edition: the Effect APIs this package uses whose names or shapes differ between Effect 3 and Effect 4.
/**
 * The Effect 4 edition's side of the adapter the shared source imports (docs/editions.md): each name here has a twin
 * of the same type in `packages/streams/src/internal/edition.ts`, written with Effect 3's API. The shared modules
 * (`Paginate`, `Changes`, `ListEndpoint`, `Resource`, `Partners`, `Lookups`), copied here from the Effect 3 package by
 * `scripts/editions.ts`, import what differs from here and everything else from `effect` itself.
 */
import type { TypeMember } from "@erp-client/kernel/SyncTable"
import * as Cause from "effect/Cause"
import * as Channel from "effect/Channel"
import type * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as FileSystemModule from "effect/FileSystem"
import * as Metric from "effect/Metric"
import type * as PathModule from "effect/Path"
import * as KeyValueStoreModule from "effect/persistence/KeyValueStore"
import type * as PlatformErrorModule from "effect/PlatformError"
import type * as ResultModule from "effect/Result"
import type * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import * as Stream from "effect/Stream"
import type { Contract } from "./editionContract.js"

/** A success or a failure: Effect 3's `Either`, Effect 4's `Result` (success first in both). */
export type Result<A, E> = ResultModule.Result<A, E>

/** A duration as users write it (`"5 minutes"`, a number of milliseconds, a `Duration`). */
export type DurationInput = Duration.Input

/** A schema that decodes to `A`, from whatever it is encoded as and needing nothing. */
export type Decoder<A> = Schema.Decoder<A>

/** Any schema that needs nothing: what a resource of unknown records holds (decoders are covariant in Effect 4). */
export type AnyDecoder = Schema.Decoder<unknown>

/** A value of the fiber that runs an effect, set for one effect (Effect 4's `Context.Reference`). */
export type Local<A> = Context.Reference<A>

/** The key-value store module: `@effect/platform`'s in Effect 3, `effect/persistence`'s in Effect 4. */
export const KeyValueStore = KeyValueStoreModule.KeyValueStore

/** The key-value store service. */
export type KeyValueStore = KeyValueStoreModule.KeyValueStore

/** What a key-value store fails with. */
export type KeyValueStoreError = KeyValueStoreModule.KeyValueStoreError

/** The platform's file system service. */
export type FileSystem = FileSystemModule.FileSystem

/** A file open on the platform's file system. */
export type File = FileSystemModule.File

/** The platform's paths service. */
export type Path = PathModule.Path

/** What the platform's services fail with. */
export type PlatformError = PlatformErrorModule.PlatformError

/** A counter of numbers. */
export type Counter = Metric.Counter<number>

// The members of a type as the server writes it (the encoded side; filters are checks on the node itself).
const membersOfAst = (ast: SchemaAST.AST): ReadonlyArray<TypeMember> => {
  if (SchemaAST.isUnion(ast)) return ast.types.flatMap(membersOfAst)
  if (SchemaAST.isLiteral(ast)) {
    return typeof ast.literal === "bigint" ? [{ _tag: "other" }] : [{ _tag: "literal", value: ast.literal }]
  }
  if (SchemaAST.isNull(ast)) return [{ _tag: "literal", value: null }]
  if (SchemaAST.isString(ast) || SchemaAST.isTemplateLiteral(ast)) return [{ _tag: "string" }]
  if (SchemaAST.isNumber(ast)) return [{ _tag: "number", integer: false }]
  if (SchemaAST.isBoolean(ast)) return [{ _tag: "boolean" }]
  if (SchemaAST.isUndefined(ast) || SchemaAST.isVoid(ast)) return [{ _tag: "null" }]
  return [{ _tag: "other" }]
}

const edition: Contract = {
  result: Effect.result,
  fieldsOf: (schema) => {
    const decoded = SchemaAST.toType(schema.ast)
    return SchemaAST.isObjects(decoded)
      ? decoded.propertySignatures.flatMap((signature) => typeof signature.name === "string" ? [signature.name] : [])
      : []
  },
  fieldTypes: (schema) => {
    const encoded = SchemaAST.toEncoded(schema.ast)
    if (!SchemaAST.isObjects(encoded)) return {}
    const out: Record<string, ReadonlyArray<TypeMember>> = {}
    for (const signature of encoded.propertySignatures) {
      if (typeof signature.name === "string") out[signature.name] = membersOfAst(signature.type)
    }
    return out
  },
  locally: (local, value) => (self) => Effect.provideService(self, local, value),
  getBytes: (store, key) => store.getUint8Array(key),
  isNotFound: (error) => error.reason._tag === "NotFound",
  openExclusive: (fs, file, mode) => fs.open(file, { flag: "wx", mode, noFollow: true }),
  mapConcat: (self, f) => Stream.flattenIterable(Stream.map(self, f)),
  onExit: Stream.onExit,
  // Effect 4's pull ends with `Cause.done()`.
  fromPull: (open) =>
    Stream.fromChannel(Channel.fromTransform((_upstream, scope) =>
      Effect.map(
        open(scope),
        (pull) => Effect.flatMap(pull, (as) => as === undefined ? Cause.done() : Effect.succeed(as))
      )
    )),
  failureOption: Cause.findErrorOption,
  isInterruptedOnly: Cause.hasInterruptsOnly,
  counter: (info) =>
    Metric.counter(info.name, { description: info.description, incremental: true, attributes: { unit: info.unit } }),
  withAttributes: (metric, attributes) => Metric.withAttributes(metric, attributes)
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
