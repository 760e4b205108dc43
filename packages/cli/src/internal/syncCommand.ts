/**
 * `erp <resource> sync` (also `erp sync <resource>`) and `erp api sync ENDPOINT --key FIELD`: a list kept in a table of
 * an SQLite file or a PostgreSQL database (`--to`, `ERP_SYNC_URL`), exactly, by `Sync.run` (docs/sync.md): one
 * transaction a run, only what changed written. The target's password is never printed: it is named by
 * `SyncTarget.describe` everywhere.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as ErpClient from "@erp-client/client/ErpClient"
import * as KernelChanges from "@erp-client/kernel/Changes"
import * as Environment from "@erp-client/kernel/Environment"
import * as SyncTable from "@erp-client/kernel/SyncTable"
import * as SyncTarget from "@erp-client/kernel/SyncTarget"
import type * as Changes from "@erp-client/streams/Changes"
import * as Resource from "@erp-client/streams/Resource"
import type * as Sync from "@erp-client/streams/Sync"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Redacted from "effect/Redacted"
import * as Progress from "../Progress.js"
import { AnyRecord, Declared, note, parsePairs, redis, repeatable, verbose, withClient } from "./common.js"
import { UsageError } from "./errors.js"
import { listOptions, pageSizeOf, parseWhere } from "./listOptions.js"
import { filterFlags } from "./resourceList.js"

const KINDS: ReadonlyArray<SyncTable.Kind> = ["integer", "number", "text", "boolean", "json"]

const syncOptions = {
  to: Options.redacted("to").pipe(
    Options.withPseudoName("URL"),
    Options.withDescription(
      "The database: sqlite:PATH (a file, made if missing) or postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE " +
        `(postgresql:// too). Default: ${Environment.sync.url}, else ${SyncTarget.DEFAULT_URL}. The password is ` +
        "never printed (shown as ***)."
    ),
    Options.optional
  ),
  table: Options.text("table").pipe(
    Options.withPseudoName("NAME"),
    Options.withDescription(
      "The table (a letter or _, then letters, digits or _; at most 63). Default: the resource's name, or the " +
        "endpoint's path with _ for / (invoice/list: invoice_list)."
    ),
    Options.optional
  ),
  history: Options.boolean("history").pipe(
    Options.withDescription(
      "Keep every version of each record (_erp_valid_from, _erp_valid_to; the current one has no _erp_valid_to) " +
        "instead of one row per record. A table is synced in one mode only."
    )
  ),
  column: Options.text("column").pipe(
    Options.withPseudoName("FIELD[:KIND]"),
    Options.withDescription(
      `A column for a field the resource does not declare, of KIND ${KINDS.join(", ")} (default text): added to ` +
        "the table if it lacks it and filled from the records already there. Every field is in _erp_record whether " +
        "or not it has a column."
    ),
    repeatable
  ),
  where: listOptions.where,
  noCheckWhere: listOptions.noCheckWhere,
  pageSize: listOptions.pageSize,
  concurrency: listOptions.concurrency,
  allowDuplicateIds: Options.boolean("allow-duplicate-ids").pipe(
    Options.withDescription(
      "Write the run even when records have the id of another, distinct record: the first of each id is kept, the " +
        "others are named on stderr. Without it such a run fails and leaves the table as it was."
    )
  ),
  allowRemovals: Options.boolean("allow-removals").pipe(
    Options.withDescription(
      "Write a run that removes more than half of the table's records (without it, such a run fails and leaves the " +
        "table as it was: a list answering empty or cut short looks so)."
    )
  ),
  quiet: Options.boolean("quiet").pipe(
    Options.withDescription(
      "No summary line at the end, and no progress line on a terminal; warnings and failures are still said."
    )
  ),
  redis,
  verbose
}

interface SyncArgs {
  readonly to: Option.Option<Redacted.Redacted>
  readonly table: Option.Option<string>
  readonly history: boolean
  readonly column: ReadonlyArray<string>
  readonly where: ReadonlyArray<string>
  readonly noCheckWhere: boolean
  readonly pageSize: string
  readonly concurrency: number
  readonly allowDuplicateIds: boolean
  readonly allowRemovals: boolean
  readonly quiet: boolean
  readonly redis: Option.Option<Redacted.Redacted>
  readonly verbose: boolean
}

/** A sync refused or failed for a reason of its own (not the server's): its line, exit 1. */
class SyncFailed extends Data.TaggedError("SyncFailed")<{ readonly message: string }> {}

