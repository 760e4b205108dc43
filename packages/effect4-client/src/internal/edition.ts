// Per edition: the Effect APIs this package uses whose names or shapes differ between Effect 3 and Effect 4.
/**
 * The Effect 4 edition's side of the adapter the shared source imports (docs/editions.md): each name here has a twin
 * of the same type in `packages/client/src/internal/edition.ts`, written with Effect 3's API. The shared modules,
 * copied here from the Effect 3 package by `scripts/editions.ts`, import what differs from here and everything else
 * from `effect` itself.
 */
import type * as Settings from "@erp-client/kernel/Settings"
import type { MetricInfo } from "@erp-client/kernel/Telemetry"
import * as Cause from "effect/Cause"
import type * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpClient from "effect/http/HttpClient"
import type * as HttpClientError from "effect/http/HttpClientError"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Url from "effect/http/Url"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as RateLimiterModule from "effect/persistence/RateLimiter"
import * as Random from "effect/Random"
import type * as Redacted from "effect/Redacted"
import * as ResultModule from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import type * as Scope from "effect/Scope"
import * as Tracer from "effect/Tracer"

export * as HttpClientRequest from "effect/http/HttpClientRequest"

/** A success or a failure: Effect 3's `Either`, Effect 4's `Result` (success first in both). */
export type Result<A, E> = ResultModule.Result<A, E>

/** What the shared source does with a `Result`, under Effect 4's names. */
export const Result = {
  succeed: <A>(value: A): Result<A, never> => ResultModule.succeed(value),
  fail: <E>(error: E): Result<never, E> => ResultModule.fail(error),
  map: <A, E, B>(self: Result<A, E>, f: (a: A) => B): Result<B, E> => ResultModule.map(self, f),
  mapError: <A, E, E2>(self: Result<A, E>, f: (e: E) => E2): Result<A, E2> => ResultModule.mapError(self, f),
  flatMap: <A, E, B, E2>(self: Result<A, E>, f: (a: A) => Result<B, E2>): Result<B, E | E2> =>
    ResultModule.flatMap(self, f),
  match: <A, E, B, C>(
    self: Result<A, E>,
    cases: { readonly onFailure: (error: E) => B; readonly onSuccess: (value: A) => C }
  ): B | C => ResultModule.match(self, cases),
  /** Whether `self` is a success. */
  isSuccess: <A, E>(self: Result<A, E>): boolean => ResultModule.isSuccess(self),
  /** The success of `self`, or `undefined` for a failure. */
  getOrUndefined: <A, E>(self: Result<A, E>): A | undefined => ResultModule.getOrUndefined(self),
  /** The failure of `self`, or `undefined` for a success. */
  failureOrUndefined: <A, E>(self: Result<A, E>): E | undefined =>
    ResultModule.isFailure(self) ? self.failure : undefined,
  /** The result as an effect that succeeds or fails with it. */
  toEffect: <A, E>(self: Result<A, E>): Effect.Effect<A, E> => Effect.fromResult(self)
} as const

/** `self`'s success or failure as a result, never failing: Effect 4's `Effect.result`. */
export const result: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<Result<A, E>, never, R> = Effect.result

/** A value of the fiber that runs an effect, set for one effect: Effect 4's `Context.Reference`. */
export type Local<A> = Context.Reference<A>

/** A `Local` holding `initial` until set, named by `key` (a service key). */
export const makeLocal = <A>(key: string, initial: A): Local<A> =>
  Context.Reference<A>(key, { defaultValue: () => initial })

/** Runs `f` with a reader of the running fiber's `Local`s, read at once rather than an effect each. */
export const withLocals = <X, E, R>(
  f: (get: <A>(local: Local<A>) => A) => Effect.Effect<X, E, R>
): Effect.Effect<X, E, R> => Effect.withFiber((fiber) => f((local) => fiber.getRef(local)))

/** The base of a service's class, `class X extends Service<X, Shape>()(key) {}`: Effect 4's `Context.Service`. */
export const Service =
  <Self, Shape>() => <const Key extends string>(key: Key): Context.ServiceClass<Self, Key, Shape> =>
    Context.Service<Self, Shape>()(key)

