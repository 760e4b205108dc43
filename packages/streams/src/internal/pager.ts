/**
 * The paging engine: pages fetched ahead on an offset grid, emitted strictly in offset order, with the page size
 * learned from what the server serves and the end of the list taken only when the server has said so
 * (docs/ARCHITECTURE.md, "Paging").
 *
 * The contract gives neither the default nor the largest `list_count` (docs/erp-api-v2.md, "Gaps in the endpoint
 * list"), so a page shorter than asked is either the end of the list or a server that clamps its pages. The rule:
 *
 * - an empty page ends the list;
 * - a page shorter than one the server has already served ends it: a server that clamps its pages serves its
 *   largest page whenever the list goes on, so a shorter one is the end (this assumes the largest page is one fixed
 *   number, the plain reading of "maximum of list_count");
 * - otherwise (as long as any page served so far, but shorter than asked) it is not known yet. Plain paging takes
 *   the page's length as the page size and goes on right after it, and the next page settles it: shorter or empty,
 *   the end; as long, the server clamps and pages of that size follow. Drift-safe paging first asks once more just
 *   past what it read, keeping an overlap with it, and takes the smaller size if that page is as long. Either way the
 *   end costs at most one request more than a list that ends on a page boundary, and nothing is skipped.
 *
 * Pages in flight start at one and double with each full page, up to `concurrency`: a short list or a clamping
 * server costs few requests past the end or on the wrong grid, a long list soon runs at full concurrency.
 */
import type * as Page from "@erp-client/core/Page"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"

/**
 * What paging knows of the server's pages: the size it asks, the most records it was ever served in one page, the
 * ceiling it never asks above, and the length of a short page not yet settled (drift-safe paging, see above).
 */
export interface Plan {
  readonly size: number
  readonly served: number
  readonly ceiling: number
  readonly suspect?: number | undefined
}

/** What the page that decides (see `Mode.step`) says about the rest of the list. */
export type Decision =
  | { readonly _tag: "More" }
  | { readonly _tag: "End" }
  /** Drop the pages in flight and go on from `offset` (with the plan's size, which may have changed). */
  | { readonly _tag: "Regrid"; readonly offset: number }

/**
 * The rule above, as a function of the plan and one page: where it starts, `count` asked and `received`. `overlap`
 * is the mode's (0 for plain paging); `confirmFirst` says whether a short page is confirmed before its length is
 * learned, `minSize` the smallest size learned (drift-safe paging: 2, room for an overlap; it assumes a server
 * serves at least two records a page).
 */
export const judge = (
  plan: Plan,
  page: { readonly offset: number; readonly count: number; readonly received: number },
  mode: {
    readonly overlap: (size: number) => number
    readonly confirmFirst: boolean
    readonly minSize: number
  }
): { readonly plan: Plan; readonly decision: Decision } => {
  const served = Math.max(plan.served, page.received)
  if (page.received >= page.count) {
    return { plan: { ...plan, served, suspect: undefined }, decision: { _tag: "More" } }
  }
  if (page.received === 0 || page.received < plan.served) {
    return { plan: { ...plan, served }, decision: { _tag: "End" } }
  }
  // A page of one record cannot be confirmed with an overlap: drift-safe paging takes it as the end, on the
  // assumption that the server serves at least two records a page (`minSize`).
  if (page.received < mode.minSize) return { plan: { ...plan, served }, decision: { _tag: "End" } }
  // Right after the records received, sharing the mode's overlap with them, and at least one record further on.
  const after = (size: number) => page.offset + page.received - Math.min(mode.overlap(size), page.received - 1)
  if (mode.confirmFirst && plan.suspect === undefined) {
    return { plan: { ...plan, served, suspect: page.received }, decision: { _tag: "Regrid", offset: after(plan.size) } }
  }
  const size = Math.max(mode.minSize, plan.suspect ?? page.received)
  return {
    plan: { size, served, ceiling: Math.min(plan.ceiling, size), suspect: undefined },
    decision: { _tag: "Regrid", offset: after(size) }
  }
}

/** After a response too large to accept: half the page, and never more than that again. */
export const shrink = (plan: Plan): Plan => {
  const size = Math.max(1, Math.floor(plan.size / 2))
  return { size, served: plan.served, ceiling: size, suspect: undefined }
}

/** How plain and drift-safe paging differ: how pages overlap, what a page yields, where a resume starts. */
export interface Mode<A, E, R> {
  /** Records a page shares with the one before it at this page size (0, or fewer than `size`). */
  readonly overlap: (size: number) => number
  /** Whether a short page is confirmed by one more page before its length is taken as the server's (see above). */
  readonly confirmFirst: boolean
  /** The smallest page size to learn. */
  readonly minSize: number
  /**
   * Takes one page, in offset order: the pages to emit, and the page that decides what comes next (the page itself,
   * or the last one a drift-safe look back fetched).
   */
  readonly step: (
    page: Page.Page<A>,
    plan: Plan
  ) => Effect.Effect<
    { readonly emit: ReadonlyArray<Page.Page<A>>; readonly last: Page.Page<A> },
    E,
    R
  >
  /** Where an export resumed after `page` starts. */
  readonly resumeAt: (page: Page.Page<A>) => number
  /** What else a resume must carry at this page size (drift-safe paging: its overlap). */
  readonly resumeExtra: (size: number) => Record<string, number>
}

