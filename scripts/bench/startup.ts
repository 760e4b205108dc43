/**
 * `pnpm bench startup`: how long the `erp` command takes to start and answer, and its peak memory, beside a plain node
 * script doing the same single `fetch`, measured in the same run against a sandbox on loopback (in its own process,
 * without a rate limit). Each command runs REPS times, the commands taking turns so a busy moment of the machine hits
 * them all alike; medians are reported. Peak RSS is the process's own (`/usr/bin/time -f %M`; for `pnpm erp` the
 * largest process of the tree).
 *
 * Measured: the compiled command as the installed `erp` bin runs it (`node packages/cli/dist/bin.js`), and for
 * comparison the root script (`pnpm --silent erp`, pnpm's own start-up included) and the TypeScript source through tsx,
 * the way `pnpm erp` ran before the command was compiled.
 */
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { BIN, buildCli } from "../build-cli.js"
import { log, median, ROOT, round, type Row, startSandbox } from "./common.js"

const TSX = Path.join(ROOT, "node_modules/.bin/tsx")
const TIME = "/usr/bin/time"
const REPS = Number(process.env.STARTUP_REPS ?? 15)
const ID = 5

export type StartupRow = Row

interface Sample {
  readonly millis: number
  /** Peak resident set in KiB, or NaN without /usr/bin/time. */
  readonly peakRssKiB: number
}

/** Runs one command to its end; fails unless it exits 0 and its stdout passes `check`. */
const measure = (
  argv: ReadonlyArray<string>,
  env: Record<string, string>,
  check: (stdout: string) => boolean
): Promise<Sample> =>
  new Promise((resolve, reject) => {
    const withTime = Fs.existsSync(TIME)
    const rssFile = Path.join(Os.tmpdir(), `erp-startup-${process.pid}.rss`)
    const [command, ...args] = withTime ? [TIME, "-f", "%M", "-o", rssFile, ...argv] : argv
    const started = performance.now()
    const child = spawn(command!, args, {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    child.once("error", reject)
    child.once("close", (code) => {
      const millis = performance.now() - started
      if (code !== 0 || !check(stdout)) {
        return reject(new Error(`${argv.join(" ")} exited ${code}: ${stderr.trim() || stdout.slice(0, 200)}`))
      }
      const peakRssKiB = withTime ? Number(Fs.readFileSync(rssFile, "utf8").trim().split("\n").at(-1)) : NaN
      Fs.rmSync(rssFile, { force: true })
      resolve({ millis, peakRssKiB })
    })
  })

const PLAIN = [
  "const response = await fetch(`${process.env.ERP_BASE_URL}/partner/get?id=" + ID + "`, {",
  "  headers: { \"X-API-KEY\": process.env.ERP_API_KEY, \"Content-Type\": \"application/json\" }",
  "})",
  "process.stdout.write(JSON.stringify((await response.json()).data) + \"\\n\")"
].join("\n")

const describe = (argv: ReadonlyArray<string>) =>
  argv.map((a) =>
    a === process.execPath ? "node" : a === PLAIN ? "<one fetch>" : a.startsWith(ROOT) ? Path.relative(ROOT, a) : a
  ).join(" ")

export const startup = async (): Promise<Array<StartupRow>> => {
  // The command measured is the one built from the sources as they are now.
  await buildCli()
  const sb = await startSandbox(BIN, ["--no-rate-limit"])
  const env = { ERP_BASE_URL: sb.baseUrl, ERP_API_KEY: sb.apiKey }
  const isPartner = (stdout: string) => JSON.parse(stdout).id === ID
  // A release's version, or "dev" from source (the version is written in by the build).
  const isVersion = (stdout: string) => /^(\d+\.\d+\.\d+|dev)$/.test(stdout.trim())
  const commands = {
    plain: { argv: [process.execPath, "--input-type=module", "-e", PLAIN], check: isPartner },
    version: { argv: [process.execPath, BIN, "--version"], check: isVersion },
    get: { argv: [process.execPath, BIN, "partners", "get", "--id", String(ID)], check: isPartner },
    pnpmGet: { argv: ["pnpm", "--silent", "erp", "partners", "get", "--id", String(ID)], check: isPartner },
    tsxVersion: { argv: [TSX, "packages/cli/src/bin.ts", "--version"], check: isVersion },
    tsxGet: { argv: [TSX, "packages/cli/src/bin.ts", "partners", "get", "--id", String(ID)], check: isPartner }
  }
  type Name = keyof typeof commands
  const samples = Object.fromEntries(Object.keys(commands).map((name) => [name, [] as Array<Sample>])) as Record<
    Name,
    Array<Sample>
  >
  try {
    // One warm-up round (file system cache), not counted.
    for (const { argv, check } of Object.values(commands)) await measure(argv, env, check)
    for (let rep = 0; rep < REPS; rep++) {
      for (const [name, { argv, check }] of Object.entries(commands) as Array<[Name, (typeof commands)[Name]]>) {
        samples[name].push(await measure(argv, env, check))
      }
    }
  } finally {
    await sb.stop()
  }
  log("startup: done")
  const ms = (name: Name) => round(median(samples[name].map((s) => s.millis)), 0)
  const mb = (name: Name) => round(median(samples[name].map((s) => s.peakRssKiB)) / 1024)
  const plain = { medianMs: ms("plain"), peakRssMB: mb("plain") }
  const parameters = { reps: REPS, sandbox: "own process, loopback, no rate limit", node: process.version }
  const row = (
    name: string,
    of: Name,
    target: string,
    met: (ratio: number, rssMB: number) => boolean | null
  ): StartupRow => {
    const ratio = round(ms(of) / plain.medianMs, 2)
    return {
      name,
      parameters: { ...parameters, command: describe(commands[of].argv) },
      figures: { medianMs: ms(of), peakRssMB: mb(of) },
      baseline: plain,
      ratio,
      ratioOf: "median time, command / plain node script with one fetch",
      target,
      met: met(ratio, mb(of))
    }
  }
  return [
    row("startup, erp --version", "version", "<= 3x the plain script's time", (ratio) => ratio <= 3),
    row(
      `startup, erp partners get --id ${ID}`,
      "get",
      "<= 3x the plain script's time, peak RSS <= 80 MB",
      (ratio, rss) => ratio <= 3 && rss <= 80
    ),
    row(`startup, pnpm --silent erp partners get --id ${ID}`, "pnpmGet", "-", () => null),
    row("startup, from source through tsx (before): erp --version", "tsxVersion", "-", () => null),
    row(`startup, from source through tsx (before): erp partners get --id ${ID}`, "tsxGet", "-", () => null)
  ]
}
