/**
 * `erp mcp`'s server: @effect/ai's `McpServer` on the command line's client, with the tools of `mcpTools.ts`, three
 * resources and two prompts, over the stdio transport of `mcpStdio.ts`. In a bundle of its own (`dist/mcp.cjs`),
 * loaded only by `erp mcp` (see `mcpCommand.ts`).
 *
 * Tools are registered with `McpServer`'s `addTool`, where the answer's text is ours: `registerToolkit` writes a
 * tool's result with `JSON.stringify` of its value, which would send `12345678901234567890` as `12345678901234567000`.
 */
import * as McpSchema from "@effect/ai/McpSchema"
import * as McpServer from "@effect/ai/McpServer"
import * as RpcServer from "@effect/rpc/RpcServer"
import * as ErpClient from "@erp-client/client/ErpClient"
import type * as ErpRateLimiter from "@erp-client/client/ErpRateLimiter"
import type * as Resource from "@erp-client/streams/Resource"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Sink from "../Sink.js"
import { clientLayer } from "./clientLayer.js"
import { logging, note } from "./common.js"
import type { McpArgs } from "./mcpCommand.js"
import * as Stdio from "./mcpStdio.js"
import * as Tools from "./mcpTools.js"
import * as Stdin from "./stdin.js"

// The package's version, written in by the build (scripts/build-cli.ts); "dev" when run from source.
declare const ERP_CLI_VERSION: string | undefined

const DEFAULT_LIMIT = 100
const MAX_LIMIT = 1_000

