/**
 * The packages of the repository as the release and docs scripts see them: each one's workspace dependencies, whether
 * it has an API reference, and which edition's tarballs it goes with (`--edition 3|4`).
 *
 * - Edition 3: every package but the `effect4-*` ones (the Effect 3 packages, the kernel, the command, the sandbox).
 * - Edition 4: the `effect4-*` packages, the workspace packages they depend on (the kernel) and the command (`erp`
 *   runs beside either edition: it bundles its own Effect).
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Url from "node:url"

export const ROOT = Path.resolve(Path.dirname(Url.fileURLToPath(import.meta.url)), "..")

export type Edition = "3" | "4"
export const EDITIONS: ReadonlyArray<Edition> = ["3", "4"]

/** Packages either edition ships. */
const SHARED = ["kernel", "cli"]

export interface Package {
  /** Its directory under `packages/`. */
  readonly dir: string
  readonly name: string
  readonly private: boolean
  /** Workspace packages it needs at run time (`dependencies`, `peerDependencies`), by directory. */
  readonly uses: ReadonlyArray<string>
  /** Workspace packages its source, tests or examples may import (`devDependencies` too), by directory. */
  readonly imports: ReadonlyArray<string>
  /** The projects its `tsconfig.src.json` references, by directory: built before it. */
  readonly references: ReadonlyArray<string>
  /** It has a `docgen.json`: `pnpm run docs` writes its reference. */
  readonly docgen: boolean
  /** Its index exports modules: the reference lists it (scripts/docs-site.ts). */
  readonly modules: boolean
  /** Its tarball holds its API reference (`docs/reference/` in its `files`). */
  readonly shipsReference: boolean
}

const workspaceNames = (record: Record<string, string> | undefined): ReadonlyArray<string> =>
  Object.entries(record ?? {}).filter(([, spec]) => spec.startsWith("workspace:")).map(([name]) => name)

/** Every package under `packages/`, sorted by directory. */
export const packages = (root: string = ROOT): ReadonlyArray<Package> => {
  const base = Path.join(root, "packages")
  const found = Fs.readdirSync(base).sort().filter((dir) => Fs.existsSync(Path.join(base, dir, "package.json")))
  const manifests = new Map(
    found.map((dir) => [dir, JSON.parse(Fs.readFileSync(Path.join(base, dir, "package.json"), "utf8"))])
  )
  const dirOf = new Map([...manifests].map(([dir, manifest]) => [manifest.name as string, dir]))
  const dirs = (names: ReadonlyArray<string>) =>
    [...new Set(names.map((name) => dirOf.get(name)).filter((dir) => dir !== undefined))].sort()
  return found.map((dir) => {
    const manifest = manifests.get(dir)
    const tsconfig = Path.join(base, dir, "tsconfig.src.json")
    const index = Path.join(base, dir, "src", "index.ts")
    return {
      dir,
      name: manifest.name,
      private: manifest.private === true,
      uses: dirs([...workspaceNames(manifest.dependencies), ...workspaceNames(manifest.peerDependencies)]),
      imports: dirs([
        ...workspaceNames(manifest.dependencies),
        ...workspaceNames(manifest.peerDependencies),
        ...workspaceNames(manifest.devDependencies)
      ]),
      references: Fs.existsSync(tsconfig)
        ? (JSON.parse(Fs.readFileSync(tsconfig, "utf8")).references ?? []).map((ref: { path: string }) =>
          Path.basename(Path.dirname(Path.resolve(base, dir, ref.path)))
        )
        : [],
      docgen: Fs.existsSync(Path.join(base, dir, "docgen.json")),
      modules: Fs.existsSync(index) && /^export \* as /m.test(Fs.readFileSync(index, "utf8")),
      shipsReference: (manifest.files ?? []).some((pattern: string) => pattern.startsWith("docs/reference"))
    }
  })
}

/** The directories of `start` and every package they reach through `next`, sorted. */
export const closure = (
  all: ReadonlyArray<Package>,
  start: ReadonlyArray<string>,
  next: (p: Package) => ReadonlyArray<string>
): ReadonlyArray<string> => {
  const byDir = new Map(all.map((p) => [p.dir, p]))
  const seen = new Set<string>()
  const visit = (dir: string) => {
    if (seen.has(dir)) return
    const p = byDir.get(dir)
    if (p === undefined) throw new Error(`no package in packages/${dir}`)
    seen.add(dir)
    for (const other of next(p)) visit(other)
  }
  for (const dir of start) visit(dir)
  return [...seen].sort()
}

/** The packages one edition's tarballs hold (all of them without an edition), by directory. */
export const editionPackages = (all: ReadonlyArray<Package>, edition: Edition | undefined): ReadonlyArray<string> => {
  const own = all.filter((p) =>
    edition === undefined ? true : edition === "4" ? p.dir.startsWith("effect4-") : !p.dir.startsWith("effect4-")
  ).map((p) => p.dir)
  const shared = SHARED.filter((dir) => all.some((p) => p.dir === dir))
  return closure(all, [...own, ...shared], (p) => p.uses)
}

/**
 * `--edition 3|4` among a script's arguments: the edition, undefined when absent; a clear error for anything else.
 */
export const editionArgument = (args: ReadonlyArray<string>): Edition | undefined => {
  const at = args.findIndex((arg) => arg === "--edition" || arg.startsWith("--edition="))
  if (at === -1) return undefined
  const value = args[at]!.includes("=") ? args[at]!.slice("--edition=".length) : args[at + 1]
  if (value === "3" || value === "4") return value
  throw new Error(`--edition takes 3 or 4 (the Effect 3 or the Effect 4 packages), not ${value ?? "nothing"}`)
}
