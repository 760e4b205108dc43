import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Os from "node:os"
import * as Path from "node:path"
import { erp, type Run, SECRET, startSandbox } from "./harness.js"

// `erp partners sync`, `erp sync partners` and `erp api sync` through the compiled command against the sandbox, into
// a scratch PostgreSQL database of this file and SQLite files (docs/sync.md): the table equals the server's list
// record for record after each run, a second run writes only what changed, two runs at once never both write, and
// neither the API key nor the database's password is ever printed.

type Started = Awaited<ReturnType<typeof startSandbox>>

const DATABASE = `erp_cli_sync_${Crypto.randomBytes(6).toString("hex")}`
// The server trusts loopback connections, so any password is taken: one is written in every URL all the same, and
// must never be printed.
const PASSWORD = "pg-PASSWORD-never-print-7c1d"
const PG_URL = `postgres://postgres:${PASSWORD}@127.0.0.1:5432/${DATABASE}`
const PG_SHOWN = `postgres://postgres:***@127.0.0.1:5432/${DATABASE}`

// node:sqlite is there from Node 22.13 on; before, a sync into SQLite says so and exits 1.
const [major, minor] = process.versions.node.split(".").map(Number) as [number, number]
const HAS_SQLITE = major > 22 || (major === 22 && minor >= 13)

let started: Started
let dir: string
const runs: Array<Run> = []
const record = (run: Run) => {
  runs.push(run)
  return run
}

const psql = (sql: string, database = DATABASE): string =>
  execFileSync(
    "psql",
    ["-h", "127.0.0.1", "-U", "postgres", "-d", database, "-v", "ON_ERROR_STOP=1", "-At", "-c", sql],
    {
      encoding: "utf8",
      env: { ...process.env, PGPASSWORD: "" }
    }
  )

beforeAll(async () => {
  started = await startSandbox({ partners: 300, rateLimit: { limit: 10_000, window: "30 seconds" } })
  dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "erp-sync-"))
  psql(`CREATE DATABASE ${DATABASE}`, "postgres")
})

