/**
 * `pnpm release-tarballs [--edition 3|4] [--check-examples] [--no-cache] [--jobs N] [--dry-run]`: the packages as npm
 * would get them, from a clone after `pnpm install`, in `build/tarballs/` (emptied first). Until the packages are
 * published, an application installs them from these files (README, "Install").
 *
 * One pool of commands, two at a time (scripts/tasks.ts): the libraries' build (`tsc -b` of their
 * `tsconfig.src.json`), the command's bundle (scripts/build-cli.ts, skipped while it is newer than its sources, as
 * `pnpm install` leaves it), the API reference of each package that ships one (docgen, the longest first, each
 * package's pages reused from the cache while its sources are unchanged: scripts/docs.ts; its output in
 * `build/docs.log`, written as it comes), the pages each package ships (scripts/docs-site.ts), and each package packed
 * as soon as its build and pages are there (`pnpm pack`, whose `prepack` refuses a package without its reference or its
 * build: scripts/check-pack.ts). A line of progress at least every 10 s. Last, each tarball is checked to hold the
 * reference its README links.
 *
 * Fast by both the pool and the cache; and docgen here does not type-check and run the `@example`s (more than half of
 * its time; the pages are the same): `pnpm run docs` does, on every change in CI. `--check-examples` does it here too.
 *
 * `--edition 3` makes the Effect 3 edition's tarballs, `--edition 4` the Effect 4 edition's; the kernel and the
 * command go with either (scripts/workspace.ts). `--dry-run` prints what would run and changes nothing.
 */
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { docgenTasks, DOCS_LOG, docsArguments, docsCacheDir, referenceTasks } from "./docs.js"
import { clock, command, freshLog, runOrExit, type Task } from "./tasks.js"
import { closure, editionPackages, packages, ROOT } from "./workspace.js"

const out = Path.join(ROOT, "build", "tarballs")
const BUILD_LOG = Path.join(ROOT, "build", "build.log")
const PACK_LOG = Path.join(ROOT, "build", "pack.log")
const CLI = Path.join(ROOT, "packages", "cli")

/** The command's bundle is newer than each of its sources, the lockfile and its package.json (as scripts/erp.js checks). */
const commandIsFresh = (): boolean => {
  try {
    const outputs = ["bin.js", "erp.cjs", "mcp.cjs", "help.json", "THIRD-PARTY-LICENSES.md"]
    const built = Math.min(...outputs.map((file) => Fs.statSync(Path.join(CLI, "dist", file)).mtimeMs))
    const { sources } = JSON.parse(Fs.readFileSync(Path.join(CLI, "build", "bundle.json"), "utf8")) as {
      sources: ReadonlyArray<string>
    }
    return [...sources, "pnpm-lock.yaml", "packages/cli/package.json"].every((file) =>
      (Fs.statSync(Path.join(ROOT, file), { throwIfNoEntry: false })?.mtimeMs ?? Infinity) < built
    )
  } catch {
    return false
  }
}

const rawArgs = process.argv.slice(2)
const dryRun = rawArgs.includes("--dry-run")
const checkExamples = rawArgs.includes("--check-examples")
let args: ReturnType<typeof docsArguments>
try {
  args = docsArguments(
    rawArgs.filter((arg) => arg !== "--dry-run"),
    "pnpm release-tarballs [--edition 3|4] [--check-examples] [--no-cache] [--jobs N] [--dry-run]",
    ["--check-examples"]
  )
} catch (error) {
  console.error(`release tarballs: ${error instanceof Error ? error.message : String(error)}`)
  process.exit(2)
}

const all = packages(ROOT)
const shipped = editionPackages(all, args.edition).filter((dir) => !all.find((p) => p.dir === dir)!.private)
const tsc = Path.join(ROOT, "node_modules", "typescript", "bin", "tsc")
const tsx = Path.join(ROOT, "node_modules", "tsx", "dist", "cli.mjs")

