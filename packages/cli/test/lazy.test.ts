import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Fs from "node:fs"
import { SourceMap } from "node:module"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { erp, ROOT, startSandbox } from "./harness.js"

// What the compiled command runs, told by V8's coverage of the run (NODE_V8_COVERAGE): the files it loaded, and in
// its bundle (`dist/erp.cjs`, which holds all of the command) the functions that ran, mapped back to our sources
// through the bundle's source map (written by the build, not shipped). A module the bundle holds but the run never
// imported has no function that ran: esbuild wraps a module reached by `import()` in a function of its own.
type Started = Awaited<ReturnType<typeof startSandbox>>

const ENTRY = Path.join(ROOT, "packages/cli/dist/erp.cjs")
const ENTRY_MAP = Path.join(ROOT, "packages/cli/build/erp.cjs.map")

let env: Started
let dir: string

// The compiled files (relative to the root) that hold any source whose path contains `source`.
const outputsHolding = (source: string): Array<string> => {
  const info = JSON.parse(Fs.readFileSync(Path.join(ROOT, "packages/cli/build/bundle.json"), "utf8"))
  return Object.entries(info.outputs as Record<string, Array<string>>)
    .filter(([, inputs]) => inputs.some((input) => input.includes(source)))
    .map(([output]) => output)
}

interface Coverage {
  readonly url: string
  readonly functions: ReadonlyArray<
    { readonly ranges: ReadonlyArray<{ readonly startOffset: number; readonly count: number }> }
  >
}

// Offsets in the bundle as lines and columns (zero-based, as source maps count them).
const positionIn = (text: string) => {
  const starts = [0]
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1)
  return (offset: number) => {
    let lo = 0
    let hi = starts.length - 1
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1
      if (starts[mid]! <= offset) lo = mid
      else hi = mid - 1
    }
    return { line: lo, column: offset - starts[lo]! }
  }
}

const ran = async (name: string, args: ReadonlyArray<string>, options: Parameters<typeof erp>[1] = {}) => {
  const coverage = Path.join(dir, name)
  const run = await erp(args, { ...options, via: "node", env: { ...options.env, NODE_V8_COVERAGE: coverage } })
  const results: Array<Coverage> = Fs.readdirSync(coverage).flatMap((file) =>
    JSON.parse(Fs.readFileSync(Path.join(coverage, file), "utf8")).result as Array<Coverage>
  )
  const pathOf = (url: string) => url.startsWith("file:") ? fileURLToPath(url) : url
  // Files loaded (relative to the root), Node's own modules left out.
  const loaded = results.map((r) => pathOf(r.url)).filter((p) => Path.isAbsolute(p)).map((p) => Path.relative(ROOT, p))
  // Our sources in the bundle with a function that ran.
  const sources = new Set<string>()
  const bundle = results.find((r) => pathOf(r.url) === ENTRY)
  if (bundle !== undefined) {
    const map = new SourceMap(JSON.parse(Fs.readFileSync(ENTRY_MAP, "utf8")))
    const at = positionIn(Fs.readFileSync(ENTRY, "utf8"))
    for (const fn of bundle.functions) {
      const own = fn.ranges[0]
      if (own === undefined || own.count === 0) continue
      const { line, column } = at(own.startOffset)
      const entry = map.findEntry(line, column) as { readonly originalSource?: string }
      if (entry.originalSource !== undefined) {
        sources.add(Path.relative(ROOT, Path.resolve(Path.dirname(ENTRY_MAP), entry.originalSource)))
      }
    }
  }
  return { run, loaded, sources: [...sources] }
}

const anyFrom = (sources: ReadonlyArray<string>, prefix: string) => sources.some((source) => source.startsWith(prefix))

beforeAll(async () => {
  env = await startSandbox({ partners: 20 })
  dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "erp-lazy-"))
})

afterAll(async () => {
  await env?.close()
  if (dir !== undefined) Fs.rmSync(dir, { recursive: true, force: true })
})

