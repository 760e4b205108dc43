/**
 * The paging engine's state machine (see `Pager.ts`): pages fetched ahead on an offset grid, judged strictly in offset
 * order by `PagingJudge`; which pages are in flight, where the grid goes on after a short page, what is emitted and
 * where a resume starts. Nothing here waits or fetches: the edition does, and tells the engine.
 */
import type * as Pager from "../Pager.js"
import * as PageOrder from "./pageOrder.js"
import * as Judge from "./pagingJudge.js"

/** The text of the valid record at `index` (not a position in server order: see `PageOrder.textAt`). */
const validText = (page: Pager.Page, index: number): string => page.json?.[index] ?? JSON.stringify(page.raw[index])

/**
 * The latest records emitted, as a server that filters after cutting may serve them again after a short page: the
 * pages themselves (hashed only when a short page makes a check necessary) after the hashes a resumed export was
 * handed, at least `keep` records of them.
 */
class Recent {
  private pages: Array<Pager.Page> = []
  private records = 0
  constructor(private resumed: ReadonlyArray<number>) {}

  add(emitted: ReadonlyArray<Pager.Page>, keep: number): void {
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
      for (let i = 0; i < page.raw.length; i++) out.push(Judge.hash(validText(page, i)))
    }
    const all = this.resumed.length === 0 ? out : [...this.resumed, ...out]
    return all.length <= limit ? all : all.slice(all.length - limit)
  }
}

interface Slot<H> {
  readonly ask: Pager.Ask
  handle: H | undefined
}

export class Engine<P extends Pager.Page, H> implements Pager.Pager<P, H> {
  // The engine's whole state: the plan, the next offset to ask, the window of pages in flight and the pages in it,
  // the last page judged, and the records the next page may repeat.
  plan: Judge.Plan
  done = false
  private next: number
  private window = 1
  private readonly inFlight: Array<Slot<H>> = []
  // The latest records emitted, and whether the next page may repeat some of them (after a short page).
  private readonly recent: Recent
  private afterShort: boolean
  private lastJudged: P | undefined = undefined
  // Whether the end was read again already (see `Pager.Mode.confirmEnd`).
  private endAskedAgain = false
  // Where each page judged so far started, by the hash of the first record it brought that was new (one number a
  // page): see `PagingJudge.Rules.firstRecordsUnique`.
  private readonly firsts = new Map<number, number>()

  constructor(private readonly settings: Pager.Settings, private readonly mode: Pager.Mode) {
    this.plan = settings.plan
    this.next = settings.start
    this.recent = new Recent(settings.tail ?? [])
    this.afterShort = settings.tail !== undefined
  }

  launch = (): ReadonlyArray<Pager.Ask> => {
    const asks: Array<Pager.Ask> = []
    while (this.inFlight.length < this.window) {
      const ask = { offset: this.next, count: this.plan.size }
      this.next += Math.max(1, this.plan.size - this.mode.rules.overlap(this.plan.size))
      this.inFlight.push({ ask, handle: undefined })
      asks.push(ask)
    }
    return asks
  }

  started = (ask: Pager.Ask, handle: H): void => {
    const slot = this.inFlight.find((slot) => slot.ask === ask)
    if (slot !== undefined) slot.handle = handle
  }

  take = (): Pager.InFlight<H> => {
    const slot = this.inFlight.shift()
    if (slot === undefined || slot.handle === undefined) throw new Error("Pager.take: no page in flight (launch first)")
    return { ...slot.ask, handle: slot.handle }
  }

  tooLarge = (offset: number): { readonly change: Pager.SizeChange; readonly cancel: Pager.Cancel<H> } | undefined => {
    if (this.plan.size <= 1) return undefined
    const previous = this.plan.size
    this.plan = Judge.shrink(this.plan)
    const cancel = this.regrid(offset)
    return { change: { size: this.plan.size, previous, reason: "too-large" }, cancel }
  }

  context = (): Pager.StepContext<P> => ({
    plan: this.plan,
    tail: this.afterShort ? this.tail() : undefined,
    previous: this.lastJudged
  })

  repeatCheck = (step: Pager.Step<P>): Pager.Ask | undefined => {
    const last = step.last
    if (!this.repeatsLast(step) || this.startsLikeAnother(last.offset, step.emit, false)) return undefined
    return { offset: last.offset + Math.max(10_000, 100 * last.count), count: last.count }
  }

