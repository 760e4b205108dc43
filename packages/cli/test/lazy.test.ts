import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { erp, ROOT, startSandbox } from "./harness.js"

// Which modules the compiled command loads, told by a module loader hook (node --import) that writes every URL it
// loads to a file: the sandbox server, the Redis limiter and telemetry are loaded on demand only.
type Started = Awaited<ReturnType<typeof startSandbox>>

const HOOKS = `import { appendFileSync } from "node:fs"
export async function load(url, context, nextLoad) {
  appendFileSync(process.env.ERP_TEST_LOADED, url + "\\n")
  return nextLoad(url, context)
}
`

let env: Started
let dir: string
let register: string

// The compiled files (relative to the root) that hold any source whose path contains `source`.
const outputsHolding = (source: string): Array<string> => {
  const info = JSON.parse(Fs.readFileSync(Path.join(ROOT, "packages/cli/build/bundle.json"), "utf8"))
  return Object.entries(info.outputs as Record<string, Array<string>>)
    .filter(([, inputs]) => inputs.some((input) => input.includes(source)))
    .map(([output]) => output)
}

const loadedBy = async (name: string, args: ReadonlyArray<string>, options: Parameters<typeof erp>[1] = {}) => {
  const log = Path.join(dir, `${name}.loaded`)
  Fs.writeFileSync(log, "")
  const run = await erp(args, {
    ...options,
    via: "node",
    env: { ...options.env, ERP_TEST_LOADED: log, NODE_OPTIONS: `--import ${pathToFileURL(register).href}` }
  })
  const loaded = Fs.readFileSync(log, "utf8").trim().split("\n").filter((url) => url.startsWith("file:"))
  return { run, loaded: loaded.map((url) => Path.relative(ROOT, new URL(url).pathname)) }
}

beforeAll(async () => {
  env = await startSandbox({ partners: 20 })
  dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "erp-lazy-"))
  Fs.writeFileSync(Path.join(dir, "hooks.mjs"), HOOKS)
  register = Path.join(dir, "register.mjs")
  Fs.writeFileSync(register, `import { register } from "node:module"\nregister("./hooks.mjs", import.meta.url)\n`)
})

afterAll(async () => {
  await env?.close()
  if (dir !== undefined) Fs.rmSync(dir, { recursive: true, force: true })
})

describe("the compiled erp command loads what it needs only", () => {
  it("is one bundle: the sandbox and the Redis limiter in files of their own", () => {
    expect(outputsHolding("packages/sandbox/src/").length).toBeGreaterThan(0)
    expect(outputsHolding("packages/sandbox/src/")).not.toContain("packages/cli/dist/bin.js")
    expect(outputsHolding("packages/client/src/ErpRateLimiterRedis.ts").length).toBe(1)
    expect(outputsHolding("packages/cli/src/Cli.ts").length).toBe(1)
    // Requests go through Node's own fetch: the npm undici (560 KB, a fifth of a lookup's start) is not bundled.
    expect(outputsHolding("node_modules/undici/")).toEqual([])
  })

  it("erp partners get loads neither the sandbox server nor the Redis limiter or ioredis", async () => {
    const { run, loaded } = await loadedBy("get", ["partners", "get", "--id", "3"], { env: env.env })
    expect(run.stderr).toBe("")
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout).id).toBe(3)
    // The hook saw the command load: its entry and its commands.
    expect(loaded).toContain("packages/cli/dist/bin.js")
    expect(loaded).toEqual(expect.arrayContaining(outputsHolding("packages/cli/src/Cli.ts")))
    for (const file of outputsHolding("packages/sandbox/src/")) expect(loaded).not.toContain(file)
    for (const file of outputsHolding("packages/client/src/ErpRateLimiterRedis.ts")) expect(loaded).not.toContain(file)
    expect(loaded.filter((file) => file.includes("/ioredis/"))).toEqual([])
    for (const file of outputsHolding("packages/cli/src/internal/telemetry.ts")) expect(loaded).not.toContain(file)
  })

  it("telemetry is a file of its own, loaded only when the OTEL_* variables ask for it", async () => {
    const telemetry = outputsHolding("packages/cli/src/internal/telemetry.ts")
    expect(telemetry).toHaveLength(1)
    expect(outputsHolding("@effect/opentelemetry/")).toEqual(telemetry)
    const { run, loaded } = await loadedBy("otel", ["partners", "get", "--id", "3"], {
      env: { ...env.env, OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9", OTEL_SDK_DISABLED: "false" }
    })
    expect(run.code).toBe(0)
    expect(run.stderr).toMatch(/^erp: telemetry not sent: http:\/\/127\.0\.0\.1:9\/v1\/traces: [^\n]+\n$/)
    expect(loaded).toEqual(expect.arrayContaining(telemetry))
  })

  it("erp --version and erp --help load none of the command: no Effect, no client, no @effect/cli", async () => {
    for (const args of [["--version"], ["--help"], ["partners", "list", "--help"]]) {
      const { run, loaded } = await loadedBy(`quick-${args.length}`, args)
      expect(run.code, args.join(" ")).toBe(0)
      expect(loaded).toContain("packages/cli/dist/bin.js")
      for (const source of ["packages/cli/src/Cli.ts", "packages/client/src/", "node_modules/effect/", "@effect/cli"]) {
        for (const file of outputsHolding(source)) expect(loaded, `${args.join(" ")}: ${source}`).not.toContain(file)
      }
    }
  })

  it("erp sandbox loads the sandbox server", async () => {
    let listening: () => void = () => {}
    const started = new Promise<void>((resolve) => (listening = resolve))
    const { run, loaded } = await loadedBy("sandbox", ["sandbox", "--port", "0"], {
      onStdout: (stdout) => {
        if (stdout.includes("export ERP_API_KEY=")) listening()
      },
      interruptWhen: started
    })
    expect(run.stdout).toContain("export ERP_BASE_URL=http://127.0.0.1:")
    expect(run.code).toBe(130)
    for (const file of outputsHolding("packages/sandbox/src/")) expect(loaded).toContain(file)
  })

  it("erp partners get --redis loads the Redis limiter and ioredis", async () => {
    const { run, loaded } = await loadedBy(
      "redis",
      ["partners", "get", "--id", "3", "--redis", "redis://127.0.0.1:1"],
      {
        env: { ...env.env, ERP_REDIS_TIMEOUT: "200 millis" }
      }
    )
    expect(run.code).toBe(1)
    expect(loaded).toEqual(expect.arrayContaining(outputsHolding("packages/client/src/ErpRateLimiterRedis.ts")))
    expect(loaded.filter((file) => file.includes("/ioredis/")).length).toBeGreaterThan(0)
  })
})
