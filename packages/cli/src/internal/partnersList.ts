/**
 * `erp partners list`: every partner, as NDJSON, CSV or a table, to stdout or a file.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import type * as ListQuery from "@erp-client/core/ListQuery"
import * as Partner from "@erp-client/core/Partner"
import * as ListEndpoint from "@erp-client/streams/ListEndpoint"
import * as Partners from "@erp-client/streams/Partners"
import * as Effect from "effect/Effect"
import { AnyRecord, redis, verbose } from "./common.js"
import { contractOf, strictFlag } from "./contract.js"
import { runExport } from "./exportList.js"
import { checkListArgs, listOptions, outputFlags, pageSizeOf, parseWhere, whereFlag } from "./listOptions.js"

export const partnersList = Command.make(
  "list",
  {
    customers: Options.boolean("customers").pipe(Options.withDescription("Customers only (is_customer=1).")),
    ...listOptions,
    strict: strictFlag,
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
          ...outputFlags(args),
          "--strict": args.strict
        },
        table: "partners",
        idField: "id",
        contract: args.strict ? undefined : contractOf(Partners.LIST),
        pages: (start) => {
          const options: ListEndpoint.ListOptions = {
            where,
            pageSize: pageSizeOf(args),
            concurrency: args.concurrency,
            // Where the last page written said to go on, with the page size it had learned. Shifts and recoveries are
            // logged by the library (see --verbose); nothing already written comes out again.
            resume: start.resume,
            safe: args.safe ? { resumeAfter: start.resumeAfter, onDrift: start.onDrift } : undefined,
            // Each record's text as the server wrote it, for output: numbers as sent (no float round trip).
            exact: true
          }
          return args.strict
            ? ListEndpoint.pages(Partners.LIST, Partner.StrictPartner, options)
            : ListEndpoint.pages(Partners.LIST, AnyRecord, options)
        }
      })
    })
).pipe(Command.withDescription(
  "export partners: NDJSON (default), CSV or a table, to stdout or a file; every record as the server sent it, " +
    "those that stray from the contract counted on stderr (--strict fails at the first)"
))
