import { describe, expect, it } from "@effect/vitest"
import { Partner } from "@erp-client/effect4-core"
import { ListEndpoint, Partners } from "@erp-client/effect4-streams"
import * as ErpRules from "@erp-client/fake-erp/ErpRules"
import * as DriftSafe from "@erp-client/kernel/DriftSafe"
import type * as Pager from "@erp-client/kernel/Pager"
import type { Sandbox, Serve } from "@erp-client/sandbox"
import { Effect, Stream } from "effect"
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import { fileURLToPath } from "node:url"
import { drive, plain, safe, settingsOf } from "../../kernel/test/drive.js"
import { clientOn, listed, sandbox } from "./sandbox.js"

// The two editions page alike: the same list, served by two sandboxes started with the same options (the same
// seeded partners, hidden records, page limits and changes under the export), exported by the Effect 3 edition's
// compiled command (`erp partners list`, built once with `npx tsx scripts/build-cli.ts`) and by this package, and
// paged by hand by the kernel's reference driver (`packages/kernel/test/drive.ts`) against the kernel's in-memory ERP
// with the same options (the rules the sandbox serves). All three drive the kernel's Pager and DriftSafe: with one page
// in flight the sandboxes see exactly the reference's list requests (offset and count), in its order; with more, each
// sees every page the reference judged and none it did not ask for (a page asked and then cancelled may never reach
// the server: whether it does is a race with the cancellation). Both editions write the same records, byte for byte.

const CLI = fileURLToPath(new URL("../../cli/dist/bin.js", import.meta.url))

/** The Effect 3 command's export of `started`'s partners: its exit code and the lines it wrote. */
const exportWithEffect3 = (started: Serve.Started, args: ReadonlyArray<string>) =>
  Effect.promise(() =>
    new Promise<{ readonly code: number | null; readonly lines: ReadonlyArray<string>; readonly stderr: string }>(
      (resolve) => {
        const child = spawn(process.execPath, [CLI, "partners", "list", ...args], {
          env: {
            ...process.env,
            ERP_BASE_URL: started.baseUrl,
            ERP_API_KEY: started.apiKey,
            ERP_RATE_LIMIT: "1000000",
            ERP_RATE_WINDOW: "1"
          },
          stdio: ["ignore", "pipe", "pipe"]
        })
        let stdout = ""
        let stderr = ""
        child.stdout.on("data", (chunk) => stdout += chunk)
        child.stderr.on("data", (chunk) => stderr += chunk)
        child.on("close", (code) => resolve({ code, lines: stdout.split("\n").filter((l) => l !== ""), stderr }))
      }
    )
  )

interface Case {
  readonly name: string
  readonly sandbox: Sandbox.Options & ErpRules.Options
  readonly pageSize: number | "auto"
  readonly concurrency: number
  readonly safe?: boolean
}

/**
 * The kernel's reference: the list paged by hand (`drive`) against the kernel's in-memory ERP with the case's options,
 * each page fetched when the engine asks for it. The pages it asked for (`offset+count`, in order), and those of them
 * it cancelled.
 */
const reference = (test: Case) => {
  const rules = ErpRules.make({ ...test.sandbox, rateLimit: false })
  let now = 1_700_000_000_000
  const asked: Array<string> = []
  const fetch = (offset: number, count: number): Pager.Page<unknown> => {
    asked.push(`${offset}+${count}`)
    const url = `/partner/list?list_offset=${offset}&list_count=${count}`
    const arrival = rules.arrive({ method: "GET", url, apiKey: rules.controls.apiKey }, now)
    let plan = arrival.plan()
    while (plan._tag === "Delay") {
      now += plan.millis
      plan = plan.next()
    }
    arrival.finish(now)
    if (plan._tag !== "Respond" || plan.body === undefined) throw new Error(`the in-memory ERP answered ${plan._tag}`)
    const data: Array<unknown> = JSON.parse(plan.body).data
    return { offset, count, received: data.length, records: data, raw: data, invalid: [] }
  }
  const settings = settingsOf({ pageSize: test.pageSize, concurrency: test.concurrency, endpoint: "partner/list" })
  const mode = test.safe === true
    ? safe(DriftSafe.make<Pager.Page<unknown>>({ endpoint: "partner/list" }, settings.start), fetch, [])
    : plain<Pager.Page<unknown>>()
  const driven = drive(fetch, settings, mode)
  if (driven.failure !== undefined) throw new Error(`the reference failed: ${JSON.stringify(driven.failure)}`)
  const cancelled = driven.cancelled.flatMap((cancel) => cancel.handles.map((page) => `${page.offset}+${page.count}`))
  return { asked, cancelled }
}