afterAll(async () => {
  await started?.close()
  if (dir !== undefined) Fs.rmSync(dir, { recursive: true, force: true })
  psql(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`, "postgres")
  expect(runs.length).toBeGreaterThan(10)
  for (const run of runs) {
    expect(run.stdout + run.stderr).not.toContain(SECRET)
    expect(run.stdout + run.stderr).not.toContain(PASSWORD)
  }
})

const sync = async (
  args: ReadonlyArray<string>,
  options: { readonly env?: Record<string, string>; readonly sandbox?: Started } = {}
) => record(await erp(args, { env: { ...(options.sandbox ?? started).env, ...options.env } }))

/** The server's list as `erp partners list` prints it: each record's exact text by its id. */
const served = async (): Promise<Map<string, string>> => {
  const run = record(await erp(["partners", "list"], { env: started.env }))
  expect(run.code).toBe(0)
  return new Map(run.stdout.trimEnd().split("\n").map((line) => [String(JSON.parse(line).id), line]))
}

/** A PostgreSQL table's rows: each record's exact text (`_erp_record_text`) by its key. */
const pgTable = (table: string): Map<string, string> => {
  const out = psql(`SELECT _erp_key || E'\\t' || _erp_record_text FROM ${table} ORDER BY _erp_key`)
  return new Map(
    out.trimEnd().split("\n").filter((line) => line !== "").map((line) => {
      const tab = line.indexOf("\t")
      return [line.slice(0, tab), line.slice(tab + 1)] as const
    })
  )
}

/** An SQLite table's rows: each record's text (`_erp_record`) by its key, read with Node's own node:sqlite. */
const sqliteTable = (file: string, table: string): Map<string, string> => {
  const { DatabaseSync } = createRequire(import.meta.url)("node:sqlite") as {
    DatabaseSync: new(file: string) => {
      prepare: (sql: string) => { all: () => Array<Record<string, unknown>> }
      close: () => void
    }
  }
  const db = new DatabaseSync(file)
  try {
    return new Map(
      db.prepare(`SELECT _erp_key, _erp_record FROM ${table} ORDER BY _erp_key`).all().map((row) =>
        [String(row._erp_key), String(row._erp_record)] as const
      )
    )
  } finally {
    db.close()
  }
}

const SUMMARY = (counts: string, rows: string, table: string, target: string) =>
  new RegExp(
    `^erp: ${counts}; ${rows} written into ${table} \\(${target.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}\\) ` +
      "in \\d+\\.\\d s\\n$"
  )

/** The sandbox renames 2 partners, removes 2 and adds 10: the 14 records a second run writes. */
const drift = async () => {
  const inserted = await started.run(started.sandbox.insertPartners(10, 150))
  const visible = (await started.run(started.sandbox.visiblePartners)).map((p) => Number(p.id))
  const [renamed1, renamed2, removed1, removed2] = [visible[12]!, visible[250]!, visible[30]!, visible[200]!]
  await started.run(started.sandbox.renamePartners([renamed1, renamed2]))
  await started.run(started.sandbox.deletePartners([removed1, removed2]))
  return { inserted, renamed: [renamed1, renamed2], removed: [removed1, removed2] }
}

describe("erp partners sync", () => {
  it("into PostgreSQL: a first run writes every record; after renames, removals and additions, a run writes exactly those 14; the table equals the list record for record", async () => {
    const first = await sync(["partners", "sync", "--to", PG_URL, "--page-size", "50"])
    expect(first.code).toBe(0)
    expect(first.stdout).toBe("")
    const total = (await served()).size
    expect(first.stderr).toMatch(
      SUMMARY(`${total} added, 0 changed, 0 removed, 0 unchanged`, `${total} rows`, "partners", PG_SHOWN)
    )
    expect(pgTable("partners")).toEqual(await served())

    const { removed, renamed } = await drift()
    const second = await sync(["partners", "sync", "--to", PG_URL, "--page-size", "50"])
    expect(second.code).toBe(0)
    expect(second.stderr).toMatch(
      SUMMARY(`10 added, 2 changed, 2 removed, ${total - 4} unchanged`, "14 rows", "partners", PG_SHOWN)
    )
    const now = await served()
    expect(pgTable("partners")).toEqual(now)
    for (const id of removed) expect(now.has(String(id))).toBe(false)
    for (const id of renamed) expect(now.get(String(id))).toMatch(/ \(renamed\)"/)
    // Declared fields have typed columns.
    expect(
      psql("SELECT data_type FROM information_schema.columns WHERE table_name = 'partners' AND column_name = 'id'")
    )
      .toBe("numeric\n")

    // Nothing changed: nothing written. From ERP_SYNC_URL, through `erp sync partners`; --quiet says nothing.
    const third = await sync(["sync", "partners", "--page-size", "50"], { env: { ERP_SYNC_URL: PG_URL } })
    expect(third.code).toBe(0)
    expect(third.stderr).toMatch(
      SUMMARY(`0 added, 0 changed, 0 removed, ${now.size} unchanged`, "0 rows", "partners", PG_SHOWN)
    )
    const quiet = await sync(["partners", "sync", "--to", PG_URL, "--quiet"])
    expect([quiet.code, quiet.stdout, quiet.stderr]).toEqual([0, "", ""])
  })

  it("erp api sync partner/list --key id: into a table of its own, partner_list, equal to the list", async () => {
    const run = await sync(["api", "sync", "partner/list", "--key", "id", "--to", PG_URL])
    expect(run.code).toBe(0)
    const now = await served()
    expect(run.stderr).toMatch(
      SUMMARY(`${now.size} added, 0 changed, 0 removed, 0 unchanged`, `${now.size} rows`, "partner_list", PG_SHOWN)
    )
    expect(pgTable("partner_list")).toEqual(now)
    // Into a table named with --table, in history mode: every version kept, the current ones equal to the list.
    const history = await sync([
      "api",
      "sync",
      "partner/list",
      "--key",
      "id",
      "--to",
      PG_URL,
      "--table",
      "p_history",
      "--history"
    ])
    expect(history.code).toBe(0)
    expect(pgTable("p_history")).toEqual(now)
    const help = record(await erp(["api", "sync", "--help"]))
    expect(help.stdout).toContain("\nUSAGE\n  erp api sync --key FIELD [")
    expect(help.stdout).toContain("--allow-removals")
  })

  it("into SQLite: the same, or on a Node without node:sqlite, one line saying so and exit 1", async () => {
    const file = Path.join(dir, "erp.sqlite")
    const first = await sync(["partners", "sync", "--to", `sqlite:${file}`])
    if (!HAS_SQLITE) {
      expect(first.code).toBe(1)
      expect(first.stderr).toBe(
        `erp: cannot open sqlite:${file}: SQLite needs Node.js 22.13 or later (node:sqlite); this is Node.js ` +
          `${process.version}. Run on a newer Node, or sync to PostgreSQL instead (--to postgres://…).\n`
      )
      expect(Fs.existsSync(file)).toBe(false)
      return
    }
    expect(first.code).toBe(0)
    const before = await served()
    expect(first.stderr).toMatch(
      SUMMARY(
        `${before.size} added, 0 changed, 0 removed, 0 unchanged`,
        `${before.size} rows`,
        "partners",
        `sqlite:${file}`
      )
    )
    expect(sqliteTable(file, "partners")).toEqual(before)

    await drift()
    const second = await sync(["partners", "sync", "--to", `sqlite:${file}`])
    expect(second.code).toBe(0)
    const now = await served()
    expect(second.stderr).toMatch(
      SUMMARY(`10 added, 2 changed, 2 removed, ${before.size - 4} unchanged`, "14 rows", "partners", `sqlite:${file}`)
    )
    expect(sqliteTable(file, "partners")).toEqual(now)
  })

  it("the password is never printed, not in a failure either; a --to of another form is a usage error (exit 2)", async () => {
    const role = `nobody_${Crypto.randomBytes(4).toString("hex")}`
    const noRole = await sync(["partners", "sync", "--to", `postgres://${role}:${PASSWORD}@127.0.0.1:5432/${DATABASE}`])
    expect(noRole.code).toBe(1)
    expect(noRole.stderr).toBe(
      `erp: cannot connect to postgres://${role}:***@127.0.0.1:5432/${DATABASE}: role "${role}" does not exist\n`
    )
    // Nothing listens on port 1.
    const refused = await sync(["partners", "sync", "--to", `postgresql://postgres:${PASSWORD}@127.0.0.1:1/x`])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toBe(
      "erp: cannot connect to postgresql://postgres:***@127.0.0.1:1/x: connect ECONNREFUSED 127.0.0.1:1\n"
    )
    const verbose = await sync(["partners", "sync", "--to", PG_URL, "--verbose"])
    expect(verbose.code).toBe(0)

    const mysql = await sync(["partners", "sync", "--to", `mysql://root:${PASSWORD}@127.0.0.1/db`])
    expect([mysql.code, mysql.stderr]).toEqual([
      2,
      "erp: --to mysql://root:***@127.0.0.1/db: expected sqlite:PATH or postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE " +
      "(postgresql:// too)\n"
    ])
    const fromEnv = await sync(["partners", "sync"], { env: { ERP_SYNC_URL: `ftp://u:${PASSWORD}@h/x` } })
    expect(fromEnv.code).toBe(2)
    expect(fromEnv.stderr).toMatch(/^erp: ERP_SYNC_URL ftp:\/\/u:\*\*\*@h\/x: expected sqlite:PATH or postgres:/)
    const table = await sync(["partners", "sync", "--to", PG_URL, "--table", "erp sync"])
    expect(table.code).toBe(2)
    expect(table.stderr).toMatch(/^erp: --table "erp sync": a letter or _/)
    const column = await sync(["partners", "sync", "--to", PG_URL, "--column", "price:money"])
    expect(column.code).toBe(2)
    expect(column.stderr).toMatch(/^erp: --column "price:money": expected FIELD or FIELD:KIND/)
  })

  it("a run that would remove more than half of the table is refused and writes nothing; --allow-removals writes it", async () => {
    const small = await startSandbox({ partners: 20, rateLimit: { limit: 10_000, window: "30 seconds" } })
    try {
      const args = ["partners", "sync", "--to", PG_URL, "--table", "guarded"]
      expect((await sync(args, { sandbox: small })).code).toBe(0)
      const ids = (await small.run(small.sandbox.visiblePartners)).map((p) => Number(p.id))
      await small.run(small.sandbox.deletePartners(ids.slice(0, 15)))
      const refused = await sync(args, { sandbox: small })
      expect(refused.code).toBe(1)
      expect(refused.stderr).toBe(
        `erp: the run would remove 15 of the 20 records of the table guarded (${PG_SHOWN}), more than half, as a ` +
          "list answering empty or cut short for a while would: nothing was written and the table was left as it " +
          "was (--allow-removals writes them, if the list really lost them)\n"
      )
      expect(pgTable("guarded").size).toBe(20)
      const allowed = await sync([...args, "--allow-removals"], { sandbox: small })
      expect(allowed.code).toBe(0)
      expect(allowed.stderr).toMatch(
        SUMMARY("0 added, 0 changed, 15 removed, 5 unchanged", "15 rows", "guarded", PG_SHOWN)
      )
      expect(pgTable("guarded").size).toBe(5)
    } finally {
      await small.close()
    }
  })

  it("two syncs at once into the same PostgreSQL table: one writes, the other changes nothing, says so and exits 1", async () => {
    // A slow server (50 ms a request, pages of 20, one at a time): a run takes most of a second, so the two overlap.
    const slow = await startSandbox({
      partners: 300,
      rateLimit: { limit: 10_000, window: "30 seconds" },
      latency: { base: "50 millis" }
    })
    try {
      const args = ["partners", "sync", "--to", PG_URL, "--table", "busy", "--page-size", "20", "--concurrency", "1"]
      const [a, b] = await Promise.all([sync(args, { sandbox: slow }), sync(args, { sandbox: slow })])
      const codes = [a.code, b.code].sort()
      expect(codes).toEqual([0, 1])
      const loser = a.code === 1 ? a : b
      expect(loser.stderr).toBe(
        `erp: another sync of the table busy (${PG_SHOWN}) is running (it holds the table's advisory lock): this ` +
          "one changed nothing; run it again once that one ends\n"
      )
      expect(pgTable("busy").size).toBe(300)
    } finally {
      await slow.close()
    }
  })
})
