/**
 * Paging's judgement, as plain functions over data (docs/ARCHITECTURE.md, "Paging"): what one page says about the
 * rest of the list. The engine (`Pager`) applies it to each page in offset order; each edition only wires the engine to
 * its fetches and streams.
 *
 * A short page may be clamped, filtered after the cut, or the last page (docs/paging.md, "A short page, and the end
 * of the list"): one short page cannot tell these apart, so it never ends the list by itself. Paging goes on right
 * after the records received and the next page settles it: records it repeats were filtered (dropped), the same short
 * length again is a clamp. The list ends at a page that brings nothing new. A page that holds exactly the records of
 * the page before it at a later offset means the server ignores `list_offset`: that fails (`PagingLoop`) rather than
 * loop or end early; so does a run of pages that bring nothing new (`Rules.maxQuiet`).
 *
 * @since 0.1.0
 */

/**
 * What paging knows of the server's pages.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Plan {
  /** The `list_count` asked. */
  readonly size: number
  /** The most records the server has served in one page so far. */
  readonly served: number
  /** The length of the last short page that brought records, while the next page has not settled what it was. */
  readonly suspect?: number | undefined
  /** Pages in a row that brought nothing new and did not end the list. */
  readonly quiet: number
}

/**
 * A plan for a first page of `size` (or what a resumed export had learned: `served`, the most records the server
 * served in one page).
 *
 * @example
 * ```ts
 * import * as PagingJudge from "./pagingJudge.js"
 *
 * console.log(PagingJudge.plan(1000)) // => { size: 1000, served: 0, suspect: undefined, quiet: 0 }
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const plan = (size: number, served = 0): Plan => ({ size, served, suspect: undefined, quiet: 0 })

/**
 * One page as the mode saw it (see `Pager.Step`).
 *
 * @since 0.1.0
 * @category Models
 */
export interface Observation {
  readonly offset: number
  /** The `list_count` asked. */
  readonly count: number
  /** Records the server sent, valid or not. */
  readonly received: number
  /** Records not emitted before. */
  readonly fresh: number
  /**
   * Records repeated from what was read before beyond the overlap the mode asked for: the server filtered records
   * after cutting the page before (see above). 0 for a page that repeats nothing it was not expected to.
   */
  readonly surplus: number
  /**
   * The server does not move through the list: the page holds exactly the records of the page before it at a later
   * offset and so does a page far further on (a list that moved by exactly the distance between two pages is told
   * apart by that further page), or, where `Rules.firstRecordsUnique`, it starts with the record an earlier page
   * started with at another offset.
   */
  readonly repeatsPrevious: boolean
}

/**
 * What the page that was judged says about the rest of the list.
 *
 * @since 0.1.0
 * @category Models
 */
export type Decision =
  | { readonly _tag: "More" }
  | { readonly _tag: "End" }
  /** Drop the pages in flight and go on from `offset` (with the plan's size, which may have changed). */
  | { readonly _tag: "Regrid"; readonly offset: number }
  /** The server does not move through the list: fail (`PagingLoop`), naming why. */
  | { readonly _tag: "Loop"; readonly reason: string }

/**
 * How a mode pages: the records consecutive pages share (0 for plain paging), and how long it may see no progress.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Rules {
  readonly overlap: (size: number) => number
  /** Pages in a row that may bring nothing new before paging gives up (a list that never moves on). */
  readonly maxQuiet: number
  /**
   * Whether a page that starts with the record an earlier page started with, at another offset, means the server
   * does not move through the list. True for plain paging: an unchanged list never serves one record at two
   * positions, and plain paging does not check records by id, so it would write them again. Drift-safe paging drops
   * such records by id and judges by what is new instead.
   */
  readonly firstRecordsUnique: boolean
  /** The smallest page size worth learning (drift-safe paging needs two records a page to overlap). */
  readonly minSize: number
  /**
   * Where a mode places the page after a short page (`undefined`: where this judgement places it, right after the
   * page's records). Drift-safe paging, which takes a page only when it holds a record already read, places it further
   * on, to see where the list ends (see `DriftSafe`).
   */
  readonly afterShort?: ((page: Observation, plan: Plan) => number | undefined) | undefined
}