const checkArgs = (args: SyncArgs): Either.Either<ReadonlyArray<SyncTable.Column>, UsageError> => {
  const usage = (reason: string) => Either.left(new UsageError({ reason }))
  if (pageSizeOf(args) === undefined) return usage("--page-size must be auto or a whole number from 1 to 10000")
  if (args.concurrency < 1 || args.concurrency > 64) return usage("--concurrency must be from 1 to 64")
  if (Option.isSome(args.table) && !SyncTable.isTableName(args.table.value)) {
    return usage(
      `--table ${JSON.stringify(args.table.value)}: a letter or _, then letters, digits or _ (at most 63), not ` +
        SyncTable.STATE_TABLE
    )
  }
  const columns: Array<SyncTable.Column> = []
  for (const item of args.column) {
    const colon = item.lastIndexOf(":")
    const [field, kind] = colon < 0 ? [item, "text"] : [item.slice(0, colon), item.slice(colon + 1)]
    if (field === "" || !(KINDS as ReadonlyArray<string>).includes(kind)) {
      return usage(`--column ${JSON.stringify(item)}: expected FIELD or FIELD:KIND, KIND one of ${KINDS.join(", ")}`)
    }
    columns.push({ field, kind: kind as SyncTable.Kind })
  }
  return Either.right(columns)
}

/** The database to write into: `--to`, else ERP_SYNC_URL (unless empty), else the SQLite file `./erp.sqlite`. */
const targetOf = (flag: Option.Option<Redacted.Redacted>) =>
  Effect.gen(function*() {
    const fromEnv = yield* Config.option(Config.redacted(Environment.sync.url))
    const [given, source] = Option.isSome(flag)
      ? [Redacted.value(flag.value), "--to"]
      : Option.isSome(fromEnv) && Redacted.value(fromEnv.value).trim() !== ""
      ? [Redacted.value(fromEnv.value), Environment.sync.url]
      : [SyncTarget.DEFAULT_URL, "--to"]
    const target = SyncTarget.parse(given)
    if (target === undefined) {
      return yield* new UsageError({
        reason: `${source} ${SyncTarget.redact(given)}: expected ${SyncTarget.FORMS} (postgresql:// too)`
      })
    }
    return target
  })

// A driver's message and those of its causes, as one phrase: `PgClient: Failed to connect: connect ECONNREFUSED …`.
const messagesOf = (error: unknown): string => {
  const texts: Array<string> = []
  let current: unknown = error
  for (let depth = 0; depth < 4 && Predicate.isObject(current); depth++) {
    const message = (current as { message?: unknown }).message
    if (typeof message === "string" && message !== "" && !texts.includes(message)) texts.push(message)
    current = (current as { cause?: unknown }).cause
  }
  return texts.join(": ")
}

