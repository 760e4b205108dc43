/**
 * `erp api get | list | post ENDPOINT`: any endpoint of the service from the shell, the way `gh api` reaches GitHub's,
 * on the same client, limiter, settings, exit codes and output rules as `erp partners`.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as FileSystem from "@effect/platform/FileSystem"
import * as ErpClient from "@erp-client/client/ErpClient"
import * as JsonText from "@erp-client/core/JsonText"
import * as ListEndpoint from "@erp-client/streams/ListEndpoint"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Sink from "../Sink.js"
import { AnyRecord, parsePairs, redis, repeatable, verbose, withClient } from "./common.js"
import { InputError, UsageError } from "./errors.js"
import { runExport } from "./exportList.js"
import { checkListArgs, listOptions, outputFlags, pageSizeOf, parseWhere, quiet, whereFlag } from "./listOptions.js"
import * as Stdin from "./stdin.js"

/** ENDPOINT, with an example of the kind the command takes (`partner/get`; a list one for `list` and `infer`). */
export const endpointArg = (example: string, kind: string = "") =>
  Args.text({ name: "ENDPOINT" }).pipe(
    Args.withDescription(
      `The ${kind}path after ERP_BASE_URL, e.g. ${example}: segments of A-Z, a-z, 0-9, _ and - joined by /.`
    )
  )

/**
 * A list command's first page refused by the server, or not a list of records, from an endpoint that is not a
 * `…/list` one: most likely a get endpoint (`partner/get` refuses a request without its id), so the line says so.
 */
export class NotAList extends Schema.TaggedError<NotAList>()("NotAList", { reason: Schema.String }) {
  override get message(): string {
    return this.reason
  }
}

/**
 * `pages` of `path` for `command` (`erp api infer`), whose failure before any page came, when the server refused the
 * request (`ApiError`) or its data was no list of records (`DecodeError`) and `path` is no `…/list` endpoint, says to
 * give a list endpoint, the one beside `path` if it has a `/` (`partner/get`: `partner/list`).
 */
export const listEndpointHint =
  (command: string, path: string) =>
  <A, E extends { readonly _tag: string; readonly message: string }, R>(
    pages: Stream.Stream<A, E, R>
  ): Stream.Stream<A, E | NotAList, R> => {
    if (/\/list$/.test(path)) return pages
    let first = true
    const beside = path.includes("/") ? path.replace(/[^/]+$/, "list") : undefined
    return pages.pipe(
      Stream.tap(() => Effect.sync(() => void (first = false))),
      Stream.catchAll((error): Stream.Stream<never, E | NotAList> =>
        first && (error._tag === "ApiError" || error._tag === "DecodeError")
          ? Stream.fail(
            new NotAList({
              reason: `${error.message}; ${command} reads a list endpoint, and ${path} ` +
                `may not be one: ${beside === undefined ? "give it a …/list one" : `try ${command} ${beside}`}`
            })
          )
          : Stream.fail(error)
      )
    )
  }

export const params = Options.text("param").pipe(
  Options.withAlias("p"),
  Options.withPseudoName("NAME=VALUE"),
  Options.withDescription("A query parameter; NAME and VALUE are URL-encoded by the client, VALUE may hold anything."),
  repeatable
)

export const parseParams = (items: ReadonlyArray<string>): Either.Either<ErpClient.Params, UsageError> =>
  parsePairs("-p", "NAME=VALUE", items)

// ENDPOINT is checked first, by the client's own rule, before any setting is read: a bad one is a usage error (2).
export const checkEndpoint = ErpClient.validateEndpoint

// What `NotFound` says was looked up: the parameters, as given.
const selectorOf = (query: ErpClient.Params) =>
  query.map(([name, value]) => `${name}=${/^[\w.:@/-]*$/.test(value) ? value : JSON.stringify(value)}`).join(" ")

// The data as the server wrote it (compact; numbers as sent: see JsonText).
const printData = (data: ErpClient.Exact<unknown>) => Sink.writeStdoutData(`${data.json}\n`)

