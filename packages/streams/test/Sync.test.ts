import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { ErpClient } from "@erp-client/client"
import { Partners, Resource } from "@erp-client/streams"
import * as SqliteNode from "@erp-client/streams/SqliteNode"
import * as Sync from "@erp-client/streams/Sync"
import { ErpTest } from "@erp-client/testing"
import { Cause, Deferred, Effect, Exit, Layer, Random, Schema } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { Fault, pgLayer, Sandbox, Seed, SqlClient } from "./kit.js"

// Sync.run into real databases, each scenario against a SQLite file and the PostgreSQL server on this machine (a
// scratch database of this file's, dropped at its end). After each run the table is compared with the server's list
// record for record (the keys, and each record's exact text) and with its state row. One suite, run against both
// editions (TEST_PAIRS in scripts/editions.ts).

// node:sqlite comes with Node 22.13: on an older Node the SQLite backend's scenarios check that it says so instead.
const [major = 0, minor = 0] = process.versions.node.split(".").map(Number)
const hasNodeSqlite = major > 22 || (major === 22 && minor >= 13)

const database = `erp_sync_${Math.random().toString(36).slice(2, 10)}`
const admin = (statement: string) =>
  Effect.runPromise(
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(statement)).pipe(Effect.provide(pgLayer("postgres")))
  )
// This file's databases: the one most scenarios share, and those made for a scenario that needs a fresh one.
const databases = [database]
beforeAll(() => admin(`CREATE DATABASE ${database}`))
afterAll(async () => {
  for (const name of databases) await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
})

const dirs: Array<string> = []
afterAll(() => {
  for (const dir of dirs) Fs.rmSync(dir, { recursive: true, force: true })
})

type Client = Layer.Layer<SqlClient.SqlClient, unknown>

interface Backend {
  readonly name: "SQLite" | "PostgreSQL"
  readonly available: boolean
  /** The column of a row's exact text. */
  readonly text: "_erp_record" | "_erp_record_text"
  /** A place for one scenario: a client of it, and another client of the same place (another connection or pool). */
  readonly place: () => { readonly client: Client; readonly other: (busyTimeout: number) => Client }
  /** A place never synced into (no state table yet), with two clients of it. */
  readonly fresh: () => Effect.Effect<readonly [Client, Client]>
}

let tables = 0
const backends: ReadonlyArray<Backend> = [
  {
    name: "SQLite",
    available: hasNodeSqlite,
    text: "_erp_record",
    place: () => {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "erp-sync-"))
      dirs.push(dir)
      const filename = Path.join(dir, "erp.sqlite")
      return {
        client: SqliteNode.layer({ filename }),
        other: (busyTimeout) => SqliteNode.layer({ filename, busyTimeout })
      }
    },
    fresh: () =>
      Effect.sync(() => {
        const { client, other } = backends[0]!.place()
        return [client, other(50)] as const
      })
  },
  {
    name: "PostgreSQL",
    available: true,
    text: "_erp_record_text",
    place: () => ({ client: pgLayer(database), other: () => pgLayer(database) }),
    fresh: () =>
      Effect.promise(async () => {
        const name = `${database}_${databases.length}`
        databases.push(name)
        await admin(`CREATE DATABASE ${name}`)
        return [pgLayer(name), pgLayer(name)] as const
      })
  }
]

// The TestClock moved on while a run waits (for the sandbox's latency, a retry's pause), with no bound on it: the
// Effect 4 TestClock moves thousands of steps while a statement is on its way to PostgreSQL, past `advancing`'s
// default 10 minutes. The test's timeout bounds the run instead.
const advancing = <A, E, R>(self: Effect.Effect<A, E, R>) => ErpTest.advancing(self, { upTo: "1000 days" })

// A sync of the partners, a page of 20 (several pages for every list here), into `table`.
const syncInto = (table: string, options: Sync.Options = {}, resource: Resource.Any = Partners.resource) =>
  Sync.run(resource, { table, pageSize: 20, ...options }).pipe(advancing)

// The partners read with a plain number for the id: `Partners.resource` refuses an id past 2^53 (it cannot name a
// partner to `get`), a list of records need not.
const anyIds = Resource.make({
  name: "partners",
  description: "Partners, any id",
  list: "partner/list",
  schema: Schema.Struct({ id: Schema.Number, company_name: Schema.NullOr(Schema.String) })
}) as unknown as Resource.Any

