/**
 * `erp sandbox`'s flags of the list pages it serves: the largest page and when it changes, an offset or conditions
 * ignored, and records held back so pages come short while more follow.
 */
import * as Options from "@effect/cli/Options"
import { repeatable, shownDefault } from "../common.js"

/** The pages of `partner/list`: their size, their offsets, the records they hide. */
export const pages = {
  maxListCount: Options.integer("max-list-count").pipe(
    Options.withPseudoName("N"),
    Options.withDescription("The largest page served; a larger list_count gets this many records."),
    shownDefault(500)
  ),
  maxListCountFrom: Options.text("max-list-count-from").pipe(
    Options.withPseudoName("N:MAX"),
    Options.withDescription(
      "From the N-th list page served on, at most MAX records a page (the largest page changes mid-list; " +
        "4:50 with --max-list-count 100 serves 100, 100, 100, then 50)."
    ),
    repeatable
  ),
  ignoreOffset: Options.boolean("ignore-offset").pipe(
    Options.withDescription("Serve every list page from offset 0, whatever list_offset says (a broken server).")
  ),
  ignoreConditions: Options.choice("ignore-conditions", ["all", "unknown"] as const).pipe(
    Options.withDescription(
      "Leave list_condition unapplied, as a server that does not know a condition answers: all of them, or those " +
        "naming a field none of the list's first 100 records has. Such a page is cut from the whole list."
    ),
    Options.optional
  ),
  hiddenRate: Options.float("hidden-rate").pipe(
    Options.withPseudoName("SHARE"),
    Options.withDescription(
      "The share of seeded partners (0 to 1) held but never served, as permissions or soft deletes do: a page is " +
        "cut with them and they are dropped after, so pages come back short while more follow; get answers Not " +
        "found (seeded)."
    ),
    shownDefault(0)
  ),
  // Text, read as an integer in check.ts: @effect/cli 0.77 fails a repeated integer option given only once.
  hiddenPosition: Options.text("hidden-position").pipe(
    Options.withPseudoName("N"),
    Options.withDescription("Hide the seeded partner at this zero-based list position (instead of --hidden-rate)."),
    repeatable
  )
}

/** `--max-list-count-from N:MAX`: from the N-th list page on, at most MAX records a page. */
export const parseStep = (text: string): { readonly fromRequest: number; readonly max: number } | undefined => {
  const match = /^(\d+):(\d+)$/.exec(text.trim())
  if (match === null) return undefined
  const [fromRequest, max] = [Number(match[1]), Number(match[2])]
  return fromRequest >= 1 && max >= 1 && max <= 1_000_000 ? { fromRequest, max } : undefined
}
