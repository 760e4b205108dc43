/**
 * `erp api infer ENDPOINT`: a schema drafted from live samples. Pages through up to `--sample` records of a list
 * endpoint (the client, its limiter and paging, as `erp api list`), reads each as the server wrote it and lets it go,
 * and prints a TypeScript module for the edition `--edition` names: an Effect Schema and a `Resource` declaration.
 *
 * The drafting is `schemaDraft.ts`'s (which says why not quicktype-core). It is imported
 * when this command runs: esbuild wraps a module reached by `import()` in a function of its own, so no other command
 * evaluates it.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as ErpClient from "@erp-client/client/ErpClient"
import * as ListEndpoint from "@erp-client/streams/ListEndpoint"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Sink from "../Sink.js"
import { checkEndpoint, endpointArg, listEndpointHint, params, parseParams } from "./api.js"
import { AnyRecord, redis, shownDefault, verbose, withClient } from "./common.js"
import { UsageError } from "./errors.js"
import { listOptions, parseWhere } from "./listOptions.js"

/** The most records `--sample` may ask for. */
const MAX_SAMPLE = 100_000

const DEFAULT_SAMPLE = 1000

/** The package of each edition whose `Resource` module the drafted declaration is made with. */
const resourcePackages = { "3": "@erp-client/streams", "4": "@erp-client/effect4-streams" } as const

const editions = ["3", "4"] as const

/** The list served no record, or a record the drafting could not read: nothing to draft from. */
export class DraftFailed extends Schema.TaggedError<DraftFailed>()("DraftFailed", { reason: Schema.String }) {
  override get message(): string {
    return this.reason
  }
}

// The single-record endpoint beside a list one (`invoice/list` → `invoice/get`), tried once with the first sample's
// id: kept when it answers with that record, otherwise the module says what it answered.
const probeGet = (
  list: string,
  idField: string | undefined,
  value: string | undefined
): Effect.Effect<{ readonly get?: string; readonly noGet?: string }, never, ErpClient.ErpClient> => {
  if (!/\/list$/.test(list)) return Effect.succeed({ noGet: `${list} is not a …/list endpoint, so none was tried` })
  const get = list.replace(/\/list$/, "/get")
  if (idField === undefined || value === undefined) return Effect.succeed({})
  return Effect.flatMap(
    ErpClient.ErpClient,
    (client) =>
      client.get(get, Schema.Unknown, { params: [[idField, value]], exact: true }).pipe(
        Effect.map((answer) => {
          const record = Array.isArray(answer.value) ? answer.value[0] : answer.value
          const id = typeof record === "object" && record !== null ? (record as Record<string, unknown>)[idField] : null
          return String(id) === value
            ? { get }
            : { noGet: `${get}?${idField}=${value} answered without that record` }
        }),
        Effect.catchAll((error) =>
          Effect.succeed({ noGet: `${get}?${idField}=${value} answered ${error._tag}: ${error.message}` })
        )
      )
  )
}

