/**
 * A list kept in a SQL table (docs/sync.md): the table's shape, what each column holds, and the statements a sync
 * runs, for SQLite and PostgreSQL. Each edition's `Sync` runs them through its `SqlClient`.
 *
 * The table is its own state: each row carries the record's key (`_erp_key`, the id as the server wrote it, so ids
 * beyond a double stay apart), the digest of its exact text (`_erp_digest`) and the record itself. A run reads the keys
 * and digests back as the state before, and writes only what changed, in the one transaction that also records the
 * run (`erp_sync_state`): whatever stops a run, the table is the list as the last complete run left it.
 *
 * @since 0.1.0
 */
import * as Changes from "./Changes.js"
import * as JsonText from "./JsonText.js"

/**
 * The SQL dialects a sync writes.
 *
 * @since 0.1.0
 * @category Models
 */
export type Dialect = "sqlite" | "pg"

/**
 * What a column holds, from the resource's schema: a whole number, a number, text, a flag, or any JSON.
 *
 * @since 0.1.0
 * @category Models
 */
export type Kind = "integer" | "number" | "text" | "boolean" | "json"

/**
 * One member of a field's type as a schema says it (a union has several): what `kindOf` reads.
 *
 * @since 0.1.0
 * @category Models
 */
export type TypeMember =
  | { readonly _tag: "string" }
  | { readonly _tag: "number"; readonly integer: boolean }
  | { readonly _tag: "boolean" }
  | { readonly _tag: "null" }
  | { readonly _tag: "literal"; readonly value: string | number | boolean | null }
  | { readonly _tag: "other" }

/**
 * The kind of a field's column from the members of its schema's type: `null` aside, numbers that are all whole are
 * `integer`, numbers `number`, strings `text`, booleans `boolean`, and a flag written in several forms (booleans,
 * `0`/`1`, `"0"`/`"1"` together) `boolean` too; `0`/`1` alone is `integer` (an enumeration of numbers). A mix of
 * numbers and strings is `text` (its value as written), anything else `json`.
 *
 * @example
 * ```ts
 * import { SyncTable } from "@erp-client/kernel"
 *
 * console.log(SyncTable.kindOf([{ _tag: "number", integer: true }])) // => integer
 * console.log(SyncTable.kindOf([{ _tag: "string" }, { _tag: "null" }])) // => text
 * console.log(SyncTable.kindOf([{ _tag: "literal", value: 0 }, { _tag: "literal", value: 1 }, { _tag: "boolean" }])) // => boolean
 * console.log(SyncTable.kindOf([{ _tag: "string" }, { _tag: "number", integer: false }])) // => text
 * ```
 *
 * @since 0.1.0
 * @category Columns
 */
export const kindOf = (members: ReadonlyArray<TypeMember>): Kind => {
  const kinds = new Set<Kind>()
  let flagLiterals = true
  for (const member of members) {
    switch (member._tag) {
      case "null":
        break
      case "string":
        kinds.add("text")
        flagLiterals = false
        break
      case "number":
        kinds.add(member.integer ? "integer" : "number")
        flagLiterals = false
        break
      case "boolean":
        kinds.add("boolean")
        break
      case "literal": {
        const value = member.value
        if (value === null) break
        const flag = value === 0 || value === 1 || value === "0" || value === "1" || typeof value === "boolean"
        if (!flag) flagLiterals = false
        kinds.add(
          typeof value === "boolean"
            ? "boolean"
            : typeof value === "string"
            ? "text"
            : Number.isInteger(value)
            ? "integer"
            : "number"
        )
        break
      }
      case "other":
        return "json"
    }
  }
  if (kinds.size === 0) return "json"
  if (kinds.size === 1) return [...kinds][0]
  if (flagLiterals) return "boolean"
  if ([...kinds].every((kind) => kind === "integer" || kind === "number")) return "number"
  if ([...kinds].every((kind) => kind !== "json")) return "text"
  return "json"
}

/**
 * A column for one field of the records.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Column {
  /** The record's field, and the column's name. */
  readonly field: string
  readonly kind: Kind
}

/**
 * The prefix of the columns a sync keeps for itself: a record's field of that name has no column of its own (it is
 * in `_erp_record`).
 *
 * @since 0.1.0
 * @category Columns
 */
export const OWN_PREFIX = "_erp_"

/**
 * The table that records each table's sync: its list, its mode, and its last run.
 *
 * @since 0.1.0
 * @category Tables
 */
export const STATE_TABLE = "erp_sync_state"

/**
 * The most columns of fields a table gets (the first, in the order given): a wide record keeps the rest in
 * `_erp_record`. SQLite's default limit is 2,000 columns, PostgreSQL's 1,600.
 *
 * @since 0.1.0
 * @category Columns
 */
export const MAX_FIELD_COLUMNS = 500

