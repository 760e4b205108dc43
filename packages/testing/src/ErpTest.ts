/**
 * An in-memory ERP for your own tests: the `ErpClient` your services use, on the sandbox served without a socket, with
 * the rate limiter in memory, everything on Effect's clock. Under `@effect/vitest`'s `it.effect`, `TestClock` drives
 * the rate-limit windows, the server's pauses, retries and faults, so a test of minutes of ERP time takes
 * milliseconds; the `Sandbox` service says what the ERP saw and injects faults.
 *
 * @since 0.1.0
 */
import * as ErpClient from "@erp-client/client/ErpClient"
import type * as ErpConfig from "@erp-client/client/ErpConfig"
import * as ErpRateLimiter from "@erp-client/client/ErpRateLimiter"
import * as Sandbox from "@erp-client/sandbox/Sandbox"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Edition from "./internal/edition.js"
import * as Watch from "./internal/watch.js"

/**
 * @since 0.1.0
 * @category Models
 */
export interface Options {
  /**
   * The sandbox: its partners (a seeded count, or your own records), rate limit, faults, odd records, … (see
   * `Sandbox.InMemoryOptions`; default: 1,000 seeded partners, 100 requests per 30 seconds per endpoint, no faults). One
   * default differs from the sandbox's own: `X-RateLimit-Reset` is sent in seconds from now (`rateLimit.resetUnit:
   * "seconds"`), because a `TestClock` starts at 1970, where an epoch reset (`51`) reads as seconds from now (see
   * `resetFromNow`).
   */
  readonly sandbox?: Sandbox.InMemoryOptions | undefined
  /**
   * The client's settings over `clientDefaults`; `baseUrl` and `apiKey` default to the sandbox's (pass another key to
   * see `Unauthorized`).
   */
  readonly client?: Partial<ErpClient.Options> | undefined
  /** The limiter's settings (default: the sandbox's limit and window, or the contract's without one). */
  readonly rateLimiter?: ErpRateLimiter.Options | undefined
  /**
   * How long of real time a call may stand still on a `TestClock` nobody advances before one warning line on the
   * console says what it waits for and how to advance the clock (default 1 second; `false`: never). Only under a
   * `TestClock`; see the package README, "Time".
   */
  readonly stallWarning?: Edition.DurationInput | false | undefined
}

/**
 * The client settings the kit starts from, for tests: retries back off from 10 ms (not 200 ms), so the first ones
 * need little clock time, and up to 12 of them (not 8), so a call still rides out about half a minute of outage, as
 * with the client's defaults; a hung request times out after 10 seconds (not 30). Everything else is the client's
 * default.
 *
 * @since 0.1.0
 * @category Constants
 */
export const clientDefaults: Partial<ErpClient.Options> = {
  retryBaseDelay: Duration.millis(10),
  retries: 12,
  timeout: Duration.seconds(10)
}

/**
 * The sandbox's options with `X-RateLimit-Reset` in seconds from now, unless they choose a unit (or no limit). Under
 * a `TestClock`, which starts at 0 (1970-01-01), an epoch reset is a small number, which the client reads as seconds
 * from now (docs/erp-api-v2.md, "Limits", does not give the unit); to test epoch resets, choose the unit and move the
 * clock to today first (`TestClock.setTime`).
 *
 * @example
 * ```ts
 * import { ErpTest } from "@erp-client/testing"
 *
 * console.log(ErpTest.resetFromNow({ partners: 50, rateLimit: { limit: 3, window: "30 seconds" } }).rateLimit)
 * // => { limit: 3, window: '30 seconds', resetUnit: 'seconds' }
 *
 * // A unit you choose is kept
 * console.log(ErpTest.resetFromNow({ rateLimit: { resetUnit: "epoch-millis" } }).rateLimit)
 * // => { resetUnit: 'epoch-millis' }
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const resetFromNow = (options: Sandbox.InMemoryOptions = {}): Sandbox.InMemoryOptions =>
  options.rateLimit === false || options.rateLimit?.resetUnit !== undefined
    ? options
    : { ...options, rateLimit: { ...options.rateLimit, resetUnit: "seconds" } }

/**
 * The default of `Options.stallWarning`.
 *
 * @since 0.1.0
 * @category Constants
 */
export const defaultStallWarning: Duration.Duration = Duration.seconds(1)

