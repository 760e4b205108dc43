/**
 * What the benchmarks share: medians, rounding, progress on stderr, and a sandbox in its own process.
 */
import { type ChildProcess, spawn } from "node:child_process"
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
