import { afterAll, describe, expect, it } from "@effect/vitest"
import * as SqliteNode from "@erp-client/streams/SqliteNode"
import { Context, Deferred, Effect, Fiber, Layer, Stream } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fork, NodeSqlite, SqlClient } from "./kit.js"

// SqliteNode's SqlClient on a real database file in a temporary directory: statements with parameters, integers
// beyond 2^53 read exactly, transactions that commit and roll back, a second writer told the database is locked, WAL.
// On a Node without node:sqlite (Node 20) the same client is refused with SqliteUnavailable, which says why and what to
// use instead. One suite, run against both editions (TEST_PAIRS in scripts/editions.ts).

const directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "erp-sqlite-"))
afterAll(() => Fs.rmSync(directory, { recursive: true, force: true }))

let files = 0
/** A database file of its own for each test. */
const newFile = () => Path.join(directory, `test-${++files}.db`)

/** A client on `filename`, open until the scope closes: two of them on one file are two connections. */
const open = (filename: string, busyTimeout?: number) =>
  Effect.map(
    Layer.build(SqliteNode.layer({ filename, busyTimeout })),
    (context) => Context.get(context, SqlClient.SqlClient)
  )

/** 2^53 + 1, the first integer a JavaScript number cannot hold, and SQLite's largest (2^63 - 1). */
const BEYOND_DOUBLE = 9007199254740993n
const INT64_MAX = 9223372036854775807n

if (NodeSqlite.available()) {
  describe("SqliteNode on node:sqlite", () => {
    it.effect("creates a table, inserts with parameters and reads the rows back", () =>
      Effect.scoped(Effect.gen(function*() {
        const sql = yield* open(newFile())
        yield* sql`create table partner (id integer primary key, name text not null, city text)`
        yield* sql`insert into partner ${sql.insert({ id: 1, name: "Acme", city: "Lyon" })}`
        yield* sql`insert into partner (id, name, city) values (${2}, ${"O'Brien & Sons"}, ${null})`
        const rows = yield* sql<{ readonly id: number; readonly name: string; readonly city: string | null }>`
          select id, name, city from partner where id >= ${1} order by id`
        expect(rows.map((row) => ({ ...row }))).toEqual([
          { id: 1, name: "Acme", city: "Lyon" },
          { id: 2, name: "O'Brien & Sons", city: null }
        ])
      })))

    it.effect("reads integers beyond 2^53 exactly as bigint, and refuses to round them without", () =>
      Effect.scoped(Effect.gen(function*() {
        const sql = yield* open(newFile())
        yield* sql`create table big (id integer primary key, n integer not null)`
        yield* sql`insert into big (id, n) values (${1}, ${BEYOND_DOUBLE}), (${2}, ${INT64_MAX})`
        const rows = yield* Effect.provideService(
          sql<{ readonly id: bigint; readonly n: bigint }>`select id, n from big order by id`,
          SqlClient.SafeIntegers,
          true
        )
        expect(rows.map((row) => [row.id, row.n])).toEqual([[1n, BEYOND_DOUBLE], [2n, INT64_MAX]])
        const error = yield* Effect.flip(sql`select n from big where id = ${1}`)
        expect(error._tag).toBe("SqlError")
        expect(String((error.cause as { readonly cause?: unknown }).cause ?? error.cause)).toMatch(/too large/)
      })))

    it.effect("commits a transaction that succeeds and rolls back one that fails", () =>
      Effect.scoped(Effect.gen(function*() {
        const sql = yield* open(newFile())
        yield* sql`create table t (id integer primary key)`
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`insert into t (id) values (${1})`
          yield* sql`insert into t (id) values (${2})`
        }))
        const failed = yield* Effect.flip(sql.withTransaction(Effect.gen(function*() {
          yield* sql`insert into t (id) values (${3})`
          return yield* Effect.fail("refused" as const)
        })))
        expect(failed).toBe("refused")
        const rows = yield* sql<{ readonly id: number }>`select id from t order by id`
        expect(rows.map((row) => row.id)).toEqual([1, 2])
      })))

    it.effect("fails a second writer with the busy error after its busy timeout, and lets it write after the commit", () =>
      Effect.scoped(Effect.gen(function*() {
        const file = newFile()
        const first = yield* open(file)
        const second = yield* open(file, 50)
        yield* first`create table t (id integer primary key)`
        // The writer holds its transaction open in a fiber of its own: in Effect 3's @effect/sql, a statement run
        // inside a transaction runs on that transaction's connection whichever client it comes from.
        const inserted = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const writer = yield* fork(first.withTransaction(Effect.gen(function*() {
          yield* first`insert into t (id) values (${1})`
          yield* Deferred.succeed(inserted, undefined)
          yield* Deferred.await(release)
        })))
        yield* Deferred.await(inserted)
        const error = yield* Effect.flip(second`insert into t (id) values (${2})`)
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(writer)
        expect(error._tag).toBe("SqlError")
        expect(error.message).toBe(NodeSqlite.busyMessage(file, 50))
        expect(error.message).toContain("locked by another writer")
        yield* second`insert into t (id) values (${2})`
        const rows = yield* first<{ readonly id: number }>`select id from t order by id`
        expect(rows.map((row) => row.id)).toEqual([1, 2])
      })))

    it.effect("puts the file in WAL mode", () =>
      Effect.scoped(Effect.gen(function*() {
        const sql = yield* open(newFile())
        const rows = yield* sql<{ readonly journal_mode: string }>`PRAGMA journal_mode`
        expect(rows[0]?.journal_mode).toBe("wal")
      })))

    it.effect("streams the rows of a statement, more than one chunk of them, in order", () =>
      Effect.scoped(Effect.gen(function*() {
        const sql = yield* open(newFile())
        yield* sql`create table t (id integer primary key)`
        yield* sql.withTransaction(Effect.forEach(
          Array.from({ length: 600 }, (_, i) => i + 1),
          (id) => sql`insert into t (id) values (${id})`,
          { discard: true }
        ))
        const ids: Array<number> = []
        yield* Stream.runForEach(
          sql<{ readonly id: number }>`select id from t where id > ${0} order by id`.stream,
          (row) => Effect.sync(() => ids.push(row.id))
        )
        expect(ids).toEqual(Array.from({ length: 600 }, (_, i) => i + 1))
      })))
  })
} else {
  describe("SqliteNode without node:sqlite", () => {
    it.effect("fails with SqliteUnavailable, naming this Node and PostgreSQL", () =>
      Effect.gen(function*() {
        const file = newFile()
        const error = yield* Effect.flip(Effect.scoped(open(file)))
        expect(error._tag).toBe("SqliteUnavailable")
        expect(error.message).toBe(NodeSqlite.unavailable().message)
        expect(error.message).toContain(
          `SQLite needs Node.js 22.13 or later (node:sqlite); this is Node.js ${process.version}`
        )
        expect(error.message).toContain("--to postgres://")
        // Refused before anything is written.
        expect(Fs.existsSync(file)).toBe(false)
      }))
  })
}
