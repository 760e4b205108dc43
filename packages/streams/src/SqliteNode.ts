// Per edition: `SqlClient.make`, its options and the `Connection` a driver implements are `@effect/sql` 0.52's here and `effect/sql`'s in Effect 4.1, which differ (errors with a reason, the SQLite acquirers, a driver's name).
/**
 * An embedded SQLite database as `@effect/sql`'s `SqlClient`, on Node's built-in `node:sqlite`: the SQL database
 * `erp sync` keeps in step with the ERP when it is a file.
 *
 * This is the node:sqlite client of `@effect/sql-sqlite-node` 4.0.0-beta.102 (the Effect 4 driver's `SqliteClient`)
 * ported to Effect 3 and `@effect/sql` 0.52, with the database itself opened and read by the kernel's `NodeSqlite`.
 * Not `@effect/sql-sqlite-node` 0.53 (Effect 3's): it binds `better-sqlite3`, a native module compiled for each Node
 * ABI (no prebuilt binary reachable from every build, minutes a build, rebuilt between Node 20 and 24). Not
 * `@effect/sql-libsql`: it held 800 MB inserting a million rows where `node:sqlite` holds 94 MB. `node:sqlite` comes
 * with Node 22.13 and later; on Node 20, `make` and `layer` fail with `SqliteUnavailable`, whose message says so and
 * points to PostgreSQL. Importing this module needs `@effect/sql` and `@effect/experimental` (optional peer
 * dependencies of this package: an application that does not sync to SQLite does not install them).
 *
 * One connection serves the client, one statement at a time behind a semaphore; a transaction holds it until it ends.
 * The file is in WAL mode (readers go on while one writer writes); a statement that finds another connection writing
 * waits up to `busyTimeout`, then fails with a `SqlError` saying the database is locked by another writer.
 * `SqlClient.SafeIntegers` reads integers as `bigint`, exact beyond 2^53. `stream` reads the rows in chunks.
 *
 * @since 0.1.0
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import * as Client from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import * as Statement from "@effect/sql/Statement"
import { NodeSqlite } from "@erp-client/kernel"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

const ATTR_DB_SYSTEM_NAME = "db.system.name"

/** How many rows `stream` reads from the database at a time. */
const STREAM_CHUNK = 256

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
 * which Node it is, that SQLite needs 22.13 or later, and that PostgreSQL is the way on this one.
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

/** A statement's failure, saying so when another connection held the write lock past the busy timeout. */
const failure = (connection: NodeSqlite.Connection, cause: unknown, message: string): SqlError =>
  new SqlError({
    cause,
    message: NodeSqlite.isBusy(cause) ? NodeSqlite.busyMessage(connection.filename, connection.busyTimeout) : message
  })

/** Whether the running fiber reads integers as `bigint` (`SqlClient.SafeIntegers`). */
const readBigInts = Effect.withFiberRuntime<boolean>((fiber) =>
  Effect.succeed(Context.get(fiber.currentContext, Client.SafeIntegers))
)

const makeConnection = (db: NodeSqlite.Connection): Connection => {
  const run = <A>(body: (read: NodeSqlite.ReadOptions) => A): Effect.Effect<A, SqlError> =>
    Effect.flatMap(readBigInts, (bigints) =>
      Effect.try({
        try: () => body({ readBigInts: bigints }),
        catch: (cause) => failure(db, cause, "Failed to execute statement")
      }))

  return {
    execute: (sql, params, transformRows) => {
      const rows = run((read) => db.all(sql, params, read) as ReadonlyArray<any>)
      return transformRows ? Effect.map(rows, transformRows) : rows
    },
    executeRaw: (sql, params) => run((read) => db.raw(sql, params, read)),
    executeValues: (sql, params) =>
      run((read) => db.all(sql, params, { ...read, arrays: true }) as ReadonlyArray<ReadonlyArray<unknown>>),
    executeUnprepared: (sql, params, transformRows) => {
      const rows = run((read) => db.allUnprepared(sql, params ?? [], read) as ReadonlyArray<any>)
      return transformRows ? Effect.map(rows, transformRows) : rows
    },
    executeStream: (sql, params, transformRows) =>
      Stream.unwrapScoped(Effect.gen(function*() {
        const bigints = yield* readBigInts
        const rows = yield* Effect.acquireRelease(
          Effect.try({
            try: () => db.iterate(sql, params, { readBigInts: bigints }),
            catch: (cause) => failure(db, cause, "Failed to execute statement")
          }),
          (rows) => Effect.sync(() => rows.return?.())
        )
        return Stream.paginateChunkEffect(undefined, () =>
          Effect.try({
            try: () => {
              const chunk: Array<any> = []
              let done = false
              while (chunk.length < STREAM_CHUNK) {
                const next = rows.next()
                if (next.done === true) {
                  done = true
                  break
                }
                chunk.push(next.value)
              }
              const out = transformRows ? transformRows(chunk) : chunk
              return [Chunk.unsafeFromArray(out), done ? Option.none() : Option.some(undefined)] as const
            },
            catch: (cause) => failure(db, cause, "Failed to read the rows of a statement")
          }))
      }))
  }
}

/**
 * A `SqlClient` on the SQLite database `config.filename`, open until the scope closes. Fails with `SqliteUnavailable`
 * on a Node without `node:sqlite`, with a `SqlError` when the file cannot be opened.
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
): Effect.Effect<Client.SqlClient, SqliteUnavailable | SqlError, Scope.Scope | Reactivity.Reactivity> =>
  Effect.gen(function*() {
    const db = yield* Effect.acquireRelease(
      Effect.try({
        try: () =>
          NodeSqlite.open({ filename: config.filename, readonly: config.readonly, busyTimeout: config.busyTimeout }),
        catch: (cause) => new SqlError({ cause, message: `Failed to open the SQLite database ${config.filename}` })
      }).pipe(Effect.flatMap((opened) =>
        "_tag" in opened
          ? Effect.fail(new SqliteUnavailable({ nodeVersion: opened.nodeVersion, message: opened.message }))
          : Effect.succeed(opened)
      )),
      (db) => Effect.sync(() => db.close())
    )
    const connection = makeConnection(db)

    // As the model: a statement takes the connection for as long as it runs; a transaction keeps it until it ends.
    const semaphore = yield* Effect.makeSemaphore(1)
    const acquirer = semaphore.withPermits(1)(Effect.succeed(connection))
    const transactionAcquirer = Effect.uninterruptibleMask((restore) =>
      Effect.as(
        Effect.zipRight(
          restore(semaphore.take(1)),
          Effect.tap(Effect.scope, (scope) => Scope.addFinalizer(scope, semaphore.release(1)))
        ),
        connection
      )
    )

    return yield* Client.make({
      acquirer,
      compiler: Statement.makeCompilerSqlite(),
      transactionAcquirer,
      spanAttributes: [
        ...(config.spanAttributes ? Object.entries(config.spanAttributes) : []),
        [ATTR_DB_SYSTEM_NAME, "sqlite"]
      ]
    })
  })

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
export const layer = (config: SqliteNodeConfig): Layer.Layer<Client.SqlClient, SqliteUnavailable | SqlError> =>
  Layer.scoped(Client.SqlClient, make(config)).pipe(Layer.provide(Reactivity.layer))
