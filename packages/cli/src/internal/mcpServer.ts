/**
 * `erp mcp`'s server: the protocol of `mcpProtocol.ts` on the command line's client, with the tools of `mcpTools.ts`
 * (as `--tools`, `--toolsets` and `--allow-writes` choose them), four resources and two prompts, over stdio
 * (`mcpStdio.ts`) or Streamable HTTP (`mcpHttp.ts`). In a bundle of its own (`dist/mcp.cjs`), loaded only by
 * `erp mcp` (see `mcpCommand.ts`).
 */
import * as ErpClient from "@erp-client/client/ErpClient"
import type * as ErpRateLimiter from "@erp-client/client/ErpRateLimiter"
import { Environment, Slots } from "@erp-client/kernel"
import type * as Resource from "@erp-client/streams/Resource"
import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Sink from "../Sink.js"
import { clientLayer } from "./clientLayer.js"
import { logging, note } from "./common.js"
import { UsageError } from "./errors.js"
import { DEFAULT_PORT, type McpArgs } from "./mcpCommand.js"
import * as Http from "./mcpHttp.js"
import * as Protocol from "./mcpProtocol.js"
import * as Stdio from "./mcpStdio.js"
import * as Tools from "./mcpTools.js"
import * as Stdin from "./stdin.js"

// The package's version, written in by the build (scripts/build-cli.ts); "dev" when run from source.
declare const ERP_CLI_VERSION: string | undefined

const DEFAULT_LIMIT = 100
const MAX_LIMIT = 1_000
/** The endpoints `erp://limit` reports at most: the ones used last (a made-up endpoint is one more). */
const LIMIT_ENDPOINTS = 100

/**
 * The limiter the client uses, watched: the endpoints requests were admitted for and the limit each was admitted
 * under (the limiter's own, or one learned from the server, in the window the server counts in), for `erp://limit`.
 * Its keys hold a digest of the API key, never the key; only the endpoint is shown.
 */
const makeLimitWatch = () => {
  let limiter: ErpRateLimiter.Service | undefined
  const admitted = new Map<string, ErpRateLimiter.Acquired>()
  return {
    tap: (service: ErpRateLimiter.Service): ErpRateLimiter.Service => {
      limiter = service
      return {
        ...service,
        acquire: (key, deadline, bound, timeoutMillis) =>
          Effect.tap(service.acquire(key, deadline, bound, timeoutMillis), (acquired) =>
            Effect.sync(() => {
              // The most recent last: the oldest goes past LIMIT_ENDPOINTS, so made-up endpoints cannot grow it.
              admitted.delete(key)
              admitted.set(key, acquired)
              if (admitted.size > LIMIT_ENDPOINTS) admitted.delete(admitted.keys().next().value!)
            }))
      }
    },
    status: Effect.suspend(() => {
      if (limiter === undefined) return Effect.succeed(undefined)
      const service = limiter
      return Effect.map(
        Effect.forEach([...admitted], ([key, { learned, limit, windowMillis }]) =>
          Effect.map(
            service.inUse(key),
            (used) =>
              [Slots.endpointOfKey(key), {
                limit,
                windowSeconds: windowMillis / 1000,
                // What the server said, when the limit is one learned from it.
                ...(learned === undefined
                  ? {}
                  : { learnedFrom: learned.from === "header" ? "X-RateLimit-Limit" : "429s" }),
                used,
                left: Math.max(0, limit - used)
              }] as const
          )),
        (endpoints) => ({ limit: service.limit, window: service.window, endpoints: Object.fromEntries(endpoints) })
      )
    })
  }
}

/** A tool's failure as the assistant reads it: the error's tag and its message (the client's messages never hold the
 * key: docs/ARCHITECTURE.md, "Redaction"). */
const failureResult = (error: Tools.ToolFailure): Protocol.ToolResult => ({
  texts: [`${error._tag}: ${error.message}`],
  isError: true
})

