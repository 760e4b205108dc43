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
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as Settings from "@erp-client/kernel/Settings"
import type { MetricInfo } from "@erp-client/kernel/Telemetry"
import * as Cause from "effect/Cause"
import type * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as ConfigErrorModule from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Exit from "effect/Exit"
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
import type * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Tracer from "effect/Tracer"

export * as HttpClientRequest from "@effect/platform/HttpClientRequest"

/** A success or a failure: Effect 3's `Either`, Effect 4's `Result` (success first in both). */
export type Result<A, E> = Either.Either<A, E>

/** What the shared source does with a `Result`, under Effect 4's names. */
export const Result = {
  succeed: <A>(value: A): Result<A, never> => Either.right(value),
  fail: <E>(error: E): Result<never, E> => Either.left(error),
  map: <A, E, B>(self: Result<A, E>, f: (a: A) => B): Result<B, E> => Either.map(self, f),
  mapError: <A, E, E2>(self: Result<A, E>, f: (e: E) => E2): Result<A, E2> => Either.mapLeft(self, f),
  flatMap: <A, E, B, E2>(self: Result<A, E>, f: (a: A) => Result<B, E2>): Result<B, E | E2> => Either.flatMap(self, f),
  match: <A, E, B, C>(
    self: Result<A, E>,
    cases: { readonly onFailure: (error: E) => B; readonly onSuccess: (value: A) => C }
  ): B | C => Either.match(self, { onLeft: cases.onFailure, onRight: cases.onSuccess }),
  /** Whether `self` is a success. */
  isSuccess: <A, E>(self: Result<A, E>): boolean => Either.isRight(self),
  /** The success of `self`, or `undefined` for a failure. */
  getOrUndefined: <A, E>(self: Result<A, E>): A | undefined => Either.getOrUndefined(self),
  /** The failure of `self`, or `undefined` for a success. */
  failureOrUndefined: <A, E>(self: Result<A, E>): E | undefined => Either.isLeft(self) ? self.left : undefined,
  /** The result as an effect that succeeds or fails with it (an Effect 3 `Either` is one already). */
  toEffect: <A, E>(self: Result<A, E>): Effect.Effect<A, E> => self
} as const

/** `self`'s success or failure as a result, never failing: Effect 3's `Effect.either`. */
export const result: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<Result<A, E>, never, R> = Effect.either

/** A value of the fiber that runs an effect, set for one effect: Effect 3's `FiberRef`. */
export type Local<A> = FiberRef.FiberRef<A>

/** A `Local` holding `initial` until set; `key` names it in Effect 4 (Effect 3's `FiberRef` has no name). */
export const makeLocal = <A>(_key: string, initial: A): Local<A> => FiberRef.unsafeMake<A>(initial)

/** Runs `f` with a reader of the running fiber's `Local`s, read at once rather than an effect each. */
export const withLocals = <X, E, R>(
  f: (get: <A>(local: Local<A>) => A) => Effect.Effect<X, E, R>
): Effect.Effect<X, E, R> => Effect.withFiberRuntime((fiber) => f((local) => fiber.getFiberRef(local)))

/**
 * The base of a service's class, `class X extends Service<X, Shape>()(key) {}`: Effect 3's `Context.Tag(key)<X, Shape>()`.
 */
export const Service = <Self, Shape>() => <const Key extends string>(key: Key): Context.TagClass<Self, Key, Shape> =>
  Context.Tag(key)<Self, Shape>()

/** A random number in [min, max): Effect 3's `Random.nextRange`. */
export const randomBetween = (min: number, max: number): Effect.Effect<number> => Random.nextRange(min, max)

/** A schema that decodes to `A`, from whatever it is encoded as and needing nothing. */
export type Decoder<A> = Schema.Schema<A, any>

/** A deferred made outside any fiber, completed by `completeDeferred`. */
export const makeDeferred = <A, E = never>(): Deferred.Deferred<A, E> => Deferred.unsafeMake<A, E>(FiberId.none)

