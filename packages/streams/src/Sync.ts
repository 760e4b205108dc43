/**
 * A resource's list kept in a SQL table, exactly (docs/sync.md): each run reads the whole list drift-safe, compares
 * it with the table's rows by a digest of each record's exact text (`Changes.makeWith`), and writes only what changed:
 * inserts, updates, and deletes once the end of the list is confirmed, or with `history` a new version per change
 * (`_erp_valid_from` / `_erp_valid_to`). The rows are the state: the run reads their keys and digests back first, and
 * everything it writes, the record of the run (`erp_sync_state`) included, is one transaction, so a run killed at any
 * moment leaves the table as the last complete run left it, and the next run brings it to the server's list.
 *
 * Runs on `@effect/sql`'s `SqlClient` (the database the application already has): SQLite (`SqliteNode.layer`, or
 * `@effect/sql-sqlite-node`) and PostgreSQL (`@effect/sql-pg`). Imported from `@erp-client/streams/Sync`, not the
 * package's index: `@effect/sql` is an optional peer dependency, needed only here.
 *
 * @since 0.1.0
 */
import { ErpClient } from "@erp-client/client/ErpClient"
import type * as ErpError from "@erp-client/core/ErpError"
import * as KernelChanges from "@erp-client/kernel/Changes"
import * as NodeSqlite from "@erp-client/kernel/NodeSqlite"
import * as SyncTable from "@erp-client/kernel/SyncTable"
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Changes from "./Changes.js"
import { fieldTypes } from "./internal/edition.js"
import { SqlClient, type SqlError } from "./internal/sql.js"
import * as ListEndpoint from "./ListEndpoint.js"
import type * as Paginate from "./Paginate.js"
import type * as Resource from "./Resource.js"

/**
 * Another sync of the same table holds it (PostgreSQL: the table's advisory lock; SQLite: the database's write lock,
 * past its busy timeout). This run changed nothing.
 *
 * @since 0.1.0
 * @category Errors
 */
export class SyncBusy extends Data.TaggedError("SyncBusy")<{
  readonly table: string
  readonly dialect: SyncTable.Dialect
}> {
  override get message(): string {
    return SyncTable.busyText(this.table, this.dialect)
  }
}

/**
 * The table was synced from another list, or in the other mode (`differences`, one phrase each): refused and left as
 * it was.
 *
 * @since 0.1.0
 * @category Errors
 */
export class SyncMismatch extends Data.TaggedError("SyncMismatch")<{
  readonly table: string
  readonly differences: ReadonlyArray<string>
}> {
  override get message(): string {
    return SyncTable.mismatchText(this.table, this.differences)
  }
}

/**
 * The sync cannot run as asked: a database other than SQLite or PostgreSQL, or a table name that is not one
 * (`SyncTable.isTableName`).
 *
 * @since 0.1.0
 * @category Errors
 */
export class SyncUnsupported extends Data.TaggedError("SyncUnsupported")<{
  readonly reason: string
}> {
  override get message(): string {
    return this.reason
  }
}

/**
 * How far a run is: records read from the list, rows written.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Progress {
  readonly read: number
  readonly written: number
}

/**
 * What a run did: its table, mode and dialect, how many records were added, changed, removed and left as they were,
 * and how many rows it wrote (in history mode a change writes two: the old version closed, the new one).
 *
 * @since 0.1.0
 * @category Models
 */
export interface Summary extends SyncTable.Counts {
  readonly table: string
  readonly mode: SyncTable.Mode
  readonly dialect: SyncTable.Dialect
  readonly rows: number
  /** Records left out for the id of another, distinct record (only with `allowDuplicateIds`). */
  readonly duplicates: KernelChanges.Duplicates
  /** Columns this run added to the table (`columns`, or a field the resource declares now). */
  readonly addedColumns: ReadonlyArray<string>
}

