// Per edition: the Effect APIs this package uses whose names or shapes differ between Effect 3 and Effect 4.
/**
 * The Effect 4 edition's side of the adapter the shared source imports (docs/editions.md): each name here has a twin
 * of the same type in `packages/client/src/internal/edition.ts`, written with Effect 3's API. The shared modules,
 * copied here from the Effect 3 package by `scripts/editions.ts`, import what differs from here and everything else
 * from `effect` itself.
 */
import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpClient from "effect/http/HttpClient"
import * as Url from "effect/http/Url"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as RateLimiterModule from "effect/persistence/RateLimiter"
import * as Random from "effect/Random"
import * as ResultModule from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import * as Tracer from "effect/Tracer"
import type { Contract } from "./editionContract.js"

export * as HttpClient from "effect/http/HttpClient"
export * as HttpClientError from "effect/http/HttpClientError"
export * as HttpClientRequest from "effect/http/HttpClientRequest"
export * as HttpClientResponse from "effect/http/HttpClientResponse"
/** The rate limiter and its store: `@effect/experimental`'s in Effect 3, `effect/persistence`'s in Effect 4. */
export * as RateLimiter from "effect/persistence/RateLimiter"
export type { HttpFailure } from "./editionContract.js"

// The types that differ between the editions: the contract (`editionContract.ts`) names its functions' types by these.

/** A success or a failure: Effect 3's `Either`, Effect 4's `Result` (success first in both). */
export type Result<A, E> = ResultModule.Result<A, E>

/** A value of the fiber that runs an effect, set for one effect: Effect 4's `Context.Reference`. */
export type Local<A> = Context.Reference<A>

/** The class a service's class extends: Effect 4's `Context.ServiceClass`. */
export type ServiceClass<Self, Key extends string, Shape> = Context.ServiceClass<Self, Key, Shape>

/** The key of a service: Effect 4's `Context.Key`. */
export type ServiceKey<I, S> = Context.Key<I, S>

/** A schema that decodes to `A`, from whatever it is encoded as and needing nothing. */
export type Decoder<A> = Schema.Decoder<A>

/** A schema of one of these strings: Effect 4's `Schema.Literals`. */
export type Literals<L extends readonly [string, ...Array<string>]> = Schema.Literals<L>

/** Any metric. */
export type AnyMetric = Metric.Metric<any, any>

/** A counter of numbers. */
export type Counter = Metric.Counter<number>

/** A histogram of numbers. */
export type Histogram = Metric.Histogram<number>

/** What a metric reads from the fiber that updates it: Effect 4's context (its registry, extra attributes). */
export type MetricContext = Context.Context<never>

/** A span's options, as `Effect.useSpan` takes them. */
export type SpanOptions = Tracer.SpanOptionsNoTrace

/** What `Duration` reads as a duration: Effect 4's `Duration.Input`. */
export type DurationInput = Duration.Input

/** Why settings were refused: Effect 4's `Config.ConfigError`. */
export type ConfigError = Config.ConfigError

/** A structure of `Config` values, or a `Config` of the structure: Effect 4's `Config.Wrap`. */
export type ConfigWrap<A> = Config.Wrap<A>

/** Who interrupted a fiber, as its cause records it: Effect 4's fiber id, a number. */
export type Interruptor = number

/** A service's shape, from its class: Effect 3's `X["Type"]`, Effect 4's `X["Service"]`. */
export type ServiceOf<Class extends { readonly Service: unknown }> = Class["Service"]

/** A `Result` built by a generator that yields `Result`s: Effect 4's `Result.gen`. */
export const resultGen = ResultModule.gen

/** The store's methods the limiter never calls, for a store written here: Effect 4's adaptive ones, turned off. */
export const unusedStoreMethods: Pick<
  RateLimiterModule.RateLimiterStore["Service"],
  "adaptiveConsume" | "adaptiveFeedback"
> = {
  adaptiveConsume: () => Effect.succeed({ delay: Duration.zero, epoch: 0, phase: "inactive" }),
  adaptiveFeedback: () => Effect.void
}

const invalidSetting: Contract["invalidSetting"] = (path, message) =>
  new Config.ConfigError(
    new Schema.SchemaError(new SchemaIssue.Pointer(path, new SchemaIssue.InvalidValue({ message })))
  )

const issueFormatter = SchemaIssue.makeFormatterStandardSchemaV1()

