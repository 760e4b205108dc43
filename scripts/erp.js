/**
 * `pnpm erp` and `pnpm sandbox`: the compiled command (`packages/cli/dist/bin.js`, built by `pnpm install`), run on
 * plain node in this process. When a source it was built from has changed since (or it is missing), it is rebuilt
 * first (scripts/build-cli.ts, about a second), so the repository's command is never older than its source. The check
 * is a `stat` of each of our sources: a few milliseconds.
 */
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import process from "node:process"
import { fileURLToPath, pathToFileURL } from "node:url"

const ROOT = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")
const BIN = Path.join(ROOT, "packages/cli/dist/bin.js")
const INFO = Path.join(ROOT, "packages/cli/build/bundle.json")

const stale = () => {
  try {
    const built = Fs.statSync(BIN).mtimeMs
    const { sources } = JSON.parse(Fs.readFileSync(INFO, "utf8"))
    return sources.some((file) =>
      (Fs.statSync(Path.join(ROOT, file), { throwIfNoEntry: false })?.mtimeMs ?? Infinity) > built
    )
  } catch {
    return true
  }
}

// One build at a time: two `pnpm erp` started together on a stale build (a sandbox and a command beside it) would
// otherwise both rebuild into the same dist/ and one fail half-way. The lock is a file made exclusively, holding the
// builder's pid; one whose process is gone is taken over. A process that waited finds the build fresh and runs it.
const LOCK = Path.join(ROOT, "packages/cli/build/building.lock")
const alive = (pid) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return error?.code === "EPERM"
  }
}
const sleep = (millis) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, millis)
const takeLock = () => {
  Fs.mkdirSync(Path.dirname(LOCK), { recursive: true })
  for (;;) {
    try {
      Fs.writeFileSync(LOCK, String(process.pid), { flag: "wx" })
      return
    } catch (error) {
      if (error?.code !== "EEXIST") throw error
      let text
      try {
        text = Fs.readFileSync(LOCK, "utf8")
      } catch (error) {
        if (error?.code === "ENOENT") continue // released meanwhile: try again
        throw error
      }
      const holder = Number(text)
      // An empty lock is one just made whose pid is being written, unless it has stayed empty for a while.
      const justMade = text === "" && Date.now() - (Fs.statSync(LOCK, { throwIfNoEntry: false })?.mtimeMs ?? 0) < 5_000
      if (justMade || (Number.isInteger(holder) && holder > 0 && alive(holder))) sleep(100)
      else Fs.rmSync(LOCK, { force: true })
    }
  }
}

if (stale()) {
  takeLock()
  let built = true
  try {
    if (stale()) {
      // stdout carries the command's data only: the build reports on stderr.
      const build = spawnSync(
        process.execPath,
        [Path.join(ROOT, "node_modules/tsx/dist/cli.mjs"), "scripts/build-cli.ts"],
        {
          cwd: ROOT,
          stdio: ["ignore", 2, 2]
        }
      )
      built = build.status === 0
    }
  } finally {
    Fs.rmSync(LOCK, { force: true })
  }
  if (!built) {
    process.stderr.write("erp: building the command failed (scripts/build-cli.ts)\n")
    process.exit(1)
  }
}

await import(pathToFileURL(BIN).href)