/**
 * Options of `run`: the list's (conditions, parameters, page size, concurrency, drift-safe paging's overlap), the
 * table's (its name, its mode, the columns of fields the resource does not declare), and the run's checks.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Options
  extends Omit<ListEndpoint.ListOptions, "safe" | "exact" | "onInvalidRecord" | "resume" | "startOffset">
{
  /** The table (default: the resource's name, `SyncTable.defaultTable`). */
  readonly table?: string | undefined
  /** Keep every version of each record (`_erp_valid_from` / `_erp_valid_to`) instead of one row per record. */
  readonly history?: boolean | undefined
  /**
   * Columns for fields the resource does not declare (a field the records gained): added to the table if it lacks
   * them, and filled from each row's record. Every field is in `_erp_record` whether or not it has a column.
   */
  readonly columns?: ReadonlyArray<SyncTable.Column> | undefined
  /**
   * Keep the first record of each id when the list holds records with the id of another, distinct record (default:
   * such a run fails with `DuplicateIds` and changes nothing).
   */
  readonly allowDuplicateIds?: boolean | undefined
  /** The share of the table's records a run may remove (default 0.5); more fails with `TooManyRemovals`. */
  readonly maxRemovedRatio?: number | undefined
  /** Drift-safe paging's settings (the ids are the resource's `idField`). */
  readonly safe?: Omit<Paginate.SafeOptions, "idField" | "seen" | "resumeAfter" | "confirmEnd"> | undefined
  /** Told how far the run is after each page read and each statement written. */
  readonly onProgress?: ((progress: Progress) => Effect.Effect<void>) | undefined
}

/**
 * What a run fails with: the list's errors, a refusal of the run (records that share an id, too many removals, a
 * table of another list, another sync at work), or the database's.
 *
 * @since 0.1.0
 * @category Errors
 */
export type SyncError =
  | ErpError.ErpError
  | Changes.DuplicateIds
  | Changes.TooManyRemovals
  | SyncBusy
  | SyncMismatch
  | SyncUnsupported
  | SqlError

// Keys and digests read back a part at a time: a million rows never sit in memory as rows.
const STATE_PART = 10_000

// SQLite's "database is locked" (SQLITE_BUSY and its extended codes) in a driver's error or its cause: node:sqlite's
// (`NodeSqlite.isBusy`), better-sqlite3's (`code`), or any driver's text.
const isBusy = (error: SqlError): boolean => {
  const texts: Array<string> = [error.message]
  let cause: unknown = error.cause
  for (let depth = 0; depth < 4 && typeof cause === "object" && cause !== null; depth++) {
    const { code, message } = cause as { code?: unknown; message?: unknown }
    if (NodeSqlite.isBusy(cause) || (typeof code === "string" && code.startsWith("SQLITE_BUSY"))) return true
    if (typeof message === "string") texts.push(message)
    cause = (cause as { cause?: unknown }).cause
  }
  return texts.some((text) => /database is locked|is locked by another writer|SQLITE_BUSY/i.test(text))
}

/**
 * Brings `options.table` (default: the resource's name) to the resource's list, as one transaction: made if it is not
 * there, its rows read back as the state before, the list read drift-safe to its confirmed end, and only what changed
 * written (see the module's description). Two runs on one table never interleave: the second fails with `SyncBusy`. A
 * run refused (`DuplicateIds`, `TooManyRemovals`, `SyncMismatch`) or failed (the server, the network, the database)
 * changes nothing.
 *
 * @example
 * ```ts
 * import { Partners } from "@erp-client/streams"
 * import * as SqliteNode from "@erp-client/streams/SqliteNode"
 * import * as Sync from "@erp-client/streams/Sync"
 * import { Console, Effect } from "effect"
 *
 * // The customers kept in ./erp.sqlite, table "customers"; run it again and only what changed is written (the
 * // program still needs the application's ErpClient)
 * const program = Sync.run(Partners.resource, { table: "customers", where: { is_customer: 1 } }).pipe(
 *   Effect.tap((summary) => Console.log(`${summary.added} added, ${summary.changed} changed, ${summary.removed} removed`)),
 *   Effect.provide(SqliteNode.layer({ filename: "erp.sqlite" }))
 * )
 * ```
 *
 * @since 0.1.0
 * @category Running
 */
