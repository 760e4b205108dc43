/**
 * `pnpm bench changes`: `erp partners changes --since STATE --output FILE` on 1,000,000 partners (the compiled command,
 * a sandbox in another process, no limit) beside a plain export of the same list in the same run (`erp partners list
 * --output FILE`, the baseline): the first run (no state: every partner added), then one after 10 partners were added,
 * 2 renamed and 2 removed (`POST /_sandbox/partners`): time and peak RSS of each, and the state file's size.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { linesOf, log, median, ROOT, round, type Row, startSandbox, timedErp } from "./common.js"

const ERP = Path.join(ROOT, "scripts/erp.js")
const PARTNERS = Number(process.env.CHANGES_PARTNERS ?? 1_000_000)
const REPS = Number(process.env.CHANGES_REPS ?? 1)

const timed = (args: ReadonlyArray<string>, env: Record<string, string>) => timedErp(process.execPath, ERP, args, env)

export const changes = async (): Promise<ReadonlyArray<Row>> => {
  const dir = Path.join(ROOT, "build", `bench-changes-${process.pid}`)
  Fs.mkdirSync(dir, { recursive: true })
  const plain: Array<{ peakRssBytes: number; millis: number }> = []
  const first: Array<{ peakRssBytes: number; millis: number }> = []
  const next: Array<{ peakRssBytes: number; millis: number }> = []
  let stateBytes = 0
  let summary = ""
  try {
    for (let rep = 0; rep < REPS; rep++) {
      const sb = await startSandbox(ERP, ["--partners", String(PARTNERS), "--no-rate-limit"])
      const env = { ERP_BASE_URL: sb.baseUrl, ERP_API_KEY: sb.apiKey }
      const state = Path.join(dir, "partners.state")
      const out = Path.join(dir, "out.ndjson")
      Fs.rmSync(state, { force: true })
      try {
        plain.push(await timed(["partners", "list", "--output", out], env))
        if (linesOf(out) !== PARTNERS) throw new Error(`changes: the plain export holds ${linesOf(out)} lines`)
        log(`changes: plain export ${round(plain.at(-1)!.millis / 1000, 1)} s`)
        first.push(await timed(["partners", "changes", "--since", state, "--output", out], env))
        if (linesOf(out) !== PARTNERS) throw new Error(`changes: the first run wrote ${linesOf(out)} lines`)
        log(`changes: first run ${round(first.at(-1)!.millis / 1000, 1)} s`)
        const changed = await fetch(
          `${sb.baseUrl}/_sandbox/partners?insert=10&at=${PARTNERS / 2}&delete=7,${PARTNERS - 1}&rename=5,${
            PARTNERS / 4
          }`,
          { method: "POST" }
        )
        if (!changed.ok) throw new Error(`changes: POST /_sandbox/partners answered ${changed.status}`)
        const run = await timed(["partners", "changes", "--since", state, "--output", out], env)
        next.push(run)
        if (linesOf(out) !== 14) throw new Error(`changes: the second run wrote ${linesOf(out)} lines, not 14`)
        log(`changes: second run ${round(run.millis / 1000, 1)} s`)
        stateBytes = Fs.statSync(state).size
        summary = run.stderr.trim()
      } finally {
        await sb.stop()
      }
    }
  } finally {
    Fs.rmSync(dir, { recursive: true, force: true })
  }
  const mb = (b: number) => round(b / 1024 / 1024, 1)
  const plainMillis = median(plain.map((r) => r.millis))
  const row = (
    name: string,
    runs: ReadonlyArray<{ peakRssBytes: number; millis: number }>,
    extra: Record<string, number>
  ): Row => {
    const millis = median(runs.map((r) => r.millis))
    const rss = median(runs.map((r) => r.peakRssBytes))
    return {
      name,
      parameters: { records: PARTNERS, pageSize: "auto (500 served)", concurrency: 4, limit: "none", reps: REPS },
      figures: { seconds: round(millis / 1000, 1), peakRssMB: mb(rss), ...extra },
      baseline: {
        plainExportSeconds: round(plainMillis / 1000, 1),
        plainPeakRssMB: mb(median(plain.map((r) => r.peakRssBytes)))
      },
      ratio: round(millis / plainMillis, 3),
      ratioOf: "time, erp partners changes / erp partners list --output, same list, same run",
      target: "<= 1.1x the plain export, peak RSS <= 150 MB",
      met: millis / plainMillis <= 1.1 && mb(rss) <= 150
    }
  }
  log(`changes: ${summary}`)
  return [
    row(`changes, first run (every partner added), ${PARTNERS.toLocaleString("en-US")} partners`, first, {
      stateBytes
    }),
    row(`changes, 10 added, 2 renamed, 2 removed, ${PARTNERS.toLocaleString("en-US")} partners`, next, {
      changes: 14,
      stateBytes,
      stateBytesPerRecord: round(stateBytes / PARTNERS, 2)
    })
  ]
}
