import type * as DriftSafe from "../src/DriftSafe.js"
import * as Pager from "../src/Pager.js"

// The paging engine driven by hand, synchronously, as an edition drives it with fibers: each page is fetched when the
// engine launches it (the handle is the page itself), judged when it is the oldest in flight.

export type Fetch<P> = (offset: number, count: number) => P

export type Failure = Pager.Loop | DriftSafe.Drift | DriftSafe.MissingId

export interface Driven<P> {
  readonly emitted: ReadonlyArray<Pager.Emitted<P>>
  readonly failure: Failure | undefined
  /** Every cancellation the engine asked for, in order. */
  readonly cancelled: ReadonlyArray<Pager.Cancel<P>>
  readonly events: ReadonlyArray<DriftSafe.DriftEvent>
}

type StepOf<P> = (page: P, context: Pager.StepContext<P>) => Pager.Step<P> | Failure

/** Plain paging's step. */
export const plain = <P extends Pager.Page>(): Pager.Mode & { readonly step: StepOf<P> } => ({
  ...Pager.plainMode,
  step: (page, { previous, tail }) => Pager.plainStep(page, tail, previous)
})

/** Drift-safe paging's step, its recoveries driven with `fetch`; its events pushed to `events`. */
export const safe = <P extends Pager.Page>(
  state: DriftSafe.DriftSafe<P>,
  fetch: Fetch<P>,
  events: Array<DriftSafe.DriftEvent>
): Pager.Mode & { readonly step: StepOf<P> } => ({
  ...state.mode,
  step: (page, { plan }) => {
    const taken = state.step(page, plan)
    if (taken._tag === "Failed") return taken.failure
    events.push(...taken.events)
    if (taken._tag === "Taken") return taken.step
    for (;;) {
      const next = taken.recovery.next()
      switch (next._tag) {
        case "Fetch":
          taken.recovery.feed(fetch(next.offset, next.count))
          break
        case "Done":
          events.push(...next.events)
          return next.step
        case "Fail":
          return next.failure
      }
    }
  }
})

/** Runs an export to its end (or its failure, or `take` pages emitted). */
export const drive = <P extends Pager.Page>(
  fetch: Fetch<P>,
  settings: Pager.Settings,
  mode: Pager.Mode & { readonly step: StepOf<P> },
  options: { readonly take?: number; readonly events?: ReadonlyArray<DriftSafe.DriftEvent> } = {}
): Driven<P> => {
  const pager = Pager.make<P, P>(settings, mode)
  const emitted: Array<Pager.Emitted<P>> = []
  const cancelled: Array<Pager.Cancel<P>> = []
  const done = (failure: Failure | undefined): Driven<P> => ({
    emitted,
    failure,
    cancelled,
    events: options.events ?? []
  })
  for (let pages = 0; !pager.done; pages++) {
    if (pages > 100_000) throw new Error("the engine does not end")
    for (const ask of pager.launch()) pager.started(ask, fetch(ask.offset, ask.count))
    const head = pager.take()
    const step = mode.step(head.handle, pager.context())
    if ("_tag" in step) return done(step)
    const far = pager.repeatCheck(step)
    const judged = pager.judge(step, far === undefined ? undefined : fetch(far.offset, far.count))
    if (judged.cancel !== undefined) cancelled.push(judged.cancel)
    if (judged.failure !== undefined) return done(judged.failure)
    for (const page of judged.emit) {
      emitted.push(page)
      if (emitted.length === options.take) {
        cancelled.push(pager.stop("stream-ended"))
        return done(undefined)
      }
    }
  }
  return done(undefined)
}

/** A page of `records` at `offset`, as a server that serves at most `max` a page answers `fetch(offset, count)`. */
export const pageOf = <A>(
  records: ReadonlyArray<A>,
  offset: number,
  count: number,
  max = Infinity
): Pager.Page<A> => {
  const served = records.slice(offset, offset + Math.min(count, max))
  return { offset, count, received: served.length, records: served, raw: served, invalid: [] }
}

/** Checked settings (the test's options are valid). */
export const settingsOf = (options: Pager.Options): Pager.Settings => {
  const checked = Pager.settings(options)
  if (!checked.ok) throw new Error(checked.failure.reason)
  return checked.value
}
