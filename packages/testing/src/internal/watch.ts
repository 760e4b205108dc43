/**
 * Never a silent hang: under a `TestClock`, time moves only when the test moves it, so an `ErpClient` call that must
 * wait (for the rate limit, a pause the server asked for, a retry's backoff, a hung request's timeout) waits until the
 * test calls `TestClock.adjust`, and a test that does not hangs until its timeout. Effect's own warning for this
 * goes to the logger, which `@effect/vitest` removes in `it.effect`. So the kit watches its calls: when one has been
 * in flight for `stallAfter` of real time while the clock, the sandbox and the calls all stood still, it writes one
 * line on the console (stderr) saying what the call waits for and how to move the clock.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import type * as ErpClient from "@erp-client/client/ErpClient"
import type * as ErpRateLimiter from "@erp-client/client/ErpRateLimiter"
import type * as Sandbox from "@erp-client/sandbox/Sandbox"
import * as Chunk from "effect/Chunk"
import type * as Clock from "effect/Clock"
import * as Console from "effect/Console"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as TestClock from "effect/TestClock"
import * as TestServices from "effect/TestServices"

/** How often the watch looks, in real time. */
const TICK = Duration.millis(100)

interface Wait {
  readonly key: string
  readonly reason: ErpRateLimiter.WaitReason
  readonly untilMillis: number
}

/**
 * @internal
 */
export interface Watch {
  /** Told about every wait of the limiter, to name it. */
  readonly observer: ErpRateLimiter.WaitObserver["Type"]
  /** The client with every call counted while it is in flight. */
  readonly track: (client: ErpClient.Service) => ErpClient.Service
}

/**
 * What stands still, in words: the calls in flight, and the likely reason they wait.
 *
 * @internal
 */
export interface Stall {
  readonly calls: ReadonlyArray<string>
  readonly stalledMillis: number
  readonly nowMillis: number
  /** The limiter's last wait, if it still lies ahead. */
  readonly wait: Wait | undefined
  /** Requests the sandbox holds unanswered. */
  readonly sandboxInFlight: number
  /** The sandbox's last answer: status and fault. */
  readonly lastAnswer: { readonly status: number; readonly fault?: string | undefined } | undefined
  /** The next time a fiber sleeping on the TestClock wakes up, if any. */
  readonly nextWakeMillis: number | undefined
}

const seconds = (millis: number): string => {
  const s = millis / 1000
  return `${Number.isInteger(s) ? s : s.toFixed(s < 10 ? 3 : 1).replace(/\.?0+$/, "")} s`
}

// An amount to advance that covers `millis`, in the unit a reader types: whole seconds (at least one).
const adjustBy = (millis: number): string => {
  const s = Math.max(1, Math.ceil(millis / 1000))
  return s === 1 ? "1 second" : `${s} seconds`
}

/**
 * The one line the watch writes for a stall.
 *
 * @internal
 */
export const describeStall = (stall: Stall): string => {
  const calls = stall.calls.length === 1
    ? `an ErpClient call (${stall.calls[0]})`
    : `${stall.calls.length} ErpClient calls (${[...new Set(stall.calls)].join(", ")})`
  const ahead = (until: number) => `${seconds(until - stall.nowMillis)} ahead on the TestClock`
  const reason = stall.wait !== undefined
    ? `it waits for ${
      stall.wait.reason === "client-limit" ? "the client's rate limit" : "a pause the server asked for (a 429)"
    } until ${ahead(stall.wait.untilMillis)}`
    : stall.sandboxInFlight > 0
    ? `the sandbox holds ${stall.sandboxInFlight === 1 ? "a request" : `${stall.sandboxInFlight} requests`} ` +
      `unanswered (a Hang fault, or latency or a Delay fault on the TestClock), until the client's timeout`
    : stall.lastAnswer !== undefined && stall.lastAnswer.status !== 200
    ? `it waits to retry after the sandbox's last answer, ${stall.lastAnswer.status || "no answer"}${
      stall.lastAnswer.fault === undefined ? "" : ` (${stall.lastAnswer.fault})`
    }`
    : "it waits on the TestClock"
  const next = stall.wait?.untilMillis ?? stall.nextWakeMillis
  const wake = stall.wait !== undefined || next === undefined || next <= stall.nowMillis
    ? ""
    : `; the next wake-up is ${ahead(next)}`
  return `@erp-client/testing: ${calls} has waited ${seconds(stall.stalledMillis)} of real time on a TestClock ` +
    `nobody advances: ${reason}${wake}. Only the test moves a TestClock: fork the call, ` +
    `TestClock.adjust("${adjustBy(next === undefined ? 0 : next - stall.nowMillis)}") (or more), then Fiber.join ` +
    `it, or run it with ErpTest.advancing (see the @erp-client/testing README, "Time").`
}