export const run = <A, S>(
  resource: Resource.Resource<A, S> | Resource.Any,
  options: Options = {}
): Effect.Effect<Summary, SyncError, ErpClient | SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const dialect = sql.onDialectOrElse({
      sqlite: () => "sqlite" as const,
      pg: () => "pg" as const,
      orElse: () => undefined
    })
    if (dialect === undefined) {
      return yield* new SyncUnsupported({ reason: "sync writes into SQLite or PostgreSQL only" })
    }
    const {
      allowDuplicateIds,
      columns: extra,
      history,
      maxRemovedRatio,
      onProgress,
      safe,
      table: named,
      ...list
    } = options
    const table = named ?? SyncTable.defaultTable(resource.name)
    if (!SyncTable.isTableName(table)) {
      return yield* new SyncUnsupported({
        reason:
          `${JSON.stringify(table)} cannot name a table: a letter or _, then letters, digits or _ (at most 63), ` +
          `not ${SyncTable.STATE_TABLE}`
      })
    }
    const types = fieldTypes(resource.schema)
    const shape: SyncTable.Shape = {
      table,
      dialect,
      mode: history === true ? "history" : "merge",
      columns: SyncTable.columnsOf([
        ...resource.fields.map((field) => ({ field, kind: SyncTable.kindOf(types[field] ?? [{ _tag: "other" }]) })),
        ...(extra ?? [])
      ])
    }
    const source = JSON.stringify(KernelChanges.sourceOf({
      baseUrl: (yield* ErpClient).baseUrl,
      endpoint: resource.list,
      idField: resource.idField,
      where: list.where,
      params: list.params
    }))
    const exec = (statement: SyncTable.Statement) =>
      sql.unsafe<Record<string, unknown>>(statement.sql, statement.params as Array<unknown>)
    const busy = new SyncBusy({ table, dialect })

    const body = Effect.gen(function*() {
      // Another run of this table waits for nothing: it is refused at once (PostgreSQL), or once SQLite's busy
      // timeout passes on the write lock the claim below takes.
      if (dialect === "pg") {
        const [lock] = yield* exec({
          sql: `SELECT pg_try_advisory_xact_lock(${SyncTable.lockKey(table)}) AS "locked"`,
          params: []
        })
        if (lock?.locked !== true) return yield* busy
      }
      // PostgreSQL's state table was made before the run (below); SQLite's write lock makes one run at a time. The
      // table's own statements come once the claim is checked: a table of the other mode is refused (SyncMismatch),
      // not met with an SQL error (history's index names a column a merge table lacks).
      const [stateTable, ...tableStatements] = SyncTable.createStatements(shape)
      if (dialect === "sqlite") yield* exec({ sql: stateTable, params: [] })
      yield* exec(SyncTable.claimStatement(table, shape.mode, source, dialect))
      const [stored] = yield* exec(SyncTable.readStatement(table, dialect))
      const runs = Number(stored?.runs ?? 0)
      const lastRunAt = stored?.last_run_at == null ? undefined : String(stored.last_run_at)
      if (runs > 0 || stored?.mode !== shape.mode) {
        const differences = SyncTable.differences(
          {
            mode: stored?.mode === "history" ? "history" : "merge",
            source: String(stored?.source ?? ""),
            runs,
            lastRunAt
          },
          shape.mode,
          source
        )
        if (differences.length > 0) return yield* new SyncMismatch({ table, differences })
      }
      for (const statement of tableStatements) yield* exec({ sql: statement, params: [] })
      const addedColumns = yield* addColumns(shape, exec)

      const before = yield* stateOf(shape, exec)
      const at = SyncTable.runTime(yield* Clock.currentTimeMillis, lastRunAt)

      let read = 0
      let written = 0
      let summary: Omit<Changes.Summary, "stateBytes"> | undefined
      const perStatement = SyncTable.rowsPerStatement(shape.columns.length)
      const progress = onProgress ?? (() => Effect.void)
      const changes = Changes.makeWith(
        (tracking) =>
          ListEndpoint.pages(resource.list, resource.schema, {
            ...list,
            safe: { ...safe, idField: resource.idField, ...tracking },
            exact: true
          }).pipe(Stream.tap((page) => {
            read += page.records.length
            return progress({ read, written })
          })),
        {
          key: table,
          idField: resource.idField,
          before,
          allowDuplicateIds,
          maxRemovedRatio,
          commit: (_seen, counts) =>
            Effect.sync(() => {
              summary = counts
            })
        }
      )
      yield* changes.pipe(
        Stream.grouped(perStatement),
        Stream.runForEach((chunk) =>
          Effect.gen(function*() {
            // A Chunk in Effect 3, an array in Effect 4: iterable in both.
            const batch = Array.from(chunk)
            const ends: Array<string> = []
            const rows: Array<SyncTable.Row> = []
            for (const change of batch) {
              if (change._tag === "Removed") ends.push(change.idJson)
              else {
                const id = KernelChanges.idFromJson(change.idJson) ?? change.id
                rows.push(SyncTable.rowOf(id, change.json, shape.columns, dialect))
                // History: the current version of a changed record is closed before its next one is written.
                if (shape.mode === "history" && change._tag === "Changed") ends.push(change.idJson)
              }
            }
            if (ends.length > 0) {
              yield* exec(SyncTable.endStatement(shape, ends, at))
              written += ends.length
            }
            if (rows.length > 0) {
              yield* exec(SyncTable.writeStatement(shape, rows, at))
              written += rows.length
            }
            yield* progress({ read, written })
          })
        )
      )
      const counts = summary!
      yield* exec(SyncTable.finishStatement(table, source, at, { ...counts }, dialect))
      return {
        table,
        mode: shape.mode,
        dialect,
        added: counts.added,
        changed: counts.changed,
        removed: counts.removed,
        unchanged: counts.unchanged,
        rows: written,
        duplicates: counts.duplicates,
        addedColumns
      } satisfies Summary
    })
    // Runs into two tables at once would both make PostgreSQL's state table (one fails on the catalog's unique
    // index): it is made first, in a transaction of its own under a lock of its own, held only for that.
    if (dialect === "pg") {
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* exec({ sql: `SELECT pg_advisory_xact_lock(${SyncTable.lockKey(SyncTable.STATE_TABLE)})`, params: [] })
        yield* exec({ sql: SyncTable.createStatements(shape)[0], params: [] })
      }))
    }
    return yield* sql.withTransaction(body).pipe(
      Effect.catchIf(
        (error): error is SqlError => (error as { _tag?: unknown })._tag === "SqlError" && isBusy(error as SqlError),
        () => Effect.fail(busy)
      )
    )
  })

