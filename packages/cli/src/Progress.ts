/**
 * Progress of an export on stderr, only when stderr is a terminal: records, pages (and the page size in use, as
 * learned from the server), rate, and rate-limit waits.
 *
 * @since 0.1.0
 */
import { WaitObserver, type WaitReason } from "@erp-client/client/ErpRateLimiter"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"

/**
 * @since 0.1.0
 * @category Models
 */
export interface Progress {
  /** One more page of `records`, asked with `pageSize` (the size paging learned from the server, once it has). */
  readonly page: (records: number, pageSize?: number) => void
  /** Stops the display and leaves a final line. */
  readonly done: Effect.Effect<void>
}

interface State {
  records: number
  pages: number
  pageSize: number | undefined
  wait: { reason: WaitReason; untilMillis: number } | undefined
}

/**
 * The shared state the limiter reports waits into, as a layer for the client.
 *
 * @since 0.1.0
 * @category Constructors
 */
export const make = (options: { readonly enabled: boolean }) => {
  const state: State = { records: 0, pages: 0, pageSize: undefined, wait: undefined }
  const observer = Layer.succeed(WaitObserver, {
    onWait: ({ reason, untilMillis }) =>
      Effect.sync(() => {
        if (state.wait === undefined || untilMillis > state.wait.untilMillis) state.wait = { reason, untilMillis }
      })
  })

  const render = (now: number, start: number): string => {
    const seconds = Math.max(0.001, (now - start) / 1000)
    let line = `records ${state.records} · pages ${state.pages}${
      state.pageSize === undefined ? "" : ` of ${state.pageSize}`
    } · ${Math.round(state.records / seconds)} rec/s · ${seconds.toFixed(1)} s`
    if (state.wait !== undefined && state.wait.untilMillis > now) {
      const left = ((state.wait.untilMillis - now) / 1000).toFixed(1)
      line += state.wait.reason === "server-pause"
        ? ` · waiting ${left} s: the server asked to pause (429 or no requests left)`
        : ` · waiting ${left} s: keeping to the rate limit`
    }
    return line
  }

  const count = (records: number, pageSize?: number) => {
    state.records += records
    state.pages += 1
    if (pageSize !== undefined) state.pageSize = pageSize
  }

  const start: Effect.Effect<Progress, never, Scope.Scope> = Effect.gen(function*() {
    const startedAt = yield* Clock.currentTimeMillis
    const draw = Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.sync(() => {
        process.stderr.write(`\r\x1b[K${render(now, startedAt)}`)
      }))
    if (!options.enabled) return { page: count, done: Effect.void }
    const ticker = yield* Effect.forkScoped(Effect.repeat(draw, Schedule.spaced(Duration.millis(200))))
    return {
      page: count,
      done: Fiber.interrupt(ticker).pipe(
        Effect.zipRight(draw),
        Effect.zipRight(Effect.sync(() => process.stderr.write("\n")))
      )
    }
  })

  return { observer, start }
}
