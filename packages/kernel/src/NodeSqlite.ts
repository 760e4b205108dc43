/**
 * An SQLite database file opened with Node's built-in `node:sqlite` (`DatabaseSync`), for `erp sync`'s embedded
 * target: the connection's settings, its cache of prepared statements, reading rows, and the words for a database
 * locked by another writer or a Node without `node:sqlite`. Plain functions and objects, no Effect: both editions'
 * `SqliteNode` clients (`@erp-client/streams/SqliteNode`, `@erp-client/effect4-streams/SqliteNode`) wire it to their
 * Effect's `SqlClient`.
 *
 * `node:sqlite` rather than a package: `better-sqlite3` is a native module built for each Node ABI (minutes a build,
 * rebuilt between Node versions), `libsql` held about 8 times the memory of `node:sqlite` inserting a million rows,
 * and Effect 4.1 has no SQLite driver of its own. `node:sqlite` is unflagged since Node 22.13 and 23.4 and absent from
 * Node 20, so it is loaded when a database is opened (`process.getBuiltinModule`), never by importing this module: an
 * application on Node 20 that does not use SQLite imports it freely, and one that does is told what to run instead.
 *
 * @since 0.1.0
 */

/** A prepared statement of `node:sqlite`, as far as this module uses it (`StatementSync`). */
interface NativeStatement {
  all(...params: ReadonlyArray<unknown>): Array<unknown>
  run(...params: ReadonlyArray<unknown>): RunResult
  iterate(...params: ReadonlyArray<unknown>): Iterator<unknown> & { return?: (value?: unknown) => unknown }
  setReadBigInts(enabled: boolean): void
  // Node 22.16 / 23.11 and later.
  setReturnArrays?: (enabled: boolean) => void
  columns?: () => ReadonlyArray<unknown>
}

/** A database of `node:sqlite`, as far as this module uses it (`DatabaseSync`). */
interface NativeDatabase {
  exec(sql: string): void
  prepare(sql: string): NativeStatement
  close(): void
  // Node 22.16 / 24.0 and later.
  readonly isTransaction?: boolean
}

interface NativeModule {
  readonly DatabaseSync: new(filename: string, options: { readonly readOnly: boolean }) => NativeDatabase
}

/**
 * What `run` answers for a statement that returns no rows: the rows it changed and the last row id it inserted.
 *
 * @since 0.1.0
 * @category Models
 */
export interface RunResult {
  readonly changes: number | bigint
  readonly lastInsertRowid: number | bigint
}

/**
 * How a database is opened.
 *
 * - `filename`: the database file (created when missing, unless `readonly`), or `:memory:`;
 * - `readonly`: open it for reading only (default `false`);
 * - `busyTimeout`: how long, in milliseconds, a statement waits for another connection's write to end before it fails
 *   with `SQLITE_BUSY` (default 5000);
 * - `statementCacheSize`: how many prepared statements are kept, the least recently used dropped first (default 200).
 *
 * @since 0.1.0
 * @category Models
 */
export interface Options {
  readonly filename: string
  readonly readonly?: boolean | undefined
  readonly busyTimeout?: number | undefined
  readonly statementCacheSize?: number | undefined
}

/**
 * How a statement's rows are read: integers as `bigint` (`readBigInts`, exact beyond 2^53), rows as arrays of values
 * in column order rather than objects (`arrays`).
 *
 * @since 0.1.0
 * @category Models
 */
export interface ReadOptions {
  readonly readBigInts?: boolean | undefined
  readonly arrays?: boolean | undefined
}

/**
 * An open database: one connection, its prepared statements cached by their SQL.
 *
 * - `all`: the rows of a statement (prepared once and cached), `[]` for one that returns none;
 * - `allUnprepared`: the same with a statement prepared for this call only (not cached);
 * - `raw`: a statement's rows when it returns some, else its `RunResult`;
 * - `iterate`: a statement's rows one at a time, on a statement of its own (another statement run meanwhile does not
 *   reset it); `return()` ends it early;
 * - `exec`: one or more statements without parameters or rows;
 * - `inTransaction`: whether a transaction is open, `undefined` where Node cannot tell (before 22.16);
 * - `journalMode`: the journal mode in force (`"wal"` for a file opened for writing);
 * - `close`: closes the database; the cached statements go with it.
 *
 * Every method throws what `node:sqlite` throws (an `Error` with `errcode`, SQLite's result code, and `errstr`).
 *
 * @since 0.1.0
 * @category Models
 */
