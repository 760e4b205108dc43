/**
 * A package's `prepack` (`pnpm pack`, `pnpm publish`): refuses to pack a package that would ship without what it
 * promises. Run in the package's directory. It fails, one line each, when
 *
 * - a file its README links (`[docs/reference](docs/reference/README.md)`, the API reference `pnpm run docs` writes) is
 *   missing: the link would be dead in the tarball, on npm and in `node_modules`;
 * - a file its published `exports` or `bin` name is missing (`pnpm build` makes them);
 * - a pattern of its `files` matches nothing.
 *
 * `pnpm release-tarballs` builds, writes the reference and packs every package, so it never meets these.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"

const dir = process.cwd()
const manifest = JSON.parse(Fs.readFileSync(Path.join(dir, "package.json"), "utf8"))
const name: string = manifest.name
const problems: Array<string> = []

// What the package's files hold, relative to its directory (node_modules and build output for tests left out).
const walk = (at: string): Array<string> =>
  Fs.readdirSync(Path.join(dir, at), { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === "node_modules" || entry.name === "build") return []
    const relative = at === "" ? entry.name : `${at}/${entry.name}`
    return entry.isDirectory() ? walk(relative) : [relative]
  })
const files = walk("")

// npm's `files` patterns as used here: `dist/**/*.js`, `docs/reference/*.md`, plain paths.
const matcher = (pattern: string): RegExp =>
  new RegExp(
    `^${
      pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").split("**/").map((part) => part.replace(/\*/g, "[^/]*"))
        .join("(?:.*/)?")
    }(?:/.*)?$`
  )

const readme = Path.join(dir, "README.md")
if (Fs.existsSync(readme)) {
  for (const match of Fs.readFileSync(readme, "utf8").matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = match[1]!.split("#")[0]!
    if (target === "" || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue
    if (!Fs.existsSync(Path.join(dir, target))) {
      problems.push(
        target.startsWith("docs/reference")
          ? `${target} is missing, which its README links (the API reference): run \`pnpm run docs\` at the ` +
            "repository's root first, or `pnpm release-tarballs`, which builds, writes the reference and packs every " +
            "package"
          : `${target} is missing, which its README links`
      )
    } else if (!(manifest.files ?? []).some((pattern: string) => matcher(pattern).test(target))) {
      problems.push(`${target}, which its README links, is not in its "files": it would not be packed`)
    }
  }
}

const published = manifest.publishConfig ?? {}
const entryPoints = [
  ...Object.values(published.bin ?? {}),
  ...Object.values(published.exports ?? {}).flatMap((entry) =>
    typeof entry === "string" ? [entry] : entry === null ? [] : Object.values(entry as Record<string, string>)
  )
].filter((path): path is string => typeof path === "string" && !path.includes("*"))
for (const entry of entryPoints) {
  if (!Fs.existsSync(Path.join(dir, entry))) {
    problems.push(`${entry.replace(/^\.\//, "")} is missing, which it exports: run \`pnpm build\` first`)
  }
}

// Said only when nothing above explains it (a missing reference or build leaves its pattern empty too).
for (const pattern of problems.length > 0 ? [] : manifest.files ?? []) {
  if (!files.some((file) => matcher(pattern).test(file))) {
    problems.push(`nothing matches "${pattern}" of its "files"`)
  }
}

if (problems.length > 0) {
  for (const problem of [...new Set(problems)]) console.error(`${name}: not packed: ${problem}`)
  process.exit(1)
}