/**
 * The columns of a table for `fields` (in order, each once): every field but those the sync's own columns would meet
 * (`_erp_…`, any case) or past `MAX_FIELD_COLUMNS`.
 *
 * @example
 * ```ts
 * import { SyncTable } from "@erp-client/kernel"
 *
 * const columns = SyncTable.columnsOf([
 *   { field: "id", kind: "integer" },
 *   { field: "_erp_key", kind: "text" },
 *   { field: "id", kind: "text" }
 * ])
 * console.log(columns) // => [ { field: 'id', kind: 'integer' } ]
 * ```
 *
 * @since 0.1.0
 * @category Columns
 */
export const columnsOf = (fields: ReadonlyArray<Column>): ReadonlyArray<Column> => {
  const seen = new Set<string>()
  const out: Array<Column> = []
  for (const column of fields) {
    const name = column.field.toLowerCase()
    if (name.startsWith(OWN_PREFIX) || seen.has(name) || column.field.length === 0) continue
    if (column.field.includes("\u0000")) continue
    seen.add(name)
    out.push(column)
    if (out.length === MAX_FIELD_COLUMNS) break
  }
  return out
}

/**
 * Whether `name` may name a table: a letter or `_`, then letters, digits or `_`, at most 63 (PostgreSQL's limit), not
 * the state table's.
 *
 * @example
 * ```ts
 * import { SyncTable } from "@erp-client/kernel"
 *
 * console.log(SyncTable.isTableName("partners"), SyncTable.isTableName("erp sync"), SyncTable.isTableName("erp_sync_state"))
 * // => true false false
 * ```
 *
 * @since 0.1.0
 * @category Tables
 */
export const isTableName = (name: string): boolean =>
  /^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(name) && name.toLowerCase() !== STATE_TABLE

/**
 * The table a list is kept in unless told otherwise: a resource's name (`partners`), or an endpoint's path read as a
 * name (`invoice/list` → `invoice_list`).
 *
 * @example
 * ```ts
 * import { SyncTable } from "@erp-client/kernel"
 *
 * console.log(SyncTable.defaultTable("partners"), SyncTable.defaultTable("invoice/list"), SyncTable.defaultTable("2fa/list"))
 * // => partners invoice_list t_2fa_list
 * ```
 *
 * @since 0.1.0
 * @category Tables
 */
export const defaultTable = (name: string): string => {
  const base = name.replace(/[^A-Za-z0-9_]+/g, "_").replace(/^_+|_+$/g, "").slice(0, 60)
  const table = /^[A-Za-z_]/.test(base) ? base : `t_${base}`
  return table.length === 0 || table === "t_" ? "erp_records" : table.toLowerCase()
}

/**
 * An identifier quoted for SQL (SQLite and PostgreSQL both): in double quotes, a double quote doubled.
 *
 * @example
 * ```ts
 * import { SyncTable } from "@erp-client/kernel"
 *
 * console.log(SyncTable.quote('company "name"')) // => "company ""name"""
 * ```
 *
 * @since 0.1.0
 * @category Statements
 */
export const quote = (name: string): string => `"${name.replace(/"/g, "\"\"")}"`

/**
 * How a table keeps its list: `merge`, one row per record (updated in place, deleted with the record); `history`, a
 * row per version of each record (`_erp_valid_from` / `_erp_valid_to`, the current one with no `_erp_valid_to`).
 *
 * @since 0.1.0
 * @category Models
 */
export type Mode = "merge" | "history"

/**
 * What a table is: its name, dialect, mode and field columns.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Shape {
  readonly table: string
  readonly dialect: Dialect
  readonly mode: Mode
  readonly columns: ReadonlyArray<Column>
}

const columnType = (kind: Kind, dialect: Dialect): string => {
  if (dialect === "pg") {
    switch (kind) {
      case "integer":
      case "number":
        return "numeric"
      case "text":
        return "text"
      case "boolean":
        return "boolean"
      case "json":
        return "jsonb"
    }
  }
  switch (kind) {
    case "integer":
      return "INTEGER"
    // NUMERIC keeps a whole number bound as a 64-bit integer whole (REAL would make it a double).
    case "number":
      return "NUMERIC"
    case "boolean":
      return "INTEGER"
    case "text":
    case "json":
      return "TEXT"
  }
}

/**
 * The sync's own columns, after the fields': the record as JSON (`_erp_record`; in PostgreSQL `jsonb`, with its exact
 * text in `_erp_record_text`, since `jsonb` reorders keys), its digest, when it was first seen and last changed; in
 * history mode, each version's validity instead (the first version's `_erp_valid_from` is when it was first seen).
 *
 * @example
 * ```ts
 * import { SyncTable } from "@erp-client/kernel"
 *
 * console.log(SyncTable.ownColumns("pg", "history").map(([name]) => name))
 * // => [ '_erp_record', '_erp_record_text', '_erp_digest', '_erp_valid_from', '_erp_valid_to' ]
 * ```
 *
 * @since 0.1.0
 * @category Tables
 */