export interface Connection {
  readonly filename: string
  readonly busyTimeout: number
  readonly all: (sql: string, params: ReadonlyArray<unknown>, options?: ReadOptions) => Array<unknown>
  readonly allUnprepared: (sql: string, params: ReadonlyArray<unknown>, options?: ReadOptions) => Array<unknown>
  readonly raw: (sql: string, params: ReadonlyArray<unknown>, options?: ReadOptions) => Array<unknown> | RunResult
  readonly iterate: (
    sql: string,
    params: ReadonlyArray<unknown>,
    options?: ReadOptions
  ) => Iterator<unknown> & { return?: (value?: unknown) => unknown }
  readonly exec: (sql: string) => void
  readonly inTransaction: () => boolean | undefined
  readonly journalMode: () => string
  readonly close: () => void
}

/**
 * Why a database was not opened: this Node has no `node:sqlite` (Node 20, or 22 before 22.13 without
 * `--experimental-sqlite`). `message` says which Node it is and what to use instead.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Unavailable {
  readonly _tag: "Unavailable"
  readonly nodeVersion: string
  readonly message: string
}

/** The default of `Options.busyTimeout`, in milliseconds. */
const BUSY_TIMEOUT = 5000

/** The default of `Options.statementCacheSize`. */
const STATEMENT_CACHE_SIZE = 200

const loadNative = (): NativeModule | undefined => {
  try {
    // `getBuiltinModule` (Node 20.16, 22.3) answers `undefined` for a module this Node does not have, where an import
    // would fail the importing module: loading here keeps this module importable on every Node.
    const native = process.getBuiltinModule?.("node:sqlite") as NativeModule | undefined
    return typeof native?.DatabaseSync === "function" ? native : undefined
  } catch {
    return undefined
  }
}

/**
 * Whether this Node has `node:sqlite` (22.13, 23.4 or later).
 *
 * @example
 * ```ts
 * import { NodeSqlite } from "@erp-client/kernel"
 *
 * console.log(typeof NodeSqlite.available()) // => boolean
 * ```
 *
 * @since 0.1.0
 * @category Opening
 */
export const available = (): boolean => loadNative() !== undefined

/**
 * The refusal for a Node without `node:sqlite`, `nodeVersion` being `process.version`'s form.
 *
 * @example
 * ```ts
 * import { NodeSqlite } from "@erp-client/kernel"
 *
 * console.log(NodeSqlite.unavailable("v20.20.2").message.startsWith("SQLite needs Node.js 22.13 or later")) // => true
 * ```
 *
 * @since 0.1.0
 * @category Opening
 */
export const unavailable = (nodeVersion: string = process.version): Unavailable => ({
  _tag: "Unavailable",
  nodeVersion,
  message: `SQLite needs Node.js 22.13 or later (node:sqlite); this is Node.js ${nodeVersion}. ` +
    "Run on a newer Node, or sync to PostgreSQL instead (--to postgres://…)."
})

/** Whether `filename` names a database held in memory, which has no journal file to put in WAL mode. */
const inMemory = (filename: string): boolean =>
  filename === "" || filename === ":memory:" || filename.startsWith("file::memory:")

/**
 * Opens `options.filename` with `node:sqlite`, or answers `Unavailable` when this Node has none. A file opened for
 * writing is put in WAL mode (readers do not wait for the writer, nor it for them) with `synchronous = NORMAL` (safe
 * in WAL mode: a power loss can undo the last transactions, never damage the file); every connection waits up to
 * `busyTimeout` for another connection's write. Throws what `node:sqlite` throws when the file cannot be opened.
 *
 * @example
 * ```ts
 * import { NodeSqlite } from "@erp-client/kernel"
 *
 * // On Node 20 the refusal says what to run instead; on Node 22.13 or later the database opens.
 * const opened = NodeSqlite.open({ filename: ":memory:" })
 * if ("_tag" in opened) {
 *   console.log(opened.message.startsWith("SQLite needs Node.js 22.13 or later")) // => true
 * } else {
 *   opened.exec("create table t (id integer primary key, n integer)")
 *   opened.all("insert into t (n) values (?)", [9007199254740993n])
 *   const [row] = opened.all("select n from t", [], { readBigInts: true }) as Array<{ readonly n: bigint }>
 *   console.log(row?.n) // => 9007199254740993n
 *   opened.close()
 * }
 * ```
 *
 * @since 0.1.0
 * @category Opening
 */
