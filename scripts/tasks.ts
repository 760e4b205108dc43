/**
 * The pool `pnpm release-tarballs` and `pnpm run docs` run their commands in: at most `concurrency` tasks at a time
 * (two: this machine's cores), each started once the tasks it comes `after` have finished, the first ready one in the
 * list first (so the longest go first). A line of progress at least every `every` milliseconds (which tasks run, for
 * how long, how many are done) and one as each task ends, so a long step never looks hung. A command's output is
 * appended to its log file line by line as it comes (`build/docs.log` for docgen), never only at the end.
 *
 * The first task to fail stops the pool: nothing more starts, the commands still running are stopped, and the error
 * carries the end of the failed command's output.
 */
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"

/**
 * One step: `run` resolves with an optional note for its "done" line ("from the cache") or rejects when it fails.
 * `say` tells what it is doing now ("Typechecking examples..."), shown beside its name in the progress lines.
 */
export interface Task {
  readonly name: string
  readonly after?: ReadonlyArray<string>
  readonly run: (signal: AbortSignal, say: (doing: string) => void) => Promise<string | void>
  /** No "done" line for it (a step of a moment, as copying pages). */
  readonly quiet?: boolean
}

/** A timer that calls `tick` every `ms` until stopped: `setInterval` in use, driven by hand in the tests. */
export type Every = (ms: number, tick: () => void) => () => void

export interface PoolOptions {
  /** Printed before every progress line: `release tarballs`, `docs`. */
  readonly label: string
  readonly concurrency: number
  /** At most this long between two lines of progress, in milliseconds. */
  readonly every: number
  readonly print: (line: string) => void
  readonly now?: () => number
  readonly timer?: Every
  /** Stops the pool from outside (Ctrl-C): as a failure would, with this signal's reason as the error. */
  readonly signal?: AbortSignal
}

/** The longest silence allowed between two progress lines, in milliseconds (issue 41: at least one line every 15 s). */
export const PROGRESS_EVERY = 10_000

/** A task that failed, with the end of its output. */
export class TaskFailed extends Error {
  constructor(readonly task: string, readonly detail: string, readonly tail: ReadonlyArray<string> = []) {
    super(`${task}: ${detail}`)
    this.name = "TaskFailed"
  }
}

