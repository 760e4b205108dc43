/**
 * `erp mcp`: the command as the parser and `--help` know it, its options and its description. The server itself
 * (`mcpServer.ts`, with its protocol and transports) is not here: it is in a bundle of its own (`dist/mcp.cjs`), which the
 * executable loads only for `erp mcp` and which provides it as `McpServe`, so that no other command loads or
 * compiles it (`pnpm bench startup`).
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { type CommonArgs, redis, repeatable, verbose } from "./common.js"

/** The options of `erp mcp`. */
export interface McpArgs extends CommonArgs {
  readonly allowWrites: boolean
  readonly readOnly: boolean
  readonly noCheckWhere: boolean
  /** Tools and toolsets chosen (each may be given again, or as a comma-separated list); none chosen: all. */
  readonly tools: ReadonlyArray<string>
  readonly toolsets: ReadonlyArray<string>
  readonly http: boolean
  readonly host: string
  readonly port: Option.Option<number>
}

/** The port `erp mcp --http` serves on when `--port` is left out. */
export const DEFAULT_PORT = 8383

/** Runs the MCP server until stdin ends (or a signal stops it): provided by the bundle that holds it. */
export class McpServe extends Context.Tag("@erp-client/cli/McpServe")<
  McpServe,
  (args: McpArgs) => Effect.Effect<void, unknown>
>() {}

/** `erp mcp` was run from a bundle without the server (`Cli.main` from source, or `erp.cjs` loaded by hand). */
export class McpUnavailable extends Schema.TaggedError<McpUnavailable>()("McpUnavailable", {}) {
  override get message(): string {
    return "this build of erp has no MCP server: run the erp executable (dist/bin.js), which loads it for erp mcp"
  }
}

export const mcpSummary = "Serve the ERP to AI assistants: an MCP server on stdin/stdout or HTTP (read-only by default)"

export const mcpCommand = Command.make(
  "mcp",
  {
    allowWrites: Options.boolean("allow-writes").pipe(
      Options.withDescription(
        "Offer the api_post tool, which POSTs to any endpoint (marked destructive, not read-only, in its " +
          "annotations). Without it the server is read-only: api_post is not listed, and a call to it is refused."
      )
    ),
    readOnly: Options.boolean("read-only").pipe(
      Options.withDescription(
        "Offer no tool that changes the ERP. This is the default; the flag says so in a host's configuration, and " +
          "cannot be given with --allow-writes."
      )
    ),
    tools: Options.text("tools").pipe(
      Options.withPseudoName("NAME[,NAME]"),
      Options.withDescription(
        "Offer only these tools (a comma-separated list, or the flag again), e.g. --tools partners_get,partners_count. " +
          "With --toolsets too, the tools of both. A name that no tool has is refused, with the names there are."
      ),
      repeatable
    ),
    toolsets: Options.text("toolsets").pipe(
      Options.withPseudoName("SET[,SET]"),
      Options.withDescription(
        "Offer only the tools of these toolsets: partners (and each other declared kind of record: its _get, _list " +
          "and _count), api (api_get, api_list, api_count, api_endpoints), writes (api_post: needs --allow-writes)."
      ),
      repeatable
    ),
    http: Options.boolean("http").pipe(
      Options.withDescription(
        "Serve MCP's Streamable HTTP transport at http://HOST:PORT/mcp instead of stdio, so that several assistants " +
          "share one process and one rate limit. With ERP_MCP_TOKEN set, every request needs " +
          "\"Authorization: Bearer TOKEN\"; without it the server serves loopback only and refuses to start on another " +
          "address. Each client's calls are logged on stderr (tool, time, outcome; never an argument, the key or the " +
          "token)."
      )
    ),
    host: Options.text("host").pipe(
      Options.withPseudoName("HOST"),
      Options.withDefault("127.0.0.1"),
      Options.withDescription("With --http: the address to listen on (a non-loopback one needs ERP_MCP_TOKEN).")
    ),
    port: Options.integer("port").pipe(
      Options.withPseudoName("N"),
      Options.optional,
      Options.withDescription(`With --http: the port to listen on (default ${DEFAULT_PORT}; 0: one the OS picks).`)
    ),
    noCheckWhere: Options.boolean("no-check-where").pipe(
      Options.withDescription(
        "Take the records a list or count tool is served as they come. Without it, each is checked against the " +
          "tool's where and filters: a record without the field, or with a value that clearly differs, means the " +
          "server ignored the condition, and the tool fails with ConditionIgnored. For a server that matches more " +
          "loosely than the check allows."
      )
    ),
    redis,
    verbose
  },
  (args) =>
    Effect.flatMap(
      Effect.serviceOption(McpServe),
      (serve) => serve._tag === "Some" ? serve.value(args) : new McpUnavailable()
    )
).pipe(Command.withDescription(
  "A Model Context Protocol server over stdio, for desktop assistants and IDEs: they start it, write JSON-RPC to its " +
    "stdin and read the answers from its stdout (nothing else is written there; logs go to stderr, with --verbose " +
    "retries and waits too); or, with --http, one server on HTTP for a team's assistants. It reads ERP_BASE_URL, " +
    "ERP_API_KEY and the other settings as every command does, and every call goes through the same client: the rate " +
    "limit (shared with other processes by --redis), retries, records exactly as the server wrote them, and the key " +
    "in no answer, error or log. Tools: partners_get, partners_list, partners_count, api_get, api_list, api_count, " +
    "api_endpoints (and api_post with --allow-writes), chosen with --tools and --toolsets; list tools page by cursor, " +
    "and calls that make many requests send progress. Resources erp://contract, erp://fields, erp://endpoints, " +
    "erp://limit; prompts ask_erp, partner_summary. An assistant's configuration: " +
    "{\"command\": \"erp\", \"args\": [\"mcp\"], \"env\": {\"ERP_BASE_URL\": \"…\", \"ERP_API_KEY\": \"…\"}}. The " +
    "stdio server ends with exit 0 when stdin ends, once the requests read are answered; SIGINT and SIGTERM stop " +
    "either in order."
))