/**
 * Where paging goes on after a page: right after its records, sharing the mode's overlap with them but at most half of
 * them (so paging moves on by at least half of what a page brought, and a page of one record shares nothing with the
 * next).
 *
 * @example
 * ```ts
 * import * as PagingJudge from "./pagingJudge.js"
 *
 * console.log(PagingJudge.after({ offset: 100, received: 37 }, 0)) // => 137
 * console.log(PagingJudge.after({ offset: 100, received: 37 }, 5)) // => 132
 * console.log(PagingJudge.after({ offset: 100, received: 1 }, 5)) // => 101
 * ```
 *
 * @since 0.1.0
 * @category Decisions
 */
export const after = (page: { readonly offset: number; readonly received: number }, overlap: number): number =>
  page.offset + page.received - Math.min(overlap, Math.floor(page.received / 2))

/**
 * A size learned from the server (`previous` is what was asked before), to tell the caller.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Learned {
  readonly size: number
  readonly previous: number
}

/**
 * Judges one page (see the module's description). Returns the next plan, the decision, and the page size learned by
 * this page, if it settled one.
 *
 * @example
 * ```ts
 * import * as PagingJudge from "./pagingJudge.js"
 *
 * // Plain paging: no overlap, three quiet pages at most, a record at two offsets is a loop
 * const rules = { overlap: () => 0, maxQuiet: 3, firstRecordsUnique: true, minSize: 1 }
 * // 1000 asked, 500 served: clamped, filtered or the last page; the next page settles it
 * const first = PagingJudge.judge(PagingJudge.plan(1000), {
 *   offset: 0,
 *   count: 1000,
 *   received: 500,
 *   fresh: 500,
 *   surplus: 0,
 *   repeatsPrevious: false
 * }, rules)
 * console.log(first.decision) // => { _tag: 'Regrid', offset: 500 }
 * // 500 again, nothing repeated: the server serves 500 a page
 * const second = PagingJudge.judge(first.plan, {
 *   offset: 500,
 *   count: 1000,
 *   received: 500,
 *   fresh: 500,
 *   surplus: 0,
 *   repeatsPrevious: false
 * }, rules)
 * console.log(second.learned, second.decision) // => { size: 500, previous: 1000 } { _tag: 'Regrid', offset: 1000 }
 * // A page that brings nothing ends the list
 * const third = PagingJudge.judge(second.plan, {
 *   offset: 1000,
 *   count: 500,
 *   received: 0,
 *   fresh: 0,
 *   surplus: 0,
 *   repeatsPrevious: false
 * }, rules)
 * console.log(third.decision) // => { _tag: 'End' }
 * ```
 *
 * @since 0.1.0
 * @category Decisions
 */
export const judge = (
  plan: Plan,
  page: Observation,
  rules: Rules
): { readonly plan: Plan; readonly decision: Decision; readonly learned?: Learned | undefined } => {
  const served = Math.max(plan.served, page.received)
  if (page.repeatsPrevious) {
    return {
      plan: { ...plan, served },
      decision: {
        _tag: "Loop",
        reason: `the page at offset ${page.offset} repeats records an earlier page held at another offset: the ` +
          "server seems to ignore list_offset"
      }
    }
  }
  if (page.fresh === 0) {
    if (page.received === 0) return { plan: { ...plan, served, suspect: undefined }, decision: { _tag: "End" } }
    // Records repeated beyond the overlap asked for: a server that filters after cutting, and the positions of
    // this page hold nothing not read. Paging goes on right after them (they take as many positions at least); the
    // end is not proven until a page brings nothing.
    if (page.surplus > 0 && page.received < page.count) {
      return {
        plan: { ...plan, served, suspect: undefined },
        decision: {
          _tag: "Regrid",
          offset: rules.afterShort?.(page, plan) ?? after(page, rules.overlap(plan.size))
        }
      }
    }
    // A short page of records read before (those a drift-safe page shares with the one before it): the end, or a
    // server whose pages got as short as the overlap. A page of one record is the end; from a longer one paging asks
    // once more from its last record (sharing just that one), so a shorter page size shows and the end is the page
    // that brings nothing.
    if (page.received < page.count && page.received === 1) {
      return { plan: { ...plan, served, suspect: undefined }, decision: { _tag: "End" } }
    }
    const quiet = plan.quiet + 1
    if (quiet > rules.maxQuiet) {
      return {
        plan: { ...plan, served, quiet },
        decision: {
          _tag: "Loop",
          reason: `${quiet} pages in a row up to offset ${page.offset} brought no record not already read`
        }
      }
    }
    return {
      plan: { ...plan, served, quiet, suspect: undefined },
      decision: page.received >= page.count
        ? { _tag: "More" }
        : { _tag: "Regrid", offset: rules.afterShort?.(page, plan) ?? page.offset + page.received - 1 }
    }
  }
  // The same short length as the page before, nothing repeated that should not be, still short, and never more
  // served in one page: the server serves at most that many a page. Go on right after it with that size. (Pages cut
  // short by filtering would otherwise teach ever smaller sizes; pages that got shorter mid-list are followed, one
  // short page at a time, without being learned.)
  if (
    plan.suspect !== undefined && page.received === plan.suspect && page.surplus === 0 &&
    page.received < page.count && page.received < plan.size && page.received >= rules.minSize &&
    page.received >= plan.served
  ) {
    const size = page.received
    return {
      plan: { size, served, suspect: undefined, quiet: 0 },
      decision: { _tag: "Regrid", offset: after(page, rules.overlap(size)) },
      learned: { size, previous: plan.size }
    }
  }
  if (page.received >= page.count) {
    return { plan: { ...plan, served, suspect: undefined, quiet: 0 }, decision: { _tag: "More" } }
  }
  // Short, with new records: clamped, filtered or the last page. Go on right after it (or where the mode places the
  // page after a short one); the next page settles it.
  return {
    plan: { ...plan, served, suspect: page.received, quiet: 0 },
    decision: {
      _tag: "Regrid",
      offset: rules.afterShort?.(page, plan) ?? after(page, rules.overlap(plan.size))
    }
  }
}