/** The fields of the records the tools have read, by endpoint (for `erp://fields`). */
const makeFieldsSeen = () => {
  const seen = new Map<string, Set<string>>()
  return {
    saw: (endpoint: string, records: ReadonlyArray<unknown>) => {
      let fields = seen.get(endpoint)
      if (fields === undefined) seen.set(endpoint, fields = new Set())
      for (const record of records) {
        if (typeof record === "object" && record !== null && !Array.isArray(record)) {
          for (const field of Object.keys(record)) fields.add(field)
        }
      }
    },
    byEndpoint: (): Record<string, ReadonlyArray<string>> =>
      Object.fromEntries([...seen].map(([endpoint, fields]) => [endpoint, [...fields]]))
  }
}

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
              admitted.set(key, acquired)
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
              [key.split(":").slice(2).join(":"), {
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

const textResult = (texts: ReadonlyArray<string>, isError: boolean) =>
  new McpSchema.CallToolResult({
    isError,
    content: texts.map((text) => McpSchema.TextContent.make({ type: "text", text }))
  })

// A tool's failure as the assistant reads it: the error's tag and its message (the client's messages never hold the
// key: docs/ARCHITECTURE.md, "Redaction").
const failureResult = (error: Tools.ToolFailure) => textResult([`${error._tag}: ${error.message}`], true)

const register = (registry: McpServer.McpServer["Type"], tool: Tools.Tool) =>
  registry.addTool({
    tool: new McpSchema.Tool({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: tool.inputSchema,
      annotations: new McpSchema.ToolAnnotations({
        title: tool.title,
        readOnlyHint: !tool.write,
        destructiveHint: tool.write,
        idempotentHint: !tool.write,
        // The ERP is the tools' whole world.
        openWorldHint: false
      })
    }),
    handle: (args) =>
      tool.call(args).pipe(
        Effect.match({
          onSuccess: (answer) => textResult(answer.texts, false),
          onFailure: failureResult
        }),
        // A cancelled call (notifications/cancelled) stays interrupted: it is not answered. Anything else unexpected
        // is an error the assistant reads, and the server goes on.
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.interrupt
            : Effect.succeed(
              textResult([`InternalError: ${Cause.pretty(cause).split("\n")[0]}`], true)
            )
        )
      )
  })

/**
 * The registry as the server runs it without `--allow-writes`: a call to a write tool (not listed) is answered with
 * an error the assistant can read and pass on, rather than "tool not found".
 */
const refusingWrites = (
  registry: McpServer.McpServer["Type"],
  writes: ReadonlyArray<string>
): McpServer.McpServer["Type"] =>
  Object.create(registry, {
    callTool: {
      value: (request: typeof McpSchema.CallTool.payloadSchema.Type) =>
        writes.includes(request.name)
          ? Effect.succeed(textResult([
            `WritesNotAllowed: ${request.name} changes the ERP, and this server is read-only: it was started ` +
            "without --allow-writes (erp mcp --allow-writes offers it)."
          ], true))
          : registry.callTool(request)
    }
  })

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
  "partners_list returns at most limit records and says when there are more. Records are the server's JSON as " +
  "written: quote numbers as given. Calls wait for the rate limit; they are not refused for it."

/**
 * Runs the server until stdin ends and the requests read are answered (or stdout's reader goes, or a signal stops
 * the command), on the client built from the settings, with logs on stderr only.
 */
export const serve = (resources: ReadonlyArray<Resource.Any>) => (args: McpArgs) => {
  const limits = makeLimitWatch()
  const shared = Option.isSome(args.redis) || (process.env.ERP_REDIS_URL ?? "") !== ""
  return Effect.scoped(Effect.gen(function*() {
    const client = yield* ErpClient.ErpClient
    const fields = makeFieldsSeen()
    const context: Tools.Context = {
      client,
      sawFields: fields.saw,
      maxLimit: MAX_LIMIT,
      defaultLimit: DEFAULT_LIMIT,
      checkConditions: !args.noCheckWhere
    }
    const tools = [
      ...resources.flatMap((resource) => Tools.resourceTools(context, resource)),
      ...Tools.apiTools(context)
    ]
    const writes = tools.filter((tool) => tool.write).map((tool) => tool.name)
    const registry = yield* McpServer.McpServer.make
    for (const tool of tools) {
      if (!tool.write || args.allowWrites) yield* register(registry, tool)
    }
    const status = yield* limits.status
    const limit = status?.limit ?? 100
    const window = status?.window ?? Duration.seconds(30)
    const resourcesAndPrompts = Effect.all([
      McpServer.registerResource({
        uri: "erp://contract",
        name: "contract",
        description: "What to know before asking: the envelope and its errors, the records and their fields, " +
          "exact numbers, paging and counting, filters, the rate limit and what calls cost, writes.",
        mimeType: "text/markdown",
        audience: ["assistant"],
        priority: 1,
        content: Effect.succeed(contractText({
          resources,
          limit,
          window,
          shared,
          allowWrites: args.allowWrites,
          checkConditions: !args.noCheckWhere
        }))
      }),
      McpServer.registerResource({
        uri: "erp://fields",
        name: "fields",
        description: "The fields a where filter can name: those the contract declares, and those seen in the " +
          "records the tools have read so far, by endpoint (reading it sends no request).",
        mimeType: "application/json",
        audience: ["assistant"],
        content: Effect.sync(() =>
          JSON.stringify({
            declared: Object.fromEntries(resources.map((resource) => [resource.list, resource.fields])),
            filters: Object.fromEntries(
              resources.map((resource) => [
                resource.list,
                Object.fromEntries(resource.filters.map((filter) => [Tools.filterArgument(filter), filter.where]))
              ])
            ),
            seen: fields.byEndpoint()
          })
        )
      }),
      McpServer.registerResource({
        uri: "erp://limit",
        name: "limit",
        description: "The client's rate limit (requests per endpoint in any window) and, for each endpoint used so " +
          "far, the limit its last request was admitted under (the client's, or a stricter one learned from the " +
          "server, in the server's window), the requests counted in that window and what is left of the limit" +
          (shared ? " (counted with the other processes sharing it through Redis)." : "."),
        mimeType: "application/json",
        audience: ["assistant"],
        content: Effect.map(limits.status, (now) =>
          JSON.stringify({
            limit,
            windowSeconds: Duration.toSeconds(window),
            shared: shared ? "redis" : "this process",
            endpoints: now?.endpoints ?? {}
          }))
      }),
      McpServer.registerPrompt({
        name: "ask_erp",
        description: "Answer a question from the ERP, with its tools, as they are meant to be used.",
        parameters: Schema.Struct({
          question: Schema.String.annotations({
            description: "The question, e.g. how many of our partners are customers?"
          })
        }),
        content: ({ question }) =>
          Effect.succeed(
            `Answer from the ERP, using the erp tools: ${question}\n\nRead erp://contract first. Use ` +
              "partners_get for one partner (by id or exact company name), partners_count or api_count for \"how " +
              "many\" (never list to count), partners_list or api_list for records (they return at most limit and " +
              "say when there are more). Quote values exactly as the records give them, and say which tool answered."
          )
      }),
      McpServer.registerPrompt({
        name: "partner_summary",
        description: "Summarize one partner: its company name, tax number, whether it is a customer, and its other " +
          "fields, as the ERP holds them.",
        parameters: Schema.Struct({
          partner: Schema.String.annotations({ description: "The partner's id, or its exact company name." })
        }),
        content: ({ partner }) =>
          Effect.succeed(
            `Look up the partner ${JSON.stringify(partner)} with partners_get (${
              /^[0-9]+$/.test(partner) ? "id" : "company_name"
            }) and summarize it: company name, tax number, customer or not (is_customer), and any other fields, ` +
              "each exactly as the record gives it. If it is not found, say so; do not guess."
          )
      })
    ], { discard: true }).pipe(Effect.provideService(McpServer.McpServer, registry))
    yield* resourcesAndPrompts
    const stdio = yield* Stdio.make({
      lines: Stdin.lines,
      write: (line) => Sink.writeStdout(`${line}\n`),
      instructions: INSTRUCTIONS
    })
    yield* McpServer.run({ name: "erp", version: typeof ERP_CLI_VERSION === "string" ? ERP_CLI_VERSION : "dev" }).pipe(
      Effect.provideService(McpServer.McpServer, args.allowWrites ? registry : refusingWrites(registry, writes)),
      Effect.provideService(RpcServer.Protocol, stdio.protocol),
      Effect.forkScoped
    )
    if (process.stdin.isTTY === true) {
      yield* note(
        "erp mcp speaks the Model Context Protocol on stdin and stdout, for an assistant that starts it " +
          "(erp mcp --help); Ctrl-C ends it"
      )
    }
    yield* stdio.done
  })).pipe(
    Effect.provide(clientLayer({ redisUrl: args.redis, tapLimiter: limits.tap })),
    Effect.provide(logging(args.verbose))
  )
}
