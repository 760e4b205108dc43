/**
 * Where `erp sync` writes, as a URL (`--to`, `ERP_SYNC_URL`): `sqlite:PATH` or `postgres://…`, read into a target,
 * and said with its password replaced wherever it is named (a summary, an error, a log), since the URL may hold one.
 *
 * @since 0.1.0
 */

/**
 * A database `erp sync` writes into: an SQLite file, or a PostgreSQL server by its connection URL.
 *
 * @since 0.1.0
 * @category Models
 */
export type Target =
  | { readonly _tag: "sqlite"; readonly filename: string }
  | { readonly _tag: "pg"; readonly url: string }

/**
 * The target when none is given: the file `erp.sqlite` in the working directory.
 *
 * @since 0.1.0
 * @category Constants
 */
export const DEFAULT_URL = "sqlite:./erp.sqlite"

/**
 * The two forms a target is written in, as a usage error says them.
 *
 * @since 0.1.0
 * @category Constants
 */
export const FORMS = "sqlite:PATH or postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE"

// The userinfo of `scheme://userinfo@host…`: everything up to the last `@` before the query, so that a password
// written with a raw `@`, `/` or `:` in it is still all of it.
const AUTHORITY = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^?#]*)@/
const QUERY_PASSWORD = /([?&](?:password|sslpassword)=)[^&#]*/gi

/**
 * The URL with its password replaced by `***`, in the userinfo (`postgres://user:***@host/db`) and in a
 * `password=` parameter; the rest as written. A URL without a password is returned as it is.
 *
 * @example
 * ```ts
 * import { SyncTarget } from "@erp-client/kernel"
 *
 * console.log(SyncTarget.redact("postgres://erp:s3cr@t@db.example.com:5432/shop"))
 * // => postgres://erp:***@db.example.com:5432/shop
 * console.log(SyncTarget.redact("postgresql://db/shop?user=erp&password=s3cret")) // => postgresql://db/shop?user=erp&password=***
 * console.log(SyncTarget.redact("sqlite:./erp.sqlite")) // => sqlite:./erp.sqlite
 * ```
 *
 * @since 0.1.0
 * @category Texts
 */
export const redact = (url: string): string =>
  url.replace(AUTHORITY, (whole, scheme: string, userinfo: string) => {
    const colon = userinfo.indexOf(":")
    return colon < 0 ? whole : `${scheme}${userinfo.slice(0, colon)}:***@`
  }).replace(QUERY_PASSWORD, "$1***")

/**
 * The target a URL names: `sqlite:PATH` (`sqlite:///abs/path` and `sqlite://rel/path` too), or a PostgreSQL
 * connection URL (`postgres://` or `postgresql://`, kept whole for the driver); `undefined` for anything else, an
 * empty path included.
 *
 * @example
 * ```ts
 * import { SyncTarget } from "@erp-client/kernel"
 *
 * console.log(SyncTarget.parse("sqlite:./erp.sqlite")) // => { _tag: 'sqlite', filename: './erp.sqlite' }
 * console.log(SyncTarget.parse("postgres://erp@localhost/shop")?._tag) // => pg
 * console.log(SyncTarget.parse("mysql://erp@localhost/shop")) // => undefined
 * ```
 *
 * @since 0.1.0
 * @category Parsing
 */
export const parse = (url: string): Target | undefined => {
  const text = url.trim()
  if (/^sqlite:/i.test(text)) {
    const rest = text.slice("sqlite:".length)
    const filename = rest.startsWith("//") ? rest.slice(2) : rest
    return filename === "" ? undefined : { _tag: "sqlite", filename }
  }
  if (/^postgres(ql)?:\/\/./i.test(text)) return { _tag: "pg", url: text }
  return undefined
}

/**
 * A target as it is named in what is printed: `sqlite:PATH`, or the PostgreSQL URL with its password replaced.
 *
 * @example
 * ```ts
 * import { SyncTarget } from "@erp-client/kernel"
 *
 * console.log(SyncTarget.describe({ _tag: "pg", url: "postgres://erp:pw@localhost:5432/shop" }))
 * // => postgres://erp:***@localhost:5432/shop
 * console.log(SyncTarget.describe({ _tag: "sqlite", filename: "erp.sqlite" })) // => sqlite:erp.sqlite
 * ```
 *
 * @since 0.1.0
 * @category Texts
 */
export const describe = (target: Target): string =>
  target._tag === "sqlite" ? `sqlite:${target.filename}` : redact(target.url)