export const ownColumns = (dialect: Dialect, mode: Mode): ReadonlyArray<readonly [name: string, type: string]> => {
  const time = dialect === "pg" ? "timestamptz" : "TEXT"
  return [
    ["_erp_record", dialect === "pg" ? "jsonb NOT NULL" : "TEXT NOT NULL"],
    ...(dialect === "pg" ? [["_erp_record_text", "text NOT NULL"] as const] : []),
    ["_erp_digest", dialect === "pg" ? "text NOT NULL" : "TEXT NOT NULL"],
    ...(mode === "history"
      ? [["_erp_valid_from", `${time} NOT NULL`] as const, ["_erp_valid_to", time] as const]
      : [["_erp_first_seen", `${time} NOT NULL`] as const, ["_erp_last_changed", `${time} NOT NULL`] as const])
  ]
}

/**
 * The statements that make the state table and `shape`'s table (and, in history mode, the index that keeps one
 * current version per key), each if it is not there yet.
 *
 * @example
 * ```ts
 * import { SyncTable } from "@erp-client/kernel"
 *
 * const shape = { table: "partners", dialect: "sqlite", mode: "merge", columns: [{ field: "id", kind: "integer" }] } as const
 * console.log(SyncTable.createStatements(shape)[1])
 * // => CREATE TABLE IF NOT EXISTS "partners" ("_erp_key" TEXT NOT NULL, "id" INTEGER, "_erp_record" TEXT NOT NULL, "_erp_digest" TEXT NOT NULL, "_erp_first_seen" TEXT NOT NULL, "_erp_last_changed" TEXT NOT NULL, PRIMARY KEY ("_erp_key"))
 * ```
 *
 * @since 0.1.0
 * @category Statements
 */
export const createStatements = (shape: Shape): ReadonlyArray<string> => {
  const text = shape.dialect === "pg" ? "text" : "TEXT"
  const int = shape.dialect === "pg" ? "bigint" : "INTEGER"
  const state = `CREATE TABLE IF NOT EXISTS ${quote(STATE_TABLE)} (` +
    `"table_name" ${text} PRIMARY KEY, "mode" ${text} NOT NULL, "source" ${text} NOT NULL, "runs" ${int} NOT NULL, ` +
    `"last_run_at" ${text}, "added" ${int} NOT NULL, "changed" ${int} NOT NULL, "removed" ${int} NOT NULL, ` +
    `"unchanged" ${int} NOT NULL)`
  const columns = [
    `"_erp_key" ${text} NOT NULL`,
    ...shape.columns.map((column) => `${quote(column.field)} ${columnType(column.kind, shape.dialect)}`),
    ...ownColumns(shape.dialect, shape.mode).map(([name, type]) => `${quote(name)} ${type}`)
  ]
  const key = shape.mode === "history" ? `PRIMARY KEY ("_erp_key", "_erp_valid_from")` : `PRIMARY KEY ("_erp_key")`
  const table = `CREATE TABLE IF NOT EXISTS ${quote(shape.table)} (${columns.join(", ")}, ${key})`
  return shape.mode === "history"
    ? [
      state,
      table,
      `CREATE UNIQUE INDEX IF NOT EXISTS ${quote(currentIndex(shape.table))} ON ${
        quote(shape.table)
      } ("_erp_key") WHERE "_erp_valid_to" IS NULL`
    ]
    : [state, table]
}

// The index of a history table's current rows: `<table>_erp_current`, or for a long name one PostgreSQL keeps whole
// (it cuts names past 63 bytes: a table of 63 characters would cut to its own name, and IF NOT EXISTS would then skip
// the index, the relation being there).
const currentIndex = (table: string): string => {
  const plain = `${table}_erp_current`
  return plain.length <= 63 ? plain : `${table.slice(0, 42)}_erp_current_${Changes.digestHex(table).slice(0, 8)}`
}

/**
 * The statement that adds a column for a field to an existing table.
 *
 * @example
 * ```ts
 * import { SyncTable } from "@erp-client/kernel"
 *
 * console.log(SyncTable.addColumnStatement("partners", { field: "loyalty_tier", kind: "text" }, "pg"))
 * // => ALTER TABLE "partners" ADD COLUMN "loyalty_tier" text
 * ```
 *
 * @since 0.1.0
 * @category Statements
 */
export const addColumnStatement = (table: string, column: Column, dialect: Dialect): string =>
  `ALTER TABLE ${quote(table)} ADD COLUMN ${quote(column.field)} ${columnType(column.kind, dialect)}`

/**
 * A value as a statement binds it: SQL `NULL`, text, a number, a whole number beyond a double (SQLite), or a flag.
 *
 * @since 0.1.0
 * @category Models
 */
export type Value = null | string | number | bigint | boolean

const INT64_MAX = 9223372036854775807n
const INT64_MIN = -9223372036854775808n