export const apiGet = Command.make(
  "get",
  { endpoint: endpointArg("partner/get"), params, redis, verbose },
  (args) =>
    Effect.gen(function*() {
      const path = yield* checkEndpoint(args.endpoint)
      const query = yield* parseParams(args.params)
      return yield* withClient(
        args,
        Effect.flatMap(ErpClient.ErpClient, (client) =>
          client.get(path, Schema.Unknown, { params: query, selector: selectorOf(query), exact: true }).pipe(
            Effect.flatMap(printData)
          ))
      )
    })
).pipe(Command.withDescription("GET ENDPOINT; prints the envelope's data as JSON, exactly as the server sent it."))

export const apiList = Command.make(
  "list",
  {
    endpoint: endpointArg("partner/list", "list endpoint's "),
    params,
    ...listOptions,
    idField: Options.text("id-field").pipe(
      Options.withPseudoName("NAME"),
      Options.withDescription("With --safe: the field that identifies a record. Default: id."),
      Options.optional
    ),
    quiet,
    redis,
    verbose
  },
  (args) =>
    Effect.gen(function*() {
      const path = yield* checkEndpoint(args.endpoint)
      const query = yield* parseParams(args.params)
      yield* checkListArgs(args)
      if (args.idField._tag === "Some" && !args.safe) {
        return yield* new UsageError({ reason: "--id-field needs --safe" })
      }
      const idField = args.idField._tag === "Some" ? args.idField.value : "id"
      const where = yield* parseWhere(path, args.where)
      return yield* runExport({
        args,
        flags: {
          command: `erp api list ${path}`,
          "-p": args.params,
          "--where": whereFlag(where),
          ...outputFlags(args),
          ...(args.safe ? { "--id-field": idField } : {})
        },
        endpoint: path,
        table: "fields",
        idField,
        pages: (start) =>
          ListEndpoint.pages(path, AnyRecord, {
            where,
            checkConditions: !args.noCheckWhere,
            params: query,
            pageSize: pageSizeOf(args),
            concurrency: args.concurrency,
            resume: start.resume,
            safe: args.safe ? { idField, resumeAfter: start.resumeAfter, onDrift: start.onDrift } : undefined,
            exact: true
          }).pipe(listEndpointHint("erp api list", path))
      })
    })
).pipe(Command.withDescription(
  "Every record of a list endpoint, exactly as the server sent it, paged as partners list pages: the same " +
    "options, output rules and resume. --format table shows the first fields of the first page's records."
))

const readData = (data: string): Effect.Effect<string, InputError, FileSystem.FileSystem> =>
  data === "@-"
    ? Stdin.text
    : data.startsWith("@")
    ? Effect.flatMap(FileSystem.FileSystem, (fs) =>
      fs.readFileString(data.slice(1)).pipe(
        Effect.mapError((error) => new InputError({ description: `--data ${data}: ${error.message}` }))
      ))
    : Effect.succeed(data)

export const apiPost = Command.make(
  "post",
  {
    endpoint: endpointArg("order/create"),
    data: Options.text("data").pipe(
      Options.withPseudoName("JSON|@FILE|@-"),
      Options.withDescription("The JSON body: given here, read from FILE, or read from stdin (@-). Default: no body."),
      Options.optional
    ),
    params,
    redis,
    verbose
  },
  (args) =>
    Effect.gen(function*() {
      const path = yield* checkEndpoint(args.endpoint)
      const query = yield* parseParams(args.params)
      let json: string | undefined = undefined
      if (args.data._tag === "Some") {
        const text = yield* readData(args.data.value)
        // Checked here, sent as written: parsed and written back, 12345678901234567890 and 1.10 would change.
        yield* Either.mapLeft(
          JsonText.compact(text),
          (error) => new UsageError({ reason: `--data: not JSON (${error.message})` })
        )
        json = text
      }
      const options = json === undefined ? { params: query } : { json, params: query }
      return yield* withClient(
        args,
        Effect.flatMap(ErpClient.ErpClient, (client) =>
          client.post(path, Schema.Unknown, { ...options, exact: true }).pipe(Effect.flatMap(printData)))
      )
    })
).pipe(
  Command.withDescription(
    "POST a JSON body to ENDPOINT, sent as written; prints the envelope's data as the server sent it. Never retried after a transient failure " +
      "(a reset connection, a timeout, a 5xx: the server may have acted on it), only after a 429, which the server " +
      "refuses before acting."
  )
)
