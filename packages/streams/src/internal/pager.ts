/**
 * The paging engine: pages fetched ahead on an offset grid, emitted strictly in offset order, each judged by
 * `judge.ts` (docs/ARCHITECTURE.md, "Paging"). This file only wires that judgement to fetches and a Stream: which
 * pages are in flight, where the grid goes on after a short page, what is emitted and where a resume starts.
 *
 * Pages in flight start at one and double with each full page, up to `concurrency`: a short list or a server that
 * serves short pages costs few requests on the wrong grid, a long list soon runs at full concurrency. When the grid
 * moves (after a short page), the pages in flight past it are interrupted (their requests cancelled).
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
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Judge from "./judge.js"
import * as PageOrder from "./pageOrder.js"

/**
 * The latest records emitted, as a server that filters after cutting may serve them again after a short page: the
 * pages themselves (hashed only when a short page makes a check necessary) after the hashes a resumed export was
 * handed, at least `keep` records of them.
 */
class Recent<A> {
  private pages: Array<Page.Page<A>> = []
  private records = 0
  constructor(private resumed: ReadonlyArray<number>) {}

  add(emitted: ReadonlyArray<Page.Page<A>>, keep: number): void {
    for (const page of emitted) {
      if (page.raw.length === 0) continue
      this.pages.push(page)
      this.records += page.raw.length
    }
    while (this.pages.length > 1 && this.records - this.pages[0]!.raw.length >= keep) {
      this.records -= this.pages.shift()!.raw.length
    }
    if (this.records >= keep) this.resumed = []
  }

  /** The hashes of the last `limit` records emitted, oldest first. */
  hashes(limit: number): ReadonlyArray<number> {
    const out: Array<number> = []
    for (const page of this.pages) {
      for (let i = 0; i < page.raw.length; i++) out.push(Judge.hash(page.json?.[i] ?? JSON.stringify(page.raw[i])))
    }
    const all = this.resumed.length === 0 ? out : [...this.resumed, ...out]
    return all.length <= limit ? all : all.slice(all.length - limit)
  }
}

/** What a mode learns from one page (see `Mode.step`). */
export interface Step<A> {
  /** The pages to emit, holding only records not emitted before. */
  readonly emit: ReadonlyArray<Page.Page<A>>
  /** The page that decides what comes next: the page itself, or the last one a drift-safe look back fetched. */
  readonly last: Page.Page<A>
  /** Records of `last` not emitted before. */
  readonly fresh: number
  /** Records of `last` repeated beyond the overlap asked for (see `Judge.Observation`). */
  readonly surplus: number
}

/** How plain and drift-safe paging differ: how pages overlap, what a page yields, where a resume starts. */
export interface Mode<A, E, R> {
  readonly rules: Judge.Rules
  /**
   * Takes one page, in offset order. `tail` is there after a short page: the latest records emitted (hashes, oldest
   * first), which the page may start with again. `previous` is the page judged before it.
   */
  readonly step: (
    page: Page.Page<A>,
    context: {
      readonly plan: Judge.Plan
      readonly tail: ReadonlyArray<number> | undefined
      readonly previous: Page.Page<A> | undefined
    }
  ) => Effect.Effect<Step<A>, E, R>
  /** Where an export resumed after `page` starts. */
  readonly resumeAt: (page: Page.Page<A>) => number
  /** What else a resume must carry at this page size (drift-safe paging: its overlap). */
  readonly resumeExtra: (size: number) => Record<string, number>
}

/** Where a resumed export starts, and what it had learned. Plain JSON. */
export interface ResumePoint {
  readonly offset: number
  readonly pageSize: number
  readonly served: number
  readonly overlap?: number | undefined
  /** The length of a short page not yet settled (see `Judge.Plan.suspect`). */
  readonly suspect?: number | undefined
  /**
   * After a short page: hashes (`Judge.hash` of each record's JSON text) of the last records written, which a server
   * that filters after cutting may serve again right at `offset`.
   */
  readonly tail?: ReadonlyArray<number> | undefined
}

/** A page as emitted: with where to resume after it, or `undefined` when it was the last one. */
export type Emitted<A> = Page.Page<A> & { readonly next: ResumePoint | undefined }

/** A change of the page size: learned from the server (it clamps its pages), or halved after a response too large. */
export interface SizeChange {
  readonly size: number
  readonly previous: number
  readonly reason: "served" | "too-large"
}

