/**
 * The options every list command shares (`erp partners list`, `erp api list`), how they show in `--help`, and their
 * checks.
 */
import * as Options from "@effect/cli/Options"
import * as ListQuery from "@erp-client/core/ListQuery"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Output from "../Output.js"
import { parsePairs, repeatable, shownDefault } from "./common.js"
import { UsageError } from "./errors.js"

export const listOptions = {
  where: Options.text("where").pipe(
    Options.withPseudoName("FIELD=VALUE"),
    Options.withDescription(
      "Only records whose FIELD equals VALUE, sent as list_condition[FIELD]=VALUE (FIELD: A-Z, a-z, 0-9, _)."
    ),
    repeatable
  ),
  noCheckWhere: Options.boolean("no-check-where").pipe(
    Options.withDescription(
      "Take the records as served. Without it, each record is checked against --where (and a filter flag) before " +
        "anything of its page is written: a record without the field, or with a value that clearly differs, means " +
        "the server ignored the condition, and the export fails (exit 1). For a server that matches more loosely " +
        "than the check allows."
    )
  ),
  pageSize: Options.text("page-size").pipe(
    Options.withPseudoName("auto|N"),
    Options.withDescription(
      "Records per request (list_count): auto uses the largest page the server serves (up to 1000; the rate limit " +
        "counts requests, so this is the fastest), N (1 to 10000) asks for at most N. A server that serves fewer " +
        "than asked is followed: nothing is skipped."
    ),
    shownDefault("auto")
  ),
  concurrency: Options.integer("concurrency").pipe(
    Options.withPseudoName("N"),
    Options.withDescription("Pages in flight at once, 1 to 64; records still come out in order."),
    shownDefault(4)
  ),
  format: Options.choice("format", Output.formats).pipe(
    Options.withDescription(
      "The output format. ndjson: one JSON object a line, every field exactly as sent; csv: RFC 4180 with a header " +
        "row, cells exact (see --spreadsheet); table: columns for people."
    ),
    shownDefault<Output.Format>("ndjson")
  ),
  spreadsheet: Options.boolean("spreadsheet").pipe(
    Options.withDescription(
      "With --format csv: cells that start with =, +, -, @, a tab or CR get a leading ', so spreadsheet programs " +
        "show them as text instead of running them as formulas (without it, every cell is exact)."
    )
  ),
  output: Options.file("output").pipe(
    Options.withPseudoName("FILE"),
    Options.withDescription(
      "Write to FILE, which appears only when the export is complete (FILE.part until then). One run at a time on " +
        "the file, whatever name reaches it: another run refuses (exit 1), naming the one writing it (FILE.lock), " +
        "and touches nothing. A read-only FILE is refused, not replaced; a replaced FILE keeps its mode; a FILE that " +
        "is a symbolic link is written through."
    ),
    Options.optional
  ),
  resume: Options.boolean("resume").pipe(
    Options.withDescription(
      "With --output: continue the export a failed or interrupted run kept (FILE.part, FILE.resume.json) from its " +
        "last complete page. A saved export made with other flags, against another server or endpoint, or damaged " +
        "(checksums), is refused (exit 2), never discarded."
    )
  ),
  restart: Options.boolean("restart").pipe(
    Options.withDescription(
      "With --output: discard a saved export of FILE and start over (resumable, as with --resume)."
    )
  ),
  safe: Options.boolean("safe").pipe(
    Options.withDescription(
      "Drift-safe paging for a list that changes during the export: overlapping pages, each record at most once, " +
        "none that stays in the list skipped; about 10% more requests."
    )
  )
}

/** `--quiet`, beside `--verbose` in the usage line: what a list command says on stderr when all goes well. */
export const quiet = Options.boolean("quiet").pipe(
  Options.withDescription(
    "No summary line at the end of an export to --output FILE, and no progress line on a terminal; warnings and " +
      "failures are still said."
  )
)

export interface ListArgs {
  readonly where: ReadonlyArray<string>
  readonly noCheckWhere: boolean
  readonly pageSize: string
  readonly concurrency: number
  readonly format: Output.Format
  readonly spreadsheet: boolean
  readonly output: Option.Option<string>
  readonly resume: boolean
  readonly restart: boolean
  readonly quiet: boolean
  readonly safe: boolean
}

/** Checks what parsing could not: ranges, and flags that only make sense together. */
export const checkListArgs = (args: ListArgs): Either.Either<void, UsageError> => {
  const usage = (reason: string) => Either.left(new UsageError({ reason }))
  if (pageSizeOf(args) === undefined) return usage("--page-size must be auto or a whole number from 1 to 10000")
  if (args.concurrency < 1 || args.concurrency > 64) return usage("--concurrency must be from 1 to 64")
  if (args.resume && args.restart) return usage("--resume and --restart cannot be used together")
  if (args.resume && Option.isNone(args.output)) return usage("--resume needs --output FILE")
  if (args.restart && Option.isNone(args.output)) return usage("--restart needs --output FILE")
  if (args.spreadsheet && args.format !== "csv") return usage("--spreadsheet needs --format csv")
  return Either.void
}

/** `--page-size` as paging takes it: `"auto"` or a number; `undefined` when it is neither (a usage error). */
export const pageSizeOf = (args: Pick<ListArgs, "pageSize">): "auto" | number | undefined => {
  const text = args.pageSize.trim().toLowerCase()
  if (text === "auto") return "auto"
  const n = Number(text)
  return /^\d+$/.test(text) && n >= 1 && n <= 10_000 ? n : undefined
}

/** `--where` items as conditions, checked by the rule the client applies before any request; the last one wins. */
export const parseWhere = (
  endpoint: string,
  items: ReadonlyArray<string>
): Either.Either<Record<string, string>, UsageError> =>
  Either.flatMap(parsePairs("--where", "FIELD=VALUE", items), (pairs) => {
    const where = Object.fromEntries(pairs)
    return Either.mapBoth(ListQuery.validateConditions(endpoint, where), {
      onLeft: (error) => new UsageError({ reason: `--where: ${error.reason}` }),
      onRight: () => where
    })
  })

/** Conditions as a saved export keeps them: `FIELD=VALUE`, sorted, so the order they were given in does not matter. */
export const whereFlag = (where: ListQuery.Conditions): ReadonlyArray<string> =>
  Object.entries(where).map(([field, value]) => `${field}=${ListQuery.conditionValue(value)}`).sort()

/** What a list run writes: the flags a resume must repeat, beside the command's own. */
export const outputFlags = (args: ListArgs) => ({
  "--page-size": pageSizeOf(args) ?? args.pageSize,
  "--format": args.format,
  "--spreadsheet": args.spreadsheet,
  "--safe": args.safe
})
