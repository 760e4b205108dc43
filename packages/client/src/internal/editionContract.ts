/**
 * The contract of this package's adapter (docs/editions.md): each function `src/internal/edition.ts` gives the shared
 * source, with its signature and what it does, written once. Each edition's adapter implements it with its own
 * Effect's API (`const edition: Contract = { ... }`); the types that differ between the editions (what a `Result`, a
 * `Local` or a `Counter` is) are the adapter's own, named here from it.
 */
import type * as Settings from "@erp-client/kernel/Settings"
import type { MetricInfo } from "@erp-client/kernel/Telemetry"
import type * as Cause from "effect/Cause"
import type * as Clock from "effect/Clock"
import type * as Config from "effect/Config"
import type * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import type * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import type * as Tracer from "effect/Tracer"
import type {
  AnyMetric,
  ConfigError,
  Counter,
  DurationInput,
  Histogram,
  HttpClientError,
  HttpClientRequest,
  Interruptor,
  Literals,
  Local,
  MetricContext,
  RateLimiter,
  Result,
  ServiceClass,
  ServiceKey,
  SpanOptions
} from "./edition.js"

/** What the shared source does with a `Result`, under Effect 4's names. */
export interface ResultContract {
  readonly succeed: <A>(value: A) => Result<A, never>
  readonly fail: <E>(error: E) => Result<never, E>
  readonly map: <A, E, B>(self: Result<A, E>, f: (a: A) => B) => Result<B, E>
  readonly mapError: <A, E, E2>(self: Result<A, E>, f: (e: E) => E2) => Result<A, E2>
  readonly flatMap: <A, E, B, E2>(self: Result<A, E>, f: (a: A) => Result<B, E2>) => Result<B, E | E2>
  readonly match: <A, E, B, C>(
    self: Result<A, E>,
    cases: { readonly onFailure: (error: E) => B; readonly onSuccess: (value: A) => C }
  ) => B | C
  /** Whether `self` is a success. */
  readonly isSuccess: <A, E>(self: Result<A, E>) => boolean
  /** The success of `self`, or `undefined` for a failure. */
  readonly getOrUndefined: <A, E>(self: Result<A, E>) => A | undefined
  /** The failure of `self`, or `undefined` for a success. */
  readonly failureOrUndefined: <A, E>(self: Result<A, E>) => E | undefined
  /** The result as an effect that succeeds or fails with it. */
  readonly toEffect: <A, E>(self: Result<A, E>) => Effect.Effect<A, E>
}

