/**
 * Progress of an export on stderr, only when stderr is a terminal: records, pages, the page size in use (as learned
 * from the server), rate, and rate-limit waits: `records 3000 · pages 3 · page size 1000 · 950 rec/s · 3.2 s`. The
 * total is not known (the contract gives no count), so none is shown.
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
  /** One more page of `records`; `pageSize` is the page size paging goes on with (the last page has none). */
  readonly page: (records: number, pageSize?: number) => void
  /**
   * Stops the display and leaves a final line. Closing the scope does the same, so a failure's line starts on a line
   * of its own.
   */
  readonly done: Effect.Effect<void>
  /** Stops the display and erases its line, for a summary said in its place (an export to a file). */
  readonly clear: Effect.Effect<void>
}

/**
 * What the progress line shows: counts of this run, the page size in use once known, the longest wait announced.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Snapshot {
  readonly records: number
  readonly pages: number
  readonly pageSize: number | undefined
  readonly wait: { readonly reason: WaitReason; readonly untilMillis: number } | undefined
}

/**
 * The progress line at `nowMillis` for an export that started at `startMillis`. The page size is labelled as such:
 * the number of pages to come is not known.
 *
 * @example
 * ```ts
 * import { Progress } from "@erp-client/cli"
 *
 * // 3000 partners in 3 pages, 3.2 s after the export started
 * const snapshot = { records: 3000, pages: 3, pageSize: 1000, wait: undefined }
 * console.log(Progress.progressLine(snapshot, 1_700_000_000_000, 1_700_000_003_200))
 * // => records 3000 · pages 3 · page size 1000 · 938 rec/s · 3.2 s
 * ```
 *
 * @since 0.1.0
 * @category Models
 */
export const progressLine = (snapshot: Snapshot, startMillis: number, nowMillis: number): string => {
  const seconds = Math.max(0.001, (nowMillis - startMillis) / 1000)
  let line = `records ${snapshot.records} · pages ${snapshot.pages}${
    snapshot.pageSize === undefined ? "" : ` · page size ${snapshot.pageSize}`
  } · ${Math.round(snapshot.records / seconds)} rec/s · ${seconds.toFixed(1)} s`
  if (snapshot.wait !== undefined && snapshot.wait.untilMillis > nowMillis) {
    const left = ((snapshot.wait.untilMillis - nowMillis) / 1000).toFixed(1)
    line += snapshot.wait.reason === "server-pause"
      ? ` · waiting ${left} s: the server asked to pause (429 or no requests left)`
      : ` · waiting ${left} s: keeping to the rate limit`
  }
  return line
}

type State = { -readonly [K in keyof Snapshot]: Snapshot[K] }

/**
 * A progress display: `observer`, the layer (`WaitObserver`) the rate limiter reports its waits into, to provide
 * with the client; and `start`, which in a scope starts the display (redrawn every 200 ms on stderr when `enabled`,
 * else only counting) and gives the `Progress` to tell of each page.
 *
 * @example
 * ```ts
 * import { Progress } from "@erp-client/cli"
 * import { Effect } from "effect"
 *
 * // Shown only when stderr is a terminal
 * const progress = Progress.make({ enabled: process.stderr.isTTY === true })
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const shown = yield* progress.start
 *   shown.page(1000, 1000) // a page of 1000 partners; paging goes on with pages of 1000
 *   shown.page(0) // the last, empty page
 *   yield* shown.done // or `shown.clear`, to say a summary in its place
 * }))
 * ```
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

  const count = (records: number, pageSize?: number) => {
    state.records += records
    state.pages += 1
    if (pageSize !== undefined) state.pageSize = pageSize
  }

  const start: Effect.Effect<Progress, never, Scope.Scope> = Effect.gen(function*() {
    const startedAt = yield* Clock.currentTimeMillis
    const draw = Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.sync(() => {
        process.stderr.write(`\r\x1b[K${progressLine(state, startedAt, now)}`)
      }))
    if (!options.enabled) return { page: count, done: Effect.void, clear: Effect.void }
    const ticker = yield* Effect.forkScoped(Effect.repeat(draw, Schedule.spaced(Duration.millis(200))))
    let finished = false
    const stop = (last: Effect.Effect<void>) =>
      Effect.suspend(() => {
        if (finished) return Effect.void
        finished = true
        return Effect.zipRight(Fiber.interrupt(ticker), last)
      })
    const done = stop(Effect.zipRight(draw, Effect.sync(() => process.stderr.write("\n"))))
    const clear = stop(Effect.sync(() => process.stderr.write("\r\x1b[K")))
    yield* Effect.addFinalizer(() => done)
    return { page: count, done, clear }
  })

  return { observer, start }
}
