/**
 * The demo (`pnpm demo`): starts the sandbox in this process, runs `erp partners list --customers` against it with
 * progress on the terminal, writes the export to a file and prints a summary.
 */
import { Command } from "@effect/platform"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Sandbox } from "@erp-client/sandbox"
import { Clock, Console, Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"

// The sandbox's window is scaled down from 100 per 30 s so the limiter visibly works within a few seconds.
const LIMIT = 20
const WINDOW = "1 second"
const OUTPUT = Path.join("build", "demo", "customers.ndjson")

const program = Effect.gen(function*() {
  const sandbox = yield* Sandbox.Sandbox
  yield* Console.log(
    `sandbox: ${sandbox.baseUrl}, ${sandbox.partnerCount} partners, limit ${LIMIT} requests per ${WINDOW} per endpoint`
  )
  const args = ["partners", "list", "--customers", "--page-size", "50", "--concurrency", "8", "--output", OUTPUT]
  yield* Console.log(`$ erp ${args.join(" ")}`)
  const start = yield* Clock.currentTimeMillis
  const exitCode = yield* Command.make(process.execPath, "scripts/erp.js", ...args).pipe(
    Command.env({
      ERP_BASE_URL: sandbox.baseUrl,
      ERP_API_KEY: sandbox.apiKey,
      ERP_RATE_LIMIT: String(LIMIT),
      ERP_RATE_WINDOW: WINDOW
    }),
    // Progress goes to stderr when it is a terminal: hand it ours.
    Command.stderr("inherit"),
    Command.stdout("inherit"),
    Command.exitCode
  )
  const elapsed = (yield* Clock.currentTimeMillis) - start
  if (exitCode !== 0) return yield* Effect.fail(`erp exited with ${exitCode}`)
  const lines = Fs.readFileSync(OUTPUT, "utf8").trimEnd().split("\n")
  const customers = lines.filter((line) => JSON.parse(line).is_customer === 1).length
  const stats = yield* sandbox.stats
  yield* Console.log(
    [
      // erp's own line said what it wrote; this one checks it.
      `read back: ${lines.length} records, ${customers} with is_customer = 1`,
      `time: ${(elapsed / 1000).toFixed(2)} s including start-up`,
      `server: ${
        stats.byEndpoint["/partner/list"] ?? 0
      } list requests, ${stats.tooManyRequests} answered 429, at most ${
        stats.maxObservedInWindow["/partner/list"] ?? 0
      } in any ${WINDOW} window (limit ${LIMIT})`
    ].join("\n")
  )
})

const SandboxLive = Sandbox.layer({
  partners: 5_000,
  rateLimit: { limit: LIMIT, window: WINDOW, resetUnit: "epoch-millis" },
  latency: { base: "15 millis", jitter: "10 millis" }
})

program.pipe(
  Effect.provide(Layer.merge(SandboxLive, NodeContext.layer)),
  NodeRuntime.runMain
)