type SandboxOptions = NonNullable<NonNullable<Parameters<typeof ErpTest.layer>[0]>["sandbox"]>

const erp = (partners: number, sandbox: Omit<SandboxOptions, "partners"> = {}) =>
  ErpTest.layer({ sandbox: { partners, rateLimit: false, ...sandbox } })

const failureOf = <A, E>(exit: Exit.Exit<A, E>): unknown =>
  Exit.isFailure(exit) ? Cause.squash(exit.cause) : `succeeded: ${JSON.stringify(exit.value)}`

describe.each(backends)("Sync.run into $name", (backend) => {
  const history = (table: string, mode: "current" | "all") =>
    `SELECT "_erp_key" AS "key", "${backend.text}" AS "text" FROM "${table}"${
      mode === "current" ? ` WHERE "_erp_valid_to" IS NULL` : ""
    }`

  /** The table's records now (its current versions in history mode), by key: their exact text. */
  const rowsOf = (table: string, mode: "merge" | "history" = "merge") =>
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql.unsafe<{ key: string; text: string }>(
        mode === "history"
          ? history(table, "current")
          : `SELECT "_erp_key" AS "key", "${backend.text}" AS "text" FROM "${table}"`
      )).pipe(Effect.map((rows) => rows.map((row) => [String(row.key), String(row.text)] as const)))

  /** The server's list now, by key (the id as the server wrote it): each record's exact text. */
  const served = Effect.map(
    Effect.flatMap(Sandbox.Sandbox, (sandbox) => sandbox.visiblePartners),
    (partners) => partners.map((partner) => [String(partner.id), Seed.recordJson(partner)] as const)
  )

  /** The table equals the server's list, record for record: no key missing, none more, none twice, each text exact. */
  const expectMirrors = (table: string, mode: "merge" | "history" = "merge") =>
    Effect.gen(function*() {
      const rows = yield* rowsOf(table, mode)
      const list = yield* served
      expect(new Set(rows.map(([key]) => key)).size).toBe(rows.length)
      expect(rows.length).toBe(list.length)
      expect(new Map(rows)).toStrictEqual(new Map(list))
    })

  /** The table's state row: its mode, runs and last run's counts. */
  const stateOf = (table: string) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql.unsafe<Record<string, unknown>>(
        `SELECT "mode", "runs", "added", "changed", "removed", "unchanged" FROM "erp_sync_state" ` +
          `WHERE "table_name" = '${table}'`
      )).pipe(Effect.map((rows) =>
        rows.map((row) => ({
          mode: String(row.mode),
          runs: Number(row.runs),
          added: Number(row.added),
          changed: Number(row.changed),
          removed: Number(row.removed),
          unchanged: Number(row.unchanged)
        }))
      ))

  /** Everything a run could change: every row of the table (every column) and every state row, in key order. */
  const dump = (table: string) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.all([
        sql.unsafe(`SELECT * FROM "${table}" ORDER BY "_erp_key", "${backend.text}"`),
        sql.unsafe(`SELECT * FROM "erp_sync_state" ORDER BY "table_name"`)
      ]))

  /**
   * A scenario on a fresh table (and, for SQLite, a fresh file) with the ERP of `layer`: where the backend is not
   * there (SQLite on a Node without node:sqlite), the scenario checks that opening it says why.
   */
  const scenario = <E, R>(
    name: string,
    layer: ReturnType<typeof erp> | undefined,
    body: (table: string, place: ReturnType<Backend["place"]>) => Effect.Effect<void, E, R>
  ) =>
    it.effect(name, () => {
      const place = backend.place()
      const table = `partners_${++tables}`
      if (!backend.available) {
        return Effect.gen(function*() {
          const exit = yield* Effect.exit(Effect.scoped(Layer.build(place.client)))
          const error = failureOf(exit)
          expect(error).toBeInstanceOf(SqliteNode.SqliteUnavailable)
          expect((error as SqliteNode.SqliteUnavailable).message).toContain("22.13")
        })
      }
      // Without an ERP here, the scenario provides its own (more than one).
      const layers = layer === undefined ? place.client : Layer.merge(layer, place.client)
      return body(table, place).pipe(Effect.provide(layers)) as Effect.Effect<void, unknown>
    })

  scenario(
    "a first sync: every record of the list, its exact text; the state row says one run",
    erp(240),
    (table) =>
      Effect.gen(function*() {
        const summary = yield* syncInto(table)
        expect(summary).toMatchObject({
          table,
          mode: "merge",
          dialect: backend.name === "SQLite" ? "sqlite" : "pg",
          added: 240,
          changed: 0,
          removed: 0,
          unchanged: 0,
          rows: 240,
          addedColumns: []
        })
        yield* expectMirrors(table)
        expect(yield* stateOf(table)).toStrictEqual([
          { mode: "merge", runs: 1, added: 240, changed: 0, removed: 0, unchanged: 0 }
        ])
        // The resource's fields have their columns.
        const [row] = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql.unsafe<Record<string, unknown>>(
            `SELECT "id", "company_name", "tax_number", "is_customer" FROM "${table}" WHERE "_erp_key" = '1'`
          ))
        const first = (yield* Sandbox.Sandbox).partnerAt(0)
        expect(String(row?.id)).toBe("1")
        expect(row?.company_name).toBe(first.company_name)
        expect(row?.tax_number).toBe(first.tax_number)
      })
  )

  scenario(
    "renames, removals and additions: exactly those rows written; a run with no change writes none",
    erp(240),
    (table) =>
      Effect.gen(function*() {
        const sandbox = yield* Sandbox.Sandbox
        yield* syncInto(table)
        const firstSeen = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql.unsafe<Record<string, unknown>>(
            `SELECT "_erp_first_seen" AS "at" FROM "${table}" WHERE "_erp_key" = '5'`
          ))

        const inserted = yield* sandbox.insertPartners(10, 50)
        yield* sandbox.renamePartners([5, 77])
        yield* sandbox.deletePartners([7, 100])
        const second = yield* syncInto(table)
        expect(second).toMatchObject({ added: 10, changed: 2, removed: 2, unchanged: 236, rows: 14 })
        yield* expectMirrors(table)
        expect(yield* stateOf(table)).toStrictEqual([
          { mode: "merge", runs: 2, added: 10, changed: 2, removed: 2, unchanged: 236 }
        ])
        // The added rows are those inserted; a changed row keeps when it was first seen and says when it changed.
        const keys = new Set((yield* rowsOf(table)).map(([key]) => key))
        for (const id of inserted) expect(keys.has(String(id))).toBe(true)
        const [renamed] = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql.unsafe<Record<string, unknown>>(
            `SELECT "_erp_first_seen" AS "at", "_erp_last_changed" AS "changed", "company_name" FROM "${table}" ` +
              `WHERE "_erp_key" = '5'`
          ))
        expect(renamed?.at).toStrictEqual(firstSeen[0]?.at)
        expect(renamed?.changed).not.toStrictEqual(renamed?.at)
        expect(renamed?.company_name).toMatch(/ \(renamed\)$/)

        const before = yield* dump(table)
        const third = yield* syncInto(table)
        expect(third).toMatchObject({ added: 0, changed: 0, removed: 0, unchanged: 248, rows: 0 })
        yield* expectMirrors(table)
        const after = yield* dump(table)
        // Not a row touched; the state row says one run more.
        expect(after[0]).toStrictEqual(before[0])
        expect(yield* stateOf(table)).toStrictEqual([
          { mode: "merge", runs: 3, added: 0, changed: 0, removed: 0, unchanged: 248 }
        ])
      })
  )

  scenario(
    "drift during the runs (inserts, deletes and renames ahead of and behind the reader): nothing that stayed on the server is lost, nothing still there removed; the next run is exact",
    erp(300),
    (table) =>
      Effect.gen(function*() {
        const sandbox = yield* Sandbox.Sandbox
        for (let run = 0; run < 4; run++) {
          const start = new Set((yield* served).map(([key]) => key))
          const gone = new Set<string>()
          // After every page read: a partner inserted and one deleted at random positions, and one renamed.
          let pages = 0
          let read = 0
          const summary = yield* syncInto(table, {
            concurrency: 2,
            onProgress: (progress) =>
              Effect.gen(function*() {
                if (progress.read === read) return
                read = progress.read
                if (++pages > 40) return
                const ids = yield* sandbox.partnerIds
                yield* sandbox.insertPartners(1, yield* Random.nextIntBetween(0, ids.length))
                const deleted = ids[yield* Random.nextIntBetween(0, ids.length)]!
                yield* sandbox.deletePartners([deleted])
                gone.add(String(deleted))
                yield* sandbox.renamePartners([ids[yield* Random.nextIntBetween(0, ids.length)]!])
              })
          })
          expect(pages).toBeGreaterThan(5)
          const end = new Map(yield* served)
          const rows = new Map(yield* rowsOf(table))
          // Every record on the server from the start of the run to its end is in the table.
          for (const key of start) if (end.has(key)) expect(rows.has(key), `key ${key}`).toBe(true)
          // A row gone from the server is one deleted during the run (its removal seen next time), never one still
          // there: every key in the table is on the server or was deleted while the run read.
          for (const key of rows.keys()) if (!end.has(key)) expect(gone.has(key), `key ${key}`).toBe(true)
          expect(summary.removed).toBeLessThanOrEqual(start.size)
          expect((yield* stateOf(table))[0]?.runs).toBe(run + 1)
        }
        // A run without drift brings the table to the list exactly.
        yield* syncInto(table)
        yield* expectMirrors(table)
        expect(yield* syncInto(table)).toMatchObject({ rows: 0 })
      })
  )

  scenario(
    "a server failing midway (refusing, or answering 500 from the fourth page on): the run fails, the table and its state as before; the next run is exact",
    erp(240),
    (table) =>
      Effect.gen(function*() {
        const sandbox = yield* Sandbox.Sandbox
        yield* syncInto(table)
        // Changes on both sides of the fault: rows the failing run writes before it fails.
        yield* sandbox.insertPartners(5, 0)
        yield* sandbox.renamePartners([2, 3, 200])
        yield* sandbox.deletePartners([4, 230])
        const before = yield* dump(table)
        for (const fault of [Fault.Fault.Unauthorized(), Fault.Fault.Status({ status: 500 })]) {
          yield* sandbox.inject(fault, { endpoint: "/partner/list", after: 3, times: Infinity })
          let written = 0
          const exit = yield* Effect.exit(
            syncInto(table, { onProgress: (progress) => Effect.sync(() => void (written = progress.written)) })
          )
          expect(Exit.isFailure(exit)).toBe(true)
          expect((failureOf(exit) as { _tag?: string })._tag).not.toMatch(/^Sync/)
          // It had written rows before the server failed: rolled back with the rest.
          expect(written).toBeGreaterThan(0)
          expect(yield* dump(table)).toStrictEqual(before)
          yield* sandbox.clearFaults
        }
        expect(yield* syncInto(table)).toMatchObject({ added: 5, changed: 3, removed: 2, rows: 10 })
        yield* expectMirrors(table)
        expect((yield* stateOf(table))[0]?.runs).toBe(2)
      })
  )

  scenario(
    "ids beyond a double: kept exactly, as the key and in the record, each apart from its neighbours",
    erp(240, { oddRecords: { rate: 0.4, kinds: ["id-beyond-double"] } }),
    (table) =>
      Effect.gen(function*() {
        const sandbox = yield* Sandbox.Sandbox
        expect(yield* syncInto(table, {}, anyIds)).toMatchObject({ added: 240, rows: 240 })
        yield* expectMirrors(table)
        const big = (yield* sandbox.visiblePartners).filter((partner) => Seed.isExactNumber(partner.id))
        expect(big.length).toBeGreaterThan(50)
        // 1000 apart past 2^63: neighbours a double cannot tell apart, each its own row.
        expect(new Set(big.map((partner) => Number(String(partner.id)))).size).toBeLessThan(big.length)
        const rows = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql.unsafe<Record<string, unknown>>(
            `SELECT "_erp_key" AS "key", CAST("id" AS TEXT) AS "id" FROM "${table}" WHERE length("_erp_key") > 16`
          ))
        expect(rows.map((row) => String(row.key)).sort()).toStrictEqual(big.map((partner) => String(partner.id)).sort())
        for (const row of rows) {
          // PostgreSQL's numeric holds the digits; SQLite has no exact number past 64 bits: NULL, never a rounded one.
          expect(row.id).toBe(backend.name === "PostgreSQL" ? row.key : null)
        }
        // A rename of one of them is a change of that row alone.
        const renamedIndex = (yield* sandbox.partnerIds).findIndex((_, i) =>
          Seed.isExactNumber(sandbox.partnerAt(i).id)
        )
        yield* sandbox.renamePartners([(yield* sandbox.partnerIds)[renamedIndex]!])
        expect(yield* syncInto(table, {}, anyIds)).toMatchObject({ added: 0, changed: 1, removed: 0, rows: 1 })
        yield* expectMirrors(table)
      })
  )

  // The same partners (one seed), then a share of them served with fields they lacked: an object, a number past 2^53.
  // 600 of them: the rows a column is filled from are read back 500 at a time.
  const plain = erp(600)
  const gained = erp(600, { oddRecords: { rate: 0.25, kinds: ["extra-object", "number-beyond-double"] } })
  scenario(
    `a field the records gain later: in ${backend.text} at once; a column for it on request, filled for every row`,
    undefined,
    (table) =>
      Effect.gen(function*() {
        expect(yield* syncInto(table).pipe(Effect.provide(plain))).toMatchObject({ added: 600 })
        const changed = yield* Effect.gen(function*() {
          const summary = yield* syncInto(table)
          yield* expectMirrors(table)
          return summary
        }).pipe(Effect.provide(gained))
        expect(changed.changed).toBeGreaterThan(20)
        expect(changed.addedColumns).toStrictEqual([])

        const columns = [
          { field: "custom_fields", kind: "json" as const },
          { field: "ledger_ref", kind: "integer" as const }
        ]
        yield* Effect.gen(function*() {
          const summary = yield* syncInto(table, { columns })
          expect(summary).toMatchObject({ added: 0, changed: 0, removed: 0, rows: 0 })
          expect(summary.addedColumns).toStrictEqual(["custom_fields", "ledger_ref"])
          yield* expectMirrors(table)
          const rows = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
            sql.unsafe<Record<string, unknown>>(
              `SELECT "_erp_key" AS "key", CAST("custom_fields" AS TEXT) AS "custom", ` +
                `CAST("ledger_ref" AS TEXT) AS "ledger" FROM "${table}"`
            ))
          const list = new Map((yield* Effect.flatMap(Sandbox.Sandbox, (s) => s.visiblePartners)).map((p) => [
            String(p.id),
            p as unknown as Record<string, unknown>
          ]))
          let custom = 0
          let ledger = 0
          for (const row of rows) {
            const record = list.get(String(row.key))!
            if (record.custom_fields === undefined) expect(row.custom).toBeNull()
            else {
              custom++
              expect(JSON.parse(String(row.custom))).toStrictEqual(JSON.parse(Seed.recordJson(record.custom_fields)))
            }
            if (record.ledger_ref === undefined) expect(row.ledger).toBeNull()
            else {
              ledger++
              // 2^53 + 1 exactly, in both.
              expect(row.ledger).toBe("9007199254740993")
            }
          }
          expect(custom).toBeGreaterThan(5)
          expect(ledger).toBeGreaterThan(5)
          // The next run with the same columns adds none and writes nothing.
          expect(yield* syncInto(table, { columns })).toMatchObject({ rows: 0, addedColumns: [] })
        }).pipe(Effect.provide(gained))
      })
  )

  scenario(
    "records that stray from the contract (empty, null, absent and mistyped fields, exact decimals, numbers past a double): each row its record's exact text",
    erp(240, {
      oddRecords: { rate: 0.5, kinds: [...Seed.defaultOddKinds, "decimal-as-written", "number-beyond-double"] }
    }),
    (table) =>
      Effect.gen(function*() {
        expect(yield* syncInto(table)).toMatchObject({ added: 240, rows: 240 })
        yield* expectMirrors(table)
        // A field typed as text holds what the record wrote, whatever its type: a tax number written as a number.
        const sandbox = yield* Sandbox.Sandbox
        const index = Array.from({ length: 240 }, (_, i) => i).find((i) =>
          typeof sandbox.partnerAt(i).tax_number === "number"
        )!
        const [row] = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql.unsafe<Record<string, unknown>>(
            `SELECT "tax_number" FROM "${table}" WHERE "_erp_key" = '${String(sandbox.partnerAt(index).id)}'`
          ))
        expect(row?.tax_number).toBe(String(sandbox.partnerAt(index).tax_number))
      })
  )

  scenario(
    "records that share an id: refused with DuplicateIds and nothing made; with allowDuplicateIds the first of each id kept",
    erp(120, { oddRecords: { rate: 0.2, kinds: ["duplicate-id"] } }),
    (table) =>
      Effect.gen(function*() {
        const refused = yield* Effect.exit(syncInto(table))
        expect(failureOf(refused)).toMatchObject({ _tag: "DuplicateIds" })
        // The run's one transaction made the tables: rolled back, they are not there.
        const sql = yield* SqlClient.SqlClient
        expect(Exit.isFailure(yield* Effect.exit(sql.unsafe(`SELECT * FROM "${table}"`)))).toBe(true)
        const allowed = yield* syncInto(table, { allowDuplicateIds: true })
        const visible = yield* Effect.flatMap(Sandbox.Sandbox, (sandbox) => sandbox.visiblePartners)
        const first = new Map<string, string>()
        for (const partner of visible) {
          if (!first.has(String(partner.id))) first.set(String(partner.id), Seed.recordJson(partner))
        }
        expect(allowed.duplicates.records).toBe(visible.length - first.size)
        expect(allowed).toMatchObject({ added: first.size, rows: first.size })
        expect(new Map(yield* rowsOf(table))).toStrictEqual(first)
      })
  )

  scenario(
    "history into a table of the longest name (63 characters): the database keeps one current row per key too",
    erp(60),
    (short) =>
      Effect.gen(function*() {
        const table = short.padEnd(63, "x")
        const sandbox = yield* Sandbox.Sandbox
        yield* syncInto(table, { history: true })
        yield* sandbox.renamePartners([5])
        expect(yield* syncInto(table, { history: true })).toMatchObject({ changed: 1, rows: 2 })
        yield* expectMirrors(table, "history")
        // Reopening the closed version of 5 would make two current rows of one key: the table's unique index of
        // current rows refuses it.
        const sql = yield* SqlClient.SqlClient
        const reopened = yield* Effect.exit(
          sql.unsafe(`UPDATE "${table}" SET "_erp_valid_to" = NULL WHERE "_erp_key" = '5'`)
        )
        expect(Exit.isFailure(reopened)).toBe(true)
      })
  )

  scenario(
    "more rows than the state is read back at a time (10,000): each read once",
    erp(10_050, { maxListCount: 1000 }),
    (table) =>
      Effect.gen(function*() {
        const sandbox = yield* Sandbox.Sandbox
        expect(yield* syncInto(table, { pageSize: 1000 })).toMatchObject({ added: 10_050, rows: 10_050 })
        yield* sandbox.renamePartners([1, 10_001, 10_050])
        yield* sandbox.deletePartners([9_999, 10_000])
        yield* sandbox.insertPartners(2, 10_000)
        const second = yield* syncInto(table, { pageSize: 1000 })
        expect(second).toMatchObject({ added: 2, changed: 3, removed: 2, unchanged: 10_045, rows: 7 })
        yield* expectMirrors(table)
      })
  )

  scenario(
    "history: each change a new version (the old one closed), one current row per key; a merge run on it is refused",
    erp(120),
    (table) =>
      Effect.gen(function*() {
        const sandbox = yield* Sandbox.Sandbox
        expect(yield* syncInto(table, { history: true })).toMatchObject({ mode: "history", added: 120, rows: 120 })
        yield* expectMirrors(table, "history")
        const inserted = yield* sandbox.insertPartners(3, 10)
        yield* sandbox.renamePartners([5, 77])
        yield* sandbox.deletePartners([7])
        // A change writes two rows (the old version closed, the new one), a removal one, an addition one.
        expect(yield* syncInto(table, { history: true })).toMatchObject({
          added: 3,
          changed: 2,
          removed: 1,
          rows: 2 * 2 + 1 + 3
        })
        yield* expectMirrors(table, "history")
        const versions = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql.unsafe<Record<string, unknown>>(
            `SELECT "_erp_key" AS "key", "_erp_valid_from" AS "from", "_erp_valid_to" AS "to", "company_name" ` +
              `FROM "${table}" ORDER BY "_erp_key", "_erp_valid_from"`
          ))
        expect(versions).toHaveLength(120 + 3 + 2)
        const of = (key: string) => versions.filter((row) => String(row.key) === key)
        for (const key of ["5", "77"]) {
          const [old, current] = of(key)
          expect(of(key)).toHaveLength(2)
          // The old version ends when the new one starts; the new one is current.
          expect(old?.to).toStrictEqual(current?.from)
          expect(current?.to).toBeNull()
          expect(String(current?.company_name)).toMatch(/ \(renamed\)$/)
          expect(String(old?.company_name)).not.toMatch(/ \(renamed\)$/)
        }
        expect(of("7")).toHaveLength(1)
        expect(of("7")[0]?.to).not.toBeNull()
        for (const id of inserted) expect(of(String(id))).toHaveLength(1)
        expect(yield* stateOf(table)).toStrictEqual([
          { mode: "history", runs: 2, added: 3, changed: 2, removed: 1, unchanged: 117 }
        ])
        // A column asked for later: filled for each current version; a closed one keeps its value in its record.
        const filled = yield* syncInto(table, { history: true, columns: [{ field: "email", kind: "text" }] })
        expect(filled).toMatchObject({ rows: 0, addedColumns: ["email"] })
        const emails = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql.unsafe<Record<string, unknown>>(
            `SELECT "_erp_key" AS "key", "email", "_erp_valid_to" AS "to" FROM "${table}"`
          ))
        const byKey = new Map((yield* sandbox.visiblePartners).map((p) => [String(p.id), p.email]))
        for (const row of emails) {
          expect(row.email).toBe(row.to === null ? byKey.get(String(row.key)) : null)
        }
        yield* expectMirrors(table, "history")

        // The other mode on this table: refused, left as it was.
        const before = yield* dump(table)
        const merge = yield* Effect.exit(syncInto(table))
        expect(failureOf(merge)).toBeInstanceOf(Sync.SyncMismatch)
        expect((failureOf(merge) as Sync.SyncMismatch).differences).toStrictEqual([
          "the mode: history in the table, merge now"
        ])
        expect(yield* dump(table)).toStrictEqual(before)
      })
  )

  scenario(
    "a table of another list (other conditions) is refused with SyncMismatch and left as it was",
    erp(120),
    (table) =>
      Effect.gen(function*() {
        const customers = yield* syncInto(table, { where: { is_customer: 1 } })
        expect(customers.added).toBeGreaterThan(10)
        expect(customers.added).toBeLessThan(120)
        const before = yield* dump(table)
        const all = yield* Effect.exit(syncInto(table))
        const error = failureOf(all)
        expect(error).toBeInstanceOf(Sync.SyncMismatch)
        expect((error as Sync.SyncMismatch).differences).toStrictEqual([
          "the conditions: list_condition[is_customer]=1 in the table, none now"
        ])
        expect((error as Sync.SyncMismatch).message).toContain(`the table ${table} was synced from another list`)
        expect(yield* dump(table)).toStrictEqual(before)
        // The same list in the other mode: refused the same way (before anything of history's is made on it).
        const history = yield* Effect.exit(syncInto(table, { where: { is_customer: 1 }, history: true }))
        expect(failureOf(history)).toBeInstanceOf(Sync.SyncMismatch)
        expect((failureOf(history) as Sync.SyncMismatch).differences).toStrictEqual([
          "the mode: merge in the table, history now"
        ])
        expect(yield* dump(table)).toStrictEqual(before)
        // The same list again is fine.
        expect(yield* syncInto(table, { where: { is_customer: 1 } })).toMatchObject({ rows: 0 })
      })
  )

  scenario(
    "more than half of the table removed: TooManyRemovals, nothing changed; allowed with maxRemovedRatio",
    erp(120),
    (table) =>
      Effect.gen(function*() {
        const sandbox = yield* Sandbox.Sandbox
        yield* syncInto(table)
        yield* sandbox.deletePartners(Array.from({ length: 70 }, (_, i) => i + 1))
        yield* sandbox.renamePartners([100])
        const before = yield* dump(table)
        const refused = yield* Effect.exit(syncInto(table))
        expect(failureOf(refused)).toMatchObject({ _tag: "TooManyRemovals", removed: 70, held: 120 })
        expect(yield* dump(table)).toStrictEqual(before)
        expect(yield* syncInto(table, { maxRemovedRatio: 1 })).toMatchObject({ removed: 70, changed: 1, rows: 71 })
        yield* expectMirrors(table)
      })
  )

  /**
   * Two runs at once, each on its own client: the second starts once the first has read a page (its transaction
   * open, its lock held) while the first reads on (2 seconds of latency for each of 20 pages, under the client's
   * timeout); the second's client is connected
   * before, so nothing but the run itself stands between it and the table.
   */
  const atOnce = <E1, E2>(
    first: (started: Effect.Effect<void>) => Effect.Effect<Sync.Summary, E1, any>,
    second: Effect.Effect<Sync.Summary, E2, SqlClient.SqlClient | ErpClient.ErpClient>,
    secondClient: Client
  ) =>
    Effect.gen(function*() {
      const context = yield* Layer.build(secondClient)
      yield* Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe("SELECT 1")).pipe(Effect.provide(context))
      const started = yield* Deferred.make<void>()
      return yield* Effect.all([
        Effect.exit(first(Effect.asVoid(Deferred.succeed(started, undefined)))),
        Effect.exit(Effect.andThen(Deferred.await(started), second.pipe(Effect.provide(context))))
      ], { concurrency: 2 }).pipe(advancing)
    }).pipe(Effect.scoped)

  const outcome = <A, E>(exit: Exit.Exit<A, E>): string =>
    Exit.isSuccess(exit) ? "synced" : (failureOf(exit) as { _tag?: string })._tag ?? String(failureOf(exit))

  scenario(
    "two runs at once into two tables of a database never synced into: PostgreSQL syncs both; SQLite (one writer a database) the first, the other fails with SyncBusy",
    erp(200, { latency: { base: "2 seconds" } }),
    () =>
      Effect.gen(function*() {
        const [one, two] = yield* backend.fresh()
        const exits = yield* atOnce(
          (started) =>
            Sync.run(Partners.resource, { table: "first", pageSize: 10, onProgress: () => started }).pipe(
              Effect.provide(one)
            ),
          Sync.run(Partners.resource, { table: "second", pageSize: 10 }),
          two
        )
        expect(exits.map(outcome)).toStrictEqual(
          backend.name === "PostgreSQL" ? ["synced", "synced"] : ["synced", "SyncBusy"]
        )
        yield* Effect.gen(function*() {
          // The one refused syncs once the other ended; both tables are the list.
          for (const table of ["first", "second"]) {
            yield* syncInto(table)
            yield* expectMirrors(table)
          }
        }).pipe(Effect.provide(one))
      })
  )

  scenario(
    "two runs at once on one table, each on its own connection: the first syncs, the other fails with SyncBusy; the table is the list",
    erp(200, { latency: { base: "2 seconds" } }),
    (table, place) =>
      Effect.gen(function*() {
        const [a, b] = yield* atOnce(
          (started) => Sync.run(Partners.resource, { table, pageSize: 10, onProgress: () => started }),
          Sync.run(Partners.resource, { table, pageSize: 10 }),
          place.other(50)
        )
        expect([a, b].map(outcome)).toStrictEqual(["synced", "SyncBusy"])
        const busy = failureOf(b) as Sync.SyncBusy
        expect(busy.message).toContain(`another sync of the table ${table} is running`)
        yield* expectMirrors(table)
        expect(yield* stateOf(table)).toStrictEqual([
          { mode: "merge", runs: 1, added: 200, changed: 0, removed: 0, unchanged: 0 }
        ])
        // Once it ended, the other client syncs (nothing to write).
        expect(yield* syncInto(table).pipe(Effect.provide(place.other(50)))).toMatchObject({ rows: 0 })
      })
  )
})