// A password held in the URL never reaches a line, whatever a driver put in its message.
const scrub = (target: SyncTarget.Target, text: string): string => {
  if (target._tag !== "pg") return text
  let out = text.split(target.url).join(SyncTarget.describe(target))
  const password = /^[^:]+:\/\/([^?#]*)@/.exec(target.url)?.[1]
  const colon = password?.indexOf(":") ?? -1
  const secret = colon < 0 ? "" : password!.slice(colon + 1)
  if (secret !== "") {
    out = out.split(secret).join("***")
    try {
      const decoded = decodeURIComponent(secret)
      if (decoded !== "") out = out.split(decoded).join("***")
    } catch {
      // Not percent-encoded text: the raw form was replaced above.
    }
  }
  return out
}

// The SQL client of the target, its module loaded only by a sync: no other command reads the drivers.
const sqlLayer = (target: SyncTarget.Target) =>
  target._tag === "pg"
    ? Layer.unwrapEffect(
      Effect.map(
        Effect.promise(() => import("@effect/sql-pg/PgClient")),
        (Pg) => Pg.layer({ url: Redacted.make(target.url) })
      )
    )
    : Layer.unwrapEffect(
      Effect.map(
        Effect.promise(() => import("@erp-client/streams/SqliteNode")),
        (Sqlite) => Sqlite.layer({ filename: target.filename })
      )
    )

const syncWords = (keyFlag: boolean): KernelChanges.Words => ({
  startOver: "drop the table",
  otherState: "give another --table",
  allowDuplicateIds: "--allow-duplicate-ids",
  allowRemovals: "--allow-removals",
  idField: keyFlag ? "choose it with --key" : undefined
})

// A run refused for removing too many records, said of the table (its rows are the sync's state).
const removalsText = (
  where: string,
  refused: { readonly removed: number; readonly held: number; readonly maxRemovedRatio: number }
) =>
  `the run would remove ${refused.removed.toLocaleString("en-US")} of the ${refused.held.toLocaleString("en-US")} ` +
  `records of the table ${where}, more than ${
    refused.maxRemovedRatio === 0.5 ? "half" : `${Math.round(refused.maxRemovedRatio * 100)}%`
  }, as a list answering empty or cut short for a while would: nothing was written and the table was left as it was ` +
  "(--allow-removals writes them, if the list really lost them)"

/** One run: `resource`'s list (with `where`, `params`) into the table, its line on stderr. */
const runSync = (options: {
  readonly args: SyncArgs
  readonly resource: Resource.Any
  readonly columns: ReadonlyArray<SyncTable.Column>
  readonly where: Record<string, string>
  readonly params: ReadonlyArray<readonly [string, string]>
  /** Whether the user chose the id field (`--key`): a hint names the flag. */
  readonly keyFlag: boolean
}) =>
  Effect.gen(function*() {
    const { args, resource } = options
    const target = yield* targetOf(args.to)
    const named = SyncTarget.describe(target)
    const table = Option.getOrElse(args.table, () => SyncTable.defaultTable(resource.name))
    const where = `${table} (${named})`
    const words = syncWords(options.keyFlag)
    const progress = Progress.make({ enabled: process.stderr.isTTY === true && !args.quiet })
    const Sync = yield* Effect.promise(() => import("@erp-client/streams/Sync"))
    const started = yield* Clock.currentTimeMillis
    let connected = false
    const body = Effect.scoped(Effect.gen(function*() {
      connected = true
      const shown = yield* progress.start
      let read = 0
      const summary: Sync.Summary = yield* Sync.run(resource, {
        table,
        history: args.history,
        columns: options.columns,
        where: options.where,
        params: options.params,
        checkConditions: !args.noCheckWhere,
        pageSize: pageSizeOf(args),
        concurrency: args.concurrency,
        allowDuplicateIds: args.allowDuplicateIds,
        maxRemovedRatio: args.allowRemovals ? 1 : undefined,
        onProgress: (now) =>
          Effect.sync(() => {
            if (now.read > read) {
              shown.page(now.read - read)
              read = now.read
            }
          })
      })
      yield* shown.clear
      return summary
    }))
    const summary = yield* withClient(args, body.pipe(Effect.provide(sqlLayer(target))), progress.observer).pipe(
      Effect.mapError((error) => {
        const e = error as { readonly _tag?: unknown; readonly message?: unknown }
        switch (e._tag) {
          case "SyncBusy":
            return new SyncFailed({ message: SyncTable.busyText(where, (error as Sync.SyncBusy).dialect) })
          case "SyncMismatch":
            return new SyncFailed({ message: SyncTable.mismatchText(where, (error as Sync.SyncMismatch).differences) })
          case "SyncUnsupported":
            return new SyncFailed({ message: `${String(e.message)} (${named})` })
          case "DuplicateIds":
            return new SyncFailed({
              message: KernelChanges.duplicateIdsText(where, error as Changes.DuplicateIds, resource.idField, words)
            })
          case "TooManyRemovals":
            return new SyncFailed({
              message: removalsText(where, error as Changes.TooManyRemovals)
            })
          case "SqlError":
            return new SyncFailed({
              message: scrub(
                target,
                connected
                  ? `the database ${named} failed: ${messagesOf(error)}; the table ${table} was left as the last ` +
                    "complete run left it: run the same command again"
                  : `cannot connect to ${named}: ${messagesOf(error).replace(/^PgClient: [^:]*: /, "")}`
              )
            })
          case "SqliteUnavailable":
            return new SyncFailed({ message: `cannot open ${named}: ${messagesOf(error)}` })
          default:
            return error
        }
      }),
      // Anything else that ended a run begun (the server, the network, a signal): nothing of it was written.
      Effect.onExit((exit) =>
        Exit.isSuccess(exit) || !connected ||
          Option.exists(Cause.failureOption(exit.cause), (error) => error instanceof SyncFailed)
          ? Effect.void
          : note(`the table ${where} was left as the last complete run left it: run the same command again`)
      )
    )
    const millis = (yield* Clock.currentTimeMillis) - started
    if (summary.duplicates.records > 0) yield* note(KernelChanges.duplicatesNote(summary.duplicates))
    if (!args.quiet) {
      if (summary.addedColumns.length > 0) {
        yield* note(`columns added to ${table}: ${summary.addedColumns.join(", ")}`)
      }
      yield* note(SyncTable.summaryText({ ...summary, table: where, millis }))
    }
  })

/** What `<resource> sync` does, in one line. */
export const syncSummary = (resource: Resource.Any): string =>
  `Keep the ${resource.name} in a table of SQLite or PostgreSQL (--to URL), writing only what changed`

const description = (what: string) =>
  `${what}: the whole list read drift-safe, each record compared with the table's rows by a digest of its exact ` +
  "text; inserts, updates, and deletes once the end of the list is confirmed, the rows and the sync's state in one " +
  "transaction: a run that fails or is interrupted, even killed, leaves the table as the last complete run left it, " +
  "and the next brings it to the server's list. One column per declared field, the record as the server wrote it " +
  "(_erp_record; in PostgreSQL jsonb, its exact text in _erp_record_text), and the sync's own columns (_erp_…). Two " +
  "syncs of one table at once: the second changes nothing and fails (exit 1)."

/** `erp <resource> sync`, named `name` (`sync` under the resource, the resource's name under `erp sync`). */
export const syncCommand = <Name extends string>(resource: Resource.Any, name: Name) =>
  Command.make(
    name,
    {
      filters: filterFlags(resource),
      ...syncOptions
    },
    (args) =>
      Effect.gen(function*() {
        const columns = yield* checkArgs(args)
        let where: Record<string, unknown> = yield* parseWhere(resource.list, args.where)
        for (const filter of resource.filters) {
          if (args.filters[filter.flag] === true) where = { ...where, ...filter.where }
        }
        return yield* runSync({
          args,
          resource,
          columns,
          where: where as Record<string, string>,
          params: [],
          keyFlag: false
        })
      })
  ).pipe(Command.withDescription(description(syncSummary(resource))))

/** `erp api sync ENDPOINT --key FIELD`. */
export const apiSync = Command.make(
  "sync",
  {
    endpoint: Args.text({ name: "ENDPOINT" }).pipe(
      Args.withDescription("The list endpoint's path after ERP_BASE_URL, e.g. invoice/list.")
    ),
    key: Options.text("key").pipe(
      Options.withPseudoName("FIELD"),
      Options.withDescription("The field that identifies a record (the table's key).")
    ),
    params: Options.text("param").pipe(
      Options.withAlias("p"),
      Options.withPseudoName("NAME=VALUE"),
      Options.withDescription("A query parameter, sent with every page."),
      repeatable
    ),
    ...syncOptions
  },
  (args) =>
    Effect.gen(function*() {
      const path = yield* ErpClient.validateEndpoint(args.endpoint)
      const params = yield* parsePairs("-p", "NAME=VALUE", args.params)
      const columns = yield* checkArgs(args)
      const where = yield* parseWhere(path, args.where)
      // A declared resource's fields get their typed columns; any other endpoint's records are kept whole.
      const declared = (yield* Effect.serviceOption(Declared)).pipe(
        Option.flatMap((resources) => Option.fromNullable(resources.find((resource) => resource.list === path)))
      )
      const resource: Resource.Any = Option.match(declared, {
        onNone: () =>
          Resource.make({
            name: path,
            description: path,
            list: path,
            schema: AnyRecord,
            idField: args.key,
            fields: []
          }),
        onSome: (resource) => ({ ...resource, name: path, idField: args.key })
      })
      return yield* runSync({ args, resource, columns, where, params, keyFlag: true })
    })
).pipe(Command.withDescription(
  description("Keep the records of a list endpoint in a table, as partners sync does, told apart by --key FIELD")
))

/** What `api sync` does, in one line. */
export const apiSyncSummary = "Keep the records of a list endpoint in a table of SQLite or PostgreSQL (--key FIELD)"
