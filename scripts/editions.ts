/**
 * The Effect 4 edition's copies of the source both editions share (docs/editions.md, docs/ARCHITECTURE.md, "Two
 * editions, one source").
 *
 * The Effect 3 package's `src` is the one source. For each package of the Effect 4 edition listed in `PAIRS`, every
 * file of `packages/X/src` is copied to `packages/effect4-X/src` unless its first line says it is not shared:
 *
 * - `// Per edition: <why>`: each edition has its own file of that name (the other's first line says so too);
 * - `// Effect 3 only: <why>`: the Effect 4 edition has no such file;
 * - (in the Effect 4 package) `// Effect 4 only: <why>`: the Effect 3 edition has no such file.
 *
 * A package may also take files from another Effect 3 package (`SOURCES`): `effect4-testing`'s `Sandbox.ts` is
 * `packages/sandbox/src/Sandbox.ts`, the Effect 3 edition's in-memory ERP being a package of its own (`FOLDED`).
 *
 * A copy is the source with `@erp-client/X` read as `@erp-client/effect4-X` (imports, service keys, examples), a
 * banner after the module's leading JSDoc naming the file to edit, and, inside the `ts` examples of JSDoc only, the
 * few renames in `EXAMPLE_RENAMES` (docgen compiles the examples against the package's own `effect`). The Effect APIs
 * that differ between the editions are imported by the shared source from `src/internal/edition.ts`, a per-edition
 * adapter. Copies are written read-only, are listed in `packages/effect4-X/.gitignore` and are never committed.
 *
 * `tsx scripts/editions.ts` writes the copies (run by the root `prepare`, `build`, `check`, `docs` and `test`, and by
 * the Effect 4 packages' vitest set-up); `--check` writes nothing and fails, one line each, on a copy missing, stale or
 * edited by hand, a copy tracked by git, a `.gitignore` out of date, or a file whose marker does not match its twin.
 * `test/editions.test.ts` runs the check.
 */
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const ROOT = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")

/**
 * The packages whose Effect 4 edition is built from the Effect 3 source, by their Effect 3 name: `"all"` when every
 * file of the package is shared or marked, else the files shared so far (paths under `src/`), the package's other files
 * still kept by hand in each edition while they are converted.
 */
export const PAIRS: Readonly<Record<string, "all" | ReadonlyArray<string>>> = {
  streams: "all",
  core: "all",
  client: [
    "Environment.ts",
    "ErpClient.ts",
    "ErpConfig.ts",
    "ErpRateLimiter.ts",
    "ErpRateLimiterRedis.ts",
    "index.ts",
    "internal/calls.ts",
    "internal/cancel.ts",
    "internal/checks.ts",
    "internal/editionContract.ts",
    "internal/executor.ts",
    "internal/inFlight.ts",
    "internal/limiter.ts",
    "internal/memory.ts",
    "internal/observe.ts",
    "internal/redis.ts",
    "internal/redisStores.ts",
    "internal/slots.ts",
    "internal/transport.ts"
  ],
  otel: [
    "ErpTelemetry.ts",
    "Variables.ts",
    "internal/collector.ts",
    "internal/collectorGuard.ts",
    "internal/editionContract.ts",
    "internal/exporting.ts",
    "internal/otelSettings.ts",
    "internal/otlpShape.ts",
    "internal/shape.ts"
  ],
  testing: "all"
}

/**
 * The tests both editions run, by their Effect 3 package's name: files under `test/`, copied like the sources into the
 * Effect 4 package's `test/`. A shared test takes what differs between the editions' kits (the sandbox's package, the
 * store's module) from the package's `test/kit.ts`, one per edition, and the Effect APIs that differ from the
 * package's own adapter, `src/internal/edition.ts`: one behavioural suite, run against each edition's build.
 */
export const TEST_PAIRS: Readonly<Record<string, ReadonlyArray<string>>> = {
  client: ["ErpRateLimiter.test.ts", "Query.test.ts", "inFlight.test.ts", "windows.ts"],
  core: ["Envelope.test.ts", "ErpError.test.ts", "Hostile.test.ts", "Precision.test.ts"],
  streams: [
    "Changes.test.ts",
    "Conditions.test.ts",
    "Drift.test.ts",
    "audit.ts",
    "Misbehaving.test.ts",
    "Paginate.test.ts",
    "SqliteNode.test.ts"
  ]
}

