/**
 * `pnpm bench pages` (with the records-per-request row of run.ts): what confirming the end of a list costs. Paging
 * never takes one short page for the end (docs/paging.md): the page after it settles whether it was the last, a
 * clamp, or records filtered after the cut. Each row counts the list requests of a whole export against the list's
 * pages, ceil(records / page size served); on the in-memory sandbox, no limit in play. At concurrency 1 no page is in
 * flight past the end; at 4, up to 3 are (sent, then cancelled once the end is seen), and a short page drops those in
 * flight on the wrong grid.
 */
import { Sandbox } from "@erp-client/sandbox"
import { Partners } from "@erp-client/streams"
import { ErpTest } from "@erp-client/testing"
import { Effect, Stream } from "effect"
import { log, round, type Row } from "./common.js"

interface Case {
  readonly name: string
  readonly sandbox: Sandbox.InMemoryOptions
  readonly pageSize: number
  /** The pages of the list as served: ceil(records / the page size served). */
  readonly pages: (served: number) => number
  readonly target: string
  /** `records`: how many the server served (visible ones, for a filtering server). */
  readonly met: (requests: number, pages: number, records: number) => boolean
}

const cases: ReadonlyArray<Case> = [
  {
    name: "a list that ends on a short page (1,050 at 100)",
    sandbox: { partners: 1_050 },
    pageSize: 100,
    pages: (n) => Math.ceil(n / 100),
    target: "pages + 1 (the short last page is settled by one more)",
    met: (requests, pages) => requests <= pages + 1
  },
  {
    name: "a list that ends exactly at a page boundary (1,000 at 100)",
    sandbox: { partners: 1_000 },
    pageSize: 100,
    pages: (n) => Math.ceil(n / 100),
    target: "pages + 1 (the empty page after the last full one)",
    met: (requests, pages) => requests <= pages + 1
  },
  {
    name: "a server that clamps to 30 (1,000, asked 100)",
    sandbox: { partners: 1_000, maxListCount: 30 },
    pageSize: 100,
    pages: (n) => Math.ceil(n / 30),
    target: "pages + 2 (the clamp learned from a second page of 30, the end confirmed)",
    met: (requests, pages) => requests <= pages + 2
  },
  {
    name: "a server that filters after the cut (1,000, about 3% hidden, pages of 100)",
    sandbox: { partners: 1_000, hidden: { rate: 0.03, seed: 7 } },
    pageSize: 100,
    pages: () => Math.ceil(1_000 / 100),
    // Each page goes on right after the records it brought, so it advances by about size x the share served; after
    // the last short page, one page re-reads the positions its hidden records pushed on, and an empty one ends it.
    target: "ceil(positions / (size x share served)) + 2: each page advances by the records it brought, then one " +
      "page re-reads the last positions and an empty one ends the list",
    met: (requests, _pages, records) => requests <= Math.ceil(1_000 / (100 * records / 1_000)) + 2
  },
  {
    name: "a page size that drops from 100 to 50 at the 3rd request (1,000)",
    sandbox: { partners: 1_000, maxListCountSchedule: [{ fromRequest: 3, max: 50 }] },
    pageSize: 100,
    pages: () => 2 + Math.ceil((1_000 - 200) / 50),
    target: "pages + 2 (the drop followed, the end confirmed)",
    met: (requests, pages) => requests <= pages + 2
  }
]

const measure = (c: Case, concurrency: number) =>
  Effect.gen(function*() {
    const sandbox = yield* Sandbox.Sandbox
    const records = yield* Stream.runFold(Partners.stream({ pageSize: c.pageSize, concurrency }), 0, (n) => n + 1)
    const served = (yield* sandbox.visiblePartners).length
    if (records !== served) throw new Error(`pages: ${c.name}: ${records} records, the server serves ${served}`)
    const requests = (yield* sandbox.requests).filter((entry) => entry.endpoint === "/partner/list").length
    return { records, requests }
  }).pipe(
    Effect.provide(
      ErpTest.layer({ sandbox: { ...c.sandbox, rateLimit: false, maxLogEntries: 100_000 }, stallWarning: false })
    ),
    Effect.runPromise
  )

export const pages = async (): Promise<Array<Row>> => {
  const rows: Array<Row> = []
  for (const concurrency of [1, 4]) {
    for (const c of cases) {
      const { records, requests } = await measure(c, concurrency)
      const pages = c.pages(records)
      // At concurrency c, up to c - 1 pages in flight past the end, beside what the case itself costs.
      const inFlight = concurrency - 1
      rows.push({
        name: `end of list confirmed, concurrency ${concurrency}: ${c.name}`,
        parameters: { records, pageSize: c.pageSize, concurrency, sandbox: "in memory, no limit" },
        figures: { requests },
        baseline: { pages },
        ratio: round(requests / pages, 3),
        ratioOf: "list requests / the list's pages",
        target: inFlight === 0 ? c.target : `${c.target}, + ${inFlight} in flight past the end`,
        met: c.met(requests - inFlight, pages, records)
      })
    }
  }
  log("pages: end of list confirmed, done")
  return rows
}
