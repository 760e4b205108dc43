// Per edition: `SqlClient.make`, its options and the `Connection` a driver implements are `effect/sql`'s here and `@effect/sql` 0.52's in Effect 3, which differ (errors with a reason, the SQLite acquirers, a driver's name).
/**
 * The driver behind `SqliteNode` (the shared public module): an embedded SQLite database as `effect/sql`'s `SqlClient`, on Node's built-in `node:sqlite`: the SQL database
 * `erp sync` keeps in step with the ERP when it is a file.
 *
 * This is the node:sqlite client of `@effect/sql-sqlite-node` 4.0.0-beta.102 (the Effect 4 driver's `SqliteClient`)
 * ported to Effect 4.1's `effect/sql`, with the database itself opened and read by the kernel's `NodeSqlite`. Effect
 * 4.1 has no SQLite driver: that beta imports `effect/unstable/sql/*`, which 4.1 no longer exports (its SQL modules
 * are `effect/sql/*`). Not `better-sqlite3` (a native module compiled for each Node ABI, minutes a build, rebuilt
 * between Node versions) nor `@effect/sql-libsql` (800 MB held inserting a million rows where `node:sqlite` holds
 * 94 MB). `node:sqlite` comes with Node 22.13 and later; on an older Node, `make` and `layer` fail with
 * `SqliteUnavailable`, whose message says so and points to PostgreSQL. Nothing to install: `effect/sql` is in
 * `effect`.
 *
 * One connection serves the client, one statement at a time behind a semaphore (`SqlClient.makeSqliteAcquirers`); a
 * transaction or a stream holds it until it ends.
 * The file is in WAL mode (readers go on while one writer writes); a statement that finds another connection writing
 * waits up to `busyTimeout`, then fails with a `SqlError` saying the database is locked by another writer.
 * `SqlClient.SafeIntegers` reads integers as `bigint`, exact beyond 2^53. `stream` reads the rows in chunks.
 */
import { NodeSqlite } from "@erp-client/kernel"
import type { Scope } from "effect"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ReactivityModule from "effect/reactivity/Reactivity"
import * as Semaphore from "effect/Semaphore"
import * as Client from "effect/sql/SqlClient"
import type { Connection } from "effect/sql/SqlConnection"
import { classifySqliteError, ConnectionError, SqlError } from "effect/sql/SqlError"
import * as Statement from "effect/sql/Statement"
import * as Stream from "effect/Stream"
import type { SqliteNodeConfig } from "../SqliteNode.js"

const ATTR_DB_SYSTEM_NAME = "db.system.name"

/** The client, its error and the service it needs, as the shared module names them in its signatures. */
export type SqlClient = Client.SqlClient
export type { SqlError }
export type Reactivity = ReactivityModule.Reactivity

/** How many rows `stream` reads from the database at a time. */
const STREAM_CHUNK = 256

/**
 * A statement's failure, classified by SQLite's result code (`node:sqlite` names it `errcode`, the classifier reads
 * `errno`, as the model does), saying so when another connection held the write lock past the busy timeout.
 */
const failure = (connection: NodeSqlite.Connection, cause: unknown, message: string, operation: string): SqlError =>
  new SqlError({
    reason: classifySqliteError(withErrno(cause), {
      message: NodeSqlite.isBusy(cause) ? NodeSqlite.busyMessage(connection.filename, connection.busyTimeout) : message,
      operation
    })
  })

const withErrno = (cause: unknown): unknown => {
  if (typeof cause !== "object" || cause === null || !("errcode" in cause) || "errno" in cause) return cause
  const errcode = (cause as { readonly errcode: unknown }).errcode
  return typeof errcode === "number" ? Object.assign(cause, { errno: errcode }) : cause
}

/** Whether the running fiber reads integers as `bigint` (`SqlClient.SafeIntegers`). */
const readBigInts = Effect.withFiber<boolean>((fiber) =>
  Effect.succeed(Context.get(fiber.context, Client.SafeIntegers))
)