/** A random number in [min, max): Effect 4's `Random.nextBetween`. */
export const randomBetween = (min: number, max: number): Effect.Effect<number> => Random.nextBetween(min, max)

/** A schema that decodes to `A`, from whatever it is encoded as and needing nothing. */
export type Decoder<A> = Schema.Decoder<A>

/** A deferred made outside any fiber, completed by `completeDeferred`. */
export const makeDeferred = <A, E = never>(): Deferred.Deferred<A, E> => Deferred.makeUnsafe<A, E>()

/** Completes `self` with `exit` at once, outside any fiber. */
export const completeDeferred = <A, E>(self: Deferred.Deferred<A, E>, exit: Exit.Exit<A, E>): void => {
  Deferred.doneUnsafe(self, exit)
}

/** Any metric. */
export type AnyMetric = Metric.Metric<any, any>

/** A counter of numbers. */
export type Counter = Metric.Counter<number>

/** A histogram of numbers. */
export type Histogram = Metric.Histogram<number>

/** A monotonic counter named by `info`, its unit (UCUM, or an annotation in braces) an attribute. */
export const counter = (info: MetricInfo): Counter =>
  Metric.counter(info.name, { description: info.description, incremental: true, attributes: { unit: info.unit } })

/** A histogram named by `info` with these boundaries, its unit an attribute. */
export const histogram = (info: MetricInfo, boundaries: ReadonlyArray<number>): Histogram =>
  Metric.histogram(info.name, {
    description: info.description,
    boundaries: Metric.boundariesFromIterable(boundaries),
    attributes: { unit: info.unit }
  })

/**
 * `metric` with these attributes (name, value) added: a new metric each time (cache it: `Metric.withAttributes` makes
 * a new metric, whose series key is computed again for each new object).
 */
export const withAttributes = <M extends AnyMetric>(
  metric: M,
  attributes: ReadonlyArray<readonly [string, string]>
): M => Metric.withAttributes(metric, Object.fromEntries(attributes)) as M

/** What a metric reads from the fiber that updates it: Effect 4's context (its registry, extra attributes). */
export type MetricContext = Context.Context<never>

/** Runs `record` with the fiber's `MetricContext`: several updates in one step. */
export const recording = (record: (context: MetricContext) => void): Effect.Effect<void> =>
  Effect.withFiber((fiber) => {
    record(fiber.context)
    return Effect.void
  })

/** Updates `metric` by `value` at once (inside `recording`). */
export const updateUnsafe = (metric: Counter | Histogram, value: number, context: MetricContext): void => {
  metric.updateUnsafe(value, context)
}

/** The clock's time now, in milliseconds, read at once. */
export const nowMillis = (clock: Clock.Clock): number => clock.currentTimeMillisUnsafe()

/** The clock's time now, in nanoseconds, read at once. */
export const nowNanos = (clock: Clock.Clock): bigint => clock.currentTimeNanosUnsafe()

/** The first failure of `cause`, if it has one (not a defect, not an interruption). */
export const failureOption: <E>(cause: Cause.Cause<E>) => Option.Option<E> = Cause.findErrorOption

/** Whether `cause` is interruptions only. */
export const isInterruptedOnly: <E>(cause: Cause.Cause<E>) => boolean = Cause.hasInterruptsOnly

/** A span's options, as `Effect.useSpan` takes them. */
export type SpanOptions = Tracer.SpanOptionsNoTrace

/** `options` with no stack trace captured: Effect 4's `useSpan` captures none (Effect 3's is told not to). */
export const withoutStackTrace = (options: SpanOptions): SpanOptions => options

// ErpClient, ErpConfig, transport

export * as HttpClient from "effect/http/HttpClient"
export * as HttpClientError from "effect/http/HttpClientError"
export * as HttpClientResponse from "effect/http/HttpClientResponse"

/** What `Duration` reads as a duration: Effect 4's `Duration.Input`. */
export type DurationInput = Duration.Input

/** `input` in milliseconds. */
export const toMillis = (input: DurationInput): number => Duration.toMillis(Duration.fromInputUnsafe(input))