/**
 * Files of an Effect 4 package whose source is in another Effect 3 package than its twin, by the package's Effect 3
 * name, then by path under `src/`: the source's path from the root. Copied, marked and checked as the files of `PAIRS`
 * are, wherever their source lives.
 */
export const SOURCES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  testing: {
    "Fault.ts": "packages/sandbox/src/Fault.ts",
    "internal/core.ts": "packages/sandbox/src/internal/core.ts",
    "internal/edition.ts": "packages/sandbox/src/internal/edition.ts",
    "internal/memoryClient.ts": "packages/sandbox/src/internal/memoryClient.ts",
    "internal/sandboxContract.ts": "packages/sandbox/src/internal/sandboxContract.ts",
    "internal/nodeServer.ts": "packages/sandbox/src/internal/nodeServer.ts",
    "Sandbox.ts": "packages/sandbox/src/Sandbox.ts"
  }
}

/**
 * Effect 3 packages whose modules are part of another package in the Effect 4 edition, by Effect 3 name: the Effect 3
 * sandbox's in-memory ERP is `effect4-testing`'s. In a copy placed there, an import of `@erp-client/sandbox/X` reads as
 * the relative path of that package's `X` (which must exist), and any other `@erp-client/sandbox` as
 * `@erp-client/effect4-testing`.
 */
export const FOLDED: Readonly<Record<string, string>> = { sandbox: "testing" }

/** The packages both editions publish, by their Effect 3 name: their imports are rewritten in a copy. */
const EDITION_PACKAGES = ["core", "client", "streams", "otel", "testing"]

/** A file's first line, when it says the file is not shared. */
const MARKERS = {
  perEdition: "// Per edition: ",
  effect3Only: "// Effect 3 only: ",
  effect4Only: "// Effect 4 only: "
} as const

/**
 * The renames applied inside the `ts` examples of JSDoc only, where an example cannot avoid an API Effect 4 renamed
 * (source code imports the adapter instead). Whole words, in this order.
 */
export const EXAMPLE_RENAMES: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bEither\.isRight\b/g, "Result.isSuccess"],
  [/\bEither\.isLeft\b/g, "Result.isFailure"],
  [/\bEither\b/g, "Result"],
  [/\.right\b/g, ".success"],
  [/\.left\b/g, ".failure"],
  // The platform's services and the in-memory store, in examples that provide them.
  [/\bNodeContext\b/g, "NodeServices"],
  [/import \{ KeyValueStore \} from "@effect\/platform"/g, "import { KeyValueStore } from \"effect/persistence\""],
  [/import \{ FetchHttpClient \} from "@effect\/platform"/g, "import { FetchHttpClient } from \"effect/http\""],
  // A fiber's value set for one effect, and the settings read from the environment, under Effect 4's names.
  [/\bEffect\.locally\b/g, "Effect.provideService"],
  [/\bConfig\.string\b/g, "Config.String"],
  [/\bConfig\.redacted\b/g, "Config.Redacted"],
  // The HTTP modules, and the layer of a scoped service, in examples that use them.
  [/import \{ HttpClient \} from "@effect\/platform"/g, "import { HttpClient } from \"effect/http\""],
  [/\bLayer\.scoped\(/g, "Layer.effect("],
  // The test services `it.effect` provides, in examples that run on the `TestClock` without it.
  [
    /\bimport \{ (.*), TestContext \} from "effect"/g,
    "import { $1 } from \"effect\"\n * import { TestClock } from \"effect/testing\""
  ],
  [/\bTestContext\.TestContext\b/g, "TestClock.layer()"],
  // The settings' readers.
  [/\bConfig\.integer\b/g, "Config.Int"],
  // The SQL client's module and the reactivity service it needs, in examples that use them (SqliteNode).
  [/import \{ SqlClient \} from "@effect\/sql"/g, "import { SqlClient } from \"effect/sql\""],
  [
    /import \* as Reactivity from "@effect\/experimental\/Reactivity"/g,
    "import * as Reactivity from \"effect/reactivity/Reactivity\""
  ]
]

const banner = (source: string): string => `// Generated from ${source} by scripts/editions.ts: edit that file.`

const GITIGNORE_HEADER = [
  "# Generated by scripts/editions.ts from the Effect 3 package's source (the one source both editions share):",
  "# edit the file the banner names, never these copies. Rewritten by the script; not committed."
]

const toPosix = (path: string): string => path.split(Path.sep).join("/")

const walk = (dir: string): Array<string> =>
  Fs.existsSync(dir)
    ? Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = Path.join(dir, entry.name)
      return entry.isDirectory() ? walk(path) : entry.name.endsWith(".ts") ? [path] : []
    }).sort()
    : []

