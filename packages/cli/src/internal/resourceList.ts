/**
 * `erp <resource> list`, from a resource's declaration (`@erp-client/streams/Resource`): every record, as NDJSON, CSV
 * or a table, to stdout or a file; its filters as flags of their own, its contract checked on the side.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import type * as ListQuery from "@erp-client/core/ListQuery"
import * as ListEndpoint from "@erp-client/streams/ListEndpoint"
import type * as Resource from "@erp-client/streams/Resource"
import * as Effect from "effect/Effect"
import { AnyRecord, redis, verbose } from "./common.js"
import { contractOf, strictFlag } from "./contract.js"
import { runExport } from "./exportList.js"
import { sentence } from "./help.js"
import { checkListArgs, listOptions, outputFlags, pageSizeOf, parseWhere, quiet, whereFlag } from "./listOptions.js"

/** What `<resource> list` does, in one line (its summary in `erp --help`). */
export const listSummary = (resource: Resource.Any): string =>
  `Export ${resource.name}: NDJSON (default), CSV or a table, to stdout or a file`

/**
 * A resource's filters, a flag each. None for a resource without filters: `Options.all({})` is not an empty set of
 * flags to @effect/cli 0.77 (it breaks every command's parsing), so no filters is `Options.none`.
 */
export const filterFlags = (resource: Resource.Any): Options.Options<Readonly<Record<string, boolean>>> =>
  resource.filters.length === 0
    ? Options.map(Options.none, () => ({}))
    : Options.all(
      Object.fromEntries(
        resource.filters.map((
          filter
        ) => [filter.flag, Options.boolean(filter.flag).pipe(Options.withDescription(sentence(filter.description)))])
      )
    )

/** `erp <resource> list`. */
export const listCommand = (resource: Resource.Any) =>
  Command.make(
    "list",
    {
      filters: filterFlags(resource),
      ...listOptions,
      strict: strictFlag(resource),
      quiet,
      redis,
      verbose
    },
    (args) =>
      Effect.gen(function*() {
        yield* checkListArgs(args)
        const conditions = yield* parseWhere(resource.list, args.where)
        let where: ListQuery.Conditions = conditions
        const filterFlags: Record<string, boolean> = {}
        for (const filter of resource.filters) {
          const on = args.filters[filter.flag] === true
          filterFlags[`--${filter.flag}`] = on
          if (on) where = { ...where, ...filter.where }
        }
        const strict = args.strict && resource.strict !== undefined
        return yield* runExport({
          args,
          flags: {
            command: `erp ${resource.name} list`,
            ...filterFlags,
            "--where": whereFlag(conditions),
            ...outputFlags(args),
            "--strict": args.strict
          },
          endpoint: resource.list,
          table: resource.columns.length > 0 ? resource.columns : "fields",
          fields: resource.fields,
          idField: resource.idField,
          contract: strict ? undefined : contractOf(resource, resource.list),
          pages: (start) => {
            const options: ListEndpoint.ListOptions = {
              where,
              checkConditions: !args.noCheckWhere,
              pageSize: pageSizeOf(args),
              concurrency: args.concurrency,
              // Where the last page written said to go on, with the page size it had learned. Shifts and recoveries
              // are logged by the library (see --verbose); nothing already written comes out again.
              resume: start.resume,
              safe: args.safe ? { resumeAfter: start.resumeAfter, onDrift: start.onDrift } : undefined,
              // Each record's text as the server wrote it, for output: numbers as sent (no float round trip).
              exact: true
            }
            return strict
              ? ListEndpoint.pages(resource.list, resource.strict!, options)
              : ListEndpoint.pages(resource.list, AnyRecord, options)
          }
        })
      })
  ).pipe(Command.withDescription(
    `${listSummary(resource)}; every record as the server sent it, ` +
      (resource.strict === undefined
        ? "as NDJSON, CSV or a table"
        : "those that stray from the contract counted on stderr (--strict fails at the first)")
  ))