/** The functions of the adapter, by name. */
export interface Contract {
  /** What the shared source does with a `Result`, under Effect 4's names. */
  readonly Result: ResultContract
  /** `self`'s success or failure as a result, never failing. */
  readonly result: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<Result<A, E>, never, R>
  /** A `Local` holding `initial` until set; `key` names it where the edition names one (a service key). */
  readonly makeLocal: <A>(key: string, initial: A) => Local<A>
  /** Runs `f` with a reader of the running fiber's `Local`s, read at once rather than an effect each. */
  readonly withLocals: <X, E, R>(
    f: (get: <A>(local: Local<A>) => A) => Effect.Effect<X, E, R>
  ) => Effect.Effect<X, E, R>
  /** The base of a service's class, `class X extends Service<X, Shape>()(key) {}`. */
  readonly Service: <Self, Shape>() => <const Key extends string>(key: Key) => ServiceClass<Self, Key, Shape>
  /** A random number in [min, max). */
  readonly randomBetween: (min: number, max: number) => Effect.Effect<number>
  /** A deferred made outside any fiber, completed by `completeDeferred`. */
  readonly makeDeferred: <A, E = never>() => Deferred.Deferred<A, E>
  /** Completes `self` with `exit` at once, outside any fiber. */
  readonly completeDeferred: <A, E>(self: Deferred.Deferred<A, E>, exit: Exit.Exit<A, E>) => void
  /** A monotonic counter named by `info`, its unit (UCUM, or an annotation in braces) an attribute. */
  readonly counter: (info: MetricInfo) => Counter
  /** A histogram named by `info` with these boundaries, its unit an attribute. */
  readonly histogram: (info: MetricInfo, boundaries: ReadonlyArray<number>) => Histogram
  /** `metric` with these attributes (name, value) added: a new metric each time (cache it). */
  readonly withAttributes: <M extends AnyMetric>(metric: M, attributes: ReadonlyArray<readonly [string, string]>) => M
  /** Runs `record` with the fiber's `MetricContext`: several updates in one step. */
  readonly recording: (record: (context: MetricContext) => void) => Effect.Effect<void>
  /** Updates `metric` by `value` at once (inside `recording`). */
  readonly updateUnsafe: (metric: Counter | Histogram, value: number, context: MetricContext) => void
  /** The clock's time now, in milliseconds, read at once. */
  readonly nowMillis: (clock: Clock.Clock) => number
  /** The clock's time now, in nanoseconds, read at once. */
  readonly nowNanos: (clock: Clock.Clock) => bigint
  /** The first failure of `cause`, if it has one (not a defect, not an interruption). */
  readonly failureOption: <E>(cause: Cause.Cause<E>) => Option.Option<E>
  /** Whether `cause` is interruptions only. */
  readonly isInterruptedOnly: <E>(cause: Cause.Cause<E>) => boolean
  /** `options` with no stack trace captured: a stack trace per span costs more than the rest of it. */
  readonly withoutStackTrace: (options: SpanOptions) => SpanOptions
  /** `input` in milliseconds. */
  readonly toMillis: (input: DurationInput) => number
  /** `self` with `local` set to `value` while it runs. */
  readonly locally: <A, E, R, X>(self: Effect.Effect<A, E, R>, local: Local<X>, value: X) => Effect.Effect<A, E, R>
  /** A text setting. */
  readonly configString: (name: string) => Config.Config<string>
  /** A secret text setting. */
  readonly configRedacted: (name: string) => Config.Config<Redacted.Redacted<string>>
  /** An integer setting. */
  readonly configInteger: (name: string) => Config.Config<number>
  /** A schema of one of these strings. */
  readonly literals: <const L extends readonly [string, ...Array<string>]>(values: L) => Literals<L>
  /** The URL `request` goes to under `baseUrl`, if it makes one. */
  readonly requestUrl: (request: HttpClientRequest.HttpClientRequest, baseUrl: string) => URL | undefined
  /** What `error` was. */
  readonly httpFailure: (error: HttpClientError.HttpClientError) => HttpFailure
  /**
   * `self`, sent with what the platform reads from the sending fiber set for it: no trace headers to the third party,
   * no span of the platform's (the executor makes one per attempt, by the HTTP conventions), no redirect followed by a
   * fetch-based client, and `span` as the parent of anything the HttpClient traces.
   */
  readonly withAttemptContext: <A, E>(self: Effect.Effect<A, E>, span: Tracer.AnySpan) => Effect.Effect<A, E>
  /** The interruptor of number `id` (a negative one is never a real fiber's). */
  readonly makeInterruptor: (id: number) => Interruptor
  /** Interrupts `fiber` as `interruptor`, and waits for it to end. */
  readonly interruptAs: <A, E>(fiber: Fiber.Fiber<A, E>, interruptor: Interruptor) => Effect.Effect<void>
  /** The numbers of whoever interrupted in `cause` (`undefined` for an interruption that names nobody). */
  readonly interruptorIds: (cause: Cause.Cause<unknown>) => Array<number | undefined>
  /** What a store's failure says, `undefined` for any other rejection. */
  readonly storeErrorMessage: (error: RateLimiter.RateLimiterError) => string | undefined
  /** A store's failure saying `message`. */
  readonly storeError: (message: string, cause?: unknown) => RateLimiter.RateLimiterError
  /** Logs `message` at Info or Debug. */
  readonly logAt: (level: "Info" | "Debug", message: string) => Effect.Effect<void>
  /** `input` as a duration, `undefined` when it is not one. */
  readonly decodeDuration: (input: unknown) => Duration.Duration | undefined
  /** `input` as a duration (a `DurationInput` always is one). */
  readonly toDuration: (input: DurationInput) => Duration.Duration
  /** A setting that failed its check, at `path` (the option's name). */
  readonly invalidSetting: (path: ReadonlyArray<string>, message: string) => ConfigError
  /** A setting that is one of these strings. */
  readonly configLiteral: <const Values extends ReadonlyArray<string>>(
    values: Values,
    name: string
  ) => Config.Config<Values[number]>
  /** A text setting read through `parse`, failing with `message` at the setting's path where it gives `undefined`. */
  readonly configParsed: <A>(
    name: string,
    parse: (text: string) => A | undefined,
    message: string
  ) => Config.Config<A>
  /**
   * What failed in a `ConfigError`, leaf by leaf (the kernel's `Settings.Problem`): a variable not set, or a value read
   * or checked that failed. Reading names the variable; a check after reading names the option.
   */
  readonly configProblems: (error: ConfigError) => ReadonlyArray<Settings.Problem>
  /** `self`, a failure of it handled by `f`. */
  readonly catchFailure: <A, E, R, A2, E2, R2>(
    self: Effect.Effect<A, E, R>,
    f: (error: E) => Effect.Effect<A2, E2, R2>
  ) => Effect.Effect<A | A2, E2, R | R2>
  /** A layer of the service `effect` makes, its resources held for the layer's life. */
  readonly scopedLayer: <I, S, E, R>(
    service: ServiceKey<I, S>,
    effect: Effect.Effect<NoInfer<S>, E, R>
  ) => Layer.Layer<I, E, Exclude<R, Scope.Scope>>
}

/**
 * What an `HttpClientError` was: the request could not be built (`reason` says why), the connection failed, or the
 * body broke off.
 */
export type HttpFailure =
  | { readonly _tag: "Build"; readonly reason: string }
  | { readonly _tag: "Connection"; readonly description: string | undefined }
  | { readonly _tag: "Body" }