const firstLine = (text: string): string => text.slice(0, Math.max(0, text.indexOf("\n")))

const importRewrite = new RegExp(`@erp-client/(${EDITION_PACKAGES.join("|")})(?=["'/\`])`, "g")

/** Applies `EXAMPLE_RENAMES` inside the ```ts blocks of JSDoc comments. */
const renameInExamples = (text: string): string =>
  text.replace(/(\*\s*```ts\n)([\s\S]*?)(\n\s*\*\s*```)/g, (_all, open: string, body: string, close: string) => {
    let renamed = body
    for (const [pattern, replacement] of EXAMPLE_RENAMES) renamed = renamed.replace(pattern, replacement)
    return open + renamed + close
  })

/** Where a copy is placed: the Effect 4 package, by its Effect 3 name, and the copy's path under its `src/`. */
export interface Placed {
  readonly pkg: string
  readonly relative: string
}

/**
 * The paths under `src/` of the modules of another package that a copy placed in `placed` imports (`FOLDED`), each
 * read as a relative import.
 */
const foldedImports = (text: string, placed: Placed): Array<string> =>
  Object.entries(FOLDED).flatMap(([folded, into]) =>
    into === placed.pkg ? [...text.matchAll(codeImport(folded))].map((match) => `${match[2]}.ts`) : []
  )

/** An import of `@erp-client/PKG/X` in code (not in a comment's example): the text before it, and `X`. */
const codeImport = (pkg: string): RegExp =>
  new RegExp(`^(?![ \\t]*\\*)([^\\n]*\\bfrom )"@erp-client/${pkg}/([^"]+)"`, "gm")

/** `text` with the packages `FOLDED` into the package the copy is placed in read as that package. */
const fold = (text: string, placed: Placed | undefined): string => {
  if (placed === undefined) return text
  let folded = text
  for (const [pkg, into] of Object.entries(FOLDED)) {
    if (into !== placed.pkg) continue
    folded = folded.replace(codeImport(pkg), (_all, before: string, module: string) => {
      const path = Path.posix.relative(Path.posix.dirname(placed.relative), `${module}.js`)
      return `${before}"${path.startsWith(".") ? path : `./${path}`}"`
    }).replace(new RegExp(`@erp-client/${pkg}(?=["'/\`])`, "g"), `@erp-client/effect4-${into}`)
  }
  return folded
}

/** The Effect 4 copy of a shared file's text; `placed`, where it goes, when other packages fold into it. */
export const copyOf = (text: string, source: string, placed?: Placed): string => {
  const rewritten = renameInExamples(fold(text, placed).replace(importRewrite, "@erp-client/effect4-$1"))
  const leading = /^\/\*\*[\s\S]*?\*\/\n/.exec(rewritten)
  const at = leading === null ? 0 : leading[0].length
  return `${rewritten.slice(0, at)}${banner(source)}\n${rewritten.slice(at)}`
}

interface Plan {
  /** The copies to write, by absolute path: their text. */
  readonly copies: Map<string, string>
  /** Each Effect 4 package's `.gitignore`, by absolute path: its text. */
  readonly gitignores: Map<string, string>
  /** Marker mismatches and other faults no writing can fix. */
  readonly problems: Array<string>
}

/**
 * The directories a package shares (`src` by `PAIRS` and `SOURCES`, `test` by `TEST_PAIRS`), each with what of it is
 * shared.
 */
const sharedDirs = (pkg: string): Array<readonly [dir: "src" | "test", scope: "all" | ReadonlyArray<string>]> => [
  ...(PAIRS[pkg] === undefined && SOURCES[pkg] === undefined ? [] : [["src", PAIRS[pkg] ?? []] as const]),
  ...(TEST_PAIRS[pkg] === undefined ? [] : [["test", TEST_PAIRS[pkg]] as const])
]

const plan = (root: string): Plan => {
  const copies = new Map<string, string>()
  const gitignores = new Map<string, string>()
  const problems: Array<string> = []
  for (const pkg of [...new Set([...Object.keys(PAIRS), ...Object.keys(SOURCES), ...Object.keys(TEST_PAIRS)])]) {
    const toPackage = Path.join(root, "packages", `effect4-${pkg}`)
    const generated: Array<string> = []
    for (const [dir, scope] of sharedDirs(pkg)) {
      planDir(root, pkg, dir, scope, copies, generated, problems)
    }
    generated.sort()
    // A tree without the package (a test's) has no copies of it to list.
    if (Fs.existsSync(Path.join(root, "packages", pkg, "src"))) {
      gitignores.set(Path.join(toPackage, ".gitignore"), [...GITIGNORE_HEADER, ...generated, ""].join("\n"))
    }
  }
  return { copies, gitignores, problems }
}