/**
 * The `ErpClient` on an in-memory sandbox, with an in-memory `ErpRateLimiter`, and the `Sandbox` service to steer and
 * inspect it: no socket, no port, time on the Effect `Clock` of the test (`TestClock` under `it.effect`). Each build
 * is a fresh sandbox and limiter: provide it per test (`Effect.provide(ErpTest.layer())`), or share one with
 * `it.layer` where its state may be shared.
 *
 * @example
 * ```ts
 * import { ErpClient } from "@erp-client/client"
 * import { Sandbox } from "@erp-client/sandbox"
 * import { ErpTest } from "@erp-client/testing"
 * import { Effect, Schema } from "effect"
 *
 * const Partner = Schema.Struct({ id: Schema.Number, company_name: Schema.String })
 *
 * // Partner 7 of 10 seeded ones, and what the ERP saw (in a test: `it.effect("…", () => program)`)
 * const program = Effect.gen(function*() {
 *   const erp = yield* ErpClient.ErpClient
 *   const partner = yield* erp.get("partner/get", Partner, { params: [["id", "7"]], selector: "id=7" })
 *   const [request] = yield* (yield* Sandbox.Sandbox).requests
 *   return `${partner.company_name}: ${request.endpoint} ${request.status}`
 * }).pipe(Effect.provide(ErpTest.layer({ sandbox: { partners: 10 } })))
 *
 * Effect.runPromise(program).then(console.log) // => Harbor Machinery 7 Zrt.: /partner/get 200
 * ```
 *
 * @since 0.1.0
 * @category Layers
 */
export const layer = (
  options: Options = {}
): Layer.Layer<ErpClient.ErpClient | Sandbox.Sandbox, ErpConfig.ErpConfigError> =>
  Edition.scopedContext(Effect.gen(function*() {
    const { httpClient, sandbox } = yield* Sandbox.makeHttpClient(resetFromNow(options.sandbox))
    const limits = {
      ...(sandbox.rateLimit === false
        ? {}
        : { limit: sandbox.rateLimit.limit, window: Duration.millis(sandbox.rateLimit.windowMillis) }),
      ...options.rateLimiter
    }
    const stallWarning = options.stallWarning === false
      ? undefined
      : Edition.toDuration(options.stallWarning ?? defaultStallWarning)
    const watch = yield* Watch.make(sandbox, stallWarning)
    const limiter = yield* ErpRateLimiter.make(limits).pipe(
      Effect.provideService(ErpRateLimiter.WaitObserver, watch.observer)
    )
    const client = yield* ErpClient.make({
      baseUrl: sandbox.baseUrl,
      apiKey: Redacted.make(sandbox.apiKey),
      ...clientDefaults,
      ...options.client
    }).pipe(
      Effect.provideService(ErpRateLimiter.ErpRateLimiter, limiter),
      Effect.provideService(Edition.HttpClient.HttpClient, httpClient)
    )
    return Context.make(ErpClient.ErpClient, watch.track(client)).pipe(Context.add(Sandbox.Sandbox, sandbox))
  }))

/**
 * Runs `effect`, advancing the `TestClock` by `step` (default 100 ms) whenever it has not ended, until it ends: for a
 * call or an export whose waits (rate limit, pauses, retries) you do not want to count out by hand. At most `upTo` of
 * clock time (default 10 minutes); past it the effect is interrupted and this dies saying so. Under the live clock, it
 * just runs `effect`.
 *
 * @example
 * ```ts
 * import { ErpClient } from "@erp-client/client"
 * import { ErpTest } from "@erp-client/testing"
 * import { Clock, Effect, Schema, TestContext } from "effect"
 *
 * const Partner = Schema.Struct({ id: Schema.Number, company_name: Schema.String })
 *
 * // Five lookups at 2 requests per 30 seconds: a minute of ERP time, no real waiting
 * const program = Effect.gen(function*() {
 *   const erp = yield* ErpClient.ErpClient
 *   const ids = yield* Effect.forEach([1, 2, 3, 4, 5], (id) =>
 *     Effect.map(erp.get("partner/get", Partner, { params: [["id", String(id)]] }), (partner) => partner.id))
 *   return `${ids.join(",")} by ${yield* Clock.currentTimeMillis} ms`
 * }).pipe(
 *   ErpTest.advancing,
 *   Effect.provide(ErpTest.layer({ sandbox: { partners: 10, rateLimit: { limit: 2, window: "30 seconds" } } })),
 *   Effect.provide(TestContext.TestContext) // what `it.effect` provides
 * )
 *
 * Effect.runPromise(program).then(console.log) // => 1,2,3,4,5 by 61200 ms
 * ```
 *
 * @since 0.1.0
 * @category Combinators
 */
export const advancing = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  options: { readonly step?: Edition.DurationInput | undefined; readonly upTo?: Edition.DurationInput | undefined } = {}
): Effect.Effect<A, E, R> =>
  Clock.clockWith((clock) => {
    if (!Edition.isTestClock(clock)) return effect
    const step = Edition.toDuration(options.step ?? Duration.millis(100))
    const upTo = Edition.toDuration(options.upTo ?? Duration.minutes(10))
    return Effect.gen(function*() {
      const fiber = yield* Edition.fork(effect)
      let advanced = Duration.zero
      while (Edition.isRunning(fiber)) {
        if (Duration.toMillis(advanced) >= Duration.toMillis(upTo)) {
          yield* Fiber.interrupt(fiber)
          return yield* Edition.dieMessage(
            `ErpTest.advancing: the effect was still running after ${Duration.format(upTo)} of TestClock time`
          )
        }
        yield* clock.adjust(step)
        advanced = Duration.sum(advanced, step)
      }
      return yield* Fiber.join(fiber)
    })
  })
