// Per edition: the SQL client is `@effect/sql`'s in Effect 3 and `effect/sql`'s in Effect 4.
/**
 * The Effect 3 edition's SQL client, for `Sync` alone: `@effect/sql` is an optional peer dependency, so nothing else
 * in the package imports this (an application that does not sync installs no SQL package). Its twin of the same names
 * is `packages/effect4-streams/src/internal/sql.ts`.
 */
import * as SqlClientModule from "@effect/sql/SqlClient"
import type * as SqlErrorModule from "@effect/sql/SqlError"

/** The SQL client service. */
export const SqlClient = SqlClientModule.SqlClient

/** The SQL client. */
export type SqlClient = SqlClientModule.SqlClient

/** What a statement fails with. */
export type SqlError = SqlErrorModule.SqlError