  judge = (step: Pager.Step<P>, far: P | undefined): Pager.Judged<P, H> => {
    const last = step.last
    // Nothing new, and the same records as the page before at a later offset: a server that ignores list_offset, or
    // a list that moved by exactly the distance between the two pages. The far page tells (see `repeatCheck`).
    const ignored = this.startsLikeAnother(last.offset, step.emit, true) ||
      (far !== undefined && this.repeatsLast(step) && PageOrder.repeatsPage(last, far))
    const observed = Judge.judge(this.plan, {
      offset: last.offset,
      count: last.count,
      received: last.received,
      fresh: step.fresh,
      surplus: step.surplus,
      repeatsPrevious: ignored
    }, this.mode.rules)
    const ended = observed.decision._tag === "End" || (step.ends === true && observed.decision._tag !== "Loop")
    // The first end, where the mode asks for it, is read again: the same page, asked anew.
    const again = ended && !this.endAskedAgain && this.mode.confirmEnd?.() === true
    if (again) this.endAskedAgain = true
    const judged: typeof observed = again
      ? { ...observed, decision: { _tag: "Regrid", offset: last.offset } }
      : ended
      ? { ...observed, decision: { _tag: "End" } }
      : observed
    this.plan = judged.plan
    this.lastJudged = last
    this.recent.add(step.emit, Math.max(this.plan.size, last.count))
    this.afterShort = last.received > 0 && last.received < last.count
    const decision = judged.decision
    let cancel: Pager.Cancel<H> | undefined = undefined
    switch (decision._tag) {
      case "Loop":
        return {
          cancel: this.stop("stream-failed"),
          failure: { _tag: "Loop", endpoint: this.settings.endpoint, offset: last.offset, reason: decision.reason },
          learned: undefined,
          emit: []
        }
      case "End":
        this.done = true
        cancel = this.stop("list-ended")
        break
      case "Regrid":
        cancel = this.regrid(decision.offset)
        break
      case "More":
        if (step.fresh > 0 && last.received >= last.count) {
          this.window = Math.min(this.settings.concurrency, this.window * 2)
        }
    }
    const lastEmitted = step.emit.length - 1
    return {
      cancel,
      failure: undefined,
      learned: judged.learned === undefined ? undefined : { ...judged.learned, reason: "served" },
      emit: step.emit.map((page, i) => ({
        ...page,
        next: this.done && i === lastEmitted ? undefined : this.resumePoint(page, i === lastEmitted)
      }))
    }
  }

  stop = (reason: Pager.CancelReason): Pager.Cancel<H> => ({
    reason,
    handles: this.inFlight.splice(0).flatMap((slot) => slot.handle === undefined ? [] : [slot.handle])
  })

  /**
   * Drops the pages in flight and goes on from `offset`, one page in flight: the oldest one in flight when it is that
   * very page (drift-safe paging goes on a whole page on after a short page, where it had asked already).
   */
  private regrid(offset: number): Pager.Cancel<H> {
    const head = this.inFlight[0]
    const keep = head !== undefined && head.ask.offset === offset && head.ask.count === this.plan.size
      ? this.inFlight.shift()
      : undefined
    const cancel = this.stop("paging-moved")
    this.next = offset
    this.window = 1
    if (keep !== undefined) {
      this.inFlight.push(keep)
      this.next += Math.max(1, this.plan.size - this.mode.rules.overlap(this.plan.size))
    }
    return cancel
  }

  /** At most as many as the positions a short page left unread: never more than a page asked. */
  private tail(): ReadonlyArray<number> {
    return this.recent.hashes(Math.max(this.plan.size, this.lastJudged?.count ?? 0))
  }

  /** Whether the step's page brought nothing new and holds exactly the records of the page judged before it. */
  private repeatsLast(step: Pager.Step<P>): boolean {
    return step.fresh === 0 && PageOrder.repeatsPage(this.lastJudged, step.last)
  }

  /**
   * Whether the first new record the page brought started a page judged before at another offset; `record`: remember
   * where this page started.
   */
  private startsLikeAnother(offset: number, emitted: ReadonlyArray<P>, record: boolean): boolean {
    const page = emitted.find((page) => page.raw.length > 0)
    if (!this.mode.rules.firstRecordsUnique || page === undefined) return false
    const first = Judge.hash(validText(page, 0))
    const before = this.firsts.get(first)
    if (before === undefined && record) this.firsts.set(first, offset)
    return before !== undefined && before !== offset
  }

  private resumePoint(page: P, last: boolean): Pager.ResumePoint {
    return {
      offset: this.mode.resumeAt(page),
      pageSize: this.plan.size,
      served: this.plan.served,
      ...this.mode.resumeExtra(this.plan.size),
      ...(this.plan.suspect === undefined ? {} : { suspect: this.plan.suspect }),
      // Only the last page of a step can be followed by repeats (the records of those before it follow them).
      ...(last && this.afterShort && this.mode.rules.overlap(this.plan.size) === 0 ? { tail: this.tail() } : {})
    }
  }
}

/** See `Pager.plainStep`. */
export const plainStep = <P extends Pager.Page>(
  page: P,
  tail: ReadonlyArray<number> | undefined,
  previous: P | undefined
): Pager.Step<P> => {
  if (PageOrder.repeatsPage(previous, page)) return { emit: [], last: page, fresh: 0, surplus: 0 }
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
