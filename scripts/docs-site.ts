/**
 * The second half of `pnpm run docs` (scripts/docs.ts, `writeSite`), after docgen has written each package's
 * `docs/modules/*.ts.md`: the API reference as a reader gets it.
 *
 * - `packages/<name>/docs/reference/`: one page per public module (`Partners.md`) and a `README.md` listing them with
 *   their overview. This is what each package ships (its `files`) and its README links. docgen writes pages for a
 *   Jekyll site (front matter, which it also mangles into a thematic break, and a page for the index module, which
 *   only re-exports); these pages are plain Markdown, readable in the installed package, on GitHub and on npm.
 * - `build/site/`: the same pages of every package written and an index of them: the docs site folder CI builds.
 *
 * Written by hand: docgen has no plain-Markdown output, and copying is all there is to it.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Url from "node:url"

// A docgen page: front matter (its opening `---` comes out as `***`), then "## <Module> overview", the overview,
// "Added in …", the table of contents and the exports. The page keeps everything from the overview on.
const body = (page: string, file: string): string => {
  const start = page.indexOf("\n## ")
  if (start === -1) throw new Error(`${file}: no "## … overview" heading (has docgen's output changed?)`)
  return page.slice(start + 1)
}

// The overview's first paragraph, for the index.
const overview = (text: string): string => {
  const paragraph = text.split("\n\n")[1] ?? ""
  return paragraph.startsWith("Added in") ? "" : paragraph.replace(/\n/g, " ")
}

/** Writes the pages one package ships, `packages/<dir>/docs/reference/`, from docgen's; returns what the site needs. */
export const writeReference = (root: string, dir: string): { readonly name: string; readonly description: string } => {
  const packageDir = Path.join(root, "packages", dir)
  const modules = Path.join(packageDir, "docs", "modules")
  if (!Fs.existsSync(modules)) throw new Error(`packages/${dir}: no docs/modules (run docgen first: pnpm run docs)`)
  const manifest = JSON.parse(Fs.readFileSync(Path.join(packageDir, "package.json"), "utf8"))
  const reference = Path.join(packageDir, "docs", "reference")
  Fs.rmSync(reference, { recursive: true, force: true })
  Fs.mkdirSync(reference, { recursive: true })
  const entries: Array<string> = []
  let firstModule: string | undefined
  for (const file of Fs.readdirSync(modules).sort()) {
    if (!file.endsWith(".ts.md") || file === "index.ts.md") continue
    const module = file.slice(0, -".ts.md".length)
    firstModule ??= module
    const text = body(Fs.readFileSync(Path.join(modules, file), "utf8"), `packages/${dir}/docs/modules/${file}`)
    Fs.writeFileSync(
      Path.join(reference, `${module}.md`),
      `# ${manifest.name}/${module}\n\n[All modules of ${manifest.name}](README.md)\n\n${text}`
    )
    const summary = overview(text)
    entries.push(`- [${module}](${module}.md)${summary === "" ? "" : `: ${summary}`}`)
  }
  Fs.writeFileSync(
    Path.join(reference, "README.md"),
    `# ${manifest.name}: API reference\n\n${manifest.description}. Version ${manifest.version}; every module is also ` +
      `exported from the package's index (\`import { ${firstModule ?? ""} } from "${manifest.name}"\`).\n\n` +
      `${entries.join("\n")}\n`
  )
  return { name: manifest.name, description: manifest.description }
}

/** Writes the site, `build/site/`, of the packages in `dirs` (their pages written by `writeReference`). */
export const writeSite = (root: string, dirs: ReadonlyArray<string>): void => {
  const site = Path.join(root, "build", "site")
  Fs.rmSync(site, { recursive: true, force: true })
  Fs.mkdirSync(site, { recursive: true })
  const packages = [...dirs].sort().map((dir) => {
    const packageDir = Path.join(root, "packages", dir)
    Fs.cpSync(Path.join(packageDir, "docs", "reference"), Path.join(site, dir), { recursive: true })
    const manifest = JSON.parse(Fs.readFileSync(Path.join(packageDir, "package.json"), "utf8"))
    return { dir, name: manifest.name as string, description: manifest.description as string }
  })
  Fs.writeFileSync(
    Path.join(site, "README.md"),
    `# ERP REST API v2 client for Effect: API reference\n\nThe user's guide is the repository's README.md.\n\n${
      packages.map((p) => `- [${p.name}](${p.dir}/README.md): ${p.description}`).join("\n")
    }\n`
  )
}

// Run by itself (after docgen): every package whose index exports modules.
if (process.argv[1] !== undefined && import.meta.url === Url.pathToFileURL(Path.resolve(process.argv[1])).href) {
  const root = Path.resolve(Path.dirname(Url.fileURLToPath(import.meta.url)), "..")
  const hasModules = (dir: string): boolean =>
    /^export \* as /m.test(Fs.readFileSync(Path.join(root, "packages", dir, "src", "index.ts"), "utf8"))
  const dirs = Fs.readdirSync(Path.join(root, "packages")).filter(hasModules)
  for (const dir of dirs) writeReference(root, dir)
  writeSite(root, dirs)
  console.log(`API reference: ${dirs.length} packages, packages/*/docs/reference and build/site/`)
}