/** The copies of one shared directory of `pkg` (its `src` or `test`), and what is wrong with its markers. */
const planDir = (
  root: string,
  pkg: string,
  dir: "src" | "test",
  scope: "all" | ReadonlyArray<string>,
  copies: Map<string, string>,
  generated: Array<string>,
  problems: Array<string>
): void => {
  const elsewhere = dir === "src" ? SOURCES[pkg] ?? {} : {}
  const inScope = (relative: string) => scope === "all" || scope.includes(relative)
  const from = Path.join(root, "packages", pkg, dir)
  const toPackage = Path.join(root, "packages", `effect4-${pkg}`)
  const to = Path.join(toPackage, dir)
  const listName = dir === "src" ? "PAIRS" : "TEST_PAIRS"
  if (!Fs.existsSync(from)) return
  if (scope !== "all") {
    for (const relative of scope) {
      if (!Fs.existsSync(Path.join(from, relative))) {
        problems.push(`${listName}.${pkg} names ${relative}: no such file`)
      }
    }
  }
  const sources: Array<readonly [string, string]> = walk(from).flatMap((file) => {
    const relative = toPosix(Path.relative(from, file))
    return inScope(relative) && elsewhere[relative] === undefined ? [[file, relative] as const] : []
  })
  for (const [relative, source] of Object.entries(elsewhere)) {
    if (Fs.existsSync(Path.join(root, source))) sources.push([Path.join(root, source), relative])
    else problems.push(`SOURCES.${pkg} names ${source}: no such file`)
  }
  for (const [file, relative] of sources) {
    const text = Fs.readFileSync(file, "utf8")
    const line = firstLine(text)
    const twin = Path.join(to, relative)
    const source = toPosix(Path.relative(root, file))
    const twinName = toPosix(Path.relative(root, twin))
    if (line.startsWith(MARKERS.perEdition)) {
      if (!Fs.existsSync(twin)) problems.push(`${source} is per edition, but ${twinName} does not exist`)
      else if (!firstLine(Fs.readFileSync(twin, "utf8")).startsWith(MARKERS.perEdition)) {
        problems.push(`${source} is per edition, but ${twinName}'s first line does not say "${MARKERS.perEdition}…"`)
      }
      continue
    }
    if (line.startsWith(MARKERS.effect3Only)) {
      if (Fs.existsSync(twin)) problems.push(`${source} is Effect 3 only, but ${twinName} exists`)
      continue
    }
    if (line.startsWith(MARKERS.effect4Only)) {
      problems.push(`${source}: "${MARKERS.effect4Only}…" in the Effect 3 edition`)
    }
    // Folded packages' imports are read as relative paths under `src/` only.
    const placed = dir === "src" ? { pkg, relative } : undefined
    if (placed !== undefined) {
      for (const module of foldedImports(text, placed)) {
        const shared = elsewhere[module] !== undefined || inScope(module)
        if (!shared && !Fs.existsSync(Path.join(to, module))) {
          problems.push(`${source} imports a module ${toPosix(Path.relative(root, to))} has not: ${module}`)
        }
      }
    }
    copies.set(twin, copyOf(text, source, placed))
    generated.push(`/${dir}/${relative}`)
  }
  // Every file of the Effect 4 package that is not a copy says why it is its own.
  for (const file of walk(to)) {
    const relative = toPosix(Path.relative(to, file))
    if (copies.has(file) || !inScope(relative) || elsewhere[relative] !== undefined) continue
    const name = toPosix(Path.relative(root, file))
    const line = firstLine(Fs.readFileSync(file, "utf8"))
    if (Fs.existsSync(Path.join(from, relative))) {
      if (!line.startsWith(MARKERS.perEdition)) {
        problems.push(`${name}: its first line must say "${MARKERS.perEdition}…"`)
      }
    } else if (!line.startsWith(MARKERS.effect4Only) && !listed(Path.join(toPackage, ".gitignore")).includes(file)) {
      problems.push(`${name} has no Effect 3 twin: its first line must say "${MARKERS.effect4Only}…"`)
    }
  }
}