// A number's token as the server wrote it, for a column of numbers: PostgreSQL's `numeric` takes the digits exactly;
// SQLite keeps a whole number exactly up to 64 bits (as a bigint past a double), and a fraction as a double. Past
// that, SQLite has no exact number: NULL there (the value is in `_erp_record`, as written), never a rounded one.
const numberValue = (token: string, kind: "integer" | "number", dialect: Dialect): Value => {
  if (!/^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/.test(token)) return null
  const whole = /^-?(?:0|[1-9]\d*)$/.test(token)
  if (kind === "integer" && !whole) {
    const value = Number(token)
    if (!Number.isInteger(value)) return null
    if (Number.isSafeInteger(value)) return dialect === "pg" ? String(value) : value
    return null
  }
  if (dialect === "pg") return token
  if (whole) {
    const value = Number(token)
    if (Number.isSafeInteger(value)) return value
    const big = BigInt(token)
    return big <= INT64_MAX && big >= INT64_MIN ? big : null
  }
  const value = Number(token)
  return Number.isFinite(value) && kind === "number" ? value : null
}

const FLAGS: Readonly<Record<string, boolean>> = {
  "true": true,
  "false": false,
  "1": true,
  "0": false,
  "\"1\"": true,
  "\"0\"": false,
  "\"true\"": true,
  "\"false\"": false
}

/**
 * A field's value for its column, from its text as the server wrote it (`JsonText.Member.json`; `undefined` when the
 * record has no such field): `NULL` for an absent field or JSON `null`, and `NULL` for a value the column cannot hold
 * as written (a word in a column of numbers; a number past 64 bits in SQLite). Text columns take a number or flag as
 * its text; JSON columns (and SQLite's text ones for an object or array) the compact JSON.
 *
 * @example
 * ```ts
 * import { SyncTable } from "@erp-client/kernel"
 *
 * console.log(SyncTable.valueOf("12345678901234567890", "integer", "pg")) // => 12345678901234567890
 * console.log(SyncTable.valueOf("1234567890123456789", "integer", "sqlite")) // => 1234567890123456789n
 * console.log(SyncTable.valueOf("12345678901234567890", "integer", "sqlite")) // => null
 * console.log(SyncTable.valueOf('"1"', "boolean", "sqlite"), SyncTable.valueOf('"Kovács"', "text", "pg")) // => 1 Kovács
 * ```
 *
 * @since 0.1.0
 * @category Values
 */
export const valueOf = (json: string | undefined, kind: Kind, dialect: Dialect): Value => {
  if (json === undefined || json === "null") return null
  switch (kind) {
    case "integer":
    case "number": {
      const token = json.startsWith("\"") ? stringOf(json) : json
      return token === undefined ? null : numberValue(token.trim(), kind, dialect)
    }
    case "boolean": {
      const flag = FLAGS[json]
      if (flag === undefined) return null
      return dialect === "pg" ? flag : flag ? 1 : 0
    }
    case "text":
      return json.startsWith("\"") ? stringOf(json) ?? null : json
    case "json":
      return json
  }
}

const stringOf = (json: string): string | undefined => {
  try {
    const value: unknown = JSON.parse(json)
    return typeof value === "string" ? value : undefined
  } catch {
    return undefined
  }
}

/**
 * One record as a table keeps it: its key, the values of its field columns (in `columns`' order), its exact text and
 * its digest.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Row {
  readonly key: string
  readonly values: ReadonlyArray<Value>
  readonly json: string
  readonly digest: string
}

/**
 * The row of a record, from its id (`Changes.idOf`'s) and its exact text.
 *
 * @example
 * ```ts
 * import { SyncTable } from "@erp-client/kernel"
 *
 * const row = SyncTable.rowOf(7, '{"id":7,"company_name":"Kovács Kft.","credit_limit":1.10}', [
 *   { field: "id", kind: "integer" },
 *   { field: "company_name", kind: "text" },
 *   { field: "tax_number", kind: "text" }
 * ], "sqlite")
 * console.log(row.key, row.values) // => 7 [ 7, 'Kovács Kft.', null ]
 * ```
 *
 * @since 0.1.0
 * @category Values
 */
export const rowOf = (id: Changes.Id, json: string, columns: ReadonlyArray<Column>, dialect: Dialect): Row => {
  const members = JsonText.members(json)
  const byKey = new Map<string, string>()
  // JSON.parse keeps the last of a repeated key: so does this.
  if (members.ok) { for (const member of members.value) byKey.set(member.key, member.json) }
  return {
    key: Changes.idJson(id),
    values: columns.map((column) => valueOf(byKey.get(column.field), column.kind, dialect)),
    json,
    digest: Changes.digestHex(json)
  }
}

/**
 * A statement and the values it binds, in order.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Statement {
  readonly sql: string
  readonly params: ReadonlyArray<Value>
}

const placeholders = (dialect: Dialect) => {
  let n = 0
  return (cast?: string): string => {
    n++
    return dialect === "pg" ? `$${n}${cast === undefined ? "" : `::${cast}`}` : "?"
  }
}

/**
 * The most rows one statement writes: the values it binds stay under SQLite's limit of 32,766 and PostgreSQL's of
 * 65,535.
 *
 * @example
 * ```ts
 * import { SyncTable } from "@erp-client/kernel"
 *
 * console.log(SyncTable.rowsPerStatement(4), SyncTable.rowsPerStatement(500)) // => 500 50
 * ```
 *
 * @since 0.1.0
 * @category Statements
 */
