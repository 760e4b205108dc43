/**
 * `pnpm run docs`: the API reference from the JSDoc. docgen for each package (its exports checked for `@since`, its
 * `@example`s type-checked and run, its pages written to `packages/<name>/docs/modules/`), then the pages each package
 * ships and the site (scripts/docs-site.ts), then docs/configuration.md's tables (scripts/docs-config.ts).
 *
 * Fast two ways, both kept:
 *
 * - In parallel: docgen runs for two packages at a time (`--jobs N`), the longest first, in the pool of
 *   scripts/tasks.ts, with a line of progress at least every 10 s and docgen's output appended to `build/docs.log` as it
 *   comes.
 * - Made once, reused while unchanged: each package's pages are kept in a cache under a hash of everything docgen reads
 *   for it (its sources and settings, those of the workspace packages it imports, the lockfile, docgen's and Node's
 *   versions; `docsKey`), and copied from there while that hash is the same. The cache lives outside the clone,
 *   `${XDG_CACHE_HOME:-~/.cache}/erp-client/docs` (or `ERP_DOCS_CACHE`), so a second clone reuses it too; `--no-cache`
 *   runs docgen for every package (and refreshes the cache). `pnpm run docs` takes from it only pages made by a docgen
 *   run that type-checked and ran their examples.
 *
 * `--edition 3|4` writes one edition's reference only (scripts/workspace.ts says which packages), without the site's
 * other packages and without docs/configuration.md. `pnpm release-tarballs` runs the same tasks in its own pool,
 * without checking the examples unless asked (`checkExamples`).
 */
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Url from "node:url"
import { writeReference, writeSite } from "./docs-site.js"
import { clock, command, freshLog, runOrExit, type Task } from "./tasks.js"
import { closure, editionArgument, editionPackages, type Package, packages, ROOT } from "./workspace.js"

/** Raised whenever what docgen is given or how it is run changes in a way the hashed files do not show. */
const CACHE_FORMAT = "erp-client docs cache 2"
/** Entries kept per package: the newest few, so that switching branches back and forth stays fast. */
const KEEP = 3

export const DOCS_LOG = Path.join(ROOT, "build", "docs.log")

/** Where the cache lives: `ERP_DOCS_CACHE`, else under `XDG_CACHE_HOME` or `~/.cache`. */
export const docsCacheDir = (env: NodeJS.ProcessEnv = process.env): string =>
  env.ERP_DOCS_CACHE ?? Path.join(env.XDG_CACHE_HOME ?? Path.join(Os.homedir(), ".cache"), "erp-client", "docs")

const walk = (dir: string): Array<string> =>
  Fs.existsSync(dir)
    ? Fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .flatMap((entry) => {
        const at = Path.join(dir, entry.name)
        return entry.isDirectory() ? walk(at) : entry.isFile() ? [at] : []
      })
    : []

/**
 * The hash a package's pages are kept under: the package's and every workspace package's it imports (dependencies,
 * dev dependencies: its examples may import the sandbox) sources and settings, the root's TypeScript settings and
 * lockfile (every dependency's version), docgen's version and Node's major version (the examples run on it).
 */
export const docsKey = (root: string, all: ReadonlyArray<Package>, dir: string): string => {
  const hash = Crypto.createHash("sha256")
  const text = (value: string) => hash.update(`${value}\0`)
  const file = (at: string) => {
    text(Path.relative(root, at))
    hash.update(Fs.existsSync(at) ? Fs.readFileSync(at) : "(none)")
    text("")
  }
  text(CACHE_FORMAT)
  const docgen = Path.join(root, "node_modules", "@effect", "docgen", "package.json")
  text(`docgen ${Fs.existsSync(docgen) ? JSON.parse(Fs.readFileSync(docgen, "utf8")).version : "none"}`)
  text(`node ${process.versions.node.split(".")[0]}`)
  file(Path.join(root, "pnpm-lock.yaml"))
  file(Path.join(root, "tsconfig.base.json"))
  for (const used of closure(all, [dir], (p) => p.imports)) {
    const base = Path.join(root, "packages", used)
    for (const name of ["package.json", "docgen.json", "tsconfig.json", "tsconfig.src.json"]) {
      file(Path.join(base, name))
    }
    for (const source of walk(Path.join(base, "src"))) file(source)
  }
  return hash.digest("hex").slice(0, 32)
}

