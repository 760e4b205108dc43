/**
 * `erp partners list`: every partner, as NDJSON, CSV or a table, to stdout or a file.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import type * as ListQuery from "@erp-client/core/ListQuery"
import * as Partners from "@erp-client/streams/Partners"
import * as Effect from "effect/Effect"
import { redis, verbose } from "./common.js"
import { runExport } from "./exportList.js"
import { checkListArgs, listOptions, outputFlags, parseWhere, whereFlag } from "./listOptions.js"

export const partnersList = Command.make(
  "list",
  {
    customers: Options.boolean("customers").pipe(Options.withDescription("Customers only (is_customer=1).")),
    ...listOptions,
    redis,
    verbose
  },
  (args) =>
    Effect.gen(function*() {
      yield* checkListArgs(args)
      const conditions = yield* parseWhere(Partners.LIST, args.where)
      const where: ListQuery.Conditions = { ...conditions, ...(args.customers ? { is_customer: 1 } : {}) }
      return yield* runExport({
        args,
        flags: {
          command: "erp partners list",
          "--customers": args.customers,
          "--where": whereFlag(conditions),
          ...outputFlags(args)
        },
        table: "partners",
        idField: "id",
        pages: (start) =>
          Partners.pages({
            where,
            pageSize: args.pageSize,
            concurrency: args.concurrency,
            // Where the last page written said to go on, with the page size it had learned. Shifts and recoveries are
            // logged by the library (see --verbose); nothing already written comes out again.
            resume: start.resume,
            safe: args.safe ? { resumeAfter: start.resumeAfter } : undefined
          })
      })
    })
).pipe(Command.withDescription("export partners: NDJSON (default), CSV or a table, to stdout or a file"))
