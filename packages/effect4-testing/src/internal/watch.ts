/**
 * Never a silent hang: under a `TestClock`, time moves only when the test moves it, so an `ErpClient` call that must
 * wait (for the rate limit, a pause the server asked for, a retry's backoff, a hung request's timeout) waits until the
 * test calls `TestClock.adjust`, and a test that does not hangs until vitest's timeout. Effect 4's `TestClock` warns
 * once, the first time a test sleeps before it ever moved the clock, without naming the call or how far to move it,
 * and never again after the test's first `adjust`. So the kit watches its calls, as `@erp-client/testing` does for
 * Effect 3: when one has been in flight for `stallAfter` of real time while the clock, the in-memory ERP and the calls
 * all stood still, it writes one line on the console (stderr; the line is `StallText` of `@erp-client/fake-erp`) saying what the
 * call waits for and how far to move the clock.
 *
 * Effect 4's `TestClock` keeps the times its sleepers wake up to itself, so the watch runs each call on a clock that
 * is the test's in all but one thing: a sleep is noted while it lasts, which tells the line when the next one ends.
 */
import type * as ErpClient from "@erp-client/effect4-client/ErpClient"
import type * as ErpRateLimiter from "@erp-client/effect4-client/ErpRateLimiter"
import * as StallText from "@erp-client/fake-erp/StallText"
import * as Clock from "effect/Clock"
import type * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import type * as Scope from "effect/Scope"
import type * as TestClock from "effect/testing/TestClock"
import type * as Sandbox from "../Sandbox.js"

/** How often the watch looks, in real time. */
const TICK = Duration.millis(100)

interface Wait {
  readonly key: string
  readonly reason: ErpRateLimiter.WaitReason
  readonly untilMillis: number
}

export interface Watch {
  /** Told about every wait of the limiter, to name it. */
  readonly observer: Context.Service.Shape<typeof ErpRateLimiter.WaitObserver>
  /** The client with every call counted while it is in flight. */
  readonly track: (client: ErpClient.Service) => ErpClient.Service
}

const isTestClock = (clock: Clock.Clock): clock is TestClock.TestClock =>
  typeof (clock as Partial<TestClock.TestClock>).adjust === "function" &&
  typeof (clock as Partial<TestClock.TestClock>).setTime === "function" &&
  typeof (clock as Partial<TestClock.TestClock>).withLive === "function"

/**
 * Watches the calls of the client it tracks while the scope is open. Under the live clock (or without `stallAfter`) it
 * only tracks: nothing can stand still there.
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
    // When each sleep of a call in flight ends, by sleep.
    const sleeps = new Map<number, number>()
    let nextSleep = 0

    const observer: Watch["observer"] = {
      onWait: (wait) =>
        Effect.sync(() => {
          events++
          lastWait = wait
        })
    }

    const clock = yield* Clock.clockWith(Effect.succeed)
    const testClock = stallAfter !== undefined && isTestClock(clock) ? clock : undefined
    // The test's clock, its sleeps noted (see the module's comment).
    const noting: Clock.Clock | undefined = testClock === undefined ? undefined : {
      ...testClock,
      sleep: (duration) =>
        Effect.suspend(() => {
          const id = nextSleep++
          sleeps.set(id, testClock.currentTimeMillisUnsafe() + Duration.toMillis(duration))
          return Effect.ensuring(testClock.sleep(duration), Effect.sync(() => sleeps.delete(id)))
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
        () =>
          Clock.clockWith((current) =>
            noting !== undefined && current === testClock ? Effect.provideService(effect, Clock.Clock, noting) : effect
          ),
        (id) =>
          Effect.sync(() => {
            events++
            inFlight.delete(id)
          })
      )
    const track = (client: ErpClient.Service): ErpClient.Service => ({
      baseUrl: client.baseUrl,
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

    if (testClock === undefined || stallAfter === undefined) {
      return { observer, track }
    }

    const stallTicks = Math.max(1, Math.ceil(Duration.toMillis(stallAfter) / Duration.toMillis(TICK)))
    let seen = { nowMillis: Number.NaN, events: -1, requests: -1 }
    let stalled = 0
    const look = Effect.gen(function*() {
      yield* testClock.withLive(Effect.sleep(TICK))
      const nowMillis = testClock.currentTimeMillisUnsafe()
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
      const wakes = [...sleeps.values()].filter((at) =>
        at > nowMillis
      )
      const line = StallText.describeStall({
        calls: [...inFlight.values()],
        stalledMillis: stalled * Duration.toMillis(TICK),
        nowMillis,
        wait: lastWait !== undefined && lastWait.untilMillis > nowMillis ? lastWait : undefined,
        sandboxInFlight: stats.inFlight,
        lastAnswer: last === undefined ? undefined : { status: last.status, fault: last.fault },
        nextWakeMillis: wakes.length === 0 ? undefined : Math.min(...wakes)
      }, "@erp-client/effect4-testing")
      // The process's console, not Effect's `Console`: `it.effect` provides a `TestConsole`, which keeps what it is
      // given to itself, and this line is for the person running the test.
      yield* Effect.sync(() => globalThis.console.warn(line))
    })
    yield* Effect.forkScoped(Effect.forever(look))
    return { observer, track }
  })
