import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Seed } from "@erp-client/sandbox"
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { erp, type Run, SECRET, startSandbox } from "./harness.js"

// The "Done when" for `erp partners sync` (docs/sync.md), through the compiled command against the sandbox on
// loopback, into a SQLite file and into the PostgreSQL server on this machine: against a server that renames, removes
// and adds partners between runs and drifts during them, every complete run exits 0 and leaves the table as the list;
// a run killed (SIGKILL: nothing of it runs after) at any point leaves the table and its state exactly as they were,
// and the next run brings them to the list.

type Started = Awaited<ReturnType<typeof startSandbox>>

const runs: Array<Run> = []
const record = (run: Run) => {
  runs.push(run)
  return run
}

// node:sqlite is Node's own from 22.13 on: on Node 20 the SQLite target is refused with a reason (checked below).
const NodeSqlite = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule?.("node:sqlite") as
  | { DatabaseSync: new(path: string, options?: { readOnly?: boolean }) => SqliteDb }
  | undefined
interface SqliteDb {
  prepare: (sql: string) => { all: (...params: Array<unknown>) => Array<Record<string, unknown>> }
  close: () => void
}

const PG_DB = `erp_cli_syncdone_${process.pid}_${Math.floor(Math.random() * 1e6)}`
const psql = (db: string, sql: string) =>
  execFileSync("psql", ["-h", "127.0.0.1", "-U", "postgres", "-d", db, "-X", "-q", "-tA", "-F", "\t", "-c", sql], {
    encoding: "utf8"
  })

interface Backend {
  readonly name: "sqlite" | "postgres"
  readonly url: string
  /** The table's rows (key → exact text) and its state row, or undefined when the table is not there yet. */
  readonly dump: () => { readonly rows: Map<string, string>; readonly state: string } | undefined
}

let dir: string

const backends = (): ReadonlyArray<Backend> => [
  {
    name: "sqlite",
    url: `sqlite:${Path.join(dir, "erp.sqlite")}`,
    dump: () => {
      const file = Path.join(dir, "erp.sqlite")
      if (NodeSqlite === undefined || !Fs.existsSync(file)) return undefined
      const db = new NodeSqlite.DatabaseSync(file, { readOnly: true })
      try {
        const tables = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'partners'`).all()
        if (tables.length === 0) return undefined
        const rows = new Map(
          db.prepare(`SELECT "_erp_key" AS k, "_erp_record" AS j FROM "partners"`).all().map((row) => [
            String(row.k),
            String(row.j)
          ])
        )
        const state = JSON.stringify(
          db.prepare(
            `SELECT runs, added, changed, removed, unchanged FROM erp_sync_state WHERE table_name = 'partners'`
          )
            .all()
        )
        return { rows, state }
      } finally {
        db.close()
      }
    }
  },
  {
    name: "postgres",
    url: `postgres://postgres@127.0.0.1:5432/${PG_DB}`,
    dump: () => {
      const exists = psql(PG_DB, `SELECT to_regclass('public.partners') IS NOT NULL`).trim()
      if (exists !== "t") return undefined
      const rows = new Map<string, string>()
      const text = psql(PG_DB, `SELECT "_erp_key", "_erp_record_text" FROM "partners"`)
      for (const line of text.split("\n")) {
        if (line === "") continue
        const tab = line.indexOf("\t")
        rows.set(line.slice(0, tab), line.slice(tab + 1))
      }
      const state = psql(
        PG_DB,
        `SELECT runs, added, changed, removed, unchanged FROM erp_sync_state WHERE table_name = 'partners'`
      )
      return { rows, state }
    }
  }
]

beforeAll(() => {
  dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "erp-sync-done-"))
  psql("postgres", `CREATE DATABASE ${PG_DB}`)
})

afterAll(() => {
  if (dir !== undefined) Fs.rmSync(dir, { recursive: true, force: true })
  psql("postgres", `DROP DATABASE IF EXISTS ${PG_DB} WITH (FORCE)`)
  for (const run of runs) expect(run.stdout + run.stderr).not.toContain(SECRET)
})

/** The server's partners now, by key (the id as written), as the server writes them. */
const served = async (started: Started) =>
  new Map(
    (await started.run(started.sandbox.visiblePartners)).map((partner) => {
      const json = Seed.recordJson(partner)
      return [String(JSON.parse(json).id), json] as const
    })
  )