/** The adapter, with Effect 4's API: what each function does is said once, in `Contract`. */
const edition: Contract = {
  Result: {
    succeed: (value) => ResultModule.succeed(value),
    fail: (error) => ResultModule.fail(error),
    map: (self, f) => ResultModule.map(self, f),
    mapError: (self, f) => ResultModule.mapError(self, f),
    flatMap: (self, f) => ResultModule.flatMap(self, f),
    match: (self, cases) => ResultModule.match(self, cases),
    isSuccess: (self) => ResultModule.isSuccess(self),
    getOrUndefined: (self) => ResultModule.getOrUndefined(self),
    failureOrUndefined: (self) => ResultModule.isFailure(self) ? self.failure : undefined,
    toEffect: (self) => Effect.fromResult(self)
  },
  result: Effect.result,
  makeLocal: (key, initial) => Context.Reference(key, { defaultValue: () => initial }),
  withLocals: (f) => Effect.withFiber((fiber) => f((local) => fiber.getRef(local))),
  // Generic in the types its body passes on, so written with them: Effect 4's `Context.Service`.
  Service: <Self, Shape>() => <const Key extends string>(key: Key) => Context.Service<Self, Shape>()(key),
  randomBetween: (min, max) => Random.nextBetween(min, max),
  makeDeferred: () => Deferred.makeUnsafe(),
  completeDeferred: (self, exit) => {
    Deferred.doneUnsafe(self, exit)
  },
  counter: (info) =>
    Metric.counter(info.name, { description: info.description, incremental: true, attributes: { unit: info.unit } }),
  histogram: (info, boundaries) =>
    Metric.histogram(info.name, {
      description: info.description,
      boundaries: Metric.boundariesFromIterable(boundaries),
      attributes: { unit: info.unit }
    }),
  // `Metric.withAttributes` makes a new metric, whose series key is computed again for each new object.
  withAttributes: (metric, attributes) =>
    Metric.withAttributes(metric, Object.fromEntries(attributes)) as typeof metric,
  recording: (record) =>
    Effect.withFiber((fiber) => {
      record(fiber.context)
      return Effect.void
    }),
  updateUnsafe: (metric, value, context) => {
    metric.updateUnsafe(value, context)
  },
  nowMillis: (clock) => clock.currentTimeMillisUnsafe(),
  nowNanos: (clock) => clock.currentTimeNanosUnsafe(),
  failureOption: Cause.findErrorOption,
  isInterruptedOnly: Cause.hasInterruptsOnly,
  // Effect 4's `useSpan` captures none.
  withoutStackTrace: (options) => options,
  toMillis: (input) => Duration.toMillis(Duration.fromInputUnsafe(input)),
  locally: (self, local, value) => Effect.provideService(self, local, value),
  configString: (name) => Config.String(name),
  configRedacted: (name) => Config.Redacted(name),
  configInteger: (name) => Config.Int(name),
  literals: (values) => Schema.Literals(values),
  requestUrl: (request, baseUrl) =>
    ResultModule.getOrUndefined(
      Url.make(request.url.startsWith(baseUrl) ? request.url : baseUrl + request.url, request.urlParams, undefined)
    ),
  httpFailure: (error) => {
    const reason = error.reason
    switch (reason._tag) {
      case "EncodeError":
      case "InvalidUrlError":
        return { _tag: "Build", reason: reason._tag }
      case "TransportError":
        return { _tag: "Connection", description: reason.description }
      default:
        return { _tag: "Body" }
    }
  },
  // Effect 4 keeps these as context references, set for `self` alone.
  withAttemptContext: (self, span) =>
    Effect.updateContext(self, (context: Context.Context<never>) =>
      Context.merge(
        context,
        Context.make(HttpClient.TracerPropagationEnabled, false).pipe(
          Context.add(HttpClient.TracerDisabledWhen, () => true),
          Context.add(FetchHttpClient.RequestInit, { redirect: "manual" }),
          Context.add(Tracer.ParentSpan, span)
        )
      )),
  makeInterruptor: (id) => id,
  interruptAs: (fiber, interruptor) => Fiber.interruptAs(fiber, interruptor),
  interruptorIds: (cause) => cause.reasons.filter(Cause.isInterruptReason).map((reason) => reason.fiberId),
  // Effect 4: the error's `reason` is a store error.
  storeErrorMessage: (error) => error.reason._tag === "RateLimitStoreError" ? error.reason.message : undefined,
  storeError: (message, cause) =>
    new RateLimiterModule.RateLimiterError({ reason: new RateLimiterModule.RateLimitStoreError({ message, cause }) }),
  logAt: (level, message) => Effect.logWithLevel(level)(message),
  decodeDuration: (input) => Option.getOrUndefined(Duration.fromInput(input as Duration.Input)),
  toDuration: (input) => Duration.fromInputUnsafe(input),
  invalidSetting,
  configLiteral: (values, name) => Config.Literals(values, name),
  configParsed: (name, parse, message) =>
    Config.mapEffect(Config.String(name), (text) => {
      const value = parse(text)
      return value === undefined ? Effect.fail(invalidSetting([name], message)) : Effect.succeed(value)
    }),
  // Effect 4 reports a schema issue at the setting's path, said by Schema's own formatter; a value the provider does
  // not have (or not as text) is an `InvalidType` with no input, which is a setting not set.
  configProblems: (error) => {
    const cause = error.cause
    if (!Schema.isSchemaError(cause)) return [{ reason: "Invalid", path: "", message: cause.message }]
    const missing = new Set<string>()
    const walk = (issue: SchemaIssue.Issue, path: ReadonlyArray<PropertyKey>): void => {
      switch (issue._tag) {
        case "Pointer":
          return walk(issue.issue, [...path, ...issue.path])
        case "Filter":
        case "Encoding":
          return walk(issue.issue, path)
        case "Composite":
        case "AnyOf":
          return issue.issues.forEach((inner) => walk(inner, path))
        case "InvalidType":
          if (!SchemaIssue.hasInput(issue)) missing.add(path.map(String).join("."))
      }
    }
    walk(cause.issue, [])
    return issueFormatter(cause.issue).issues.map((issue) => {
      const path = (issue.path ?? []).map((key) => String(typeof key === "object" ? key.key : key)).join(".")
      return { reason: missing.has(path) ? "Missing" : "Invalid", path, message: issue.message }
    })
  },
  catchFailure: (self, f) => Effect.catch(self, f),
  scopedLayer: (service, effect) => Layer.effect(service, effect)
}

export const {
  catchFailure,
  completeDeferred,
  configInteger,
  configLiteral,
  configParsed,
  configProblems,
  configRedacted,
  configString,
  counter,
  decodeDuration,
  failureOption,
  histogram,
  httpFailure,
  interruptAs,
  interruptorIds,
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
export { invalidSetting }