export interface DocgenOptions {
  readonly root: string
  readonly all: ReadonlyArray<Package>
  /** The cache's directory; undefined: docgen runs and nothing is kept. */
  readonly cache: string | undefined
  /** `--no-cache`: docgen runs, and what it writes replaces the cache's entry. */
  readonly refresh: boolean
  /**
   * docgen type-checks and runs the `@example`s (`pnpm run docs`, CI). Without it (`pnpm release-tarballs`; the pages are
   * the same) it does not, and takes less than half the time; pages from either serve it, while a run checking the
   * examples takes from the cache only pages made by one that checked them.
   */
  readonly checkExamples: boolean
  readonly log: string
}

/** Beside an entry's pages when docgen checked the examples of the sources they were made from. */
const CHECKED = "examples-checked"

/** The cache's entry for a package's pages under its current hash, when it holds what `options` asks for. */
const cachedEntry = (dir: string, options: DocgenOptions): string | undefined => {
  if (options.cache === undefined || options.refresh) return undefined
  const entry = Path.join(options.cache, dir, docsKey(options.root, options.all, dir))
  if (!Fs.existsSync(Path.join(entry, "modules"))) return undefined
  return options.checkExamples && !Fs.existsSync(Path.join(entry, CHECKED)) ? undefined : entry
}

const replaceDir = (from: string, to: string) => {
  Fs.rmSync(to, { recursive: true, force: true })
  Fs.mkdirSync(Path.dirname(to), { recursive: true })
  Fs.cpSync(from, to, { recursive: true })
}

/** Keeps the newest `KEEP` entries of one package's cache (by when they were last used). */
const prune = (packageCache: string) => {
  const entries = Fs.readdirSync(packageCache, { withFileTypes: true }).filter((e) => e.isDirectory())
    .map((e) => ({ at: Path.join(packageCache, e.name), used: Fs.statSync(Path.join(packageCache, e.name)).mtimeMs }))
    .sort((a, b) => b.used - a.used)
  for (const old of entries.slice(KEEP)) Fs.rmSync(old.at, { recursive: true, force: true })
}

