#!/usr/bin/env node
/**
 * The `erp` executable.
 *
 * @since 0.1.0
 */
import * as V8 from "node:v8"

// Start-up (`pnpm bench startup`): the HTTP parser of undici, and of Node's own fetch that undici wakes, is
// WebAssembly, and optimizing it costs a process about 30 MB of peak memory that a command sending a few requests
// never earns back; the baseline compiler is enough for it. V8 reads the flag when the parser is compiled, so it is
// set before anything else is loaded: hence the dynamic imports below.
V8.setFlagsFromString("--liftoff-only")
// Memory (`pnpm bench memory`): an export holds a few pages at a time, but V8 grows its heap lazily and an export of a
// million partners peaked near 190 MB. Favouring size keeps it under 100 MB and flat (1,000,000 partners against
// 100,000: 1.07), for about 60% more CPU, which the rate limit (a page a request, 100 requests per 30 s) never lets
// an export notice. It is no cap: a large drift-safe export, whose ids must stay in memory, still gets what it needs.
V8.setFlagsFromString("--optimize-for-size")

const [NodeContext, NodeRuntime, Effect, Cli] = await Promise.all([
  import("@effect/platform-node/NodeContext"),
  import("@effect/platform-node/NodeRuntime"),
  import("effect/Effect"),
  import("./Cli.js")
])

Cli.main(process.argv).pipe(
  Effect.provide(NodeContext.layer),
  // No pretty logger: it would print to stdout, which carries data only; Cli.ts sends logs to stderr itself.
  NodeRuntime.runMain({ disableErrorReporting: true, disablePrettyLogger: true, teardown: Cli.teardown })
)