/** Completes `self` with `exit` at once, outside any fiber. */
export const completeDeferred = <A, E>(self: Deferred.Deferred<A, E>, exit: Exit.Exit<A, E>): void => {
  Deferred.unsafeDone(self, exit)
}

/** Any metric. */
export type AnyMetric = Metric.Metric<any, any, any>

/** A counter of numbers. */
export type Counter = Metric.Metric.Counter<number>

/** A histogram of numbers. */
export type Histogram = Metric.Metric.Histogram<number>

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

/** A monotonic counter named by `info`, its unit (UCUM, or an annotation in braces) an attribute. */
export const counter = (info: MetricInfo): Counter =>
  fromKey(
    MetricKey.tagged(
      MetricKey.counter(info.name, { description: info.description, incremental: true }),
      "unit",
      info.unit
    )
  )

/** A histogram named by `info` with these boundaries, its unit an attribute. */
export const histogram = (info: MetricInfo, boundaries: ReadonlyArray<number>): Histogram =>
  fromKey(
    MetricKey.tagged(
      MetricKey.histogram(info.name, MetricBoundaries.fromIterable(boundaries), info.description),
      "unit",
      info.unit
    )
  )

/** `metric` with these attributes (name, value) added: a new metric each time (cache it). */
export const withAttributes = <M extends AnyMetric>(
  metric: M,
  attributes: ReadonlyArray<readonly [string, string]>
): M => {
  const labels = attributes.map(([name, value]) => MetricLabel.make(name, value))
  const metricKey = keys.get(metric)
  return (metricKey === undefined
    ? Metric.taggedWithLabels(metric, labels)
    : fromKey(MetricKey.taggedWithLabels(metricKey, labels))) as M
}

/** What a metric reads from the fiber that updates it: Effect 3's metric labels (Effect 4: the fiber's context). */
export type MetricContext = ReadonlyArray<MetricLabel.MetricLabel>

/** Runs `record` with the fiber's `MetricContext`: several updates in one step. */
export const recording = (record: (context: MetricContext) => void): Effect.Effect<void> =>
  Effect.withFiberRuntime((fiber) => {
    record(fiber.getFiberRef(FiberRef.currentMetricLabels))
    return Effect.void
  })

/** Updates `metric` by `value` at once (inside `recording`). */
export const updateUnsafe = (metric: Counter | Histogram, value: number, context: MetricContext): void => {
  metric.unsafeUpdate(value, context)
}

/** The clock's time now, in milliseconds, read at once. */
export const nowMillis = (clock: Clock.Clock): number => clock.unsafeCurrentTimeMillis()

/** The clock's time now, in nanoseconds, read at once. */
export const nowNanos = (clock: Clock.Clock): bigint => clock.unsafeCurrentTimeNanos()

/** The first failure of `cause`, if it has one (not a defect, not an interruption). */
export const failureOption: <E>(cause: Cause.Cause<E>) => Option.Option<E> = Cause.failureOption

/** Whether `cause` is interruptions only. */
export const isInterruptedOnly: <E>(cause: Cause.Cause<E>) => boolean = Cause.isInterruptedOnly

/** A span's options, as `Effect.useSpan` takes them. */
export type SpanOptions = Tracer.SpanOptions

/**
 * `options` with no stack trace captured: a stack trace per span costs more than the rest of it, and its attributes
 * say where it came from (Effect 4's `useSpan` captures none).
 */
export const withoutStackTrace = (options: SpanOptions): SpanOptions => ({ ...options, captureStackTrace: false })

// ErpClient, ErpConfig, transport

export * as HttpClient from "@effect/platform/HttpClient"
export * as HttpClientError from "@effect/platform/HttpClientError"
export * as HttpClientResponse from "@effect/platform/HttpClientResponse"

/** What `Duration` reads as a duration: Effect 3's `DurationInput`. */
export type DurationInput = Duration.DurationInput

