/**
 * Loads the command's bundle (`dist/erp.cjs`, one CommonJS file) with a V8 code cache made after a run: the bytecode
 * of every function that run compiled, not only of the top level.
 *
 * Written by hand because nothing else does it. Node's module compile cache (`module.enableCompileCache`, which `erp`
 * used before) keeps each module's code as compiled at load, before it runs: a command then still compiles, at every
 * start, each function of Effect, @effect/cli and the client that it calls, which was most of `erp partners get`'s
 * time on Node 24 (hyperfine, one run: 138 ms with it, 103 ms with this, the plain script 57 ms). V8 can serialize
 * a script's code after it ran (`vm.Script#createCachedData`), and Node exposes that for scripts, not for ES modules:
 * hence a CommonJS bundle, run here as Node runs a CommonJS module.
 *
 * The cache is a file per bundle (its content and its place), Node version, architecture and V8 flags (V8 refuses a
 * cache made under other flags), in the user's cache directory (`$XDG_CACHE_HOME/erp-client/code-cache`, else
 * `~/.cache/…`), never in a directory others can write to: code read from it runs. It is written once, when the run
 * that needed it ends (none yet, or V8 refused it), to a temporary file renamed into place, so a process never reads
 * half a cache; the caches it replaces (`replacedBy`) are then removed.
 * `NODE_DISABLE_COMPILE_CACHE` (Node's own switch) turns it off. Any failure to read or write it only costs the time
 * it would have saved.
 */
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Vm from "node:vm"

/** Where the caches live, or `undefined` when there is no cache (switched off, or no home to keep it in). */
export const cacheDir = (env: NodeJS.ProcessEnv, home: string): string | undefined => {
  if (env.NODE_DISABLE_COMPILE_CACHE !== undefined && env.NODE_DISABLE_COMPILE_CACHE !== "") return undefined
  const base = env.XDG_CACHE_HOME !== undefined && Path.isAbsolute(env.XDG_CACHE_HOME)
    ? env.XDG_CACHE_HOME
    : home === ""
    ? undefined
    : Path.join(home, ".cache")
  return base === undefined ? undefined : Path.join(base, "erp-client", "code-cache")
}

// FNV-1a, 32 bits, in hex: a short name for a path (no `node:crypto`, which costs a start a few milliseconds).
const shortHash = (text: string): string => {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193)
  return (hash >>> 0).toString(16).padStart(8, "0")
}

/**
 * The cache's file name: the bundle's content hash and place (V8 before Node 22 names a script after the file its
 * cache was made from: two installations of one version would name each other's file in stack traces), Node's
 * version, the architecture and the V8 flags set.
 */
export const cacheName = (
  bundle: { readonly hash: string; readonly path: string },
  runtime: { readonly version: string; readonly arch: string },
  flags: ReadonlyArray<string>
): string =>
  [
    bundle.hash,
    shortHash(bundle.path),
    runtime.version,
    runtime.arch,
    ...flags.map((flag) => flag.replace(/[^A-Za-z0-9]+/g, ""))
  ].join("-") + ".v8cache"

/**
 * The files of `listing` (a cache directory's names) that the cache `current` replaces: those of the same place of the
 * bundle (the same installation) made from another bundle, which that place will never hold again, with their
 * temporaries. Each upgrade left its caches behind (1.5 to 1.9 MB for each Node version and set of flags), for ever;
 * the caches of other installations and of other Node versions stay, as both may be used again.
 */
export const replacedBy = (current: string, listing: ReadonlyArray<string>): Array<string> => {
  const [hash, place] = current.split("-")
  return listing.filter((name) => {
    const [otherHash, otherPlace] = name.split("-")
    return otherPlace === place && otherHash !== hash && name.includes(".v8cache")
  })
}

// A file (or directory) only this user may have written: code read from it runs.
const ownedBySelf = (stats: Fs.Stats): boolean =>
  (process.getuid === undefined || stats.uid === process.getuid()) && (stats.mode & 0o022) === 0

const readCache = (dir: string, file: string): Buffer | undefined => {
  try {
    if (!ownedBySelf(Fs.statSync(dir))) return undefined
    const fd = Fs.openSync(file, "r")
    try {
      return ownedBySelf(Fs.fstatSync(fd)) ? Fs.readFileSync(fd) : undefined
    } finally {
      Fs.closeSync(fd)
    }
  } catch {
    return undefined
  }
}

const writeCache = (dir: string, file: string, data: Buffer): void => {
  try {
    Fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
    if (!ownedBySelf(Fs.statSync(dir))) return
    const temporary = `${file}.${process.pid}.tmp`
    Fs.writeFileSync(temporary, data, { mode: 0o600 })
    Fs.renameSync(temporary, file)
    for (const name of replacedBy(Path.basename(file), Fs.readdirSync(dir))) {
      Fs.rmSync(Path.join(dir, name), { force: true })
    }
  } catch {
    // No cache this time: the next start compiles as this one did.
  }
}

// The user's home, or "" where the system knows none (`os.homedir` throws when the user has no entry to read).
const homeDir = (): string => {
  try {
    return Os.homedir()
  } catch {
    return ""
  }
}

/**
 * Runs the CommonJS bundle `bundle` and returns its exports, with the code cache when there is one (see the module's
 * comment); a cache that was missing or refused is written when the process exits. The build writes the bundle's code
 * inside the function Node wraps a CommonJS module in (`Module.wrap`), so the file is compiled as it is, with no copy
 * of it joined to a wrapper (its text stays in memory while the process runs: 0.7 MB).
 */
export const load = <Exports>(bundle: string, options: {
  readonly bundleHash: string
  readonly flags: ReadonlyArray<string>
}): Exports => {
  const source = Fs.readFileSync(bundle, "utf8")
  const dir = cacheDir(process.env, homeDir())
  const file = dir === undefined
    ? undefined
    : Path.join(
      dir,
      cacheName(
        { hash: options.bundleHash, path: bundle },
        { version: process.version, arch: process.arch },
        options.flags
      )
    )
  const cachedData = dir === undefined || file === undefined ? undefined : readCache(dir, file)
  const script = new Vm.Script(source, {
    filename: bundle,
    ...(cachedData === undefined ? {} : { cachedData })
  })
  if (dir !== undefined && file !== undefined && (cachedData === undefined || script.cachedDataRejected === true)) {
    process.once("exit", () => writeCache(dir, file, script.createCachedData()))
  }
  const module = { exports: {} as Exports }
  const wrapper = script.runInThisContext() as (
    exports: unknown,
    require: NodeJS.Require,
    module: unknown,
    filename: string,
    dirname: string
  ) => void
  wrapper.call(module.exports, module.exports, createRequire(bundle), module, bundle, Path.dirname(bundle))
  return module.exports
}