/** `self` with `local` set to `value` while it runs: Effect 4's `Effect.provideService`. */
export const locally = <A, E, R, X>(self: Effect.Effect<A, E, R>, local: Local<X>, value: X): Effect.Effect<A, E, R> =>
  Effect.provideService(self, local, value)

/** Why settings were refused: Effect 4's `Config.ConfigError`. */
export type ConfigError = Config.ConfigError

/** A structure of `Config` values, or a `Config` of the structure: Effect 4's `Config.Wrap`. */
export type ConfigWrap<A> = Config.Wrap<A>

/** A text setting: Effect 4's `Config.String`. */
export const configString = (name: string): Config.Config<string> => Config.String(name)

/** A secret text setting: Effect 4's `Config.Redacted`. */
export const configRedacted = (name: string): Config.Config<Redacted.Redacted<string>> => Config.Redacted(name)

/** An integer setting: Effect 4's `Config.Int`. */
export const configInteger = (name: string): Config.Config<number> => Config.Int(name)

/** A `Result` built by a generator that yields `Result`s: Effect 4's `Result.gen`. */
export const resultGen = ResultModule.gen

/** A schema of one of these strings: Effect 4's `Schema.Literals(values)`. */
export const literals = <const L extends readonly [string, ...Array<string>]>(values: L): Schema.Literals<L> =>
  Schema.Literals(values)

/** The URL `request` goes to under `baseUrl`, if it makes one. */
export const requestUrl = (request: HttpClientRequest.HttpClientRequest, baseUrl: string): URL | undefined =>
  ResultModule.getOrUndefined(
    Url.make(request.url.startsWith(baseUrl) ? request.url : baseUrl + request.url, request.urlParams, undefined)
  )

/**
 * What an `HttpClientError` was: the request could not be built (`reason` says why), the connection failed, or the
 * body broke off.
 */
export type HttpFailure =
  | { readonly _tag: "Build"; readonly reason: string }
  | { readonly _tag: "Connection"; readonly description: string | undefined }
  | { readonly _tag: "Body" }

/** What `error` was. */
export const httpFailure = (error: HttpClientError.HttpClientError): HttpFailure => {
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
}

/**
 * `self`, sent with what the platform reads from the context of the effect that sends a request set for it: no trace
 * headers to the third party, no span of the platform's (the executor makes one per attempt, by the HTTP conventions),
 * no redirect followed by a fetch-based client, and `span` as the parent of anything the HttpClient traces. Effect 4
 * keeps these as context references, set for `self` alone.
 */
export const withAttemptContext = <A, E>(self: Effect.Effect<A, E>, span: Tracer.AnySpan): Effect.Effect<A, E> =>
  Effect.updateContext(self, (context: Context.Context<never>) =>
    Context.merge(
      context,
      Context.make(HttpClient.TracerPropagationEnabled, false).pipe(
        Context.add(HttpClient.TracerDisabledWhen, () => true),
        Context.add(FetchHttpClient.RequestInit, { redirect: "manual" }),
        Context.add(Tracer.ParentSpan, span)
      )
    ))

/** Who interrupted a fiber, as its cause records it: Effect 4's fiber id, a number. */
export type Interruptor = number

/** The interruptor of number `id` (a negative one is never a real fiber's). */
export const makeInterruptor = (id: number): Interruptor => id

/** Interrupts `fiber` as `interruptor`, and waits for it to end. */
export const interruptAs = <A, E>(fiber: Fiber.Fiber<A, E>, interruptor: Interruptor): Effect.Effect<void> =>
  Fiber.interruptAs(fiber, interruptor)

/** The numbers of whoever interrupted in `cause` (`undefined` for an interruption that names nobody). */
export const interruptorIds = (cause: Cause.Cause<unknown>): Array<number | undefined> =>
  cause.reasons.filter(Cause.isInterruptReason).map((reason) => reason.fiberId)

// The rate limiter's (`slots.ts`, `memory.ts`, `redisStores.ts`, `ErpRateLimiter`, `ErpRateLimiterRedis`).

/** The rate limiter and its store: `@effect/experimental`'s in Effect 3, `effect/persistence`'s in Effect 4. */
export * as RateLimiter from "effect/persistence/RateLimiter"

