/**
 * The paging engine wired to fetches and a Stream (docs/ARCHITECTURE.md, "Paging"). The engine itself, which pages are
 * in flight, how each is judged, where the grid goes on after a short page, what is emitted and where a resume starts,
 * is a plain object of the kernel (`@erp-client/kernel/Pager`); this file forks the fetches it asks for, awaits them in
 * offset order, runs the mode's step, and cancels, fails, tells and emits as it says. The stream's pull is the
 * adapter's (`fromPull`): Effect 3 and Effect 4 write it differently.
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
import type * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import { failureOption, fromPull, isInterruptedOnly } from "./edition.js"

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

const isNonEmpty = <A>(as: ReadonlyArray<A>): as is Arr.NonEmptyReadonlyArray<A> => as.length > 0

type Handle<A, E> = Fiber.Fiber<Page.Page<A>, E>

/**
 * Runs the engine. The fetches run in a scope of their own, closed by the stream's scope once the pages still in flight
 * were cancelled with the reason the stream's end gives (it ended: `stream-ended`; it failed: `stream-failed`), or at
 * once when the stream was interrupted (then they are interrupted with it). That scope is closed by the stream's own
 * finalizer, not left to the stream's scope as a child: the cancellation must come before the scope's interruption.
 */
export const run = <A, E, R, E2, R2>(
  fetch: (offset: number, count: number) => Effect.Effect<Page.Page<A>, E, R>,
  mode: Mode<A, E2, R2>,
  settings: Setup<E>
): Stream.Stream<Emitted<A>, E | E2 | PagingLoop, R | R2> =>
  fromPull((scope) =>
    Effect.gen(function*() {
      const fetches = yield* Scope.make()
      const pager = Pager.make<Page.Page<A>, Handle<A, E>>(settings, mode)
      const cancel = (pages: Pager.Cancel<Handle<A, E>> | undefined): Effect.Effect<void> =>
        pages === undefined || pages.handles.length === 0
          ? Effect.void
          : Effect.forEach(pages.handles, (fiber) => ErpClient.cancel(fiber, pages.reason), {
            concurrency: "unbounded",
            discard: true
          })
      yield* Scope.addFinalizerExit(scope, (exit) =>
        Effect.andThen(
          Effect.suspend(() =>
            exit._tag === "Success"
              ? cancel(pager.stop("stream-ended"))
              : isInterruptedOnly(exit.cause)
              ? Effect.void
              : cancel(pager.stop("stream-failed"))
          ),
          Scope.close(fetches, exit)
        ))

      const launch = Effect.suspend(() =>
        Effect.forEach(
          pager.launch(),
          (ask) =>
            Effect.map(Effect.forkIn(fetch(ask.offset, ask.count), fetches), (fiber) => pager.started(ask, fiber)),
          { discard: true }
        )
      )

      // One page in order: its pages to emit (possibly none, e.g. after a too-large response shrank the page).
      const once: Effect.Effect<ReadonlyArray<Emitted<A>>, E | E2 | PagingLoop, R | R2> = Effect.gen(function*() {
        yield* launch
        const head = pager.take()
        const exit = yield* Fiber.await(head.handle)
        if (exit._tag === "Failure") {
          const failure = failureOption(exit.cause)
          if (failure._tag === "Some" && settings.isTooLarge(failure.value)) {
            const shrunk = pager.tooLarge(head.offset)
            if (shrunk !== undefined) {
              yield* cancel(shrunk.cancel)
              yield* settings.onSizeChange(shrunk.change)
              return []
            }
          }
          return yield* Effect.failCause(exit.cause)
        }
        const step = yield* mode.step(exit.value, pager.context())
        const far = pager.repeatCheck(step)
        const judged = pager.judge(step, far === undefined ? undefined : yield* fetch(far.offset, far.count))
        yield* cancel(judged.cancel)
        const loop = judged.failure
        if (loop !== undefined) {
          return yield* Effect.fail(
            new PagingLoop({ endpoint: loop.endpoint, offset: loop.offset, reason: loop.reason })
          )
        }
        if (judged.learned !== undefined) yield* settings.onSizeChange(judged.learned)
        return judged.emit
      })

      // The next pages to emit, never none: `undefined` once the engine is done.
      return Effect.suspend(
        function next(): Effect.Effect<Arr.NonEmptyReadonlyArray<Emitted<A>> | undefined, E | E2 | PagingLoop, R | R2> {
          if (pager.done) return Effect.succeed(undefined)
          return Effect.flatMap(once, (pages) => isNonEmpty(pages) ? Effect.succeed(pages) : next())
        }
      )
    })
  )
