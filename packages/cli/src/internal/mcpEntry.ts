/**
 * The command as the executable runs it for `erp mcp`: the whole command (`entry.ts`) with the MCP server provided
 * (`McpServe`). `bin.ts` loads this module's bundle (`dist/mcp.cjs`, built by scripts/build-cli.ts) only for
 * `erp mcp`: the server and its transports are in no other command's bundle, so no other command loads or compiles
 * them.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import * as Cli from "../Cli.js"
import { McpServe } from "./mcpCommand.js"
import { serve } from "./mcpServer.js"

/** As `entry.start`, with the MCP server. */
export const start = (argv: ReadonlyArray<string>, signals: Cli.Signals, onEnd: (code: number) => void): void => {
  const keepAlive = setInterval(() => {}, 2 ** 31 - 1)
  const fiber = Effect.runFork(
    Cli.main(argv, { signals }).pipe(
      Effect.provideService(McpServe, serve(Cli.resources)),
      Effect.provide(NodeContext.layer)
    )
  )
  fiber.addObserver((exit) => {
    clearInterval(keepAlive)
    Cli.teardown(exit, onEnd)
  })
}