/** A service's shape, from its class: Effect 3's `X["Type"]`, Effect 4's `X["Service"]`. */
export type ServiceOf<Class extends { readonly Service: unknown }> = Class["Service"]

/** What a store's failure says, `undefined` for any other rejection (Effect 4: its `reason` is a store error). */
export const storeErrorMessage = (error: RateLimiterModule.RateLimiterError): string | undefined =>
  error.reason._tag === "RateLimitStoreError" ? error.reason.message : undefined

/** A store's failure saying `message`. */
export const storeError = (message: string, cause?: unknown): RateLimiterModule.RateLimiterError =>
  new RateLimiterModule.RateLimiterError({ reason: new RateLimiterModule.RateLimitStoreError({ message, cause }) })

/** The store's methods the limiter never calls, for a store written here: Effect 4's adaptive ones, turned off. */
export const unusedStoreMethods: Pick<
  RateLimiterModule.RateLimiterStore["Service"],
  "adaptiveConsume" | "adaptiveFeedback"
> = {
  adaptiveConsume: () => Effect.succeed({ delay: Duration.zero, epoch: 0, phase: "inactive" }),
  adaptiveFeedback: () => Effect.void
}

/** Logs `message` at Info or Debug. */
export const logAt = (level: "Info" | "Debug", message: string): Effect.Effect<void> =>
  Effect.logWithLevel(level)(message)

/** `input` as a duration, `undefined` when it is not one. */
export const decodeDuration = (input: unknown): Duration.Duration | undefined =>
  Option.getOrUndefined(Duration.fromInput(input as Duration.Input))

/** `input` as a duration (a `DurationInput` always is one). */
export const toDuration = (input: DurationInput): Duration.Duration => Duration.fromInputUnsafe(input)

/** A setting that failed its check, at `path` (the option's name). */
export const invalidSetting = (path: ReadonlyArray<string>, message: string): ConfigError =>
  new Config.ConfigError(
    new Schema.SchemaError(new SchemaIssue.Pointer(path, new SchemaIssue.InvalidValue({ message })))
  )

/** A setting that is one of these strings: Effect 4's `Config.Literals`. */
export const configLiteral = <const Values extends ReadonlyArray<string>>(
  values: Values,
  name: string
): Config.Config<Values[number]> => Config.Literals(values, name)

/** A text setting read through `parse`, failing with `message` at the setting's path where it gives `undefined`. */
export const configParsed = <A>(
  name: string,
  parse: (text: string) => A | undefined,
  message: string
): Config.Config<A> =>
  Config.mapEffect(Config.String(name), (text) => {
    const value = parse(text)
    return value === undefined ? Effect.fail(invalidSetting([name], message)) : Effect.succeed(value)
  })

/**
 * What failed in a `ConfigError` (the kernel's `Settings.Problem`), as Effect 4 reports it: a schema issue at the
 * setting's path, said by Schema's own formatter; a value the provider does not have (or not as text) is an
 * `InvalidType` with no input, which is a setting not set. Reading names the variable; a check after reading names
 * the option.
 */
export const configProblems = (error: ConfigError): ReadonlyArray<Settings.Problem> => {
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
  return issueFormatter(cause.issue).issues.map((issue): Settings.Problem => {
    const path = (issue.path ?? []).map((key) => String(typeof key === "object" ? key.key : key)).join(".")
    return { reason: missing.has(path) ? "Missing" : "Invalid", path, message: issue.message }
  })
}

const issueFormatter = SchemaIssue.makeFormatterStandardSchemaV1()

/** `self`, a failure of it handled by `f`: Effect 4's `Effect.catch`. */
export const catchFailure = <A, E, R, A2, E2, R2>(
  self: Effect.Effect<A, E, R>,
  f: (error: E) => Effect.Effect<A2, E2, R2>
): Effect.Effect<A | A2, E2, R | R2> => Effect.catch(self, f)

/** A layer of the service `effect` makes, its resources held for the layer's life: Effect 4's `Layer.effect`. */
export const scopedLayer = <I, S, E, R>(
  service: Context.Key<I, S>,
  effect: Effect.Effect<NoInfer<S>, E, R>
): Layer.Layer<I, E, Exclude<R, Scope.Scope>> => Layer.effect(service, effect)
