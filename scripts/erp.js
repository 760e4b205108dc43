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
import { take } from "./buildLock.js"

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

// One build at a time (scripts/buildLock.js): a process that waited finds the build fresh and runs it.
const LOCK = Path.join(ROOT, "packages/cli/build/building.lock")

if (stale()) {
  const release = await take(LOCK)
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
    release()
  }
  if (!built) {
    process.stderr.write("erp: building the command failed (scripts/build-cli.ts)\n")
    process.exit(1)
  }
}

await import(pathToFileURL(BIN).href)