const isTestClock = (clock: Clock.Clock): clock is TestClock.TestClock =>
  typeof (clock as Partial<TestClock.TestClock>).adjust === "function" &&
  typeof (clock as Partial<TestClock.TestClock>).setTime === "function"

/**
 * Watches the calls of the client it tracks while the scope is open. Under the live clock it only tracks: nothing
 * can stand still there.
 *
 * @internal
 */
export const make = (
  sandbox: Sandbox.Service,
  stallAfter: Duration.Duration | undefined
): Effect.Effect<Watch, never, Scope.Scope> =>
  Effect.gen(function*() {
    const inFlight = new Map<number, string>()
    let nextCall = 0
    // Anything that happened: a call began or ended, the limiter decided to wait.
    let events = 0
    let lastWait: Wait | undefined

    const observer: ErpRateLimiter.WaitObserver["Type"] = {
      onWait: (wait) =>
        Effect.sync(() => {
          events++
          lastWait = wait
        })
    }
    const tracked = <A, E, R>(what: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
      Effect.acquireUseRelease(
        Effect.sync(() => {
          events++
          const id = nextCall++
          inFlight.set(id, what)
          return id
        }),
        () => effect,
        (id) =>
          Effect.sync(() => {
            events++
            inFlight.delete(id)
          })
      )
    const track = (client: ErpClient.Service): ErpClient.Service => ({
      httpClient: HttpClient.transform(
        client.httpClient,
        (effect, request) => tracked(`${request.method} ${request.url}`, effect)
      ),
      get: ((endpoint: string, schema: any, options?: any) =>
        tracked(`GET ${endpoint}`, client.get(endpoint, schema, options))) as ErpClient.Service["get"],
      list: (endpoint, schema, query) =>
        tracked(`GET ${endpoint}`, client.list(endpoint, schema, query)),
      post: ((endpoint: string, schema: any, options?: any) =>
        tracked(`POST ${endpoint}`, client.post(endpoint, schema, options))) as ErpClient.Service["post"]
    })

    const clock = yield* Effect.clock
    const live = yield* TestServices.provideLive(Effect.clock)
    if (stallAfter === undefined || clock === live || !isTestClock(clock)) {
      return { observer, track }
    }

    const stallTicks = Math.max(1, Math.ceil(Duration.toMillis(stallAfter) / Duration.toMillis(TICK)))
    let seen = { nowMillis: Number.NaN, events: -1, requests: -1 }
    let stalled = 0
    const look = Effect.gen(function*() {
      yield* TestServices.provideLive(Effect.sleep(TICK))
      const nowMillis = clock.unsafeCurrentTimeMillis()
      const stats = yield* sandbox.stats
      const now = { nowMillis, events, requests: stats.requests }
      if (
        inFlight.size === 0 || now.nowMillis !== seen.nowMillis || now.events !== seen.events ||
        now.requests !== seen.requests
      ) {
        seen = now
        stalled = 0
        return
      }
      stalled++
      // One line a stall: the next one comes after something moved.
      if (stalled !== stallTicks) {
        return
      }
      const log = yield* sandbox.requests
      const last = log[log.length - 1]
      const wakes = Chunk.toReadonlyArray(yield* clock.sleeps).filter((at) =>
        at > nowMillis
      )
      yield* Console.warn(describeStall({
        calls: [...inFlight.values()],
        stalledMillis: stalled * Duration.toMillis(TICK),
        nowMillis,
        wait: lastWait !== undefined && lastWait.untilMillis > nowMillis ? lastWait : undefined,
        sandboxInFlight: stats.inFlight,
        lastAnswer: last === undefined ? undefined : { status: last.status, fault: last.fault },
        nextWakeMillis: wakes.length === 0 ? undefined : Math.min(...wakes)
      }))
    })
    yield* Effect.forkScoped(Effect.forever(look))
    return { observer, track }
  })