const rowsWritten = (run: Run) => {
  const match = /([\d,]+) rows? written/.exec(run.stderr)
  return match === null ? undefined : Number(match[1]!.replace(/,/g, ""))
}

describe.each(["sqlite", "postgres"] as const)("erp partners sync --to %s", (name) => {
  let started: Started
  beforeAll(async () => {
    // 15 pages of 20 at 20 ms each: a run can be killed at many points.
    started = await startSandbox({
      partners: 300,
      rateLimit: { limit: 100_000, window: "30 seconds" },
      latency: { base: "20 millis" }
    })
  })
  afterAll(async () => {
    await started?.close()
  })

  const sync = (backend: Backend, options: Parameters<typeof erp>[1] = {}) =>
    erp(["partners", "sync", "--to", backend.url, "--page-size", "20", "--concurrency", "1"], {
      env: started.env,
      ...options
    }).then(record)

  if (name === "sqlite" && NodeSqlite === undefined) {
    it("is refused on a Node.js without node:sqlite, with the reason and what instead", async () => {
      const backend = backends().find((b) => b.name === name)!
      const run = await sync(backend)
      expect(run.code).not.toBe(0)
      expect(run.stderr).toMatch(/SQLite needs Node\.js 22\.13 or later/)
      expect(run.stderr).toMatch(/postgres/)
      expect(Fs.existsSync(Path.join(dir, "erp.sqlite"))).toBe(false)
    })
    return
  }

  it(
    "renames, removals and additions between runs, drift during them, SIGKILL at many points: each complete run exits 0 with the table as the list",
    async () => {
      const backend = backends().find((b) => b.name === name)!

      // A first run under drift: after the third list request, 5 partners are inserted and 2 deleted ahead of the
      // reader.
      const before = new Set((await served(started)).keys())
      const drift = started.listRequests(3).then(async () => {
        const ids = await started.run(started.sandbox.partnerIds)
        await started.run(started.sandbox.insertPartners(5, 10))
        await started.run(started.sandbox.deletePartners([ids[1]!, ids[2]!]))
      })
      const first = await sync(backend)
      await drift
      expect(first.code, first.stderr).toBe(0)
      const after = await served(started)
      const table = backend.dump()!
      // None lost that was there for the whole run, none kept that the server never held, each as the server wrote it.
      for (const key of before) if (after.has(key)) expect(table.rows.has(key), key).toBe(true)
      for (const [key, json] of table.rows) {
        expect(before.has(key) || after.has(key), key).toBe(true)
        if (after.has(key)) expect(json).toBe(after.get(key))
      }

      // Between runs: 3 renamed, 3 removed, 4 added.
      const ids = await started.run(started.sandbox.partnerIds)
      await started.run(started.sandbox.renamePartners([ids[20]!, ids[150]!, ids[290]!]))
      await started.run(started.sandbox.deletePartners([ids[30]!, ids[160]!, ids[280]!]))
      await started.run(started.sandbox.insertPartners(4, 100))

      // Killed at many points of a run (after 1 to 16 list requests: the last ones are the end read again, the writes
      // and the commit): the table and its state exactly as they were each time.
      let kills = 0
      for (const at of [1, 2, 4, 7, 10, 13, 15, 16]) {
        const was = backend.dump()!
        const killed = await sync(backend, { via: "node", interruptWhen: started.listRequests(at), signal: "SIGKILL" })
        if (killed.signal !== "SIGKILL") {
          // The run ended before the kill came (the list has only so many pages): it completed, so it is the list.
          expect(killed.code, killed.stderr).toBe(0)
          break
        }
        kills++
        const now = backend.dump()!
        expect(now.state).toBe(was.state)
        expect([...now.rows].sort()).toEqual([...was.rows].sort())
      }

      // Most of the points were reached before the run ended (15 pages of 20, one request at a time).

      expect(kills).toBeGreaterThanOrEqual(6)

      // The next run brings the table to the list, record for record, with exit 0.
      const next = await sync(backend)
      expect(next.code, next.stderr).toBe(0)
      const list = await served(started)
      const synced = backend.dump()!
      expect([...synced.rows.keys()].sort()).toEqual([...list.keys()].sort())
      for (const [key, json] of list) expect(synced.rows.get(key)).toBe(json)

      // And a run with nothing changed writes no row.
      const idle = await sync(backend)
      expect(idle.code, idle.stderr).toBe(0)
      expect(rowsWritten(idle)).toBe(0)
      expect(backend.dump()!.rows).toEqual(synced.rows)
    },
    120_000
  )
})