export interface Setup<E> {
  readonly endpoint: string
  readonly plan: Judge.Plan
  readonly start: number
  /** See `ResumePoint.tail`. */
  readonly tail: ReadonlyArray<number> | undefined
  readonly concurrency: number
  /** A failure that a smaller page avoids (`ResponseTooLarge`). */
  readonly isTooLarge: (error: E) => boolean
  readonly onSizeChange: (change: SizeChange) => Effect.Effect<void>
}

interface InFlight<A, E> {
  readonly offset: number
  readonly fiber: Fiber.RuntimeFiber<Page.Page<A>, E>
}

/**
 * Whether `page` holds exactly the records of `before` at a later offset: compared by their text, the first record
 * first (a proper server never serves one record at two positions of an unchanged list, so that gate is rarely
 * passed and the whole comparison rarely paid).
 */
export const repeatsPage = <A>(before: Page.Page<A> | undefined, page: Page.Page<A>): boolean => {
  if (before === undefined || page.offset <= before.offset || page.received === 0) return false
  if (page.received !== before.received || page.invalid.length !== before.invalid.length) return false
  if (PageOrder.textAt(page, 0) !== PageOrder.textAt(before, 0)) return false
  for (let i = 1; i < page.received; i++) {
    if (PageOrder.textAt(page, i) !== PageOrder.textAt(before, i)) return false
  }
  return true
}

