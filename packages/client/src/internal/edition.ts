// Per edition: the Effect APIs this package uses whose names or shapes differ between Effect 3 and Effect 4.
/**
 * The Effect 3 edition's side of the adapter the shared source imports (docs/editions.md): each name here has a twin
 * of the same type in `packages/effect4-client/src/internal/edition.ts`, written with Effect 4's API. The shared
 * modules import what differs from here and everything else from `effect` itself, so that one source compiles against
 * either edition's `effect`.
 */
import * as RateLimiterModule from "@effect/experimental/RateLimiter"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import * as ConfigErrorModule from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as FiberRef from "effect/FiberRef"
import * as FiberRefs from "effect/FiberRefs"
import * as Layer from "effect/Layer"
import * as LogLevel from "effect/LogLevel"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as MetricKey from "effect/MetricKey"
import type * as MetricKeyType from "effect/MetricKeyType"
import * as MetricLabel from "effect/MetricLabel"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import * as Schema from "effect/Schema"
import * as Tracer from "effect/Tracer"
import type { Contract } from "./editionContract.js"

export * as HttpClient from "@effect/platform/HttpClient"
export * as HttpClientError from "@effect/platform/HttpClientError"
export * as HttpClientRequest from "@effect/platform/HttpClientRequest"
export * as HttpClientResponse from "@effect/platform/HttpClientResponse"
/** The rate limiter and its store: `@effect/experimental`'s in Effect 3, `effect/persistence`'s in Effect 4. */
export * as RateLimiter from "@effect/experimental/RateLimiter"
export type { HttpFailure } from "./editionContract.js"

// The types that differ between the editions: the contract (`editionContract.ts`) names its functions' types by these.

/** A success or a failure: Effect 3's `Either`, Effect 4's `Result` (success first in both). */
export type Result<A, E> = Either.Either<A, E>

/** A value of the fiber that runs an effect, set for one effect: Effect 3's `FiberRef`. */
export type Local<A> = FiberRef.FiberRef<A>

/** The class a service's class extends: Effect 3's `Context.TagClass`. */
export type ServiceClass<Self, Key extends string, Shape> = Context.TagClass<Self, Key, Shape>

/** The key of a service: Effect 3's `Context.Tag`. */
export type ServiceKey<I, S> = Context.Tag<I, S>

/** A schema that decodes to `A`, from whatever it is encoded as and needing nothing. */
export type Decoder<A> = Schema.Schema<A, any>

/** A schema of one of these strings: Effect 3's `Schema.Literal`. */
export type Literals<L extends readonly [string, ...Array<string>]> = Schema.Literal<[...L]>

/** Any metric. */
export type AnyMetric = Metric.Metric<any, any, any>

/** A counter of numbers. */
export type Counter = Metric.Metric.Counter<number>

/** A histogram of numbers. */
export type Histogram = Metric.Metric.Histogram<number>

/** What a metric reads from the fiber that updates it: Effect 3's metric labels (Effect 4: the fiber's context). */
export type MetricContext = ReadonlyArray<MetricLabel.MetricLabel>

/** A span's options, as `Effect.useSpan` takes them. */
export type SpanOptions = Tracer.SpanOptions

/** What `Duration` reads as a duration: Effect 3's `DurationInput`. */
export type DurationInput = Duration.DurationInput

/** Why settings were refused: Effect 3's `ConfigError`. */
export type ConfigError = ConfigErrorModule.ConfigError

/** A structure of `Config` values, or a `Config` of the structure: Effect 3's `Config.Config.Wrap`. */
export type ConfigWrap<A> = Config.Config.Wrap<A>

/** Who interrupted a fiber, as its cause records it: Effect 3's `FiberId`. */
export type Interruptor = FiberId.FiberId

/** A service's shape, from its class: Effect 3's `X["Type"]`, Effect 4's `X["Service"]`. */
export type ServiceOf<Class extends { readonly Type: unknown }> = Class["Type"]

/** A `Result` built by a generator that yields `Result`s: Effect 3's `Either.gen`. */
export const resultGen = Either.gen

/** The store's methods the limiter never calls, for a store written here: Effect 3's store has none. */
export const unusedStoreMethods: Record<never, never> = {}