/** `input` in milliseconds. */
export const toMillis = (input: DurationInput): number => Duration.toMillis(input)

/** `self` with `local` set to `value` while it runs: Effect 3's `Effect.locally`. */
export const locally = <A, E, R, X>(self: Effect.Effect<A, E, R>, local: Local<X>, value: X): Effect.Effect<A, E, R> =>
  Effect.locally(self, local, value)

/** Why settings were refused: Effect 3's `ConfigError`. */
export type ConfigError = ConfigErrorModule.ConfigError

/** A structure of `Config` values, or a `Config` of the structure: Effect 3's `Config.Config.Wrap`. */
export type ConfigWrap<A> = Config.Config.Wrap<A>

/** A text setting: Effect 3's `Config.string`. */
export const configString = (name: string): Config.Config<string> => Config.string(name)

/** A secret text setting: Effect 3's `Config.redacted`. */
export const configRedacted = (name: string): Config.Config<Redacted.Redacted<string>> => Config.redacted(name)

/** An integer setting: Effect 3's `Config.integer`. */
export const configInteger = (name: string): Config.Config<number> => Config.integer(name)

/** A `Result` built by a generator that yields `Result`s: Effect 3's `Either.gen`. */
export const resultGen = Either.gen

/** A schema of one of these strings: Effect 3's `Schema.Literal(...values)`. */
export const literals = <const L extends readonly [string, ...Array<string>]>(values: L): Schema.Literal<[...L]> =>
  Schema.Literal(...values)

/** The URL `request` goes to under `baseUrl`, if it makes one. */
export const requestUrl = (request: HttpClientRequest.HttpClientRequest, baseUrl: string): URL | undefined =>
  Option.getOrUndefined(HttpClientRequest.toUrl(HttpClientRequest.prependUrl(request, baseUrl)))

/**
 * What an `HttpClientError` was: the request could not be built (`reason` says why), the connection failed, or the
 * body broke off.
 */
export type HttpFailure =
  | { readonly _tag: "Build"; readonly reason: string }
  | { readonly _tag: "Connection"; readonly description: string | undefined }
  | { readonly _tag: "Body" }

/** What `error` was. */
export const httpFailure = (error: HttpClientError.HttpClientError): HttpFailure =>
  error._tag === "RequestError"
    ? error.reason === "Transport"
      ? { _tag: "Connection", description: error.description }
      : { _tag: "Build", reason: error.reason }
    : { _tag: "Body" }

/**
 * `self`, sent with what the platform reads from the sending fiber set for it: no trace headers to the third party, no
 * span of the platform's (the executor makes one per attempt, by the HTTP conventions), no redirect followed by a
 * fetch-based client, and `span` as the parent of anything the HttpClient traces. Effect 3 keeps these in fiber refs,
 * set here on the running fiber and not restored: `self` must run in a fiber of its own (`deadlines.ts` runs each
 * attempt in one, whose fiber refs are not joined back into the caller's). Restoring them around every request
 * (`HttpClient.withTracerPropagation`, `Effect.provideService`, `Effect.withParentSpan`) copied the fiber's refs each
 * way.
 */
export const withAttemptContext = <A, E>(self: Effect.Effect<A, E>, span: Tracer.AnySpan): Effect.Effect<A, E> =>
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
  )

/** Who interrupted a fiber, as its cause records it: Effect 3's `FiberId`. */
export type Interruptor = FiberId.FiberId

/** The interruptor of number `id` (a negative one is never a real fiber's). */
export const makeInterruptor = (id: number): Interruptor => FiberId.make(id, 0)

/** Interrupts `fiber` as `interruptor`, and waits for it to end. */
export const interruptAs = <A, E>(fiber: Fiber.Fiber<A, E>, interruptor: Interruptor): Effect.Effect<void> =>
  Effect.asVoid(Fiber.interruptAs(fiber, interruptor))