export const rowsPerStatement = (columns: number): number =>
  Math.max(1, Math.min(500, Math.floor(30_000 / (columns + 8))))

const fieldCast = (kind: Kind): string | undefined =>
  kind === "json" ? "jsonb" : kind === "boolean" ? "boolean" : kind === "text" ? undefined : "numeric"

/**
 * The statement that writes `rows` at `at` (ISO 8601): in merge mode an insert that updates the row of a key already
 * there (keeping when it was first seen); in history mode an insert of a new current version of each.
 *
 * @example
 * ```ts
 * import { SyncTable } from "@erp-client/kernel"
 *
 * const shape = { table: "partners", dialect: "pg", mode: "merge", columns: [{ field: "id", kind: "integer" }] } as const
 * const row = SyncTable.rowOf(7, '{"id":7}', shape.columns, "pg")
 * const statement = SyncTable.writeStatement(shape, [row], "2026-11-29T05:00:00.000Z")
 * console.log(statement.params) // => [ '7', '7', '{"id":7}', '{"id":7}', '1d4cdd4c0c96fde6', '2026-11-29T05:00:00.000Z', '2026-11-29T05:00:00.000Z' ]
 * ```
 *
 * @since 0.1.0
 * @category Statements
 */
export const writeStatement = (shape: Shape, rows: ReadonlyArray<Row>, at: string): Statement => {
  const pg = shape.dialect === "pg"
  const next = placeholders(shape.dialect)
  const names = [
    "_erp_key",
    ...shape.columns.map((column) => column.field),
    "_erp_record",
    ...(pg ? ["_erp_record_text"] : []),
    "_erp_digest",
    ...(shape.mode === "history" ? ["_erp_valid_from"] : ["_erp_first_seen", "_erp_last_changed"])
  ]
  const time = pg ? "timestamptz" : undefined
  const params: Array<Value> = []
  const tuples: Array<string> = []
  for (const row of rows) {
    const slots = [next()]
    params.push(row.key)
    shape.columns.forEach((column, i) => {
      slots.push(next(pg ? fieldCast(column.kind) : undefined))
      params.push(row.values[i])
    })
    slots.push(next(pg ? "jsonb" : undefined))
    params.push(row.json)
    if (pg) {
      slots.push(next())
      params.push(row.json)
    }
    slots.push(next())
    params.push(row.digest)
    if (shape.mode === "history") {
      slots.push(next(time))
      params.push(at)
    } else {
      slots.push(next(time), next(time))
      params.push(at, at)
    }
    tuples.push(`(${slots.join(", ")})`)
  }
  const insert = `INSERT INTO ${quote(shape.table)} (${names.map(quote).join(", ")}) VALUES ${tuples.join(", ")}`
  if (shape.mode === "history") return { sql: insert, params }
  const updated = names.filter((name) => name !== "_erp_key" && name !== "_erp_first_seen")
  return {
    sql: `${insert} ON CONFLICT ("_erp_key") DO UPDATE SET ${
      updated.map((name) => `${quote(name)} = excluded.${quote(name)}`).join(", ")
    }`,
    params
  }
}

/**
 * The statement that ends the records of `keys` at `at`: in merge mode it deletes their rows, in history mode it
 * closes their current versions (`_erp_valid_to`).
 *
 * @example
 * ```ts
 * import { SyncTable } from "@erp-client/kernel"
 *
 * const shape = { table: "partners", dialect: "sqlite", mode: "merge", columns: [] } as const
 * console.log(SyncTable.endStatement(shape, ["7", "8"], "2026-11-29T05:00:00.000Z").sql)
 * // => DELETE FROM "partners" WHERE "_erp_key" IN (?, ?)
 * ```
 *
 * @since 0.1.0
 * @category Statements
 */
export const endStatement = (shape: Shape, keys: ReadonlyArray<string>, at: string): Statement => {
  const next = placeholders(shape.dialect)
  if (shape.mode === "merge") {
    const list = keys.map(() => next()).join(", ")
    return { sql: `DELETE FROM ${quote(shape.table)} WHERE "_erp_key" IN (${list})`, params: keys }
  }
  const time = next(shape.dialect === "pg" ? "timestamptz" : undefined)
  const list = keys.map(() => next()).join(", ")
  return {
    sql: `UPDATE ${quote(shape.table)} SET "_erp_valid_to" = ${time} ` +
      `WHERE "_erp_valid_to" IS NULL AND "_erp_key" IN (${list})`,
    params: [at, ...keys]
  }
}