// Effect 3's metrics are made from their keys (`Metric.fromMetricKey`), their unit and other tags in the key, rather
// than by `Metric.tagged`: a metric tagged that way joins its tags to the fiber's at every update, a new array each
// time, so Effect's cache of the metric's hook misses and the tagged key is built and hashed again (about 4 µs an
// update against 0.2 µs, several times a request: `pnpm bench cost`). The key, and so what an exporter reads, is the
// same.
const keys = new WeakMap<AnyMetric, MetricKey.MetricKey<any>>()

const fromKey = <Type extends MetricKeyType.MetricKeyType<any, any>>(key: MetricKey.MetricKey<Type>) => {
  const metric = Metric.fromMetricKey(key)
  keys.set(metric, key)
  return metric
}

const configProblems: Contract["configProblems"] = (error) => {
  switch (error._op) {
    case "And":
    case "Or":
      return [...configProblems(error.left), ...configProblems(error.right)]
    case "MissingData":
      return [{ reason: "Missing", path: error.path.join("."), message: error.message }]
    default:
      return [{ reason: "Invalid", path: error.path.join("."), message: error.message }]
  }
}

/** The adapter, with Effect 3's API: what each function does is said once, in `Contract`. */
const edition: Contract = {
  Result: {
    succeed: (value) => Either.right(value),
    fail: (error) => Either.left(error),
    map: (self, f) => Either.map(self, f),
    mapError: (self, f) => Either.mapLeft(self, f),
    flatMap: (self, f) => Either.flatMap(self, f),
    match: (self, cases) => Either.match(self, { onLeft: cases.onFailure, onRight: cases.onSuccess }),
    isSuccess: (self) => Either.isRight(self),
    getOrUndefined: (self) => Either.getOrUndefined(self),
    failureOrUndefined: (self) => Either.isLeft(self) ? self.left : undefined,
    // An Effect 3 `Either` is an effect already.
    toEffect: (self) => self
  },
  result: Effect.either,
  // Effect 3's `FiberRef` has no name.
  makeLocal: (_key, initial) => FiberRef.unsafeMake(initial),
  withLocals: (f) => Effect.withFiberRuntime((fiber) => f((local) => fiber.getFiberRef(local))),
  // Generic in the types its body passes on, so written with them: Effect 3's `Context.Tag(key)<X, Shape>()`.
  Service: <Self, Shape>() => <const Key extends string>(key: Key) => Context.Tag(key)<Self, Shape>(),
  randomBetween: (min, max) => Random.nextRange(min, max),
  makeDeferred: () => Deferred.unsafeMake(FiberId.none),
  completeDeferred: (self, exit) => {
    Deferred.unsafeDone(self, exit)
  },
  counter: (info) =>
    fromKey(
      MetricKey.tagged(
        MetricKey.counter(info.name, { description: info.description, incremental: true }),
        "unit",
        info.unit
      )
    ),
  histogram: (info, boundaries) =>
    fromKey(
      MetricKey.tagged(
        MetricKey.histogram(info.name, MetricBoundaries.fromIterable(boundaries), info.description),
        "unit",
        info.unit
      )
    ),
  withAttributes: (metric, attributes) => {
    const labels = attributes.map(([name, value]) => MetricLabel.make(name, value))
    const metricKey = keys.get(metric)
    return (metricKey === undefined
      ? Metric.taggedWithLabels(metric, labels)
      : fromKey(MetricKey.taggedWithLabels(metricKey, labels))) as typeof metric
  },
  recording: (record) =>
    Effect.withFiberRuntime((fiber) => {
      record(fiber.getFiberRef(FiberRef.currentMetricLabels))
      return Effect.void
    }),
  updateUnsafe: (metric, value, context) => {
    metric.unsafeUpdate(value, context)
  },
  nowMillis: (clock) => clock.unsafeCurrentTimeMillis(),
  nowNanos: (clock) => clock.unsafeCurrentTimeNanos(),
  failureOption: Cause.failureOption,
  isInterruptedOnly: Cause.isInterruptedOnly,
  // Effect 4's `useSpan` captures none; Effect 3's is told not to.
  withoutStackTrace: (options) => ({ ...options, captureStackTrace: false }),
  toMillis: (input) => Duration.toMillis(input),
  locally: (self, local, value) => Effect.locally(self, local, value),
  configString: (name) => Config.string(name),
  configRedacted: (name) => Config.redacted(name),
  configInteger: (name) => Config.integer(name),
  literals: (values) => Schema.Literal(...values),
  requestUrl: (request, baseUrl) =>
    Option.getOrUndefined(HttpClientRequest.toUrl(HttpClientRequest.prependUrl(request, baseUrl))),
  httpFailure: (error) =>
    error._tag === "RequestError"
      ? error.reason === "Transport"
        ? { _tag: "Connection", description: error.description }
        : { _tag: "Build", reason: error.reason }
      : { _tag: "Body" },
  // Effect 3 keeps these in fiber refs, set here on the running fiber and not restored: `self` must run in a fiber of
  // its own (`deadlines.ts` runs each attempt in one, whose fiber refs are not joined back into the caller's).
  // Restoring them around every request (`HttpClient.withTracerPropagation`, `Effect.provideService`,
  // `Effect.withParentSpan`) copied the fiber's refs each way.
  withAttemptContext: (self, span) =>
    Effect.zipRight(
      Effect.updateFiberRefs((fiberId, refs) =>
        FiberRefs.updateAs(
          FiberRefs.updateAs(
            FiberRefs.updateAs(refs, { fiberId, fiberRef: HttpClient.currentTracerPropagation, value: false }),
            { fiberId, fiberRef: HttpClient.currentTracerDisabledWhen, value: () => true }
          ),
          {
            fiberId,
            fiberRef: FiberRef.currentContext,
            value: FiberRefs.getOrDefault(refs, FiberRef.currentContext).pipe(
              Context.add(FetchHttpClient.RequestInit, { redirect: "manual" }),
              Context.add(Tracer.ParentSpan, span)
            )
          }
        )
      ),
      self
    ),
  makeInterruptor: (id) => FiberId.make(id, 0),
  interruptAs: (fiber, interruptor) => Effect.asVoid(Fiber.interruptAs(fiber, interruptor)),
  interruptorIds: (cause) =>
    Array.from(Cause.interruptors(cause), (interruptor) => Array.from(FiberId.ids(interruptor))).flat(),
  // Effect 3: the error's `reason` is `"StoreError"`.
  storeErrorMessage: (error) => error.reason === "StoreError" ? error.message : undefined,
  storeError: (message, cause) => new RateLimiterModule.RateLimitStoreError({ message, cause }),
  logAt: (level, message) => Effect.logWithLevel(level === "Info" ? LogLevel.Info : LogLevel.Debug, message),
  decodeDuration: (input) => Option.getOrUndefined(Duration.decodeUnknown(input)),
  toDuration: (input) => Duration.decode(input),
  invalidSetting: (path, message) => ConfigErrorModule.InvalidData([...path], message),
  configLiteral: (values, name) => Config.literal(...values)(name),
  configParsed: (name, parse, message) =>
    Config.mapOrFail(Config.string(name), (text) => {
      const value = parse(text)
      // The path is the setting's own: `Config` puts its name in front.
      return value === undefined ? Either.left(ConfigErrorModule.InvalidData([], message)) : Either.right(value)
    }),
  configProblems,
  catchFailure: (self, f) => Effect.catchAll(self, f),
  scopedLayer: (service, effect) => Layer.scoped(service, effect)
}

export const {
  catchFailure,
  completeDeferred,
  configInteger,
  configLiteral,
  configParsed,
  configRedacted,
  configString,
  counter,
  decodeDuration,
  failureOption,
  histogram,
  httpFailure,
  interruptAs,
  interruptorIds,
  invalidSetting,
  isInterruptedOnly,
  literals,
  locally,
  logAt,
  makeDeferred,
  makeInterruptor,
  makeLocal,
  nowMillis,
  nowNanos,
  randomBetween,
  recording,
  requestUrl,
  result,
  Result,
  scopedLayer,
  Service,
  storeError,
  storeErrorMessage,
  toDuration,
  toMillis,
  updateUnsafe,
  withAttemptContext,
  withAttributes,
  withLocals,
  withoutStackTrace
} = edition
export { configProblems }