/** The numbers of whoever interrupted in `cause` (`undefined` for an interruption that names nobody). */
export const interruptorIds = (cause: Cause.Cause<unknown>): Array<number | undefined> =>
  Array.from(Cause.interruptors(cause), (interruptor) => Array.from(FiberId.ids(interruptor))).flat()

// The rate limiter's (`slots.ts`, `memory.ts`, `redisStores.ts`, `ErpRateLimiter`, `ErpRateLimiterRedis`).

/** The rate limiter and its store: `@effect/experimental`'s in Effect 3, `effect/persistence`'s in Effect 4. */
export * as RateLimiter from "@effect/experimental/RateLimiter"

/** A service's shape, from its class: Effect 3's `X["Type"]`, Effect 4's `X["Service"]`. */
export type ServiceOf<Class extends { readonly Type: unknown }> = Class["Type"]

/** What a store's failure says, `undefined` for any other rejection (Effect 3: `reason` is `"StoreError"`). */
export const storeErrorMessage = (error: RateLimiterModule.RateLimiterError): string | undefined =>
  error.reason === "StoreError" ? error.message : undefined

/** A store's failure saying `message`. */
export const storeError = (message: string, cause?: unknown): RateLimiterModule.RateLimiterError =>
  new RateLimiterModule.RateLimitStoreError({ message, cause })

/** The store's methods the limiter never calls, for a store written here: Effect 3's store has none. */
export const unusedStoreMethods: Record<never, never> = {}

/** Logs `message` at Info or Debug. */
export const logAt = (level: "Info" | "Debug", message: string): Effect.Effect<void> =>
  Effect.logWithLevel(level === "Info" ? LogLevel.Info : LogLevel.Debug, message)

/** `input` as a duration, `undefined` when it is not one. */
export const decodeDuration = (input: unknown): Duration.Duration | undefined =>
  Option.getOrUndefined(Duration.decodeUnknown(input))

/** `input` as a duration (a `DurationInput` always is one). */
export const toDuration = (input: DurationInput): Duration.Duration => Duration.decode(input)

/** A setting that failed its check, at `path` (the option's name). */
export const invalidSetting = (path: ReadonlyArray<string>, message: string): ConfigError =>
  ConfigErrorModule.InvalidData([...path], message)

/** A setting that is one of these strings: Effect 3's `Config.literal`. */
export const configLiteral = <const Values extends ReadonlyArray<string>>(
  values: Values,
  name: string
): Config.Config<Values[number]> => Config.literal(...values)(name)

/** A text setting read through `parse`, failing with `message` at the setting's path where it gives `undefined`. */
export const configParsed = <A>(
  name: string,
  parse: (text: string) => A | undefined,
  message: string
): Config.Config<A> =>
  Config.mapOrFail(Config.string(name), (text) => {
    const value = parse(text)
    // The path is the setting's own: `Config` puts its name in front.
    return value === undefined ? Either.left(ConfigErrorModule.InvalidData([], message)) : Either.right(value)
  })

/**
 * What failed in a `ConfigError`, leaf by leaf (the kernel's `Settings.Problem`): a variable not set, or a value read
 * or checked that failed. Reading names the variable; a check after reading names the option.
 */
export const configProblems = (error: ConfigError): ReadonlyArray<Settings.Problem> => {
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

/** `self`, a failure of it handled by `f`: Effect 3's `Effect.catchAll`. */
export const catchFailure = <A, E, R, A2, E2, R2>(
  self: Effect.Effect<A, E, R>,
  f: (error: E) => Effect.Effect<A2, E2, R2>
): Effect.Effect<A | A2, E2, R | R2> => Effect.catchAll(self, f)

/** A layer of the service `effect` makes, its resources held for the layer's life: Effect 3's `Layer.scoped`. */
export const scopedLayer = <I, S, E, R>(
  service: Context.Tag<I, S>,
  effect: Effect.Effect<NoInfer<S>, E, R>
): Layer.Layer<I, E, Exclude<R, Scope.Scope>> => Layer.scoped(service, effect)