export const apiInfer = Command.make(
  "infer",
  {
    endpoint: endpointArg("partner/list", "list endpoint's "),
    params,
    where: listOptions.where,
    noCheckWhere: listOptions.noCheckWhere,
    name: Options.text("name").pipe(
      Options.withPseudoName("NAME"),
      Options.withDescription(
        "The schema's name, a TypeScript identifier. Default: from ENDPOINT (invoice/list: Invoice)."
      ),
      Options.optional
    ),
    sample: Options.integer("sample").pipe(
      Options.withPseudoName("N"),
      Options.withDescription(`Draft from the first N records of the list (1 to ${MAX_SAMPLE}).`),
      shownDefault(DEFAULT_SAMPLE)
    ),
    edition: Options.choice("edition", editions).pipe(
      Options.withDescription(
        "The edition of the client the module is written for: 3, effect 3's Schema and Resource of " +
          "@erp-client/streams; 4, effect 4's Schema and Resource of @erp-client/effect4-streams."
      ),
      shownDefault<(typeof editions)[number]>("3")
    ),
    redis,
    verbose
  },
  (args) =>
    Effect.gen(function*() {
      const path = yield* checkEndpoint(args.endpoint)
      const query = yield* parseParams(args.params)
      const where = yield* parseWhere(path, args.where)
      if (args.sample < 1 || args.sample > MAX_SAMPLE) {
        return yield* new UsageError({ reason: `--sample must be from 1 to ${MAX_SAMPLE}` })
      }
      const SchemaDraft = yield* Effect.promise(() => import("./schemaDraft.js"))
      const name = Option.getOrElse(args.name, () => SchemaDraft.nameOf(path))
      // Refused before any request: the module must compile with this name as a value and as a type.
      const problem = SchemaDraft.nameProblem(name)
      if (problem !== undefined) {
        return yield* new UsageError({
          reason: `--name ${JSON.stringify(name)}: ${problem}, so the module would not compile; choose another name`
        })
      }
      return yield* withClient(
        args,
        Effect.gen(function*() {
          // The records as the server wrote them (`exact`): a number's token, not JSON.parse's double, is drafted.
          // Each is drafted as it comes and let go: memory holds the draft and the page at hand, never the sample.
          const drafting = SchemaDraft.drafter()
          yield* ListEndpoint.pages(path, AnyRecord, {
            params: query,
            where,
            checkConditions: !args.noCheckWhere,
            pageSize: args.sample <= 1000 ? args.sample : "auto",
            // One page at a time: pages fetched ahead would be held in memory, and a page may be megabytes.
            concurrency: 1,
            exact: true
          }).pipe(
            listEndpointHint("erp api infer", path),
            Stream.mapConcat((page) => page.json ?? page.raw.map((record) => JSON.stringify(record))),
            Stream.take(args.sample),
            Stream.runForEachChunk((texts) => {
              for (const text of texts) {
                const failure = drafting.add(text)
                if (failure !== undefined) {
                  const { position, reason, sample } = failure
                  return new DraftFailed({
                    reason: `${path}: record ${sample + 1} is not JSON: ${reason} (character ${position})`
                  })
                }
              }
              return Effect.void
            }),
            Effect.catchTag("ResponseTooLarge", (error) =>
              new DraftFailed({
                reason: `${path}: a page of one record is larger than the ${error.limitBytes} bytes a response may ` +
                  "have (ERP_MAX_BODY_BYTES): the record cannot be read to draft from; raise ERP_MAX_BODY_BYTES to " +
                  "read it"
              }))
          )
          if (drafting.samples() === 0) {
            return yield* new DraftFailed({ reason: `${path} served no records: there is nothing to draft from` })
          }
          const draft = drafting.result()
          const get = draft.shape._tag === "Struct" ? yield* probeGet(path, draft.idField, draft.firstId) : {}
          yield* Sink.writeStdout(
            SchemaDraft.render(draft, {
              name,
              edition: args.edition === "4" ? 4 : 3,
              resourcePackage: resourcePackages[args.edition],
              endpoint: path,
              params: args.params,
              where: args.where,
              sample: args.sample === DEFAULT_SAMPLE ? undefined : args.sample,
              ...get
            })
          )
        })
      )
    })
).pipe(Command.withDescription(
  "Draft an Effect Schema from the records a list endpoint serves: pages through up to --sample records (through " +
    "the rate limit, as api list) and prints a TypeScript module for the client's Effect 3 edition (the default) or, " +
    "with --edition 4, its Effect 4 edition: the schema (a field in every record required, others optional; null " +
    "seen as NullOr; integers as Int; a small set of values seen many times as literals; nested objects and arrays; " +
    "fields not seen kept on decode), and a Resource declaration (the get endpoint beside a …/list one is tried once " +
    "with the first record's id) that gives an application the library's streams and lookups of these records. The " +
    "module's header names its edition and the command that drafts it again. A draft says what the samples held: " +
    "read it before relying on it."
))