/** The task writing one package's pages: from the cache when its hash is there, else by docgen (then kept). */
export const docgenTask = (dir: string, options: DocgenOptions): Task => ({
  name: `docgen ${dir}`,
  run: async (signal, say) => {
    const packageDir = Path.join(options.root, "packages", dir)
    const modules = Path.join(packageDir, "docs", "modules")
    const hit = cachedEntry(dir, options)
    if (hit !== undefined) {
      replaceDir(Path.join(hit, "modules"), modules)
      const now = new Date()
      Fs.utimesSync(hit, now, now)
      return "from the cache"
    }
    const entry = options.cache === undefined
      ? undefined
      : Path.join(options.cache, dir, docsKey(options.root, options.all, dir))
    // docgen leaves the pages of a module since removed: start from none.
    Fs.rmSync(Path.join(packageDir, "docs", "modules"), { recursive: true, force: true })
    Fs.rmSync(Path.join(packageDir, "docs", "examples"), { recursive: true, force: true })
    const bin = (at: string) => Path.join(at, "node_modules", ".bin")
    const started = Date.now()
    const docgen = Path.join(options.root, "node_modules", "@effect", "docgen", "bin.cjs")
    await command(process.execPath, [docgen], {
      cwd: packageDir,
      log: options.log,
      prefix: dir,
      label: "docgen",
      // docgen runs `tsc` and `tsx` from PATH, as `pnpm exec` gives them. Settings go to docgen through DOCGEN_*
      // variables: it drops its first two arguments.
      env: {
        ...process.env,
        PATH: [bin(packageDir), bin(options.root), process.env.PATH ?? ""].join(Path.delimiter),
        DOCGEN_RUN_EXAMPLES: String(options.checkExamples)
      },
      // docgen's steps ("Parsing modules...", "Typechecking examples...", its lines ending "...") as what it is doing.
      onLine: (line) => {
        const step = / INFO \(#\d+\): (.*?)\.\.\.$/.exec(line)
        if (step !== null) say(step[1]!.toLowerCase())
      }
    })(signal)
    if (entry === undefined) return undefined
    if (options.checkExamples) recordTiming(options.cache!, dir, Math.round((Date.now() - started) / 1000))
    // Kept whole or not at all: written beside, then renamed into place.
    const partial = `${entry}.partial-${process.pid}`
    replaceDir(modules, Path.join(partial, "modules"))
    if (options.checkExamples) Fs.writeFileSync(Path.join(partial, CHECKED), "")
    Fs.rmSync(entry, { recursive: true, force: true })
    Fs.renameSync(partial, entry)
    prune(Path.dirname(entry))
    return options.checkExamples ? "kept in the cache" : "examples not checked; kept in the cache"
  }
})

/** How long docgen took for each package last time (seconds), kept beside the cache to order the next run. */
const timingsFile = (cache: string) => Path.join(cache, "timings.json")

const readTimings = (cache: string | undefined): Record<string, number> => {
  try {
    return cache === undefined ? {} : JSON.parse(Fs.readFileSync(timingsFile(cache), "utf8"))
  } catch {
    return {}
  }
}

const recordTiming = (cache: string, dir: string, seconds: number) => {
  Fs.mkdirSync(cache, { recursive: true })
  Fs.writeFileSync(timingsFile(cache), JSON.stringify({ ...readTimings(cache), [dir]: seconds }, null, 2) + "\n")
}

/** Whether a package's pages are in the cache under its current hash (and will be copied, not made). */
export const isCached = (dir: string, options: DocgenOptions): boolean => cachedEntry(dir, options) !== undefined

/**
 * docgen's tasks of the packages among `dirs` that have a `docgen.json`: `cached`, those whose pages the cache holds
 * (a moment each), and `made`, the others, the longest first so that the two at a time end together. The longest by
 * the time docgen took last time when each has one, else by the size of what it reads: its own sources twice (parsed
 * for the pages, then type-checked with its examples) and those of the packages it imports once (the examples'
 * type-check reads them).
 */
export const docgenTasks = (
  dirs: ReadonlyArray<string>,
  options: DocgenOptions
): { readonly cached: ReadonlyArray<Task>; readonly made: ReadonlyArray<Task> } => {
  const size = (dir: string) =>
    walk(Path.join(options.root, "packages", dir, "src")).reduce((sum, file) => sum + Fs.statSync(file).size, 0)
  const docgen = new Set(options.all.filter((p) => p.docgen).map((p) => p.dir))
  const chosen = dirs.filter((dir) => docgen.has(dir))
  const cached = chosen.filter((dir) => isCached(dir, options))
  const made = chosen.filter((dir) => !cached.includes(dir))
  const timings = readTimings(options.cache)
  const cost = made.every((dir) => typeof timings[dir] === "number")
    ? (dir: string) => timings[dir]!
    : (dir: string) => size(dir) + closure(options.all, [dir], (p) => p.imports).reduce((sum, d) => sum + size(d), 0)
  return {
    cached: cached.map((dir) => docgenTask(dir, options)),
    made: made.map((dir) => ({ dir, cost: cost(dir) })).sort((a, b) => b.cost - a.cost)
      .map(({ dir }) => docgenTask(dir, options))
  }
}

/** The task writing the pages a package ships from docgen's (scripts/docs-site.ts), after its docgen task. */
export const referenceTask = (root: string, dir: string): Task => ({
  name: `reference ${dir}`,
  after: [`docgen ${dir}`],
  quiet: true,
  run: async () => {
    writeReference(root, dir)
    return undefined
  }
})

/** The reference tasks of the packages among `dirs` that have one (docgen's pages and modules). */
export const referenceTasks = (
  root: string,
  all: ReadonlyArray<Package>,
  dirs: ReadonlyArray<string>
): ReadonlyArray<Task> =>
  all.filter((p) => dirs.includes(p.dir) && p.docgen && p.modules).map((p) => referenceTask(root, p.dir))

/** The task writing the site, `build/site/`, after every reference task. */
export const siteTask = (root: string, references: ReadonlyArray<Task>): Task => ({
  name: "site",
  after: references.map((task) => task.name),
  run: async () => {
    const dirs = references.map((task) => task.name.slice("reference ".length))
    writeSite(root, dirs)
    return `${dirs.length} packages in build/site`
  }
})

export interface DocsArguments {
  readonly edition: "3" | "4" | undefined
  readonly cache: boolean
  readonly jobs: number
}

/** `--jobs N`: at most N commands at a time (2 by default). */
export const jobsArgument = (args: ReadonlyArray<string>): number => {
  const at = args.indexOf("--jobs")
  if (at === -1) return 2
  const value = Number(args[at + 1])
  if (!Number.isInteger(value) || value < 1) {
    throw new Error(`--jobs takes a whole number of 1 or more, not ${args[at + 1] ?? "nothing"}`)
  }
  return value
}

/** The arguments `pnpm run docs` and `pnpm release-tarballs` share; `usage` ends an unknown argument's error. */
export const docsArguments = (
  args: ReadonlyArray<string>,
  usage = "pnpm run docs [--edition 3|4] [--no-cache] [--jobs N]",
  flags: ReadonlyArray<string> = []
): DocsArguments => {
  const edition = editionArgument(args)
  const jobs = jobsArgument(args)
  for (const [i, arg] of args.entries()) {
    const value = args[i - 1] === "--edition" || args[i - 1] === "--jobs"
    if (!value && !["--edition", "--no-cache", "--jobs", ...flags].includes(arg) && !arg.startsWith("--edition=")) {
      throw new Error(`unknown argument ${arg} (${usage})`)
    }
  }
  return { edition, cache: !args.includes("--no-cache"), jobs }
}

const main = async () => {
  const args = docsArguments(process.argv.slice(2))
  const all = packages(ROOT)
  const dirs = editionPackages(all, args.edition)
  freshLog(DOCS_LOG)
  const options: DocgenOptions = {
    root: ROOT,
    all,
    cache: docsCacheDir(),
    refresh: !args.cache,
    checkExamples: true,
    log: DOCS_LOG
  }
  const docgen = docgenTasks(dirs, options)
  const references = referenceTasks(ROOT, all, dirs)
  // The pages from the cache first, and a package's shipped pages as soon as they can be written: they take a moment.
  const tasks: Array<Task> = [...docgen.cached, ...references, siteTask(ROOT, references), ...docgen.made]
  if (args.edition === undefined) {
    tasks.push({
      name: "docs/configuration.md",
      run: command(process.execPath, [
        Path.join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"),
        "scripts/docs-config.ts"
      ], {
        cwd: ROOT,
        log: DOCS_LOG,
        prefix: "docs-config"
      })
    })
  }
  console.log(
    `docs: ${docgen.cached.length + docgen.made.length} packages, ${docgen.cached.length} from the cache, docgen for ` +
      `${docgen.made.length}, ${args.jobs} at a time; docgen's output in ${Path.relative(ROOT, DOCS_LOG)}` +
      `, its pages cached in ${options.cache}`
  )
  const started = Date.now()
  await runOrExit(tasks, "docs", args.jobs)
  console.log(`docs: done in ${clock(Date.now() - started)}`)
}

if (process.argv[1] !== undefined && import.meta.url === Url.pathToFileURL(Path.resolve(process.argv[1])).href) {
  await main()
}
