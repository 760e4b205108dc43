/**
 * `pnpm release-tarballs`: every package as npm would get it, from a fresh clone, in `build/tarballs/`: builds every
 * package and the command (`pnpm build`), writes the API reference each library ships and its README links
 * (`pnpm run docs`, its log in `build/docs.log`), packs each package (`pnpm pack`, whose `prepack` refuses a package
 * without its reference or its build: scripts/check-pack.ts) and checks that each tarball holds the reference its
 * README links. Until the packages are published, an application installs them from these files (README, "Install").
 */
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Url from "node:url"

const root = Path.resolve(Path.dirname(Url.fileURLToPath(import.meta.url)), "..")
const out = Path.join(root, "build", "tarballs")

const run = (what: string, command: string, args: ReadonlyArray<string>, options: { cwd?: string; log?: string }) => {
  console.log(`--- release tarballs: ${what}`)
  const result = spawnSync(command, args, {
    cwd: options.cwd ?? root,
    stdio: options.log === undefined ? "inherit" : ["ignore", "pipe", "pipe"],
    encoding: "utf8"
  })
  if (options.log !== undefined) {
    Fs.writeFileSync(options.log, `${result.stdout ?? ""}${result.stderr ?? ""}`)
  }
  if (result.status !== 0) {
    if (options.log !== undefined) {
      const lines = `${result.stdout ?? ""}${result.stderr ?? ""}`.split("\n").filter((l) => !l.includes(" INFO "))
      console.error(lines.slice(-30).join("\n"))
    }
    console.error(`release tarballs: ${what} failed (exit ${result.status ?? result.signal})`)
    process.exit(1)
  }
}

Fs.mkdirSync(Path.join(root, "build"), { recursive: true })
run("build every package and the command", "pnpm", ["--silent", "build"], {})
run("the API reference (pnpm run docs; log in build/docs.log)", "pnpm", ["run", "docs"], {
  log: Path.join(root, "build", "docs.log")
})

Fs.rmSync(out, { recursive: true, force: true })
Fs.mkdirSync(out, { recursive: true })
const packages = Fs.readdirSync(Path.join(root, "packages")).sort().filter((dir) => {
  const manifest = Path.join(root, "packages", dir, "package.json")
  return Fs.existsSync(manifest) && JSON.parse(Fs.readFileSync(manifest, "utf8")).private !== true
})
for (const dir of packages) {
  run(`pack packages/${dir}`, "pnpm", ["pack", "--pack-destination", out], {
    cwd: Path.join(root, "packages", dir),
    log: Path.join(root, "build", "pack.log")
  })
}
Fs.rmSync(Path.join(root, "build", "pack.log"), { force: true })

console.log("--- release tarballs: what each holds")
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
    `${Path.relative(root, tarball)}: ${entries.length} files${
      pages.length > 0
        ? `, API reference: its index and ${pages.length - 1} module page${pages.length === 2 ? "" : "s"}`
        : ""
    }${problem ? "; MISSING the API reference its README links" : ""}`
  )
}
if (failed) process.exit(1)
console.log(
  "Install them into an application (README, \"Install\"): npm install <this clone>/build/tarballs/erp-client-" +
    "{kernel,core,client,streams}-<version>.tgz effect@… (the versions README.md names)"
)
