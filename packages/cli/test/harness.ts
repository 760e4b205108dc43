import { expect } from "@effect/vitest"
import { Sandbox } from "@erp-client/sandbox"
import type { Effect } from "effect"
import { Layer, ManagedRuntime } from "effect"
import { spawn } from "node:child_process"
import * as Http from "node:http"
import type * as Net from "node:net"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

export const ROOT = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../../..")
export const SECRET = "sk-live-CLI-never-print-4b8e1f"

export interface Run {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
  /** The child's pid: the command's own, or pnpm's with `via: "pnpm"`. */
  readonly pid: number
  /** With `signalGroupToo`: how long after the first signal its copy went to the process group, in milliseconds. */
  readonly copyAfterMillis?: number | undefined
}

/** The compiled command, as `pnpm erp` and the installed `erp` bin run it (scripts/build-cli.ts builds it). */
export const BIN = Path.join(ROOT, "packages/cli/dist/bin.js")

/** What `pnpm erp` runs (package.json's `erp` script): the compiled command, rebuilt first when a source changed. */
const SCRIPT = Path.join(ROOT, "scripts/erp.js")

/**
 * Runs the real command line as a subprocess. By default `node scripts/erp.js ARGS`, which is what `pnpm --silent erp
 * ARGS` (the README's command) runs, without pnpm's own start (half a second of CPU a run, a few seconds on a busy
 * machine, and over a hundred runs); `via: "pnpm"` runs the README's command itself. `via: "node"` runs the compiled
 * command directly, for signal tests, where a process in between could die of the signal before the command reports
 * its code. `"tsx"`, the name the tests knew that route by when it ran the TypeScript source through tsx, means the
 * same.
 */
export const erp = (
  args: ReadonlyArray<string>,
  options: {
    readonly env?: Record<string, string | undefined>
    readonly via?: "script" | "pnpm" | "node" | "tsx"
    /** Sends SIGINT (or `signal`) once this settles (e.g. when the server has seen some requests). */
    readonly interruptWhen?: Promise<unknown>
    /** The signal `interruptWhen` sends (default SIGINT). */
    readonly signal?: NodeJS.Signals
    /** Sends the signal to the command and then to its process group, as `timeout` does: it arrives twice. */
    readonly signalGroupToo?: boolean
    readonly onStdout?: (text: string) => void
    /** Written to the command's stdin, which is then closed (stdin is empty otherwise). */
    readonly stdin?: string
    /** Closes the reading end of the command's stdout once this returns true, as `| head -1` does. */
    readonly closeStdoutWhen?: (stdout: string) => boolean
    /** How long the run may take before it is killed (default 60 s). */
    readonly killAfterMillis?: number
  } = {}
): Promise<Run> =>
  new Promise((resolve, reject) => {
    const [command, prefix] = options.via === "node" || options.via === "tsx"
      ? [process.execPath, [BIN]]
      : options.via === "pnpm"
      ? ["pnpm", ["--silent", "erp"]]
      : [process.execPath, [SCRIPT]]
    const env: Record<string, string> = {}
    for (const [k, v] of Object.entries({ ...process.env, CI: "", ...options.env })) if (v !== undefined) env[k] = v
    const child = spawn(command, [...prefix, ...args], {
      cwd: ROOT,
      env,
      detached: true,
      stdio: [options.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"]
    })
    if (options.stdin !== undefined) child.stdin!.end(options.stdin)
    const out = child.stdout!
    let stdout = ""
    let stderr = ""
    out.on("data", (d) => {
      if (out.destroyed) return
      stdout += d
      options.onStdout?.(stdout)
      if (options.closeStdoutWhen?.(stdout) === true) out.destroy()
    })
    child.stderr!.on("data", (d) => (stderr += d))
    // Every run is bounded: a hung command is killed and reported as such.
    const guard = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), options.killAfterMillis ?? 60_000)
    let copyAfterMillis: number | undefined
    options.interruptWhen?.then(() => {
      const first = performance.now()
      child.kill(options.signal ?? "SIGINT")
      if (options.signalGroupToo === true) {
        process.kill(-child.pid!, options.signal ?? "SIGINT")
        copyAfterMillis = performance.now() - first
      }
    }, (error) => {
      child.kill("SIGKILL")
      reject(error)
    })
    child.on("error", reject)
    child.on("close", (code, signal) => {
      clearTimeout(guard)
      resolve({ code, signal, stdout, stderr, pid: child.pid!, copyAfterMillis })
    })
  })