/** `all` without one of each of `some` (multisets of `offset+count`). */
const without = (all: ReadonlyArray<string>, some: ReadonlyArray<string>) => {
  const left = [...all]
  for (const item of some) {
    const at = left.indexOf(item)
    if (at >= 0) left.splice(at, 1)
  }
  return left.sort()
}

const cases: ReadonlyArray<Case> = [
  {
    name: "a server that clamps at 30, filters after the cut and strays from the contract",
    sandbox: { partners: 700, maxListCount: 30, hidden: { rate: 0.04, seed: 3 }, oddRecords: { rate: 0.1 } },
    pageSize: "auto",
    concurrency: 1
  },
  {
    name: "the same, 4 pages in flight",
    sandbox: { partners: 700, maxListCount: 30, hidden: { rate: 0.04, seed: 3 }, oddRecords: { rate: 0.1 } },
    pageSize: "auto",
    concurrency: 4
  },
  {
    name: "a page size that drops from 100 to 50 at the third request",
    sandbox: { partners: 777, maxListCountSchedule: [{ fromRequest: 3, max: 50 }] },
    pageSize: 100,
    concurrency: 1
  },
  {
    name: "a list that ends at a page boundary, 4 pages in flight",
    sandbox: { partners: 600 },
    pageSize: 100,
    concurrency: 4
  },
  {
    name: "plain paging while partners are inserted and deleted",
    sandbox: { partners: 1_500, drift: { inserts: 6, deletes: 8, seed: 5 } },
    pageSize: 50,
    concurrency: 1
  },
  {
    name: "drift-safe paging while partners are inserted and deleted, with recoveries",
    sandbox: { partners: 1_500, drift: { inserts: 10, deletes: 25, seed: 5 } },
    pageSize: 50,
    concurrency: 1,
    safe: true
  }
]

describe("the Effect 3 command and this package page alike", () => {
  it("the command is built (npx tsx scripts/build-cli.ts)", () => {
    expect(Fs.existsSync(CLI)).toBe(true)
  })

  for (const test of cases) {
    it.live(test.name, () =>
      Effect.gen(function*() {
        const options: Sandbox.Options = { rateLimit: false, ...test.sandbox }
        const [three, four] = [yield* sandbox(options), yield* sandbox(options)]
        const effect3 = yield* exportWithEffect3(three, [
          "--page-size",
          String(test.pageSize),
          "--concurrency",
          String(test.concurrency),
          ...(test.safe === true ? ["--safe"] : [])
        ])
        expect(effect3.code, effect3.stderr).toBe(0)
        const pages = yield* Stream.runCollect(ListEndpoint.pages(Partners.LIST, Partner.Partner, {
          pageSize: test.pageSize,
          concurrency: test.concurrency,
          safe: test.safe === true ? true : undefined,
          exact: true
        })).pipe(Effect.provide(clientOn(four)))
        // The same records, as the server wrote them.
        const lines = pages.flatMap((page) => page.json ?? [])
        expect(lines.length).toBeGreaterThan(300)
        expect(lines).toEqual(effect3.lines)
        const ref = reference(test)
        const judged = without(ref.asked, ref.cancelled)
        const [asked3, asked4] = [yield* listed(three), yield* listed(four)]
        expect(judged.length).toBeGreaterThanOrEqual(7)
        if (test.concurrency === 1) {
          expect(ref.cancelled).toEqual([])
          expect(asked3).toEqual(ref.asked)
          expect(asked4).toEqual(ref.asked)
        } else {
          for (const asked of [asked3, asked4]) {
            expect(without(asked, judged), "asked beyond the pages judged").toEqual(
              without(asked, judged).filter((page) => ref.cancelled.includes(page))
            )
            expect(without(judged, asked), "judged but never asked").toEqual([])
          }
        }
      }), 60_000)
  }
})