/**
 * The statement that reads the next `limit` keys and digests after `after` (the state before a run, read a part at a
 * time in key order): in history mode, of the current versions.
 *
 * @example
 * ```ts
 * import { SyncTable } from "@erp-client/kernel"
 *
 * const shape = { table: "partners", dialect: "pg", mode: "history", columns: [] } as const
 * console.log(SyncTable.stateStatement(shape, "", 10000).sql)
 * // => SELECT "_erp_key", "_erp_digest" FROM "partners" WHERE "_erp_key" > $1 AND "_erp_valid_to" IS NULL ORDER BY "_erp_key" LIMIT 10000
 * ```
 *
 * @since 0.1.0
 * @category Statements
 */
export const stateStatement = (shape: Shape, after: string, limit: number): Statement => {
  const current = shape.mode === "history" ? ` AND "_erp_valid_to" IS NULL` : ""
  // The key's own collation for the order and the comparison alike: the next part starts where the last ended, and
  // the primary key's index serves both (another collation would sort the whole table for every part).
  const slot = placeholders(shape.dialect)()
  return {
    sql: `SELECT "_erp_key", "_erp_digest" FROM ${quote(shape.table)} WHERE "_erp_key" > ${slot}${current} ` +
      `ORDER BY "_erp_key" LIMIT ${Math.floor(limit)}`,
    params: [after]
  }
}

/**
 * What a table's sync records of itself (a row of the state table): its mode, its list, and its last complete run.
 *
 * @since 0.1.0
 * @category Models
 */
export interface StateRow {
  readonly mode: Mode
  /** The list it is of: `Changes.Source` as JSON. */
  readonly source: string
  readonly runs: number
  readonly lastRunAt: string | undefined
}

/**
 * The statement that takes a table's state row first in a run (made if it is not there): in SQLite this first write
 * takes the database's write lock, held until the run commits or rolls back.
 *
 * @example
 * ```ts
 * import { SyncTable } from "@erp-client/kernel"
 *
 * console.log(SyncTable.claimStatement("partners", "merge", "{}", "sqlite").sql)
 * // => INSERT INTO "erp_sync_state" ("table_name", "mode", "source", "runs", "last_run_at", "added", "changed", "removed", "unchanged") VALUES (?, ?, ?, 0, NULL, 0, 0, 0, 0) ON CONFLICT ("table_name") DO UPDATE SET "runs" = "erp_sync_state"."runs"
 * ```
 *
 * @since 0.1.0
 * @category Statements
 */
export const claimStatement = (table: string, mode: Mode, source: string, dialect: Dialect): Statement => {
  const next = placeholders(dialect)
  return {
    sql: `INSERT INTO ${quote(STATE_TABLE)} ("table_name", "mode", "source", "runs", "last_run_at", "added", ` +
      `"changed", "removed", "unchanged") VALUES (${next()}, ${next()}, ${next()}, 0, NULL, 0, 0, 0, 0) ` +
      `ON CONFLICT ("table_name") DO UPDATE SET "runs" = ${quote(STATE_TABLE)}."runs"`,
    params: [table, mode, source]
  }
}

/**
 * The statement that reads a table's state row.
 *
 * @example
 * ```ts
 * import { SyncTable } from "@erp-client/kernel"
 *
 * console.log(SyncTable.readStatement("partners", "pg").sql)
 * // => SELECT "mode", "source", "runs", "last_run_at" FROM "erp_sync_state" WHERE "table_name" = $1
 * ```
 *
 * @since 0.1.0
 * @category Statements
 */
export const readStatement = (table: string, dialect: Dialect): Statement => ({
  sql: `SELECT "mode", "source", "runs", "last_run_at" FROM ${quote(STATE_TABLE)} WHERE "table_name" = ${
    placeholders(dialect)()
  }`,
  params: [table]
})

/**
 * The counts of a complete run.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Counts {
  readonly added: number
  readonly changed: number
  readonly removed: number
  readonly unchanged: number
}

/**
 * The statement that records a complete run in the state row, in the run's transaction: its list, its time, its
 * counts.
 *
 * @example
 * ```ts
 * import { SyncTable } from "@erp-client/kernel"
 *
 * const statement = SyncTable.finishStatement("partners", "{}", "2026-11-29T05:00:00.000Z", { added: 1, changed: 2, removed: 0, unchanged: 9 }, "sqlite")
 * console.log(statement.params) // => [ '{}', '2026-11-29T05:00:00.000Z', 1, 2, 0, 9, 'partners' ]
 * ```
 *
 * @since 0.1.0
 * @category Statements
 */
export const finishStatement = (
  table: string,
  source: string,
  at: string,
  counts: Counts,
  dialect: Dialect
): Statement => {
  const next = placeholders(dialect)
  return {
    sql: `UPDATE ${quote(STATE_TABLE)} SET "source" = ${next()}, "runs" = "runs" + 1, "last_run_at" = ${next()}, ` +
      `"added" = ${next()}, "changed" = ${next()}, "removed" = ${next()}, "unchanged" = ${next()} ` +
      `WHERE "table_name" = ${next()}`,
    params: [source, at, counts.added, counts.changed, counts.removed, counts.unchanged, table]
  }
}