/**
 * The stderr of an export to `--output` that succeeded, without the summary line it ends with (`erp: 600 records
 * written to F (…): 7 pages, 7 requests, 0.4 s`), which must be there: what else it said.
 */
export const withoutSummary = (stderr: string): string => {
  const match = /(^|\n)erp: [\d,]+ records? written to [^\n]*\): [\d,]+ pages?, [\d,]+ requests?, [^\n]+\n$/.exec(
    stderr
  )
  expect(match, `a summary line ends ${JSON.stringify(stderr)}`).not.toBeNull()
  return stderr.slice(0, match!.index + match![1]!.length)
}

/** Settles once the sandbox has received `n` list requests since its stats were last reset (polled, bounded). */
const listRequestsReached = (
  stats: Effect.Effect<Sandbox.Stats>,
  run: <A>(e: Effect.Effect<A>) => Promise<A>,
  n: number
) =>
  new Promise<void>((resolve, reject) => {
    const started = Date.now()
    const poll = () =>
      run(stats).then((s) => {
        if ((s.byEndpoint["/partner/list"] ?? 0) >= n) resolve()
        else if (Date.now() - started > 30_000) reject(new Error(`the sandbox never saw ${n} list requests`))
        else setTimeout(poll, 20)
      }, reject)
    poll()
  })

/** Polls the sandbox until no request is open any more (it learns of closed sockets a moment later), for up to 2 s. */
export const openRequestsAfterwards = async (started: Awaited<ReturnType<typeof startSandbox>>) => {
  let inFlight = -1
  for (let i = 0; i < 100 && inFlight !== 0; i++) {
    inFlight = (await started.run(started.sandbox.stats)).inFlight
    if (inFlight !== 0) await new Promise((r) => setTimeout(r, 20))
  }
  return inFlight
}

/** A sandbox on a loopback port for the duration of a test file. */
export const startSandbox = async (options: Sandbox.Options) => {
  const runtime = ManagedRuntime.make(Sandbox.layer({ apiKeys: [SECRET], ...options }).pipe(Layer.orDie))
  const sandbox = await runtime.runPromise(Sandbox.Sandbox)
  return {
    sandbox,
    run: <A>(effect: Effect.Effect<A>) => runtime.runPromise(effect),
    env: { ERP_BASE_URL: sandbox.baseUrl, ERP_API_KEY: SECRET },
    // The count starts now, when the test asks (before it starts the command, in the same turn): reset later, as it
    // was, the first requests of a command that starts fast (the code cache: about 100 ms) could be counted and then
    // reset away, and `n` was never reached (CI: the Ctrl-C test of telemetry.test.ts waited out its 60 s).
    listRequests: (n: number) => {
      runtime.runSync(sandbox.resetStats)
      return listRequestsReached(sandbox.stats, (e) => runtime.runPromise(e), n)
    },
    close: () => runtime.dispose()
  }
}

/** A small RFC 4180 reader, to check what the CSV writer wrote. */
export const parseCsv = (text: string): Array<Array<string>> => {
  const rows: Array<Array<string>> = []
  let row: Array<string> = []
  let cell = ""
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (quoted) {
      if (c === "\"" && text[i + 1] === "\"") {
        cell += "\""
        i++
      } else if (c === "\"") quoted = false
      else cell += c
    } else if (c === "\"") quoted = true
    else if (c === ",") {
      row.push(cell)
      cell = ""
    } else if (c === "\r" && text[i + 1] === "\n") {
      row.push(cell)
      rows.push(row)
      row = []
      cell = ""
      i++
    } else cell += c
  }
  if (cell !== "" || row.length > 0) rows.push([...row, cell])
  return rows
}

/**
 * A loopback proxy in front of `target` that holds every request until `open`, and notes which API key (which run)
 * has sent one.
 */
export const startGate = async (target: string) => {
  let opened = false
  const held: Array<() => void> = []
  const seen = new Set<string>()
  const server = Http.createServer((request, response) => {
    seen.add(String(request.headers["x-api-key"]))
    const forward = () => {
      const out = Http.request(new URL(request.url!, target), { method: request.method, headers: request.headers }, (
        answer
      ) => {
        response.writeHead(answer.statusCode!, answer.headers)
        answer.pipe(response)
      })
      out.on("error", () => response.destroy())
      request.pipe(out)
    }
    if (opened) forward()
    else held.push(forward)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as Net.AddressInfo).port}`,
    seen: (key: string) => seen.has(key),
    close: () => {
      opened = false
      seen.clear()
    },
    open: () => {
      opened = true
      for (const forward of held.splice(0)) forward()
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
