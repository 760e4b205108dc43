/**
 * `pnpm bench pages` (with the records-per-request row of run.ts): what confirming the end of a list costs. Paging
 * never takes one short page for the end (README.md, "Paging"): the page after it settles whether it was the last, a
 * clamp, or records filtered after the cut. Each row counts the list requests of a whole export at concurrency 1 (so
 * no page is in flight past the end) against the list's pages, ceil(records / page size); on the in-memory sandbox,
 * no limit in play.
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
  readonly met: (requests: number, pages: number) => boolean
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
    target: "about one more request per short page: at most 2 x pages + 1",
    met: (requests, pages) => requests <= 2 * pages + 1
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

const measure = (c: Case) =>
  Effect.gen(function*() {
    const sandbox = yield* Sandbox.Sandbox
    const records = yield* Stream.runFold(Partners.stream({ pageSize: c.pageSize, concurrency: 1 }), 0, (n) => n + 1)
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
  for (const c of cases) {
    const { records, requests } = await measure(c)
    const pages = c.pages(records)
    rows.push({
      name: `end of list confirmed: ${c.name}`,
      parameters: { records, pageSize: c.pageSize, concurrency: 1, sandbox: "in memory, no limit" },
      figures: { requests },
      baseline: { pages },
      ratio: round(requests / pages, 3),
      ratioOf: "list requests / the list's pages",
      target: c.target,
      met: c.met(requests, pages)
    })
  }
  log("pages: end of list confirmed, done")
  return rows
}
