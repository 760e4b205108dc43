// Per edition: the SQL client is `@effect/sql`'s in Effect 3 and `effect/sql`'s in Effect 4.
/**
 * The Effect 4 edition's SQL client, for `Sync` alone (`effect/sql`, part of `effect` 4). Its twin of the same names
 * is `packages/streams/src/internal/sql.ts`, where `@effect/sql` is an optional peer dependency.
 */
import * as SqlClientModule from "effect/sql/SqlClient"
import type * as SqlErrorModule from "effect/sql/SqlError"

/** The SQL client service. */
export const SqlClient = SqlClientModule.SqlClient

/** The SQL client. */
export type SqlClient = SqlClientModule.SqlClient

/** What a statement fails with. */
export type SqlError = SqlErrorModule.SqlError
