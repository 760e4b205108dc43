/**
 * What the benchmarks share: medians, rounding, progress on stderr, and a sandbox in its own process.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"

export const ROOT = Path.resolve(import.meta.dirname, "../..")

/** One row of the table and of `bench/results/latest.json`. */
export interface Row {
  readonly name: string
  readonly parameters: Record<string, unknown>
  readonly figures: Record<string, number>
  readonly baseline: Record<string, number>
  /** ours / baseline on the headline figure, as `ratioOf` says */
  readonly ratio: number
  readonly ratioOf: string
  readonly target: string
  readonly met: boolean | null
}

/** `erp ARGS` (the command `bin` runs) with these settings added to the environment; resolves with its exit code. */
export const runErp = (bin: string, args: ReadonlyArray<string>, env: Record<string, string>) =>
  new Promise<number | null>((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "ignore", "inherit"]
    })
    child.once("exit", resolve)
  })

export const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

export const round = (x: number, digits = 2) => Number(x.toFixed(digits))

/** Progress, on stderr: stdout carries the table. */
export const log = (text: string) => process.stderr.write(`${text}\n`)

/**
 * The sandbox in its own process (`erp sandbox`, the command `bin` runs), so the client process measured does only
 * client work; resolves with its base URL and key once it has printed them.
 */
export const startSandbox = (bin: string, args: ReadonlyArray<string>) =>
  new Promise<{ baseUrl: string; apiKey: string; stop: () => Promise<void> }>((resolve, reject) => {
    const child: ChildProcess = spawn(process.execPath, [bin, "sandbox", "--port", "0", ...args], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "inherit"]
    })
    let out = ""
    child.stdout!.on("data", (d) => {
      out += d
      const url = /export ERP_BASE_URL=(\S+)/.exec(out)
      const key = /export ERP_API_KEY=(\S+)/.exec(out)
      if (url && key) {
        resolve({
          baseUrl: url[1]!,
          apiKey: key[1]!,
          stop: () =>
            new Promise((done) => {
              child.once("exit", () => done())
              child.kill("SIGINT")
            })
        })
      }
    })
    child.once("exit", (code) => reject(new Error(`sandbox exited with ${code}`)))
  })

/** A command's wall time and peak RSS (`/usr/bin/time`), and what it wrote on stderr. */
export interface Timed {
  readonly peakRssBytes: number
  readonly millis: number
  readonly stderr: string
}

/**
 * `erp ARGS` (the command `bin` runs, on `node`) under /usr/bin/time, with these settings added and no rate limit of
 * its own: its peak RSS and wall time; fails unless it exits 0.
 */
export const timedErp = (node: string, bin: string, args: ReadonlyArray<string>, env: Record<string, string>) =>
  new Promise<Timed>((resolve, reject) => {
    const rss = Path.join(ROOT, "build", `bench-timed-${process.pid}.rss`)
    const started = performance.now()
    const child = spawn("/usr/bin/time", ["-f", "%M", "-o", rss, node, bin, ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env, ERP_RATE_LIMIT: "1000000" },
      stdio: ["ignore", "ignore", "pipe"]
    })
    let stderr = ""
    child.stderr!.on("data", (d) => (stderr += d))
    child.once("exit", (code) => {
      if (code !== 0) return reject(new Error(`erp ${args.join(" ")} exited ${code}: ${stderr}`))
      const kib = Number(Fs.readFileSync(rss, "utf8").trim().split("\n").at(-1))
      Fs.rmSync(rss, { force: true })
      resolve({ peakRssBytes: kib * 1024, millis: performance.now() - started, stderr })
    })
  })

/** How many lines a file holds. */
export const linesOf = (file: string) => {
  const text = Fs.readFileSync(file, "utf8")
  return text === "" ? 0 : text.split("\n").length - 1
}
