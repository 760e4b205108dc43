// Per edition: the fetches' fibers, scopes and the stream's pull are written in each edition's Stream and Fiber API.
/**
 * The paging engine wired to fetches and a Stream (docs/ARCHITECTURE.md, "Paging"). The engine itself, which pages are
 * in flight, how each is judged, where the grid goes on after a short page, what is emitted and where a resume starts,
 * is a plain object of the kernel (`@erp-client/kernel/Pager`); this file forks the fetches it asks for, awaits them in
 * offset order, runs the mode's step, and cancels, fails, tells and emits as it says.
 *
 * A page in flight that is no longer wanted is cancelled with a reason (`ErpClient.cancel`), not just interrupted, so
 * that its spans end as the client's cancellation rather than as an error: `list-ended` (a page past the end of the
 * list), `paging-moved` (past a short page, or sized for a response too large), `stream-ended` (the stream's reader
 * took what it wanted and stopped), `stream-failed` (the export failed elsewhere). An interruption of the stream
 * itself (Ctrl-C) interrupts its pages as it is: they did not complete.
 */
import * as ErpClient from "@erp-client/client/ErpClient"
import { PagingLoop } from "@erp-client/core/ErpError"
import type * as Page from "@erp-client/core/Page"
import * as Pager from "@erp-client/kernel/Pager"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

/** What a mode learns from one page (see `Pager.Step`). */
export type Step<A> = Pager.Step<Page.Page<A>>

/** How plain and drift-safe paging differ: the kernel's mode, and how a page becomes a step. */
export interface Mode<A, E, R> extends Pager.Mode {
  /** Takes one page, in offset order (see `Pager.StepContext`). */
  readonly step: (page: Page.Page<A>, context: Pager.StepContext<Page.Page<A>>) => Effect.Effect<Step<A>, E, R>
}

/** A page as emitted: with where to resume after it, or `undefined` when it was the last one. */
export type Emitted<A> = Pager.Emitted<Page.Page<A>>

export interface Setup<E> extends Pager.Settings {
  /** A failure that a smaller page avoids (`ResponseTooLarge`). */
  readonly isTooLarge: (error: E) => boolean
  readonly onSizeChange: (change: Pager.SizeChange) => Effect.Effect<void>
}

/**
 * Runs the engine. Fetches run in the stream's scope: when the stream ends or fails, the pages still in flight are
 * cancelled (their requests with them), and when it is interrupted, interrupted with it.
 */
export const run = <A, E, R, E2, R2>(
  fetch: (offset: number, count: number) => Effect.Effect<Page.Page<A>, E, R>,
  mode: Mode<A, E2, R2>,
  settings: Setup<E>
): Stream.Stream<Emitted<A>, E | E2 | PagingLoop, R | R2> =>
  Stream.fromPull(Effect.gen(function*() {
    const outer = yield* Effect.scope
    // The fetches' own scope inside the stream's, closed after the finalizer below: by then the pages still in flight
    // were cancelled with the reason the stream's end gives, and what remains (an interruption) is interrupted.
    const scope = yield* Scope.fork(outer, ExecutionStrategy.sequential)
    const pager = Pager.make<Page.Page<A>, Fiber.RuntimeFiber<Page.Page<A>, E>>(settings, mode)
    const cancel = (pages: Pager.Cancel<Fiber.RuntimeFiber<Page.Page<A>, E>> | undefined) =>
      pages === undefined ? Effect.void : Effect.forEach(pages.handles, (f) => ErpClient.cancel(f, pages.reason))
    yield* Scope.addFinalizerExit(outer, (exit) =>
      Exit.isSuccess(exit)
        ? Effect.suspend(() => cancel(pager.stop("stream-ended")))
        : Cause.isInterruptedOnly(exit.cause)
        ? Effect.void
        : Effect.suspend(() => cancel(pager.stop("stream-failed"))))

    const launch = Effect.suspend(() =>
      Effect.forEach(
        pager.launch(),
        (ask) => Effect.map(Effect.forkIn(fetch(ask.offset, ask.count), scope), (fiber) => pager.started(ask, fiber)),
        { discard: true }
      )
    )

    // One page in order: its pages to emit (possibly none, e.g. after a too-large response shrank the page).
    const once: Effect.Effect<ReadonlyArray<Emitted<A>>, Option.Option<E | E2 | PagingLoop>, R | R2> = Effect.gen(
      function*() {
        yield* launch
        const head = pager.take()
        const exit = yield* Fiber.await(head.handle)
        if (Exit.isFailure(exit)) {
          const failure = Cause.failureOption(exit.cause)
          if (Option.isSome(failure) && settings.isTooLarge(failure.value)) {
            const shrunk = pager.tooLarge(head.offset)
            if (shrunk !== undefined) {
              yield* cancel(shrunk.cancel)
              yield* settings.onSizeChange(shrunk.change)
              return []
            }
          }
          return yield* Effect.failCause(Cause.map(exit.cause, Option.some))
        }
        const step = yield* Effect.mapError(mode.step(exit.value, pager.context()), Option.some)
        const far = pager.repeatCheck(step)
        const judged = pager.judge(
          step,
          far === undefined ? undefined : yield* Effect.mapError(fetch(far.offset, far.count), Option.some)
        )
        yield* cancel(judged.cancel)
        const loop = judged.failure
        if (loop !== undefined) {
          return yield* Effect.fail(
            Option.some(new PagingLoop({ endpoint: loop.endpoint, offset: loop.offset, reason: loop.reason }))
          )
        }
        if (judged.learned !== undefined) yield* settings.onSizeChange(judged.learned)
        return judged.emit
      }
    )

    return Effect.suspend(
      function pull(): Effect.Effect<Chunk.Chunk<Emitted<A>>, Option.Option<E | E2 | PagingLoop>, R | R2> {
        if (pager.done) return Effect.fail(Option.none())
        return Effect.flatMap(
          once,
          (pages) => pages.length === 0 ? pull() : Effect.succeed(Chunk.unsafeFromArray(pages))
        )
      }
    )
  }))
