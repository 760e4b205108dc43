// Per edition: `SqlClient.make`, its options and the `Connection` a driver implements are `@effect/sql` 0.52's here and `effect/sql`'s in Effect 4.1, which differ (errors with a reason, the SQLite acquirers, a driver's name).
/**
 * The driver behind `SqliteNode` (the shared public module): an embedded SQLite database as `@effect/sql`'s `SqlClient`, on Node's built-in `node:sqlite`: the SQL database
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
 */
import * as ReactivityModule from "@effect/experimental/Reactivity"
import * as Client from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import * as Statement from "@effect/sql/Statement"
import { NodeSqlite } from "@erp-client/kernel"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { SqliteNodeConfig } from "../SqliteNode.js"

const ATTR_DB_SYSTEM_NAME = "db.system.name"

/** The client, its error and the service it needs, as the shared module names them in its signatures. */
export type SqlClient = Client.SqlClient
export type { SqlError }
export type Reactivity = ReactivityModule.Reactivity

/** How many rows `stream` reads from the database at a time. */
const STREAM_CHUNK = 256

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
              const { done, rows: chunk } = NodeSqlite.nextRows(rows as Iterator<any>, STREAM_CHUNK)
              const out = transformRows ? transformRows(chunk) : chunk
              return [Chunk.unsafeFromArray(out), done ? Option.none() : Option.some(undefined)] as const
            },
            catch: (cause) => failure(db, cause, "Failed to read the rows of a statement")
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
        catch: (cause) => new SqlError({ cause, message: `Failed to open the SQLite database ${config.filename}` })
      }).pipe(Effect.flatMap((opened) =>
        "_tag" in opened
          ? Effect.fail(unavailable(opened))
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

/** The `SqlClient` service of `make` as a layer, `Reactivity` included (`SqliteNode.layer`). */
export const layer = <E>(
  make: Effect.Effect<Client.SqlClient, E, Scope.Scope | ReactivityModule.Reactivity>
): Layer.Layer<Client.SqlClient, E> => Layer.scoped(Client.SqlClient, make).pipe(Layer.provide(ReactivityModule.layer))
