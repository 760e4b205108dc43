/**
 * The limiter's algorithm (see `ErpRateLimiter.make` for why and how): slots dealt by a ticket, each a zero-burst
 * spacer of the experimental store, held a window after its request ended, and the server's pauses.
 */
import * as RateLimiter from "@effect/experimental/RateLimiter"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as LogLevel from "effect/LogLevel"
import * as Metric from "effect/Metric"
import {
  type Acquired,
  ErpRateLimiter,
  HoldStore,
  PauseBeyondDeadline,
  pauseWaitMillis,
  type Resolved,
  type Service,
  spacingWaitMillis,
  StoreFailure,
  WaitObserver,
  type WaitReason,
  waits
} from "../ErpRateLimiter.js"

const storeErrorText = (error: RateLimiter.RateLimiterError): string =>
  // The two experimental errors share one `_tag`; `reason` tells them apart.
  error.reason === "StoreError" ? error.message : "unexpected rate limit rejection"

export const make = (
  options: Resolved
): Effect.Effect<Service, never, RateLimiter.RateLimiterStore | HoldStore> =>
  Effect.gen(function*() {
    const store = yield* RateLimiter.RateLimiterStore
    const holds = yield* HoldStore
    const limiter = yield* RateLimiter.make
    const observer = yield* Effect.serviceOption(WaitObserver)
    const observe = (key: string, reason: WaitReason, untilMillis: number): Effect.Effect<void> =>
      observer._tag === "Some"
        ? observer.value.onWait({ key, reason, untilMillis })
        : Effect.void
    const { limit, margin, window } = options
    const slotWindow = Duration.sum(window, margin)
    const windowMillis = Duration.toMillis(window)
    const slotWindowMillis = Duration.toMillis(slotWindow)

    const storeFailure = (error: RateLimiter.RateLimiterError) =>
      new StoreFailure({ description: storeErrorText(error) })

    const reserve = (key: string) =>
      store.fixedWindow({ key: `${key}:ticket`, tokens: 1, refillRate: slotWindow, limit: undefined }).pipe(
        Effect.flatMap(([ticket]) => {
          const slot = `${key}:slot:${(ticket - 1) % limit}`
          return limiter.consume({
            key: slot,
            limit: 1,
            window: slotWindow,
            algorithm: "fixed-window",
            onExceeded: "delay"
          })
            .pipe(Effect.map((result) => ({ slot, delay: Duration.toMillis(result.delay) })))
        }),
        Effect.mapError(storeFailure)
      )

    const waitForPause = (
      key: string,
      deadline: number | undefined
    ): Effect.Effect<number, PauseBeyondDeadline | StoreFailure> =>
      Effect.gen(function*() {
        let paused = 0
        // Each pause is capped by whoever set it; the deadline bounds how many we sit through.
        while (true) {
          const until = yield* holds.get(key)
          const now = yield* Clock.currentTimeMillis
          if (until <= now) return paused
          if (deadline !== undefined && until > deadline) {
            return yield* Effect.fail(new PauseBeyondDeadline({ pausedUntil: until }))
          }
          yield* observe(key, "server-pause", until)
          yield* Effect.logInfo(`waiting ${until - now} ms: the server asked to pause`).pipe(
            Effect.annotateLogs("erp.limiter_key", key)
          )
          yield* Effect.sleep(Duration.millis(until - now))
          paused += until - now
        }
      })

    const acquire = (key: string, deadline?: number): Effect.Effect<Acquired, PauseBeyondDeadline | StoreFailure> =>
      Effect.gen(function*() {
        let pausedMillis = 0
        let spacedMillis = 0
        const space = (delay: number) =>
          Effect.gen(function*() {
            yield* observe(key, "client-limit", (yield* Clock.currentTimeMillis) + delay)
            // A long wait is worth telling an operator about; the usual short spacing is not.
            yield* Effect.logWithLevel(
              delay >= 1_000 ? LogLevel.Info : LogLevel.Debug,
              `waiting ${delay} ms for the client-side rate limit`
            ).pipe(
              Effect.annotateLogs("erp.limiter_key", key)
            )
            yield* Effect.sleep(Duration.millis(delay))
            spacedMillis += delay
          })
        while (true) {
          pausedMillis += yield* waitForPause(key, deadline)
          const { delay, slot } = yield* reserve(key)
          if (delay > 0) yield* space(delay)
          // The slot's previous request may have ended (or started) late: it keeps the slot busy until a window
          // after that.
          while (true) {
            const busy = (yield* holds.get(slot)) - (yield* Clock.currentTimeMillis)
            if (busy <= 0) break
            yield* space(busy)
          }
          // A pause set while we slept wins: starting late on a reserved slot could bring it closer than a window
          // to that slot's next use, so the reservation is dropped (a wasted slot is safe) and we queue again.
          const until = yield* holds.get(key)
          const now = yield* Clock.currentTimeMillis
          if (until <= now) {
            yield* holds.extend(slot, now + slotWindowMillis)
            if (spacedMillis > 0 || pausedMillis > 0) {
              yield* Metric.increment(waits)
              yield* Metric.incrementBy(spacingWaitMillis, spacedMillis)
              yield* Metric.incrementBy(pauseWaitMillis, pausedMillis)
            }
            return {
              spacedMillis,
              pausedMillis,
              release: (endedMillis: number) => holds.extend(slot, endedMillis + windowMillis)
            }
          }
        }
      })

    // A slot is held until a window (and the margin) after its request started, or a window after it ended.
    const inUse = (key: string) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.map(
          Effect.forEach(Array.from({ length: limit }, (_, i) => holds.get(`${key}:slot:${i}`)), (until) => until, {
            concurrency: "unbounded"
          }),
          (marks) => marks.filter((until) => until > now).length
        ))

    return ErpRateLimiter.of({
      limit,
      window,
      margin,
      acquire,
      // Whole milliseconds: a fraction would leave a sliver to wait for again, a sleep of almost nothing at a time.
      pause: (key, untilMillis) => holds.extend(key, Math.ceil(untilMillis)),
      inUse
    })
  })
