#!/usr/bin/env node
/**
 * The `erp` executable.
 *
 * @since 0.1.0
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import * as Cli from "./Cli.js"

Cli.main(process.argv).pipe(
  Effect.provide(NodeContext.layer),
  // No pretty logger: it would print to stdout, which carries data only; Cli.ts sends logs to stderr itself.
  NodeRuntime.runMain({ disableErrorReporting: true, disablePrettyLogger: true, teardown: Cli.teardown })
)