/** `m:ss`. */
export const clock = (ms: number): string => {
  const seconds = Math.max(0, Math.floor(ms / 1000))
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`
}

const intervalTimer: Every = (ms, tick) => {
  const handle = setInterval(tick, ms)
  return () => clearInterval(handle)
}

/** Runs the tasks; resolves when all succeeded, rejects with the first failure. */
export const runTasks = (tasks: ReadonlyArray<Task>, options: PoolOptions): Promise<void> => {
  if (!(options.concurrency >= 1)) throw new Error(`concurrency must be 1 or more, not ${options.concurrency}`)
  if (!(options.every > 0 && options.every <= 15_000)) {
    throw new Error(`progress must come at least every 15 s, not every ${options.every} ms`)
  }
  const names = new Set(tasks.map((task) => task.name))
  if (names.size !== tasks.length) throw new Error("two tasks have the same name")
  for (const task of tasks) {
    for (const before of task.after ?? []) {
      if (!names.has(before)) throw new Error(`${task.name} comes after ${before}, which is not a task`)
    }
  }
  const now = options.now ?? Date.now
  const timer = options.timer ?? intervalTimer
  const started = now()
  const line = (text: string) => options.print(`${options.label} ${clock(now() - started)}: ${text}`)
  const waiting = [...tasks]
  const running = new Map<string, number>()
  const doing = new Map<string, string>()
  const done = new Set<string>()
  const abort = new AbortController()
  let failure: unknown = undefined

  const status = () => {
    const what = [...running].map(([name, since]) => {
      const activity = doing.get(name)
      return `${name} (${clock(now() - since)}${activity === undefined ? "" : `, ${activity}`})`
    }).join(", ")
    return `${done.size} of ${tasks.length} done; running ${what === "" ? "nothing" : what}`
  }

  return new Promise<void>((resolve, reject) => {
    let settled = false
    const stop = timer(options.every, () => line(status()))
    const finish = () => {
      if (running.size > 0 || settled) return
      settled = true
      stop()
      if (failure !== undefined) reject(failure)
      else if (waiting.length > 0) reject(new Error(`tasks never ready: ${waiting.map((t) => t.name).join(", ")}`))
      else resolve()
    }
    const fail = (error: unknown) => {
      if (failure !== undefined) return
      failure = error
      abort.abort()
    }
    const next = () => {
      while (failure === undefined && running.size < options.concurrency) {
        const at = waiting.findIndex((task) => (task.after ?? []).every((before) => done.has(before)))
        if (at === -1) break
        const [task] = waiting.splice(at, 1) as [Task]
        running.set(task.name, now())
        const say = (text: string) => {
          if (running.has(task.name)) doing.set(task.name, text)
        }
        Promise.resolve().then(() => task.run(abort.signal, say)).then(
          (note) => {
            if (task.quiet !== true) {
              line(`${task.name} done in ${clock(now() - running.get(task.name)!)}${note ? ` (${note})` : ""}`)
            }
            running.delete(task.name)
            doing.delete(task.name)
            done.add(task.name)
            next()
          },
          (error: unknown) => {
            running.delete(task.name)
            doing.delete(task.name)
            fail(error)
            finish()
          }
        )
      }
      finish()
    }
    const interrupted = () => {
      fail(options.signal!.reason)
      finish()
    }
    if (options.signal?.aborted) return interrupted()
    options.signal?.addEventListener("abort", interrupted, { once: true })
    next()
  })
}

/** Where each log file is open for appending, shared by the tasks writing to it. */
const logs = new Map<string, Fs.WriteStream>()

/** Starts a log file afresh (the previous run's is replaced); later tasks append to it. */
export const freshLog = (file: string): void => {
  logs.get(file)?.end()
  Fs.mkdirSync(Path.dirname(file), { recursive: true })
  Fs.writeFileSync(file, "")
  logs.set(file, Fs.createWriteStream(file, { flags: "a" }))
}

/** Closes the logs once every line is written. */
export const closeLogs = (): Promise<void> =>
  Promise.all(
    [...logs.values()].map((stream) => new Promise<void>((resolve) => stream.end(() => resolve())))
  ).then(() => logs.clear())

export interface CommandOptions {
  readonly cwd: string
  /** Where its output goes, each line as it comes, after `[prefix] `. */
  readonly log: string
  readonly prefix: string
  readonly env?: NodeJS.ProcessEnv
  /** What to call it in an error (`docgen`); its command line by default. */
  readonly label?: string
  /** Each line of its output as it comes (to tell the pool what it is doing). */
  readonly onLine?: (line: string) => void
}

const TAIL = 200

/**
 * A command as a task's `run`: its output appended to the log line by line, stopped (with the processes it started)
 * when the pool aborts, rejected with `TaskFailed` and the end of its output when it exits with another status than 0.
 */
export const command =
  (file: string, args: ReadonlyArray<string>, options: CommandOptions) => (signal: AbortSignal): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      if (!logs.has(options.log)) freshLog(options.log)
      const log = logs.get(options.log)!
      const tail: Array<string> = []
      // Its own process group, so that stopping it stops what it started (docgen starts tsc and tsx).
      const child = spawn(file, args, {
        cwd: options.cwd,
        env: options.env ?? process.env,
        stdio: ["ignore", "pipe", "pipe"],
        detached: true
      })
      const kill = () => {
        try {
          if (child.pid !== undefined) process.kill(-child.pid, "SIGTERM")
        } catch {
          // It has already exited.
        }
      }
      signal.addEventListener("abort", kill, { once: true })
      const lines = (stream: NodeJS.ReadableStream) => {
        let rest = ""
        stream.setEncoding("utf8")
        stream.on("data", (chunk: string) => {
          const parts = (rest + chunk).split("\n")
          rest = parts.pop()!
          for (const part of parts) add(part)
        })
        stream.on("end", () => {
          if (rest !== "") add(rest)
        })
      }
      const add = (text: string) => {
        log.write(`[${options.prefix}] ${text}\n`)
        options.onLine?.(text)
        tail.push(text)
        if (tail.length > TAIL) tail.shift()
      }
      lines(child.stdout)
      lines(child.stderr)
      child.on("error", (error) => {
        signal.removeEventListener("abort", kill)
        reject(new TaskFailed(options.prefix, `${file} could not start: ${error.message}`))
      })
      child.on("close", (code, killed) => {
        signal.removeEventListener("abort", kill)
        if (code === 0) resolve()
        else {
          reject(
            new TaskFailed(
              options.prefix,
              `${options.label ?? [file, ...args].join(" ")} exited with ${code ?? killed} (its output: ${
                Path.relative(process.cwd(), options.log)
              })`,
              tail
            )
          )
        }
      })
    })

/** An abort signal raised by Ctrl-C (or SIGTERM): the pool's commands run in process groups of their own, which the
 * terminal's Ctrl-C does not reach, so the pool stops them. */
export const interruption = (): AbortSignal => {
  const controller = new AbortController()
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => controller.abort(new Error(`stopped (${signal})`)))
  }
  return controller.signal
}

/** A failure as the person reading the terminal needs it: which task, the end of its output without docgen's INFO lines. */
export const report = (error: unknown): void => {
  if (error instanceof TaskFailed) {
    const tail = error.tail.filter((line) => !line.includes(" INFO ")).slice(-30)
    if (tail.length > 0) console.error(tail.join("\n"))
    console.error(`failed: ${error.message}`)
  } else {
    console.error(`failed: ${error instanceof Error ? error.message : String(error)}`)
  }
}

/**
 * Runs `tasks` in the pool (`concurrency` at a time, a progress line at least every `PROGRESS_EVERY`, stopped by
 * SIGINT or SIGTERM) and closes the logs; on a failure, says what failed (`report`) and ends the process with 1.
 */
export const runOrExit = async (tasks: ReadonlyArray<Task>, label: string, concurrency: number): Promise<void> => {
  try {
    await runTasks(tasks, {
      label,
      concurrency,
      every: PROGRESS_EVERY,
      print: (line) => console.log(line),
      signal: interruption()
    })
  } catch (error) {
    await closeLogs()
    report(error)
    process.exit(1)
  }
  await closeLogs()
}