/** A tool as the protocol serves it: its annotations said from what it does, and any failure a result it reads. */
const definitionOf = (tool: Tools.Tool): Protocol.ToolDefinition => ({
  name: tool.name,
  title: tool.title,
  description: tool.description,
  inputSchema: tool.inputSchema,
  outputSchema: tool.outputSchema,
  annotations: {
    title: tool.title,
    readOnlyHint: !tool.write,
    destructiveHint: tool.write,
    idempotentHint: !tool.write,
    // The ERP is the tools' whole world.
    openWorldHint: false
  },
  call: (args, progress) =>
    tool.call(args, progress).pipe(
      Effect.match({
        onSuccess: (answer): Protocol.ToolResult => ({
          texts: answer.texts,
          structured: answer.structured,
          isError: false
        }),
        onFailure: failureResult
      }),
      // A cancelled call stays interrupted: it is not answered. Anything else unexpected is an error the assistant
      // reads, and the server goes on.
      Effect.catchAllCause((cause) =>
        Cause.isInterruptedOnly(cause)
          ? Effect.interrupt
          : Effect.succeed<Protocol.ToolResult>({
            texts: [`InternalError: ${Cause.pretty(cause).split("\n")[0]}`],
            isError: true
          })
      )
    )
})

/** A write tool on a read-only server: not listed, and a call to it says why rather than "no such tool". */
const refusedWrite = (tool: Tools.Tool): Protocol.ToolDefinition => ({
  ...definitionOf(tool),
  call: () =>
    Effect.succeed({
      texts: [
        `WritesNotAllowed: ${tool.name} changes the ERP, and this server is read-only: it was started without ` +
        "--allow-writes (erp mcp --allow-writes offers it)."
      ],
      isError: true
    })
})

/** The toolsets: each declared kind of record's name, `api` and `writes`. */
export const toolsetsOf = (tools: ReadonlyArray<Tools.Tool>): ReadonlyArray<string> => [
  ...new Set(tools.map((tool) => tool.toolset))
]

const listed = (values: ReadonlyArray<string>) =>
  values.flatMap((value) => value.split(",")).map((value) => value.trim()).filter((value) => value !== "")

/**
 * The tools a server offers, as `--tools`, `--toolsets`, `--read-only` and `--allow-writes` choose them (none chosen:
 * every read tool, and the write tools with `--allow-writes`); a name no tool or toolset has, a write chosen without
 * `--allow-writes`, or `--read-only` with `--allow-writes`, is a usage error naming what there is.
 */
export const select = (
  tools: ReadonlyArray<Tools.Tool>,
  chosen: {
    readonly tools: ReadonlyArray<string>
    readonly toolsets: ReadonlyArray<string>
    readonly allowWrites: boolean
    readonly readOnly: boolean
  }
): Either.Either<ReadonlyArray<Tools.Tool>, UsageError> => {
  if (chosen.readOnly && chosen.allowWrites) {
    return Either.left(new UsageError({ reason: "--read-only and --allow-writes say opposite things: give one" }))
  }
  const names = listed(chosen.tools)
  const sets = listed(chosen.toolsets)
  const unknownTools = names.filter((name) => !tools.some((tool) => tool.name === name))
  if (unknownTools.length > 0) {
    return Either.left(
      new UsageError({
        reason: `--tools: no tool is named ${unknownTools.join(", ")} (the tools: ${
          tools.map((tool) => tool.name).join(", ")
        })`
      })
    )
  }
  const known = toolsetsOf(tools)
  const unknownSets = sets.filter((set) => !known.includes(set))
  if (unknownSets.length > 0) {
    return Either.left(
      new UsageError({
        reason: `--toolsets: no toolset is named ${unknownSets.join(", ")} (the toolsets: ${known.join(", ")})`
      })
    )
  }
  const picked = names.length === 0 && sets.length === 0
    ? tools.filter((tool) => !tool.write || chosen.allowWrites)
    : tools.filter((tool) => names.includes(tool.name) || sets.includes(tool.toolset))
  const writes = picked.filter((tool) => tool.write)
  if (writes.length > 0 && !chosen.allowWrites) {
    return Either.left(
      new UsageError({
        reason: `${writes.map((tool) => tool.name).join(", ")} changes the ERP: offered only with --allow-writes`
      })
    )
  }
  if (picked.length === 0) return Either.left(new UsageError({ reason: "the tools chosen are none" }))
  return Either.right(picked)
}