/** The copies a `.gitignore` lists, by absolute path (none when there is no such file). */
const listed = (gitignore: string): Array<string> =>
  Fs.existsSync(gitignore)
    ? Fs.readFileSync(gitignore, "utf8").split("\n").filter((line) => /^\/(src|test)\//.test(line)).map((line) =>
      Path.join(Path.dirname(gitignore), line.slice(1))
    )
    : []

const tracked = (root: string, paths: ReadonlyArray<string>): Array<string> => {
  if (paths.length === 0 || !Fs.existsSync(Path.join(root, ".git"))) return []
  return execFileSync("git", ["ls-files", "--", ...paths], { cwd: root, encoding: "utf8" })
    .split("\n")
    .filter((line) => line !== "")
}

/** What `--check` finds wrong, one line each; none when every copy is as the source makes it. */
export const check = (root: string = ROOT): Array<string> => {
  const { copies, gitignores, problems } = plan(root)
  const found = [...problems]
  for (const [path, text] of copies) {
    const name = toPosix(Path.relative(root, path))
    if (!Fs.existsSync(path)) found.push(`${name} is missing: run \`tsx scripts/editions.ts\``)
    else if (Fs.readFileSync(path, "utf8") !== text) {
      found.push(`${name} differs from its source (stale, or edited by hand): edit the file its banner names`)
    } else if ((Fs.statSync(path).mode & 0o222) !== 0) found.push(`${name} is writable: copies are written read-only`)
  }
  for (const [path, text] of gitignores) {
    const name = toPosix(Path.relative(root, path))
    if (!Fs.existsSync(path) || Fs.readFileSync(path, "utf8") !== text) found.push(`${name} does not list the copies`)
    for (const stale of listed(path)) {
      if (!copies.has(stale) && Fs.existsSync(stale)) {
        found.push(`${toPosix(Path.relative(root, stale))} is a copy of a file no longer shared`)
      }
    }
  }
  for (const name of tracked(root, [...copies.keys()].map((path) => Path.relative(root, path)))) {
    found.push(`${name} is tracked by git: copies are not committed (git rm --cached ${name})`)
  }
  return found
}

const writeReadOnly = (path: string, text: string): boolean => {
  if (Fs.existsSync(path) && Fs.readFileSync(path, "utf8") === text) {
    // Unchanged: its time stamp kept, so that incremental builds see nothing new.
    if ((Fs.statSync(path).mode & 0o222) !== 0) Fs.chmodSync(path, 0o444)
    return false
  }
  Fs.mkdirSync(Path.dirname(path), { recursive: true })
  Fs.rmSync(path, { force: true })
  Fs.writeFileSync(path, text, { mode: 0o444 })
  Fs.chmodSync(path, 0o444)
  return true
}

/** Writes the copies and the `.gitignore`s, removes copies no longer shared; fails on a marker fault. */
export const generate = (root: string = ROOT): { readonly written: number; readonly removed: number } => {
  const { copies, gitignores, problems } = plan(root)
  if (problems.length > 0) throw new Error(`scripts/editions.ts:\n${problems.join("\n")}`)
  let written = 0
  let removed = 0
  for (const [path] of gitignores) {
    for (const stale of listed(path)) {
      if (!copies.has(stale) && Fs.existsSync(stale)) {
        const text = Fs.readFileSync(stale, "utf8")
        // Only a copy goes: a file a per-edition hand now owns (no banner) stays.
        if (text.includes("by scripts/editions.ts: edit that file.")) {
          Fs.rmSync(stale, { force: true })
          removed += 1
        }
      }
    }
  }
  for (const [path, text] of copies) if (writeReadOnly(path, text)) written += 1
  for (const [path, text] of gitignores) {
    if (!Fs.existsSync(path) || Fs.readFileSync(path, "utf8") !== text) Fs.writeFileSync(path, text)
  }
  return { written, removed }
}

/** vitest's global set-up (the Effect 4 packages' configs): the copies, written before any test imports them. */
export const setup = (): void => {
  generate()
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(Path.resolve(process.argv[1])).href) {
  if (process.argv.includes("--check")) {
    const found = check()
    for (const line of found) console.error(line)
    process.exit(found.length === 0 ? 0 : 1)
  } else {
    try {
      const { removed, written } = generate()
      if (written > 0 || removed > 0) {
        console.log(`scripts/editions.ts: ${written} cop${written === 1 ? "y" : "ies"} written, ${removed} removed`)
      }
    } catch (error) {
      console.error(error instanceof Error ? error.message : String(error))
      process.exit(1)
    }
  }
}