/** Why pages in flight are no longer wanted (see the module's comment). */
export type CancelReason = "list-ended" | "paging-moved" | "stream-ended" | "stream-failed"

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
    yield* Scope.addFinalizerExit(outer, (exit) =>
      Exit.isSuccess(exit)
        ? dropInFlight("stream-ended")
        : Cause.isInterruptedOnly(exit.cause)
        ? Effect.void
        : dropInFlight("stream-failed"))
    // The engine's whole state: the plan, the next offset to ask, the window of pages in flight and the pages in it,
    // the last page judged, and the records the next page may repeat.
    let plan = settings.plan
    let next = settings.start
    let window = 1
    let done = false
    const inFlight: Array<InFlight<A, E>> = []
    // The latest records emitted, and whether the next page may repeat some of them (after a short page).
    const recent = new Recent<A>(settings.tail ?? [])
    let afterShort = settings.tail !== undefined
    // At most as many as the positions a short page left unread: never more than a page asked.
    const tail = () => recent.hashes(Math.max(plan.size, lastJudged?.count ?? 0))

    const launch = Effect.suspend(() => {
      const launched: Array<Effect.Effect<void, never, R>> = []
      while (inFlight.length + launched.length < window) {
        const offset = next
        next += Math.max(1, plan.size - mode.rules.overlap(plan.size))
        launched.push(
          Effect.map(Effect.forkIn(fetch(offset, plan.size), scope), (fiber) => {
            inFlight.push({ offset, fiber })
          })
        )
      }
      return Effect.all(launched, { discard: true })
    })

    const dropInFlight = (reason: CancelReason) =>
      Effect.suspend(() => Effect.forEach(inFlight.splice(0), (f) => ErpClient.cancel(f.fiber, reason)))

    const regrid = (offset: number) =>
      Effect.zipRight(
        dropInFlight("paging-moved"),
        Effect.sync(() => {
          next = offset
          window = 1
        })
      )

    let lastJudged: Page.Page<A> | undefined = undefined
    // Where each page judged so far started, by the hash of the first record it brought that was new (one number a
    // page): see `Judge.Rules.firstRecordsUnique`.
    const firsts = new Map<number, number>()
    const startsLikeAnother = (offset: number, emitted: ReadonlyArray<Page.Page<A>>): boolean => {
      const page = emitted.find((page) => page.raw.length > 0)
      if (!mode.rules.firstRecordsUnique || page === undefined) return false
      const first = Judge.hash(page.json?.[0] ?? JSON.stringify(page.raw[0]))
      const before = firsts.get(first)
      if (before === undefined) firsts.set(first, offset)
      return before !== undefined && before !== offset
    }

    const resumePoint = (page: Page.Page<A>, last: boolean): ResumePoint => ({
      offset: mode.resumeAt(page),
      pageSize: plan.size,
      served: plan.served,
      ...mode.resumeExtra(plan.size),
      ...(plan.suspect === undefined ? {} : { suspect: plan.suspect }),
      // Only the last page of a step can be followed by repeats (the records of those before it follow them).
      ...(last && afterShort && mode.rules.overlap(plan.size) === 0 ? { tail: tail() } : {})
    })

    // One page in order: its pages to emit (possibly none, e.g. after a too-large response shrank the page).
    const once: Effect.Effect<ReadonlyArray<Emitted<A>>, Option.Option<E | E2 | PagingLoop>, R | R2> = Effect.gen(
      function*() {
        yield* launch
        const head = inFlight.shift()!
        const exit = yield* Fiber.await(head.fiber)
        if (Exit.isFailure(exit)) {
          const failure = Cause.failureOption(exit.cause)
          if (Option.isSome(failure) && settings.isTooLarge(failure.value) && plan.size > 1) {
            const previous = plan.size
            plan = Judge.shrink(plan)
            yield* regrid(head.offset)
            yield* settings.onSizeChange({ size: plan.size, previous, reason: "too-large" })
            return []
          }
          return yield* Effect.failCause(Cause.map(exit.cause, Option.some))
        }
        const step = yield* Effect.mapError(
          mode.step(exit.value, { plan, tail: afterShort ? tail() : undefined, previous: lastJudged }),
          Option.some
        )
        const last = step.last
        // Nothing new, and the same records as the page before at a later offset: a server that ignores list_offset,
        // or a list that moved by exactly the distance between the two pages. A page far further on tells (past the
        // end of most lists, and farther than any list moves between two requests): the ignoring server serves them
        // again.
        const ignored = startsLikeAnother(last.offset, step.emit) ||
          (step.fresh === 0 && repeatsPage(lastJudged, last) &&
            repeatsPage(
              last,
              yield* Effect.mapError(fetch(last.offset + Math.max(10_000, 100 * last.count), last.count), Option.some)
            ))
        const judged = Judge.judge(plan, {
          offset: last.offset,
          count: last.count,
          received: last.received,
          fresh: step.fresh,
          surplus: step.surplus,
          repeatsPrevious: ignored
        }, mode.rules)
        plan = judged.plan
        lastJudged = last
        recent.add(step.emit, Math.max(plan.size, last.count))
        afterShort = last.received > 0 && last.received < last.count
        const decision = judged.decision
        switch (decision._tag) {
          case "Loop":
            yield* dropInFlight("stream-failed")
            return yield* Effect.fail(
              Option.some(new PagingLoop({ endpoint: settings.endpoint, offset: last.offset, reason: decision.reason }))
            )
          case "End":
            done = true
            yield* dropInFlight("list-ended")
            break
          case "Regrid":
            yield* regrid(decision.offset)
            break
          case "More":
            if (step.fresh > 0 && last.received >= last.count) window = Math.min(settings.concurrency, window * 2)
        }
        if (judged.learned !== undefined) {
          yield* settings.onSizeChange({ ...judged.learned, reason: "served" })
        }
        const lastEmitted = step.emit.length - 1
        return step.emit.map((page, i) => ({
          ...page,
          next: done && i === lastEmitted ? undefined : resumePoint(page, i === lastEmitted)
        }))
      }
    )

    return Effect.suspend(
      function pull(): Effect.Effect<Chunk.Chunk<Emitted<A>>, Option.Option<E | E2 | PagingLoop>, R | R2> {
        if (done) return Effect.fail(Option.none())
        return Effect.flatMap(
          once,
          (pages) => pages.length === 0 ? pull() : Effect.succeed(Chunk.unsafeFromArray(pages))
        )
      }
    )
  }))

/**
 * Plain paging's step: a page right after a short one may start with records already emitted (a server that filters
 * after cutting serves them again); those are dropped, the rest emitted. A page that holds exactly the records of the
 * page before it emits nothing (see `run`).
 */
export const plainStep = <A>(
  page: Page.Page<A>,
  tail: ReadonlyArray<number> | undefined,
  previous: Page.Page<A> | undefined
): Step<A> => {
  if (repeatsPage(previous, page)) return { emit: [], last: page, fresh: 0, surplus: 0 }
  if (tail === undefined || tail.length === 0 || page.received === 0) {
    return { emit: [page], last: page, fresh: page.received, surplus: 0 }
  }
  const head: Array<number> = []
  for (let i = 0; i < Math.min(tail.length, page.received); i++) head.push(Judge.hash(PageOrder.textAt(page, i)))
  const repeated = Judge.repeatedRun(tail, head)
  if (repeated === 0) return { emit: [page], last: page, fresh: page.received, surplus: 0 }
  return {
    emit: [PageOrder.keepWhere(page, (position) => position >= repeated)],
    last: page,
    fresh: page.received - repeated,
    surplus: repeated
  }
}