/**
 * The statement that reads a table's columns' names (to add those a run needs and the table lacks).
 *
 * @example
 * ```ts
 * import { SyncTable } from "@erp-client/kernel"
 *
 * console.log(SyncTable.columnsStatement("partners", "sqlite").sql) // => SELECT "name" FROM pragma_table_info(?)
 * ```
 *
 * @since 0.1.0
 * @category Statements
 */
export const columnsStatement = (table: string, dialect: Dialect): Statement =>
  dialect === "pg"
    ? {
      sql: `SELECT column_name AS "name" FROM information_schema.columns WHERE table_schema = current_schema() ` +
        `AND table_name = $1`,
      params: [table]
    }
    : { sql: `SELECT "name" FROM pragma_table_info(?)`, params: [table] }

/**
 * The statement that reads the next `limit` rows' keys and exact texts after `after`: what fills a column added to a
 * table that already has rows (in history mode, the current versions: an ended one keeps its value in its record).
 *
 * @example
 * ```ts
 * import { SyncTable } from "@erp-client/kernel"
 *
 * console.log(SyncTable.recordsStatement({ table: "partners", dialect: "sqlite", mode: "merge", columns: [] }, "", 500).sql)
 * // => SELECT "_erp_key", "_erp_record" AS "json" FROM "partners" WHERE "_erp_key" > ? ORDER BY "_erp_key" LIMIT 500
 * ```
 *
 * @since 0.1.0
 * @category Statements
 */
export const recordsStatement = (shape: Shape, after: string, limit: number): Statement => {
  const text = shape.dialect === "pg" ? `"_erp_record_text"` : `"_erp_record"`
  const history = shape.mode === "history"
  return {
    sql: `SELECT "_erp_key", ${text} AS "json"${history ? `, "_erp_valid_from"` : ""} FROM ${
      quote(shape.table)
    } WHERE "_erp_key" > ${placeholders(shape.dialect)()}${
      history ? ` AND "_erp_valid_to" IS NULL` : ""
    } ORDER BY "_erp_key" LIMIT ${Math.floor(limit)}`,
    params: [after]
  }
}

/**
 * One row's values for the added columns: its key (and in history mode its version) and the values, in the columns'
 * order.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Fill {
  readonly key: string
  readonly validFrom?: string | undefined
  readonly values: ReadonlyArray<Value>
}

/**
 * The statement that sets the added `columns` of `fills`' rows (by key, and in history mode by version) from their
 * records: one `UPDATE … FROM (VALUES …)` for them all (SQLite 3.33 and later, and PostgreSQL).
 *
 * @example
 * ```ts
 * import { SyncTable } from "@erp-client/kernel"
 *
 * const shape = { table: "partners", dialect: "pg", mode: "merge", columns: [] } as const
 * console.log(SyncTable.fillStatement(shape, [{ field: "tier", kind: "text" }], [{ key: "7", values: ["gold"] }]).sql)
 * // => UPDATE "partners" AS t SET "tier" = v."c0" FROM (VALUES ($1, $2)) AS v("k", "c0") WHERE t."_erp_key" = v."k"
 * ```
 *
 * @since 0.1.0
 * @category Statements
 */
export const fillStatement = (
  shape: Shape,
  columns: ReadonlyArray<Column>,
  fills: ReadonlyArray<Fill>
): Statement => {
  const next = placeholders(shape.dialect)
  const pg = shape.dialect === "pg"
  const history = shape.mode === "history"
  const names = ["k", ...(history ? ["vf"] : []), ...columns.map((_, i) => `c${i}`)]
  const params: Array<Value> = []
  const tuples = fills.map((fill) => {
    const slots = [next()]
    params.push(fill.key)
    if (history) {
      slots.push(next(pg ? "timestamptz" : undefined))
      params.push(fill.validFrom ?? null)
    }
    columns.forEach((column, i) => {
      slots.push(next(pg ? fieldCast(column.kind) : undefined))
      params.push(fill.values[i] ?? null)
    })
    return `(${slots.join(", ")})`
  })
  // SQLite names a VALUES list's columns column1, column2, …; PostgreSQL takes them from the alias.
  const ref = (i: number) => pg ? `v.${quote(names[i])}` : `v.column${i + 1}`
  const sets = columns.map((column, i) => `${quote(column.field)} = ${ref(i + (history ? 2 : 1))}`)
  const where = `t."_erp_key" = ${ref(0)}${history ? ` AND t."_erp_valid_from" = ${ref(1)}` : ""}`
  return {
    sql: `UPDATE ${quote(shape.table)} AS t SET ${sets.join(", ")} FROM (VALUES ${tuples.join(", ")}) AS v${
      pg ? `(${names.map(quote).join(", ")})` : ""
    } WHERE ${where}`,
    params
  }
}

/**
 * The PostgreSQL advisory lock of a table's sync (held for the run's transaction): a 64-bit key from the table's name,
 * as decimal text.
 *
 * @example
 * ```ts
 * import { SyncTable } from "@erp-client/kernel"
 *
 * console.log(SyncTable.lockKey("partners") === SyncTable.lockKey("partners"), SyncTable.lockKey("partners") === SyncTable.lockKey("invoices"))
 * // => true false
 * ```
 *
 * @since 0.1.0
 * @category Locks
 */
