/**
 * `erp mcp`: the command as the parser and `--help` know it, its options and its description. The server itself
 * (`mcpServer.ts`, on @effect/ai and @effect/rpc) is not here: it is in a bundle of its own (`dist/mcp.cjs`), which the
 * executable loads only for `erp mcp` and which provides it as `McpServe`, so that no other command loads or
 * compiles it (`pnpm bench startup`).
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { type CommonArgs, redis, verbose } from "./common.js"

/** The options of `erp mcp`. */
export interface McpArgs extends CommonArgs {
  readonly allowWrites: boolean
  readonly noCheckWhere: boolean
}

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

export const mcpSummary = "Serve the ERP to AI assistants: an MCP server on stdin/stdout (read-only by default)"

export const mcpCommand = Command.make(
  "mcp",
  {
    allowWrites: Options.boolean("allow-writes").pipe(
      Options.withDescription(
        "Offer the api_post tool, which POSTs to any endpoint (marked destructive, not read-only, in its " +
          "annotations). Without it the server is read-only: api_post is not listed, and a call to it is refused."
      )
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
    "retries and waits too). It reads ERP_BASE_URL, ERP_API_KEY and the other settings as every command does, and " +
    "every call goes through the same client: the rate limit (shared with other processes by --redis), retries, " +
    "records exactly as the server wrote them, and the key in no answer, error or log. Tools: partners_get, " +
    "partners_list, partners_count, api_get, api_list, api_count (and api_post with --allow-writes); resources " +
    "erp://contract, erp://fields, erp://limit; prompts ask_erp, partner_summary. An assistant's configuration: " +
    "{\"command\": \"erp\", \"args\": [\"mcp\"], \"env\": {\"ERP_BASE_URL\": \"…\", \"ERP_API_KEY\": \"…\"}}. The " +
    "server ends with exit 0 when stdin ends, once the requests read are answered; SIGINT and SIGTERM stop it in order."
))
