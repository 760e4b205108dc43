/**
 * The lines paging logs, as plain functions: a page size learned from the server or halved after a response too large,
 * and what drift-safe paging noticed (docs/paging.md). Both editions' `ListEndpoint` log these at the level each gives,
 * so an operator reads the same lines whichever edition runs.
 *
 * @since 0.1.0
 */
import type * as DriftSafe from "./DriftSafe.js"
import type * as Pager from "./Pager.js"

/**
 * A line and the level it is logged at.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Line {
  readonly level: "Debug" | "Info" | "Warning"
  readonly text: string
}

/**
 * The text of a change of the page size: the server's largest page learned, or a page halved after a response over the
 * client's body cap. Logged through `pageSizeLine`.
 *
 * @example
 * ```ts
 * import { PagingText } from "@erp-client/kernel"
 *
 * console.log(PagingText.pageSize("partner/list", { size: 500, previous: 1000, reason: "served" }))
 * // => partner/list: the server serves at most 500 records a page (asked 1000); paging on with 500
 * ```
 *
 * @since 0.1.0
 * @category Lines
 */
export const pageSize = (endpoint: string, change: Pager.SizeChange): string =>
  change.reason === "served"
    ? `${endpoint}: the server serves at most ${change.size} records a page (asked ${change.previous}); ` +
      `paging on with ${change.size}`
    : `${endpoint}: a page of ${change.previous} records was too large to accept; paging on with ${change.size}`

// What this process has told of the server's pages, by endpoint and what was learned.
const told = new Set<string>()

/**
 * The line of a change of the page size, the first time this process learns it for its endpoint, at debug; `undefined`
 * after. What the client learns about the server helps once, when one looks into paging (`erp … --verbose`), and is
 * noise in a service's logs on every export; a different size learned later for the endpoint is told again.
 *
 * @example
 * ```ts
 * import { PagingText } from "@erp-client/kernel"
 *
 * const change = { size: 500, previous: 1000, reason: "served" } as const
 * console.log(PagingText.pageSizeLine("invoice/list", change)?.level, PagingText.pageSizeLine("invoice/list", change))
 * // => Debug undefined
 * ```
 *
 * @since 0.1.0
 * @category Lines
 */
export const pageSizeLine = (endpoint: string, change: Pager.SizeChange): Line | undefined => {
  const key = JSON.stringify([endpoint, change.reason, change.size])
  if (told.has(key)) return undefined
  told.add(key)
  return { level: "Debug", text: pageSize(endpoint, change) }
}

/**
 * The line of what drift-safe paging noticed. A shift is routine under change (debug); a recovery costs requests, and a
 * dropped record is not written: both are worth an operator's eye (info, warning).
 *
 * @example
 * ```ts
 * import { PagingText } from "@erp-client/kernel"
 *
 * console.log(PagingText.drift("partner/list", { _tag: "Recovered", offset: 450, requests: 3, overlap: 10 }))
 * // => {
 * //   level: 'Info',
 * //   text: 'partner/list: the list moved past the overlap at offset 450; recovered with 3 extra requests, overlap now 10'
 * // }
 * ```
 *
 * @since 0.1.0
 * @category Lines
 */
export const drift = (endpoint: string, event: DriftSafe.DriftEvent): Line => {
  switch (event._tag) {
    case "Shifted":
      return { level: "Debug", text: `${endpoint}: the list shifted by ${event.by} at offset ${event.offset}` }
    case "Recovered":
      return {
        level: "Info",
        text: `${endpoint}: the list moved past the overlap at offset ${event.offset}; recovered with ` +
          `${event.requests} extra requests, overlap now ${event.overlap}`
      }
    case "Dropped":
      return {
        level: "Warning",
        text: event.reason === "updated"
          ? `${endpoint}: the record at offset ${event.offset} has id ${event.idJson}, already written with other ` +
            "content (updated since it was read); not written again (drift-safe paging tells records apart by id)"
          : `${endpoint}: the record at offset ${event.offset} has id ${event.idJson}, the id of another, distinct ` +
            "record already written; not written (drift-safe paging tells records apart by id)"
      }
  }
}
