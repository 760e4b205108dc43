// Per edition: the fetches' fibers, scopes and the stream's pull are written in each edition's Stream and Fiber API.
/**
 * The paging engine wired to fetches and a Stream of Effect 4 (docs/ARCHITECTURE.md, "Paging"), as the Effect 3
 * edition's `packages/streams/src/internal/pager.ts` wires it. The engine itself, which pages are in flight, how each is
 * judged, where the grid goes on after a short page, what is emitted and where a resume starts, is a plain object of
 * the kernel (`@erp-client/kernel/Pager`); this file forks the fetches it asks for, awaits them in offset order, runs
 * the mode's step, and cancels, fails, tells and emits as it says. Nothing here decides anything about paging.
 *
 * A page in flight that is no longer wanted is cancelled with the kernel's reason (`ErpClient.cancel`), not just
 * interrupted, so that its spans end as the client's cancellation rather than as an error: `list-ended` (a page past
 * the end of the list), `paging-moved` (past a short page, or sized for a response too large), `stream-ended` (the
 * stream's reader took what it wanted and stopped), `stream-failed` (the export failed elsewhere). An interruption of
 * the stream itself (Ctrl-C) interrupts its pages as it is: they did not complete.
 */
import * as ErpClient from "@erp-client/effect4-client/ErpClient"
import { PagingLoop } from "@erp-client/effect4-core/ErpError"
import type * as Page from "@erp-client/effect4-core/Page"
import * as Pager from "@erp-client/kernel/Pager"
import type * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Channel from "effect/Channel"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import type * as Pull from "effect/Pull"
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

type Handle<A, E> = Fiber.Fiber<Page.Page<A>, E>

/**
 * Runs the engine. The fetches run in a scope of their own, closed by the stream's scope once the pages still in flight
 * were cancelled with the reason the stream's end gives (it ended: `stream-ended`; it failed: `stream-failed`), or at
 * once when the stream was interrupted (then they are interrupted with it). That scope is not a child of the stream's,
 * whose finalizers may run in any order: the cancellation must come before the scope's own interruption.
 */
export const run = <A, E, R, E2, R2>(
  fetch: (offset: number, count: number) => Effect.Effect<Page.Page<A>, E, R>,
  mode: Mode<A, E2, R2>,
  settings: Setup<E>
): Stream.Stream<Emitted<A>, E | E2 | PagingLoop, R | R2> =>
  Stream.fromChannel(Channel.fromTransform((_upstream, scope) =>
    Effect.suspend(() => {
      const fetches = Scope.makeUnsafe()
      const pager = Pager.make<Page.Page<A>, Handle<A, E>>(settings, mode)
      const cancel = (pages: Pager.Cancel<Handle<A, E>> | undefined): Effect.Effect<void> =>
        pages === undefined || pages.handles.length === 0
          ? Effect.void
          : Effect.forEach(pages.handles, (fiber) => ErpClient.cancel(fiber, pages.reason), {
            concurrency: "unbounded",
            discard: true
          })
      const stopped = Scope.addFinalizerExit(scope, (exit) =>
        Effect.andThen(
          Effect.suspend(() =>
            exit._tag === "Success"
              ? cancel(pager.stop("stream-ended"))
              : Cause.hasInterruptsOnly(exit.cause)
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
          const failure = Cause.findErrorOption(exit.cause)
          if (Option.isSome(failure) && settings.isTooLarge(failure.value)) {
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
          return yield* new PagingLoop({ endpoint: loop.endpoint, offset: loop.offset, reason: loop.reason })
        }
        if (judged.learned !== undefined) yield* settings.onSizeChange(judged.learned)
        return judged.emit
      })

      const pull: Pull.Pull<Arr.NonEmptyReadonlyArray<Emitted<A>>, E | E2 | PagingLoop, void, R | R2> = Effect
        .suspend(
          function next(): Pull.Pull<Arr.NonEmptyReadonlyArray<Emitted<A>>, E | E2 | PagingLoop, void, R | R2> {
            if (pager.done) return Cause.done()
            return Effect.flatMap(
              once,
              (pages) => pages.length === 0 ? next() : Effect.succeed(pages as Arr.NonEmptyReadonlyArray<Emitted<A>>)
            )
          }
        )
      return Effect.as(stopped, pull)
    })
  ))
