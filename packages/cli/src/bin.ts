#!/usr/bin/env node
/**
 * The `erp` executable.
 *
 * @since 0.1.0
 */
import * as Fs from "node:fs"
import { fileURLToPath } from "node:url"
import * as V8 from "node:v8"
// Types only: erased, so nothing is loaded before the signals are heard.
import type { Signals } from "./Cli.js"
import * as CodeCache from "./internal/codeCache.js"
import type * as Entry from "./internal/entry.js"
import { colorEnabled, type HelpIndex } from "./internal/helpPath.js"
import { quickAnswer } from "./internal/quick.js"

// The package's version and the hashes of the command's bundles (`erp.cjs`, and `mcp.cjs` for `erp mcp`), written in by
// the build (scripts/build-cli.ts).
declare const ERP_CLI_VERSION: string
declare const ERP_BUNDLE_HASH: string
declare const ERP_MCP_BUNDLE_HASH: string

// `erp --version` and `--help` need nothing of the command (`internal/quick.ts`): answered here, they take about what
// node itself takes to start (`pnpm bench startup`). A reader that closes stdout early is no failure.
const readHelp = (): HelpIndex | undefined => {
  try {
    return JSON.parse(Fs.readFileSync(new URL("./help.json", import.meta.url), "utf8"))
  } catch {
    return undefined
  }
}
const quick = quickAnswer(process.argv.slice(2), {
  version: ERP_CLI_VERSION,
  help: readHelp(),
  color: colorEnabled(process.stdout.isTTY, process.env)
})
if (quick === undefined) run()
else {
  process.stdout.on("error", () => {})
  process.stdout.write(quick)
}

function run() {
  // Signals are heard from the first moment. Loading the command below takes tens of milliseconds (more on a first run,
  // before the code cache is written), and a SIGINT or SIGTERM then met Node's default action: the process died of the
  // signal, without a word. They wait here until the command listens (Cli.main), which then stops in order. The
  // listeners stay until the process exits: Node's default action never ends a stop half-way (NodeRuntime.runMain
  // removed its own at the first signal, so the copy that `timeout` sends to the process group a moment later killed
  // the process while it was removing or keeping its files).
  type StopSignal = "SIGINT" | "SIGTERM"
  const heard: Array<StopSignal> = []
  let hear = (signal: StopSignal) => {
    heard.push(signal)
  }
  process.on("SIGINT", () => hear("SIGINT"))
  process.on("SIGTERM", () => hear("SIGTERM"))

  // Start-up (`pnpm bench startup`): the HTTP parser of Node's own fetch (undici) is WebAssembly. On Node 20,
  // optimizing it cost a process about 30 MB of peak memory that a command sending a few requests never earns back, and
  // time (`erp partners get --id 5`: 68 MB and 390 ms with the baseline compiler only, 99 MB and 523 ms without); on
  // Node 22 and 24 the flag saves no memory (80 and 88 MB either way) and costs time (Node 24: 319 ms with it, 277 ms
  // without; Node 22: 392 ms against 345 ms), so it is set on Node 20 only. V8 reads it when the parser is compiled, so
  // it is set before the command is loaded (below).
  const nodeMajor = Number(process.versions.node.split(".")[0])
  const flags: Array<string> = []
  if (nodeMajor < 22) flags.push("--liftoff-only")
  // Memory (`pnpm bench memory`): an export holds a few pages at a time, but V8 grows its heap lazily and an export of a
  // million partners peaked near 190 MB. Favouring size keeps it under 100 MB and flat (1,000,000 partners against
  // 100,000: 1.07), for about 60% more CPU, which the rate limit (a page a request, 100 requests per 30 s) never lets
  // an export notice. It is no cap: a large drift-safe export, whose ids must stay in memory, still gets what it needs.
  // A command of a few requests (`get`, `post`) has no heap to keep small, and on Node 22 and 24 the flag costs its
  // start about 33 ms (`erp partners get --id 5`, Node 24: 277 ms without, 310 ms with, 88 MB either way); on Node 20
  // it costs nothing there and saves 4 MB, so it stays.
  const shortCommand = /^(get|post)$/.test(process.argv[3] ?? "")
  if (nodeMajor < 22 || !shortCommand) flags.push("--optimize-for-size")
  // Peak memory of a short command on Node 20: TurboFan, optimizing the few functions a lookup makes hot, cost it about
  // 3.5 MB (`erp partners get --id 5`: 73.6 MB with it, 70.2 MB without) and time (hyperfine, 40 runs: user CPU 239 ms
  // with it, 203 ms without). A batch read from --stdin may make thousands of lookups: it keeps the optimizer.
  if (nodeMajor < 22 && shortCommand && !process.argv.includes("--stdin")) flags.push("--no-opt")
  for (const flag of flags) V8.setFlagsFromString(flag)

  // The command (`internal/entry.ts`), one CommonJS bundle loaded with the code of an earlier run (`codeCache.ts`).
  // `erp mcp` loads the same command with the MCP server (`internal/mcpEntry.ts`), a bundle of its own: no other
  // command reads or compiles the MCP server.
  const mcp = process.argv[2] === "mcp"
  const entry = CodeCache.load<typeof Entry>(fileURLToPath(new URL(mcp ? "./mcp.cjs" : "./erp.cjs", import.meta.url)), {
    bundleHash: mcp ? ERP_MCP_BUNDLE_HASH : ERP_BUNDLE_HASH,
    flags
  })

  const signals: Signals = {
    listen: (listener) => {
      hear = listener
      for (const signal of heard.splice(0)) listener(signal)
    },
    exitNow: (code) => process.exit(code)
  }

  entry.start(process.argv, signals, (code) => {
    // The command has ended and closed what it opened: the process ends when Node has nothing left to do (stdout
    // written), with `code`, and not by `process.exit`. `process.exit` shuts V8's worker threads down while the main
    // thread still holds the heap, and a worker compiling in the background that waits for the main thread to collect
    // garbage then waits forever, and so does the exit (nodejs/node#54918, open in Node 24.21): about one Ctrl-C'd
    // export in ten on Node 24 hung after its last line (CI: telemetry.test.ts). An ending event loop disposes of the
    // heap first, which wakes such a worker. Should anything still hold the process a second later, it ends then, once
    // stdout is written; a signal meanwhile ends it at once.
    process.exitCode = code
    hear = () => process.exit(code)
    setTimeout(() => process.stdout.write("", () => process.exit(code)), 1_000).unref()
  })
}