describe("the compiled erp command runs what it needs only", () => {
  it("is three files: the executable, the command, the command with the MCP server (no ioredis, no npm undici)", () => {
    expect(outputsHolding("packages/cli/src/bin.ts")).toEqual(["packages/cli/dist/bin.js"])
    for (const source of ["packages/cli/src/Cli.ts", "packages/sandbox/src/", "packages/client/src/", "@effect/cli"]) {
      expect(outputsHolding(source), source).toEqual(["packages/cli/dist/erp.cjs", "packages/cli/dist/mcp.cjs"])
    }
    // Only `erp mcp` reads and compiles the MCP server and its transports.
    for (
      const source of [
        "packages/cli/src/internal/mcpServer.ts",
        "packages/cli/src/internal/mcpProtocol.ts",
        "packages/cli/src/internal/mcpHttp.ts"
      ]
    ) {
      expect(outputsHolding(source), source).toEqual(["packages/cli/dist/mcp.cjs"])
    }
    // The protocol is the server's own (mcpProtocol.ts says why): no @effect/ai or @effect/rpc in any bundle.
    for (const source of ["/@effect/ai/", "/@effect/rpc/"]) expect(outputsHolding(source), source).toEqual([])
    expect(outputsHolding("/ioredis/")).toEqual([])
    // Requests go through Node's own fetch: the npm undici (560 KB, a fifth of a lookup's start) is not bundled.
    expect(outputsHolding("node_modules/undici/")).toEqual([])
  })

  it("erp partners get runs no sandbox server, Redis limiter or telemetry, and loads no ioredis", async () => {
    const { run, loaded, sources } = await ran("get", ["partners", "get", "--id", "3"], { env: env.env })
    expect(run.stderr).toBe("")
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout).id).toBe(3)
    // The run is seen: the command's entry and the client ran.
    expect(loaded).toContain("packages/cli/dist/erp.cjs")
    expect(sources).toContain("packages/cli/src/internal/entry.ts")
    expect(anyFrom(sources, "packages/client/src/")).toBe(true)
    expect(anyFrom(sources, "packages/sandbox/src/")).toBe(false)
    expect(sources).not.toContain("packages/client/src/ErpRateLimiterRedis.ts")
    expect(sources).not.toContain("packages/cli/src/internal/telemetry.ts")
    expect(sources).not.toContain("packages/cli/src/internal/schemaDraft.ts")
    expect(loaded.filter((file) => file.includes("/ioredis/"))).toEqual([])
    expect(loaded).not.toContain("packages/cli/dist/mcp.cjs")
  })

  it("erp api infer runs the schema drafting, which no other command runs", async () => {
    const { run, sources } = await ran("infer", ["api", "infer", "partner/list", "--sample", "5"], { env: env.env })
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toContain("export const Partner = Schema.Struct({")
    expect(sources).toContain("packages/cli/src/internal/schemaDraft.ts")
  })

  it("erp mcp loads the command with the MCP server, not the other commands' bundle", async () => {
    const { loaded, run } = await ran("mcp", ["mcp"], { env: env.env, stdin: "" })
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toBe("")
    expect(loaded).toContain("packages/cli/dist/mcp.cjs")
    expect(loaded).not.toContain("packages/cli/dist/erp.cjs")
  })

  it("telemetry runs only when the OTEL_* variables ask for it", async () => {
    const { run, sources } = await ran("otel", ["partners", "get", "--id", "3"], {
      env: { ...env.env, OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9", OTEL_SDK_DISABLED: "false" }
    })
    expect(run.code).toBe(0)
    expect(run.stderr).toMatch(/^erp: telemetry not sent: http:\/\/127\.0\.0\.1:9\/v1\/traces: [^\n]+\n$/)
    expect(sources).toContain("packages/cli/src/internal/telemetry.ts")
  })

  it("erp --version and erp --help load none of the command: no Effect, no client, no @effect/cli", async () => {
    for (const args of [["--version"], ["--help"], ["partners", "list", "--help"], ["mcp", "--help"]]) {
      const { run, loaded } = await ran(`quick-${args.length}`, args)
      expect(run.code, args.join(" ")).toBe(0)
      expect(loaded).toContain("packages/cli/dist/bin.js")
      expect(loaded, args.join(" ")).not.toContain("packages/cli/dist/erp.cjs")
      expect(loaded, args.join(" ")).not.toContain("packages/cli/dist/mcp.cjs")
    }
  })

  it("erp sandbox runs the sandbox server", async () => {
    let listening: () => void = () => {}
    const started = new Promise<void>((resolve) => (listening = resolve))
    const { run, sources } = await ran("sandbox", ["sandbox", "--port", "0"], {
      onStdout: (stdout) => {
        if (stdout.includes("export ERP_API_KEY=")) listening()
      },
      interruptWhen: started
    })
    expect(run.stdout).toContain("export ERP_BASE_URL=http://127.0.0.1:")
    expect(run.code).toBe(130)
    expect(sources).toContain("packages/sandbox/src/Serve.ts")
  })

  it("erp partners get --redis runs the Redis limiter and loads ioredis", async () => {
    const { run, loaded, sources } = await ran(
      "redis",
      ["partners", "get", "--id", "3", "--redis", "redis://127.0.0.1:1"],
      {
        env: { ...env.env, ERP_REDIS_TIMEOUT: "200 millis" }
      }
    )
    expect(run.code).toBe(1)
    expect(sources).toContain("packages/client/src/ErpRateLimiterRedis.ts")
    expect(loaded.filter((file) => file.includes("/ioredis/")).length).toBeGreaterThan(0)
  })
})