export const open = (options: Options): Connection | Unavailable => {
  const native = loadNative()
  if (native === undefined) return unavailable()
  const readonly = options.readonly ?? false
  const busyTimeout = options.busyTimeout ?? BUSY_TIMEOUT
  const capacity = Math.max(0, options.statementCacheSize ?? STATEMENT_CACHE_SIZE)
  const db = new native.DatabaseSync(options.filename, { readOnly: readonly })
  try {
    // First, so that switching the journal mode waits for another connection too.
    db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.trunc(busyTimeout))}`)
    if (!readonly && !inMemory(options.filename)) db.exec("PRAGMA journal_mode = WAL")
    db.exec("PRAGMA synchronous = NORMAL")
  } catch (cause) {
    db.close()
    throw cause
  }

  // A Map iterates in insertion order: a statement used again is moved to the end, the first is the least recent.
  const cache = new Map<string, NativeStatement>()
  const prepared = (sql: string): NativeStatement => {
    const cached = cache.get(sql)
    if (cached !== undefined) {
      cache.delete(sql)
      cache.set(sql, cached)
      return cached
    }
    const statement = db.prepare(sql)
    if (capacity > 0) {
      cache.set(sql, statement)
      if (cache.size > capacity) cache.delete(cache.keys().next().value!)
    }
    return statement
  }

  const rows = (statement: NativeStatement, params: ReadonlyArray<unknown>, read: ReadOptions | undefined) => {
    statement.setReadBigInts(read?.readBigInts ?? false)
    if (read?.arrays !== true) return statement.all(...params)
    if (statement.setReturnArrays === undefined) {
      // Before Node 22.16 a statement answers objects only; their values are in column order.
      return statement.all(...params).map((row) => Object.values(row as object))
    }
    statement.setReturnArrays(true)
    try {
      return statement.all(...params)
    } finally {
      statement.setReturnArrays(false)
    }
  }

  return {
    filename: options.filename,
    busyTimeout,
    all: (sql, params, read) => rows(prepared(sql), params, read),
    allUnprepared: (sql, params, read) => rows(db.prepare(sql), params, read),
    raw: (sql, params, read) => {
      const statement = prepared(sql)
      // A statement that returns no rows answers what it changed; before Node 22.16 (no `columns`) rows are assumed.
      if (statement.columns !== undefined && statement.columns().length === 0) {
        const { changes, lastInsertRowid } = statement.run(...params)
        return { changes, lastInsertRowid }
      }
      return rows(statement, params, read)
    },
    iterate: (sql, params, read) => {
      const statement = db.prepare(sql)
      statement.setReadBigInts(read?.readBigInts ?? false)
      return statement.iterate(...params)
    },
    exec: (sql) => db.exec(sql),
    inTransaction: () => db.isTransaction,
    journalMode: () => {
      const [row] = db.prepare("PRAGMA journal_mode").all() as Array<{ readonly journal_mode: string }>
      return row!.journal_mode
    },
    close: () => {
      cache.clear()
      db.close()
    }
  }
}

/**
 * The next rows of an `iterate`, at most `size`, and whether the statement has none left: what a client's stream of
 * rows reads at a time.
 *
 * @example
 * ```ts
 * import { NodeSqlite } from "@erp-client/kernel"
 *
 * const rows = [1, 2, 3][Symbol.iterator]()
 * console.log(NodeSqlite.nextRows(rows, 2), NodeSqlite.nextRows(rows, 2))
 * // => { rows: [ 1, 2 ], done: false } { rows: [ 3 ], done: true }
 * ```
 *
 * @since 0.1.0
 * @category Reading
 */
export const nextRows = <A>(rows: Iterator<A>, size: number): { readonly rows: Array<A>; readonly done: boolean } => {
  const out: Array<A> = []
  while (out.length < size) {
    const next = rows.next()
    if (next.done === true) return { rows: out, done: true }
    out.push(next.value)
  }
  return { rows: out, done: false }
}

/**
 * Whether `cause`, thrown by `node:sqlite`, is SQLite's `SQLITE_BUSY`: another connection held the database's write
 * lock for longer than the busy timeout.
 *
 * @example
 * ```ts
 * import { NodeSqlite } from "@erp-client/kernel"
 *
 * const error = Object.assign(new Error("database is locked"), { errcode: 5, errstr: "database is locked" })
 * console.log(NodeSqlite.isBusy(error)) // => true
 * console.log(NodeSqlite.isBusy(new Error("no such table: t"))) // => false
 * ```
 *
 * @since 0.1.0
 * @category Errors
 */
export const isBusy = (cause: unknown): boolean =>
  typeof cause === "object" && cause !== null && "errcode" in cause && typeof cause.errcode === "number" &&
  (cause.errcode & 0xff) === 5

/**
 * What a statement that failed with `SQLITE_BUSY` says.
 *
 * @example
 * ```ts
 * import { NodeSqlite } from "@erp-client/kernel"
 *
 * console.log(NodeSqlite.busyMessage("erp.db", 5000))
 * // => The database erp.db is locked by another writer: it was still locked after the busy timeout (5000 ms)
 * ```
 *
 * @since 0.1.0
 * @category Errors
 */
export const busyMessage = (filename: string, busyTimeout: number): string =>
  `The database ${filename} is locked by another writer: it was still locked after the busy timeout (${busyTimeout} ms)`
