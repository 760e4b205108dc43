/**
 * Never a silent hang: under a `TestClock`, time moves only when the test moves it, so an `ErpClient` call that must
 * wait (for the rate limit, a pause the server asked for, a retry's backoff, a hung request's timeout) waits until the
 * test calls `TestClock.adjust`, and a test that does not hangs until its timeout. Effect's own warning for this says
 * neither the call nor how far to move the clock (Effect 3's goes to the logger, which `@effect/vitest` removes in
 * `it.effect`; Effect 4's comes once, before the test's first `adjust`). So the kit watches its calls: when one has
 * been in flight for `stallAfter` of real time while the clock, the sandbox and the calls all stood still, it writes
 * one line on the console (stderr; the line is `StallText` of `@erp-client/fake-erp`) saying what the call waits for
 * and how far to move the clock.
 */
import type * as ErpClient from "@erp-client/client/ErpClient"
import type * as ErpRateLimiter from "@erp-client/client/ErpRateLimiter"
import * as StallText from "@erp-client/fake-erp/StallText"
import type * as Sandbox from "@erp-client/sandbox/Sandbox"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Edition from "./edition.js"

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
  readonly observer: Edition.WaitObserver
  /** The client with every call counted while it is in flight. */
  readonly track: (client: ErpClient.Service) => ErpClient.Service
}

/**
 * Watches the calls of the client it tracks while the scope is open. Under the live clock (or without `stallAfter`) it
 * only tracks: nothing can stand still there.
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

    const observer: Watch["observer"] = {
      onWait: (wait) =>
        Effect.sync(() => {
          events++
          lastWait = wait
        })
    }

    const clock = yield* Clock.clockWith(Effect.succeed)
    const testClock = stallAfter !== undefined && Edition.isTestClock(clock) ? clock : undefined
    const sleeps = testClock === undefined ? undefined : Edition.sleepsOf(testClock)

    const tracked = <A, E, R>(what: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
      Effect.acquireUseRelease(
        Effect.sync(() => {
          events++
          const id = nextCall++
          inFlight.set(id, what)
          return id
        }),
        () => sleeps === undefined ? effect : sleeps.run(effect),
        (id) =>
          Effect.sync(() => {
            events++
            inFlight.delete(id)
          })
      )
    const track = (client: ErpClient.Service): ErpClient.Service => ({
      baseUrl: client.baseUrl,
      httpClient: Edition.HttpClient.transform(
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

    if (testClock === undefined || sleeps === undefined || stallAfter === undefined) {
      return { observer, track }
    }

    const stallTicks = Math.max(1, Math.ceil(Duration.toMillis(stallAfter) / Duration.toMillis(TICK)))
    let seen = { nowMillis: Number.NaN, events: -1, requests: -1 }
    let stalled = 0
    const look = Effect.gen(function*() {
      yield* Edition.sleepLive(testClock, TICK)
      const nowMillis = Edition.nowMillis(testClock)
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
      const wakes = (yield* sleeps.wakes).filter((at) =>
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
      }, "@erp-client/testing")
      // The process's console, not Effect's `Console`: Effect 4's `it.effect` provides a `TestConsole`, which keeps
      // what it is given to itself, and this line is for the person running the test.
      yield* Effect.sync(() => globalThis.console.warn(line))
    })
    yield* Effect.forkScoped(Effect.forever(look))
    return { observer, track }
  })
