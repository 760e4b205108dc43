/**
 * Never a silent hang: under a `TestClock`, time moves only when the test moves it, so an `ErpClient` call that must
 * wait (for the rate limit, a pause the server asked for, a retry's backoff, a hung request's timeout) waits until the
 * test calls `TestClock.adjust`, and a test that does not hangs until its timeout. Effect's own warning for this
 * goes to the logger, which `@effect/vitest` removes in `it.effect`. So the kit watches its calls: when one has been
 * in flight for `stallAfter` of real time while the clock, the sandbox and the calls all stood still, it writes one
 * line on the console (stderr) saying what the call waits for and how to move the clock (the line is `StallText`
 * of `@erp-client/fake-erp`, which the Effect 4 kit writes too).
 */
import * as HttpClient from "@effect/platform/HttpClient"
import type * as ErpClient from "@erp-client/client/ErpClient"
import type * as ErpRateLimiter from "@erp-client/client/ErpRateLimiter"
import * as StallText from "@erp-client/fake-erp/StallText"
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
      yield* Console.warn(StallText.describeStall({
        calls: [...inFlight.values()],
        stalledMillis: stalled * Duration.toMillis(TICK),
        nowMillis,
        wait: lastWait !== undefined && lastWait.untilMillis > nowMillis ? lastWait : undefined,
        sandboxInFlight: stats.inFlight,
        lastAnswer: last === undefined ? undefined : { status: last.status, fault: last.fault },
        nextWakeMillis: wakes.length === 0 ? undefined : Math.min(...wakes)
      }, "@erp-client/testing"))
    })
    yield* Effect.forkScoped(Effect.forever(look))
    return { observer, track }
  })