/**
 * After a response too large to accept: half the page (at least one record).
 *
 * @example
 * ```ts
 * import * as PagingJudge from "./pagingJudge.js"
 *
 * console.log(PagingJudge.shrink(PagingJudge.plan(1000, 1000)).size) // => 500
 * ```
 *
 * @since 0.1.0
 * @category Decisions
 */
export const shrink = (plan: Plan): Plan => ({
  size: Math.max(1, Math.floor(plan.size / 2)),
  served: plan.served,
  suspect: undefined,
  quiet: plan.quiet
})

/**
 * A 53-bit hash of a string (cyrb53): how a resume point remembers the records a filtering server may serve again
 * after it, without storing them, and how drift-safe paging tells a record's content apart.
 *
 * @example
 * ```ts
 * import * as PagingJudge from "./pagingJudge.js"
 *
 * console.log(PagingJudge.hash('{"id":1}') === PagingJudge.hash('{"id":1}')) // => true
 * console.log(PagingJudge.hash('{"id":1}') === PagingJudge.hash('{"id":2}')) // => false
 * ```
 *
 * @since 0.1.0
 * @category Decisions
 */
export const hash = (text: string): number => {
  let h1 = 0xdeadbeef
  let h2 = 0x41c6ce57
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i)
    h1 = Math.imul(h1 ^ ch, 2654435761)
    h2 = Math.imul(h2 ^ ch, 1597334677)
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507)
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909)
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507)
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909)
  return 4294967296 * (2097151 & h2) + (h1 >>> 0)
}

/**
 * How many records at the start of `next` were read before (each a record's hash, in server order): the records of
 * `before` (the latest records read, oldest first) from the one `next` starts with, as far as both go. A server that
 * filters after cutting serves such records again right after a short page (all of the short page's last records,
 * or, when its pages got shorter meanwhile, the first of them); a server that clamps serves none of them. 0 when
 * `next` does not start with such a run.
 *
 * @example
 * ```ts
 * import * as PagingJudge from "./pagingJudge.js"
 *
 * // The last records read were 7, 8, 9 (hashes); the next page starts with 8 and 9 again: two filtered repeats
 * console.log(PagingJudge.repeatedRun([7, 8, 9], [8, 9, 10, 11])) // => 2
 * console.log(PagingJudge.repeatedRun([7, 8, 9], [10, 11])) // => 0
 * ```
 *
 * @since 0.1.0
 * @category Decisions
 */
export const repeatedRun = (before: ReadonlyArray<number>, next: ReadonlyArray<number>): number => {
  if (next.length === 0) return 0
  for (let j = 0; j < before.length; j++) {
    if (before[j] !== next[0]) continue
    const run = Math.min(before.length - j, next.length)
    let same = true
    for (let i = 1; i < run && same; i++) same = next[i] === before[j + i]
    if (same) return run
  }
  return 0
}