export const lockKey = (table: string): string =>
  BigInt.asIntN(64, BigInt(`0x${Changes.digestHex(`erp-sync:${table}`)}`))
    .toString()

/**
 * The line a run that finds another sync of the same table at work ends with.
 *
 * @example
 * ```ts
 * import { SyncTable } from "@erp-client/kernel"
 *
 * console.log(SyncTable.busyText("partners", "pg"))
 * // => another sync of the table partners is running (it holds the table's advisory lock): this one changed nothing; run it again once that one ends
 * ```
 *
 * @since 0.1.0
 * @category Texts
 */
export const busyText = (table: string, dialect: Dialect): string =>
  `another sync of the table ${table} is running (it holds ${
    dialect === "pg" ? "the table's advisory lock" : "the database's write lock"
  }): this one changed nothing; run it again once that one ends`

/**
 * The line a run ends with when the table was made for another list or in another mode (`differences`, one phrase
 * each).
 *
 * @example
 * ```ts
 * import { SyncTable } from "@erp-client/kernel"
 *
 * console.log(SyncTable.mismatchText("partners", ["the mode: merge in the table, history now"]))
 * // => the table partners was synced from another list (the mode: merge in the table, history now): it was left as it was; sync into another table, or drop this one to start over
 * ```
 *
 * @since 0.1.0
 * @category Texts
 */
export const mismatchText = (table: string, differences: ReadonlyArray<string>): string =>
  `the table ${table} was synced from another list (${
    differences.join("; ")
  }): it was left as it was; sync into another table, or drop this one to start over`

/**
 * What differs between the table's state row and this run: its mode and its list (`Changes.sourceDifferences`).
 *
 * @example
 * ```ts
 * import { Changes, SyncTable } from "@erp-client/kernel"
 *
 * const source = JSON.stringify(Changes.sourceOf({ baseUrl: "http://127.0.0.1:8080/", endpoint: "partner/list", idField: "id" }))
 * console.log(SyncTable.differences({ mode: "merge", source, runs: 1, lastRunAt: undefined }, "history", source))
 * // => [ 'the mode: merge in the table, history now' ]
 * ```
 *
 * @since 0.1.0
 * @category Decisions
 */
export const differences = (stored: StateRow, mode: Mode, source: string): ReadonlyArray<string> => {
  const out: Array<string> = []
  if (stored.mode !== mode) out.push(`the mode: ${stored.mode} in the table, ${mode} now`)
  if (stored.source === source) return out
  const before = parseSource(stored.source)
  const now = parseSource(source)
  if (before === undefined || now === undefined) out.push("the list it was made for cannot be read")
  else {
    for (const difference of Changes.sourceDifferences(now, before)) {
      out.push(difference.replace(" in the state, ", " in the table, "))
    }
  }
  return out
}

const parseSource = (text: string): Changes.Source | undefined => {
  try {
    const value = JSON.parse(text) as Changes.Source
    return typeof value === "object" && value !== null && typeof value.server === "string" ? value : undefined
  } catch {
    return undefined
  }
}

/**
 * A run's time: now, or just after the last run's when the clock says otherwise (history's versions of one key need
 * distinct times), as ISO 8601.
 *
 * @example
 * ```ts
 * import { SyncTable } from "@erp-client/kernel"
 *
 * console.log(SyncTable.runTime(Date.parse("2026-11-29T05:00:00.000Z"), "2026-11-29T05:00:00.000Z")) // => 2026-11-29T05:00:00.001Z
 * ```
 *
 * @since 0.1.0
 * @category Decisions
 */
export const runTime = (now: number, lastRunAt: string | undefined): string => {
  const last = lastRunAt === undefined ? Number.NaN : Date.parse(lastRunAt)
  return new Date(Number.isNaN(last) || now > last ? now : last + 1).toISOString()
}

/**
 * The summary line of a run.
 *
 * @example
 * ```ts
 * import { SyncTable } from "@erp-client/kernel"
 *
 * console.log(SyncTable.summaryText({ table: "partners", added: 1, changed: 1, removed: 1, unchanged: 998, rows: 3, millis: 1234 }))
 * // => 1 added, 1 changed, 1 removed, 998 unchanged; 3 rows written into partners in 1.2 s
 * ```
 *
 * @since 0.1.0
 * @category Texts
 */
export const summaryText = (
  summary: Counts & { readonly table: string; readonly rows: number; readonly millis: number }
) =>
  `${summary.added.toLocaleString("en-US")} added, ${summary.changed.toLocaleString("en-US")} changed, ${
    summary.removed.toLocaleString("en-US")
  } removed, ${summary.unchanged.toLocaleString("en-US")} unchanged; ${summary.rows.toLocaleString("en-US")} row${
    summary.rows === 1 ? "" : "s"
  } written into ${summary.table} in ${(summary.millis / 1000).toFixed(1)} s`