const contractText = (options: {
  readonly resources: ReadonlyArray<Resource.Any>
  readonly limit: number
  readonly window: Duration.Duration
  readonly shared: boolean
  readonly allowWrites: boolean
  readonly checkConditions: boolean
}) =>
  [
    "# The ERP, as erp mcp serves it",
    "",
    "- An ERP's REST API (v2). Every answer is an envelope {\"result\": {\"code\", \"message\"}, \"data\"}; the " +
    "server reports errors with result.code 0: Unauthorized (the API key is refused), Not found, or another " +
    "message. A tool says them as an error you can read (isError, starting NotFound:, Unauthorized:, ApiError:, " +
    "RateLimited:, ConditionIgnored:, ...), never a crash.",
    ...options.resources.map((resource) =>
      `- ${resource.name}: list endpoint ${resource.list}${
        resource.get === undefined ? "" : `, get endpoint ${resource.get}`
      }; fields as the contract shows them: ${resource.fields.join(", ")} (records may have more, and real ones ` +
      `stray from the contract: empty, null or absent values, other forms). ${Tools.filtersSentence(resource)}`
    ),
    "- Records come exactly as the server wrote them: numbers are never rounded (12345678901234567890 stays so, " +
    "1.10 stays 1.10). Quote them as given, do not recompute them.",
    "- Lists are paged by the client (list_offset, list_count are its business). A list tool returns at most limit " +
    `records (default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT}) and says when more match; a count tool counts a ` +
    "whole list and returns no records: use it for \"how many\".",
    "- where {\"FIELD\": VALUE} keeps the records whose FIELD equals VALUE (list_condition[FIELD]=VALUE); FIELD is " +
    "letters, digits and _. erp://fields lists the fields the tools have seen. Records served are checked against " +
    "it" + (options.checkConditions ? "" : " (not by this server: started with --no-check-where)") + ": a record " +
    "without the field, or with a value that clearly differs, means the server ignored the condition, and the tool " +
    "fails with ConditionIgnored: rather than answering the whole list as the filtered one.",
    `- Rate limit: at most ${options.limit} requests per endpoint in any ${Duration.format(options.window)}` +
    (options.shared ? ", shared through Redis with the other processes using this API key" : "") + ". Every " +
    "request waits for its turn: calls made at once are answered at the server's pace, none refused for it. A " +
    "lookup costs one request; a list of up to limit records about one; a count one per 1,000 records and a few " +
    "more. Retries of failed reads and waits the server asks for are the client's. erp://limit says what is left.",
    "- The API key is this server's: no answer, error or log holds it, and no tool can show it.",
    options.allowWrites
      ? "- Writes: api_post changes the ERP. Ask the user before calling it."
      : "- Writes: none. This server is read-only (started without --allow-writes)."
  ].join("\n") + "\n"

const INSTRUCTIONS = "Reads an ERP through its REST API. Read erp://contract first. To look up one partner use " +
  "partners_get (by id or exact company name); to know how many match, use partners_count (never list to count); " +
  "partners_list returns at most limit records and, when there are more, a cursor to go on with. Records are the " +
  "server's JSON as written: quote numbers as given, and pass ids past 2^53 - 1 as strings of digits. Calls wait for " +
  "the rate limit; they are not refused for it. erp://endpoints (or api_endpoints) lists what can be called."

/** Values seen for a prompt's `partner`: ids and company names of the partners the tools have read, the last few. */
const makePartnersSeen = (max: number) => {
  const seen = new Set<string>()
  return {
    saw: (records: ReadonlyArray<unknown>) => {
      for (const record of records) {
        if (typeof record !== "object" || record === null) continue
        for (
          const value of [(record as Record<string, unknown>).company_name, (record as Record<string, unknown>).id]
        ) {
          // An id past 2^53 - 1 was read as a double: not offered, since its digits are not the server's.
          const said = typeof value === "string" ? value : Number.isSafeInteger(value) ? String(value) : undefined
          if (said === undefined || said === "") continue
          seen.delete(said)
          seen.add(said)
          if (seen.size > max) seen.delete(seen.values().next().value!)
        }
      }
    },
    starting: (typed: string) => {
      const lower = typed.toLowerCase()
      return [...seen].reverse().filter((value) => value.toLowerCase().startsWith(lower))
    }
  }
}

