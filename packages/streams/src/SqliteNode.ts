/**
 * An embedded SQLite database as the edition's `SqlClient` (Effect 3: `@effect/sql`'s; Effect 4: `effect/sql`'s), on
 * Node's built-in `node:sqlite`: the SQL database `erp sync` keeps in step with the ERP when it is a file.
 *
 * The client is the Effect 4 driver's node:sqlite client (`@effect/sql-sqlite-node` 4.0.0-beta.102, `SqliteClient`)
 * ported to each edition (`internal/sqliteNode.ts`, one per edition), the database opened and read by the kernel's
 * `NodeSqlite`. Why not a SQLite package: `@effect/sql-sqlite-node` 0.53 (Effect 3) binds `better-sqlite3`, a native
 * module compiled for each Node ABI (minutes a build, rebuilt between Node 20 and 24); `@effect/sql-libsql` held
 * 800 MB inserting a million rows where `node:sqlite` holds 94 MB; and Effect 4.1 has no SQLite driver at all (the
 * beta imports `effect/unstable/sql/*`, which 4.1 no longer exports).
 *
 * `node:sqlite` comes with Node 22.13 (and 23.4) and later. On an older Node, `make` and `layer` fail with
 * `SqliteUnavailable`, whose message says which Node this is and points to PostgreSQL; importing this module is fine
 * on any Node. In the Effect 3 edition this module needs `@effect/sql` and `@effect/experimental`, optional peer
 * dependencies of the package: an application that does not sync to SQLite does not install them.
 *
 * One connection serves the client, one statement at a time behind a semaphore; a transaction holds it until it ends.
 * The file is in WAL mode (readers go on while one writer writes) with `synchronous = NORMAL`; a statement that finds
 * another connection writing waits up to `busyTimeout`, then fails with a `SqlError` saying the database is locked by
 * another writer. `SqlClient.SafeIntegers` reads integers as `bigint`, exact up to SQLite's 2^63 - 1 (without it, an
 * integer beyond 2^53 fails the statement rather than being rounded). `stream` reads the rows in chunks.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as internal from "./internal/sqliteNode.js"

/**
 * The database a client opens:
 *
 * - `filename`: the database file, created when missing (unless `readonly`), or `:memory:`;
 * - `readonly`: open it for reading only (default `false`);
 * - `busyTimeout`: how long, in milliseconds, a statement waits for another connection's write to end (default 5000);
 * - `spanAttributes`: attributes added to every statement's span (`db.system.name` is `sqlite`).
 *
 * @since 0.1.0
 * @category Models
 */
export interface SqliteNodeConfig {
  readonly filename: string
  readonly readonly?: boolean | undefined
  readonly busyTimeout?: number | undefined
  readonly spanAttributes?: Record<string, unknown> | undefined
}

/**
 * The failure of `make` and `layer` on a Node without `node:sqlite` (Node 20, or 22 before 22.13): `message` says
 * which Node it is, that SQLite needs 22.13 or later, and that PostgreSQL is the way on this one (`--to postgres://…`).
 *
 * @example
 * ```ts
 * import { SqliteUnavailable } from "@erp-client/streams/SqliteNode"
 *
 * const error = new SqliteUnavailable({ nodeVersion: "v20.20.2", message: "SQLite needs Node.js 22.13 or later" })
 * console.log(error._tag) // => SqliteUnavailable
 * ```
 *
 * @since 0.1.0
 * @category Errors
 */
export class SqliteUnavailable extends Data.TaggedError("SqliteUnavailable")<{
  readonly nodeVersion: string
  readonly message: string
}> {}

const refused = (refusal: { readonly nodeVersion: string; readonly message: string }) =>
  new SqliteUnavailable({ nodeVersion: refusal.nodeVersion, message: refusal.message })

/**
 * A `SqlClient` on the SQLite database `config.filename`, open until the scope closes. Fails with `SqliteUnavailable`
 * on a Node without `node:sqlite`, with a `SqlError` when the file cannot be opened. Needs `Reactivity`, as every
 * `SqlClient` does (`layer` provides it).
 *
 * @example
 * ```ts
 * import * as Reactivity from "@effect/experimental/Reactivity"
 * import * as SqliteNode from "@erp-client/streams/SqliteNode"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function*() {
 *   const sql = yield* SqliteNode.make({ filename: ":memory:" })
 *   const rows = yield* sql<{ readonly one: number }>`select 1 as one`
 *   return `one is ${rows[0]?.one}`
 * }).pipe(
 *   // On Node 20 there is no node:sqlite: the failure says to use Node 22.13 or later, or PostgreSQL.
 *   Effect.catchTag("SqliteUnavailable", (error) => Effect.succeed(error.message.split(";")[0])),
 *   Effect.scoped,
 *   Effect.provide(Reactivity.layer)
 * )
 *
 * Effect.runPromise(program).then(console.log)
 * // => one is 1 (Node 22.13 or later)
 * // => SQLite needs Node.js 22.13 or later (node:sqlite) (Node 20)
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const make = (
  config: SqliteNodeConfig
): Effect.Effect<
  internal.SqlClient,
  SqliteUnavailable | internal.SqlError,
  Scope.Scope | internal.Reactivity
> => internal.make(config, refused)

/**
 * The `SqlClient` service on the SQLite database `config.filename`, open while the layer is (`Reactivity` included).
 *
 * @example
 * ```ts
 * import { SqlClient } from "@effect/sql"
 * import * as SqliteNode from "@erp-client/streams/SqliteNode"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function*() {
 *   const sql = yield* SqlClient.SqlClient
 *   yield* sql`create table partner (id integer primary key, name text not null)`
 *   yield* sql`insert into partner ${sql.insert({ id: 1, name: "Acme" })}`
 *   const rows = yield* sql<{ readonly name: string }>`select name from partner where id = ${1}`
 *   return rows[0]?.name
 * }).pipe(
 *   Effect.provide(SqliteNode.layer({ filename: ":memory:" })),
 *   Effect.catchTag("SqliteUnavailable", (error) => Effect.succeed(error.message.split(";")[0]))
 * )
 *
 * Effect.runPromise(program).then(console.log)
 * // => Acme (Node 22.13 or later)
 * // => SQLite needs Node.js 22.13 or later (node:sqlite) (Node 20)
 * ```
 *
 * @since 0.1.0
 * @category Layers
 */
export const layer = (
  config: SqliteNodeConfig
): Layer.Layer<internal.SqlClient, SqliteUnavailable | internal.SqlError> => internal.layer(make(config))