// The libraries compiled by tsc, with the projects they reference; the command is bundled by esbuild instead.
const libraries = closure(all, shipped.filter((dir) => dir !== "cli"), (p) => p.references)
const build: Task = {
  name: "build",
  run: command(process.execPath, [tsc, "-b", ...libraries.map((dir) => `packages/${dir}/tsconfig.src.json`)], {
    cwd: ROOT,
    log: BUILD_LOG,
    prefix: "tsc",
    label: "tsc -b (the libraries' build)"
  })
}
const bundle: Task = {
  name: "build the command",
  run: async (signal) => {
    if (commandIsFresh()) return "up to date"
    await command(process.execPath, [tsx, "scripts/build-cli.ts"], {
      cwd: ROOT,
      log: BUILD_LOG,
      prefix: "build-cli",
      label: "scripts/build-cli.ts"
    })(
      signal
    )
    return undefined
  }
}
const cache = docsCacheDir()
// The reference of the packages whose tarball holds one (not the command's: its README links the site).
const documented = shipped.filter((dir) => all.find((p) => p.dir === dir)!.shipsReference)
const docgen = docgenTasks(documented, {
  root: ROOT,
  all,
  cache,
  refresh: !args.cache,
  checkExamples,
  log: DOCS_LOG
})
const references = referenceTasks(ROOT, all, documented)
const packs: ReadonlyArray<Task> = shipped.map((dir) => ({
  name: `pack ${dir}`,
  after: [
    ...(references.some((task) => task.name === `reference ${dir}`) ? [`reference ${dir}`] : []),
    dir === "cli" ? bundle.name : build.name
  ],
  run: command("pnpm", ["pack", "--pack-destination", out], {
    cwd: Path.join(ROOT, "packages", dir),
    log: PACK_LOG,
    prefix: dir,
    label: "pnpm pack"
  })
}))
// The pool starts the first ready task in this order: the builds (every pack waits for them), the pages the cache
// holds, then a package's shipped pages and its pack as soon as they can (they take seconds), then docgen, the longest
// part, the longest package first.
const tasks: ReadonlyArray<Task> = [
  build,
  ...(shipped.includes("cli") ? [bundle] : []),
  ...docgen.cached,
  ...references,
  ...packs,
  ...docgen.made
]

console.log(
  `release tarballs: ${shipped.length} packages${args.edition === undefined ? "" : ` (edition ${args.edition})`}: ` +
    `${shipped.join(", ")}; ${args.jobs} commands at a time`
)
console.log(
  `release tarballs: the API reference of ${docgen.cached.length + docgen.made.length} packages, ` +
    `${docgen.cached.length} from the cache (${cache}), docgen for ${docgen.made.length}${
      checkExamples ? ", its examples type-checked and run" : " (its examples not checked: --check-examples)"
    }; logs in build/build.log, ${Path.relative(ROOT, DOCS_LOG)} and build/pack.log, written as they go`
)
if (dryRun) {
  for (const task of tasks) {
    console.log(`- ${task.name}${task.after === undefined ? "" : ` (after ${task.after.join(", ")})`}`)
  }
  process.exit(0)
}

const started = Date.now()
for (const log of [BUILD_LOG, DOCS_LOG, PACK_LOG]) freshLog(log)
Fs.rmSync(out, { recursive: true, force: true })
Fs.mkdirSync(out, { recursive: true })
await runOrExit(tasks, "release tarballs", args.jobs)

console.log("release tarballs: what each holds")
let failed = false
for (const file of Fs.readdirSync(out).filter((f) => f.endsWith(".tgz")).sort()) {
  const tarball = Path.join(out, file)
  const entries = spawnSync("tar", ["tzf", tarball], { encoding: "utf8" }).stdout.trim().split("\n")
  const readme = spawnSync("tar", ["xzf", tarball, "-O", "package/README.md"], { encoding: "utf8" }).stdout
  const linksReference = readme.includes("](docs/reference/README.md)")
  const pages = entries.filter((e) => /^package\/docs\/reference\/[A-Za-z]+\.md$/.test(e))
  const problem = linksReference && (!entries.includes("package/docs/reference/README.md") || pages.length < 2)
  failed ||= problem
  console.log(
    `${Path.relative(ROOT, tarball)}: ${entries.length} files${
      pages.length > 0
        ? `, API reference: its index and ${pages.length - 1} module page${pages.length === 2 ? "" : "s"}`
        : ""
    }${problem ? "; MISSING the API reference its README links" : ""}`
  )
}
if (failed) process.exit(1)
console.log(`release tarballs: ${shipped.length} tarballs in ${clock(Date.now() - started)}`)
console.log(
  args.edition === "4"
    ? "Install them into an application (README, \"Install\"): npm install <this clone>/build/tarballs/erp-client-" +
      "{kernel,effect4-core,effect4-client,effect4-streams}-<version>.tgz effect@… (the versions README.md names)"
    : "Install them into an application (README, \"Install\"): npm install <this clone>/build/tarballs/erp-client-" +
      "{kernel,core,client,streams}-<version>.tgz effect@… (the versions README.md names)"
)