/** How a call ended, as the log says it (never an argument or a result). */
const callLine = (event: Protocol.CallEvent) =>
  `mcp: ${event.connection === undefined ? "" : `session ${event.connection} `}` +
  `${event.client === undefined ? "" : `(${event.client.slice(0, 60)}) `}${event.method}` +
  `${event.tool === undefined ? "" : ` ${event.tool}`}: ${event.outcome} in ${event.millis} ms`

/**
 * Runs the server (on stdio until stdin ends and the requests read are answered, or on HTTP until a signal), on the
 * client built from the settings, with logs on stderr only.
 */
export const serve = (resources: ReadonlyArray<Resource.Any>) => (args: McpArgs) => {
  const limits = makeLimitWatch()
  const shared = Option.isSome(args.redis) || (process.env.ERP_REDIS_URL ?? "") !== ""
  return Effect.scoped(Effect.gen(function*() {
    const client = yield* ErpClient.ErpClient
    const fields = Tools.makeFieldsSeen()
    const partners = makePartnersSeen(10_000)
    const partnerEndpoints = new Set(
      resources.filter((resource) => resource.name === "partners").flatMap((resource) =>
        resource.get === undefined ? [resource.list] : [resource.list, resource.get]
      )
    )
    const context: Tools.Context = {
      client,
      sawFields: (endpoint, records) => {
        fields.sawFields(endpoint, records)
        if (partnerEndpoints.has(endpoint)) partners.saw(records)
      },
      fieldsSeen: fields.fieldsSeen,
      maxLimit: MAX_LIMIT,
      defaultLimit: DEFAULT_LIMIT,
      checkConditions: !args.noCheckWhere,
      cursorSecret: Tools.makeCursorSecret()
    }
    const all = [
      ...resources.flatMap((resource) => Tools.resourceTools(context, resource)),
      ...Tools.apiTools(context, resources)
    ]
    const offered = yield* select(all, args)
    const refused = all.filter((tool) => tool.write && !args.allowWrites)
    const status = yield* limits.status
    const limit = status?.limit ?? 100
    const window = status?.window ?? Duration.seconds(30)
    const json = (read: () => unknown) => Effect.sync(() => JSON.stringify(read()))
    const server = Protocol.make({
      name: "erp",
      version: typeof ERP_CLI_VERSION === "string" ? ERP_CLI_VERSION : "dev",
      instructions: INSTRUCTIONS,
      tools: offered.map(definitionOf),
      unlisted: refused.map(refusedWrite),
      resources: [
        {
          uri: "erp://contract",
          name: "contract",
          description: "What to know before asking: the envelope and its errors, the records and their fields, " +
            "exact numbers, paging and counting, filters, the rate limit and what calls cost, writes.",
          mimeType: "text/markdown",
          annotations: { audience: ["assistant"], priority: 1 },
          read: Effect.succeed(contractText({
            resources,
            limit,
            window,
            shared,
            allowWrites: args.allowWrites,
            checkConditions: !args.noCheckWhere
          }))
        },
        {
          uri: "erp://fields",
          name: "fields",
          description: "The fields a where filter can name: those the contract declares, and those seen in the " +
            "records the tools have read so far, by endpoint (reading it sends no request).",
          mimeType: "application/json",
          annotations: { audience: ["assistant"] },
          read: json(() => ({
            declared: Object.fromEntries(resources.map((resource) => [resource.list, resource.fields])),
            filters: Object.fromEntries(
              resources.map((resource) => [
                resource.list,
                Object.fromEntries(resource.filters.map((filter) => [Tools.filterArgument(filter), filter.where]))
              ])
            ),
            seen: Object.fromEntries([...fields.fieldsSeen()].map(([endpoint, seen]) => [endpoint, [...seen]]))
          }))
        },
        {
          uri: "erp://endpoints",
          name: "endpoints",
          description: "What can be called: the kinds of record the contract declares (their list and get " +
            "endpoints, fields and filters), and the endpoints this server has called, with the fields seen in " +
            "their records (reading it sends no request). The service has over 500 endpoints; the api_ tools reach " +
            "any of them.",
          mimeType: "application/json",
          annotations: { audience: ["assistant"] },
          read: Effect.sync(() => Tools.catalogue(context, resources))
        },
        {
          uri: "erp://limit",
          name: "limit",
          description: "The client's rate limit (requests per endpoint in any window) and, for each endpoint used " +
            `last (at most ${LIMIT_ENDPOINTS}), the limit its last request was admitted under (the client's, or a ` +
            "stricter one learned from the server, in the server's window), the requests counted in that window and " +
            "what is left of the limit" +
            (shared ? " (counted with the other processes sharing it through Redis)." : "."),
          mimeType: "application/json",
          annotations: { audience: ["assistant"] },
          read: limits.status.pipe(
            Effect.map((now) => ({ endpoints: now?.endpoints ?? {} })),
            // Redis not answering: what is used of the limit is not known, and the resource says so.
            Effect.catchAll((error) => Effect.succeed({ unavailable: error.message })),
            Effect.map((now) =>
              JSON.stringify({
                limit,
                windowSeconds: Duration.toSeconds(window),
                shared: shared ? "redis" : "this process",
                ...now
              })
            )
          )
        }
      ],
      prompts: [
        {
          name: "ask_erp",
          title: "Ask the ERP",
          description: "Answer a question from the ERP, with its tools, as they are meant to be used.",
          arguments: [{
            name: "question",
            description: "The question, e.g. how many of our partners are customers?",
            required: true
          }],
          get: ({ question }) =>
            Effect.succeed(
              `Answer from the ERP, using the erp tools: ${question}\n\nRead erp://contract first. Use ` +
                "partners_get for one partner (by id or exact company name), partners_count or api_count for " +
                "\"how many\" (never list to count), partners_list or api_list for records (they return at most " +
                "limit, and a cursor when there are more). Quote values exactly as the records give them, and say " +
                "which tool answered."
            )
        },
        {
          name: "partner_summary",
          title: "Summarize a partner",
          description: "Summarize one partner: its company name, tax number, whether it is a customer, and its " +
            "other fields, as the ERP holds them.",
          arguments: [{
            name: "partner",
            description: "The partner's id (digits), or its exact company name. Completion offers the ids and " +
              "names of the partners read so far.",
            required: true
          }],
          get: ({ partner }) =>
            Effect.succeed(
              `Look up the partner ${JSON.stringify(partner)} with partners_get (${
                /^[0-9]+$/.test(partner) ? "id, as the string of digits given" : "company_name"
              }) and summarize it: company name, tax number, customer or not (is_customer), and any other fields, ` +
                "each exactly as the record gives it. If it is not found, say so; do not guess."
            ),
          complete: (_argument, value) => Effect.sync(() => partners.starting(value))
        }
      ],
      onCall: (event) =>
        args.http
          ? note(callLine(event))
          : Effect.logDebug(callLine(event))
    })
    if (args.http) {
      const token = yield* Config.option(Config.redacted(Environment.mcp.token))
      return yield* Http.serve(server, {
        host: args.host,
        port: Option.getOrElse(args.port, () => DEFAULT_PORT),
        // Set but empty is a token too: refused at start, rather than serving without one.
        token: Option.getOrUndefined(token),
        onListen: (url) =>
          note(
            `serving MCP at ${url} (${Option.isNone(token) ? "no token: loopback only" : "bearer token required"}); ` +
              "SIGINT or SIGTERM ends it"
          )
      }).pipe(
        Effect.catchIf((error) => error.settings, (error) => new UsageError({ reason: error.reason }))
      )
    }
    if (Option.isSome(args.port) || args.host !== "127.0.0.1") {
      return yield* new UsageError({ reason: "--host and --port are for --http: the stdio server listens on nothing" })
    }
    if (process.stdin.isTTY === true) {
      yield* note(
        "erp mcp speaks the Model Context Protocol on stdin and stdout, for an assistant that starts it " +
          "(erp mcp --help); Ctrl-C ends it"
      )
    }
    // Stopped by a signal, the server lets go of stdin, which would otherwise keep the process for a second.
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        if (!process.stdin.readableEnded) process.stdin.destroy()
      })
    )
    yield* Stdio.serve(server.connect(), {
      lines: Stdin.lines,
      write: (line) => Sink.writeStdout(`${line}\n`)
    })
  })).pipe(
    Effect.provide(clientLayer({ redisUrl: args.redis, tapLimiter: limits.tap })),
    Effect.provide(logging(args.verbose))
  )
}