const makeConnection = (db: NodeSqlite.Connection): Connection => {
  const run = <A>(body: (read: NodeSqlite.ReadOptions) => A): Effect.Effect<A, SqlError> =>
    Effect.flatMap(readBigInts, (bigints) =>
      Effect.try({
        try: () => body({ readBigInts: bigints }),
        catch: (cause) => failure(db, cause, "Failed to execute statement", "execute")
      }))

  return {
    execute: (sql, params, transformRows) => {
      const rows = run((read) => db.all(sql, params, read) as ReadonlyArray<any>)
      return transformRows ? Effect.map(rows, transformRows) : rows
    },
    executeRaw: (sql, params) => run((read) => db.raw(sql, params, read)),
    executeValues: (sql, params) =>
      run((read) => db.all(sql, params, { ...read, arrays: true }) as ReadonlyArray<ReadonlyArray<unknown>>),
    executeValuesUnprepared: (sql, params) =>
      run((read) => db.allUnprepared(sql, params, { ...read, arrays: true }) as ReadonlyArray<ReadonlyArray<unknown>>),
    executeUnprepared: (sql, params, transformRows) => {
      const rows = run((read) => db.allUnprepared(sql, params ?? [], read) as ReadonlyArray<any>)
      return transformRows ? Effect.map(rows, transformRows) : rows
    },
    executeStream: (sql, params, transformRows) =>
      Stream.unwrap(Effect.gen(function*() {
        const bigints = yield* readBigInts
        const rows = yield* Effect.acquireRelease(
          Effect.try({
            try: () => db.iterate(sql, params, { readBigInts: bigints }),
            catch: (cause) => failure(db, cause, "Failed to execute statement", "executeStream")
          }),
          (rows) => Effect.sync(() => rows.return?.())
        )
        return Stream.paginate(undefined, () =>
          Effect.try({
            try: () => {
              const { done, rows: chunk } = NodeSqlite.nextRows(rows as Iterator<any>, STREAM_CHUNK)
              const out = transformRows ? transformRows(chunk) : chunk
              return [out, done ? Option.none() : Option.some(undefined)] as const
            },
            catch: (cause) => failure(db, cause, "Failed to read the rows of a statement", "executeStream")
          }))
      }))
  }
}

/**
 * A client on `config.filename` (`SqliteNode.make`), failing with `unavailable(...)` on a Node without `node:sqlite`.
 */
export const make = <E>(
  config: SqliteNodeConfig,
  unavailable: (refusal: NodeSqlite.Unavailable) => E
): Effect.Effect<Client.SqlClient, E | SqlError, Scope.Scope | ReactivityModule.Reactivity> =>
  Effect.gen(function*() {
    const db = yield* Effect.acquireRelease(
      Effect.try({
        try: () =>
          NodeSqlite.open({ filename: config.filename, readonly: config.readonly, busyTimeout: config.busyTimeout }),
        catch: (cause) =>
          new SqlError({
            reason: new ConnectionError({
              cause,
              message: `Failed to open the SQLite database ${config.filename}`,
              operation: "open"
            })
          })
      }).pipe(Effect.flatMap((opened) =>
        "_tag" in opened
          ? Effect.fail(unavailable(opened))
          : Effect.succeed(opened)
      )),
      (db) => Effect.sync(() => db.close())
    )
    const connection = makeConnection(db)
    const inTransaction = db.inTransaction() === undefined ? undefined : () => db.inTransaction() === true

    // As Effect 4.1's SQLite drivers: one connection behind a semaphore, leased into a statement's, a stream's or a
    // transaction's scope; a COMMIT that fails is rolled back before the connection serves again.
    const acquirers = Client.makeSqliteAcquirers({
      connection: Effect.succeed(connection),
      semaphore: yield* Semaphore.make(1),
      isTransaction: inTransaction && (() => inTransaction())
    })

    return yield* Client.make({
      acquirer: acquirers.acquirer,
      borrower: acquirers.borrower,
      transactionAcquirer: acquirers.transactionAcquirer,
      onCommitFailure: acquirers.onCommitFailure,
      isTransaction: acquirers.isTransaction,
      compiler: Statement.makeCompilerSqlite(),
      driver: "sqlite-node",
      spanAttributes: [
        ...(config.spanAttributes ? Object.entries(config.spanAttributes) : []),
        [ATTR_DB_SYSTEM_NAME, "sqlite"]
      ]
    })
  })

/** The `SqlClient` service of `make` as a layer, `Reactivity` included (`SqliteNode.layer`). */
export const layer = <E>(
  make: Effect.Effect<Client.SqlClient, E, Scope.Scope | ReactivityModule.Reactivity>
): Layer.Layer<Client.SqlClient, E> => Layer.effect(Client.SqlClient, make).pipe(Layer.provide(ReactivityModule.layer))