// The state before a run: every current row's key and digest, read a part at a time in key order. The table they
// are gathered in is let go once the sorted state is made (only the state stays beside the run's own table).
const stateOf = (
  shape: SyncTable.Shape,
  exec: (statement: SyncTable.Statement) => Effect.Effect<ReadonlyArray<Record<string, unknown>>, SqlError>
): Effect.Effect<KernelChanges.State, SqlError> =>
  Effect.gen(function*() {
    let table: KernelChanges.Table | undefined = KernelChanges.makeTable()
    let after = ""
    for (;;) {
      const part = yield* exec(SyncTable.stateStatement(shape, after, STATE_PART))
      for (const row of part) {
        const id = KernelChanges.idFromJson(String(row._erp_key))
        if (id !== undefined) KernelChanges.addHex(table, id, String(row._erp_digest))
      }
      if (part.length < STATE_PART) break
      after = String(part[part.length - 1]._erp_key)
    }
    const state = table.state()
    table = undefined
    return state
  })

// The columns the table lacks of those the run writes: added, and filled from each row's exact text (so a field the
// records gained before the column was asked for is not lost from it).
const addColumns = (
  shape: SyncTable.Shape,
  exec: (statement: SyncTable.Statement) => Effect.Effect<ReadonlyArray<Record<string, unknown>>, SqlError>
): Effect.Effect<ReadonlyArray<string>, SqlError> =>
  Effect.gen(function*() {
    const present = new Set(
      (yield* exec(SyncTable.columnsStatement(shape.table, shape.dialect))).map((row) => String(row.name).toLowerCase())
    )
    const missing = shape.columns.filter((column) => !present.has(column.field.toLowerCase()))
    if (missing.length === 0) return []
    for (const column of missing) {
      yield* exec({ sql: SyncTable.addColumnStatement(shape.table, column, shape.dialect), params: [] })
    }
    // A part's rows a statement: its values stay under the databases' limits.
    const perPart = SyncTable.rowsPerStatement(missing.length)
    let after = ""
    for (;;) {
      const part = yield* exec(SyncTable.recordsStatement(shape, after, perPart))
      const fills: Array<SyncTable.Fill> = []
      for (const row of part) {
        const key = String(row._erp_key)
        const id = KernelChanges.idFromJson(key)
        if (id === undefined) continue
        fills.push({
          key,
          validFrom: shape.mode === "history" ? toIso(row._erp_valid_from) : undefined,
          values: SyncTable.rowOf(id, String(row.json), missing, shape.dialect).values
        })
      }
      if (fills.length > 0) yield* exec(SyncTable.fillStatement(shape, missing, fills))
      if (part.length < perPart) break
      after = String(part[part.length - 1]._erp_key)
    }
    return missing.map((column) => column.field)
  })

// A time as a driver hands it back (PostgreSQL: a Date; SQLite: the text written), as ISO 8601.
const toIso = (value: unknown): string => value instanceof Date ? value.toISOString() : String(value)
