/**
 * `erp partners list`: every partner, as NDJSON, CSV or a table, to stdout or a file.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as ListQuery from "@erp-client/core/ListQuery"
import * as Partners from "@erp-client/streams/Partners"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Output from "../Output.js"
import * as Progress from "../Progress.js"
import * as Sink from "../Sink.js"
import { redis, verbose, withClient } from "./common.js"
import { UsageError } from "./errors.js"

const parseWhere = (items: ReadonlyArray<string>): Either.Either<Record<string, string>, UsageError> => {
  const where: Record<string, string> = {}
  for (const item of items) {
    const eq = item.indexOf("=")
    if (eq < 1) return Either.left(new UsageError({ reason: `--where ${JSON.stringify(item)}: expected FIELD=VALUE` }))
    where[item.slice(0, eq)] = item.slice(eq + 1)
  }
  // The field names are checked by the same rule the client applies before any request.
  return Either.mapBoth(ListQuery.validateConditions(Partners.LIST, where), {
    onLeft: (error) => new UsageError({ reason: `--where: ${error.reason}` }),
    onRight: () => where
  })
}

export const partnersList = Command.make(
  "list",
  {
    customers: Options.boolean("customers").pipe(Options.withDescription("customers only (is_customer=1)")),
    where: Options.text("where").pipe(
      Options.repeated,
      Options.withDescription("FIELD=VALUE condition, sent as list_condition[FIELD]=VALUE (repeatable)")
    ),
    pageSize: Options.integer("page-size").pipe(
      Options.withDefault(100),
      Options.withDescription("records per request (list_count)")
    ),
    concurrency: Options.integer("concurrency").pipe(
      Options.withDefault(4),
      Options.withDescription("pages in flight at once; records stay in order")
    ),
    format: Options.choice("format", Output.formats).pipe(Options.withDefault("ndjson" as const)),
    output: Options.file("output").pipe(
      Options.optional,
      Options.withDescription("write to FILE, which appears only when the export is complete")
    ),
    resume: Options.boolean("resume").pipe(
      Options.withDescription("with --output: keep an interrupted export and continue it from its last complete page")
    ),
    safe: Options.boolean("safe").pipe(
      Options.withDescription(
        "drift-safe paging for a list that changes during the export: overlapping pages, each partner at most once, " +
          "none skipped; costs about 10% more requests"
      )
    ),
    redis,
    verbose
  },
  (args) =>
    Effect.gen(function*() {
      if (args.pageSize < 1 || args.pageSize > 10_000) {
        return yield* new UsageError({ reason: "--page-size must be from 1 to 10000" })
      }
      if (args.concurrency < 1 || args.concurrency > 64) {
        return yield* new UsageError({ reason: "--concurrency must be from 1 to 64" })
      }
      if (args.resume && Option.isNone(args.output)) {
        return yield* new UsageError({ reason: "--resume needs --output FILE" })
      }
      const where: ListQuery.Conditions = {
        ...(yield* parseWhere(args.where)),
        ...(args.customers ? { is_customer: 1 } : {})
      }
      const progress = Progress.make({ enabled: process.stderr.isTTY === true })
      const body = Effect.scoped(Effect.gen(function*() {
        const query = JSON.stringify({ where, pageSize: args.pageSize, format: args.format, safe: args.safe })
        const sink = Option.isSome(args.output)
          ? yield* Sink.file(args.output.value, { resume: args.resume, query, keepIds: args.safe })
          : Sink.stdout
        const resumed = Option.getOrUndefined(sink.resumed)
        const encoder = Output.encoder(args.format, resumed && { columns: resumed.columns })
        const shown = yield* progress.start
        let records = resumed?.records ?? 0
        let pages = resumed?.pages ?? 0
        yield* Partners.pages({
          where,
          pageSize: args.pageSize,
          concurrency: args.concurrency,
          startOffset: resumed?.nextOffset ?? 0,
          // Shifts and recoveries are logged by the library (see --verbose). A resume starts at the last page
          // written, and nothing already written comes out again.
          safe: args.safe ? { resumeAfter: sink.resumedIds } : undefined
        }).pipe(
          Stream.runForEach((page) => {
            records += page.raw.length
            pages += 1
            shown.page(page.raw.length)
            const columns = encoder.columns()
            return sink.write(encoder.page(page.raw), {
              // Drift-safe paging resumes at the last page, which must overlap the ids written.
              nextOffset: args.safe ? page.offset : page.offset + page.count,
              records,
              pages,
              ...(columns === undefined ? {} : { columns })
            }, args.safe ? page.records.map((partner) => partner.id) : undefined)
          })
        )
        yield* sink.commit
        yield* shown.done
      }))
      return yield* withClient(args, body, progress.observer)
    })
).pipe(Command.withDescription("export partners: NDJSON (default), CSV or a table, to stdout or a file"))