/** Where a resumed export starts, and what it had learned. */
export interface ResumePoint {
  readonly offset: number
  readonly pageSize: number
  readonly served: number
  readonly overlap?: number | undefined
}

/** A page as emitted: with where to resume after it, or `undefined` when it was the last one. */
export type Emitted<A> = Page.Page<A> & { readonly next: ResumePoint | undefined }

/** A change of the page size: learned from a short page, or halved after a response too large. */
export interface SizeChange {
  readonly size: number
  readonly previous: number
  readonly reason: "served" | "too-large"
}

export interface Settings<E> {
  readonly plan: Plan
  readonly start: number
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
 * Runs the engine. Fetches run in the stream's scope: when the stream ends, fails or is interrupted, the pages still
 * in flight are interrupted with it (their requests are cancelled).
 */
export const run = <A, E, R, E2, R2>(
  fetch: (offset: number, count: number) => Effect.Effect<Page.Page<A>, E, R>,
  mode: Mode<A, E2, R2>,
  settings: Settings<E>
): Stream.Stream<Emitted<A>, E | E2, R | R2> =>
  Stream.fromPull(Effect.gen(function*() {
    const scope = yield* Effect.scope
    // The engine's whole state: the plan, the next offset to ask, the window of pages in flight and the pages in it.
    let plan = settings.plan
    let next = settings.start
    let window = 1
    let done = false
    const inFlight: Array<InFlight<A, E>> = []
    // A size learned from a short page, told once a page of that size comes back full (the server clamps), never
    // when the next page shows the short one was simply the end of the list.
    let unconfirmed: { readonly size: number; readonly previous: number } | undefined = undefined

    const launch = Effect.suspend(() => {
      const launched: Array<Effect.Effect<void, never, R>> = []
      while (inFlight.length + launched.length < window) {
        const offset = next
        next += Math.max(1, plan.size - mode.overlap(plan.size))
        launched.push(
          Effect.map(Effect.forkIn(fetch(offset, plan.size), scope), (fiber) => {
            inFlight.push({ offset, fiber })
          })
        )
      }
      return Effect.all(launched, { discard: true })
    })

    const dropInFlight = Effect.suspend(() => Effect.forEach(inFlight.splice(0), (f) => Fiber.interrupt(f.fiber)))

    const regrid = (offset: number, reason: SizeChange["reason"], previous: number) =>
      Effect.zipRight(
        dropInFlight,
        Effect.suspend(() => {
          next = offset
          window = 1
          if (plan.size === previous) return Effect.void
          if (reason === "too-large") return settings.onSizeChange({ size: plan.size, previous, reason })
          unconfirmed = { size: plan.size, previous: unconfirmed?.previous ?? previous }
          return Effect.void
        })
      )

    const resumePoint = (page: Page.Page<A>): ResumePoint => ({
      offset: mode.resumeAt(page),
      pageSize: plan.size,
      served: plan.served,
      ...mode.resumeExtra(plan.size)
    })

    // One page in order: its pages to emit (possibly none, e.g. after a too-large response shrank the page).
    const once: Effect.Effect<ReadonlyArray<Emitted<A>>, Option.Option<E | E2>, R | R2> = Effect.gen(function*() {
      yield* launch
      const head = inFlight.shift()!
      const exit = yield* Fiber.await(head.fiber)
      if (Exit.isFailure(exit)) {
        const failure = Cause.failureOption(exit.cause)
        if (Option.isSome(failure) && settings.isTooLarge(failure.value) && plan.size > 1) {
          const previous = plan.size
          plan = shrink(plan)
          yield* regrid(head.offset, "too-large", previous)
          return []
        }
        return yield* Effect.failCause(Cause.map(exit.cause, Option.some))
      }
      const previous = plan.size
      const step = yield* Effect.mapError(mode.step(exit.value, plan), Option.some)
      const judged = judge(plan, step.last, mode)
      plan = judged.plan
      switch (judged.decision._tag) {
        case "End":
          done = true
          unconfirmed = undefined
          yield* dropInFlight
          break
        case "Regrid":
          yield* regrid(judged.decision.offset, "served", previous)
          break
        case "More": {
          window = Math.min(settings.concurrency, window * 2)
          const learned = unconfirmed
          if (learned !== undefined && learned.size === plan.size) {
            unconfirmed = undefined
            yield* settings.onSizeChange({ size: learned.size, previous: learned.previous, reason: "served" })
          }
        }
      }
      return step.emit.map((page, i) => ({
        ...page,
        next: done && i === step.emit.length - 1 ? undefined : resumePoint(page)
      }))
    })

    return Effect.suspend(function pull(): Effect.Effect<Chunk.Chunk<Emitted<A>>, Option.Option<E | E2>, R | R2> {
      if (done) return Effect.fail(Option.none())
      return Effect.flatMap(once, (pages) => pages.length === 0 ? pull() : Effect.succeed(Chunk.unsafeFromArray(pages)))
    })
  }))
