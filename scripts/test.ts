/**
 * `pnpm test`: the whole test suite. The Effect 3 edition and the kernel on vitest 3 (vitest.config.ts), then the
 * Effect 4 edition, every `packages/effect4-*` a project of one run of its own vitest 5 (vitest.effect4.config.ts).
 * The Effect 4 edition needs Node >= 22.19 (its `engines`, and vitest 5's): on an older Node its suite is said not to
 * run, and CI runs it on Node 24. Writes one JSON report, `build/vitest-report.json`, with the totals of every run
 * (.ci/run reads it), says how long each edition took, and exits non-zero when anything failed or did not run to the
 * end.
 *
 * `pnpm test --changed` runs only the tests of the packages changed since the branch left `main` (committed or not,
 * new files too) and of the packages that depend on them; `--changed=REF` compares with REF instead. A change outside
 * `packages/` runs everything, but for a Markdown file, which runs the packages whose tests read it. Any other
 * argument goes to vitest (a file filter, `-t NAME`).
 */
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Url from "node:url"
import { PAIRS } from "./editions.js"

const root = Path.resolve(Path.dirname(Url.fileURLToPath(import.meta.url)), "..")
const build = Path.join(root, "build")
Fs.mkdirSync(build, { recursive: true })

const changedFlag = process.argv.slice(2).find((arg) => arg === "--changed" || arg.startsWith("--changed="))
const args = process.argv.slice(2).filter((arg) => arg !== changedFlag)

interface Totals {
  numPassedTests: number
  numFailedTests: number
  numPendingTests: number
  numRuntimeErrorTestSuites: number
  /** The files that failed, with their failed tests only (so CI can name them after a long log). */
  testResults: Array<SuiteResult>
}
interface SuiteResult {
  name: string
  status: string
  message?: string
  assertionResults: ReadonlyArray<{ status: string; fullName?: string; failureMessages?: ReadonlyArray<string> }>
}
const totals: Totals = {
  numPassedTests: 0,
  numFailedTests: 0,
  numPendingTests: 0,
  numRuntimeErrorTestSuites: 0,
  testResults: []
}
let failed = false

const add = (report: string): void => {
  if (!Fs.existsSync(report)) {
    // A run that left no report counts as a failed suite: a run of no test must show.
    totals.numRuntimeErrorTestSuites += 1
    failed = true
    return
  }
  const r = JSON.parse(Fs.readFileSync(report, "utf8")) as Partial<Totals>
  totals.numPassedTests += r.numPassedTests ?? 0
  totals.numFailedTests += r.numFailedTests ?? 0
  totals.numPendingTests += r.numPendingTests ?? 0
  // A file that failed with no test failing (its set-up failed, and its tests were skipped) counts as a suite that
  // failed to run: the totals must not read "0 failed".
  const failedFiles = (r.testResults ?? []).filter((file) =>
    file.status === "failed" && !file.assertionResults.some((test) => test.status === "failed")
  )
  totals.numRuntimeErrorTestSuites += (r.numRuntimeErrorTestSuites ?? 0) + failedFiles.length
  for (const file of r.testResults ?? []) {
    if (file.status !== "failed") continue
    totals.testResults.push({
      ...file,
      assertionResults: file.assertionResults.filter((test) => test.status === "failed")
    })
  }
}

const run = (command: string, commandArgs: ReadonlyArray<string>, cwd: string): number =>
  spawnSync(command, commandArgs, { cwd, stdio: "inherit" }).status ?? 1

const git = (gitArgs: ReadonlyArray<string>): string | undefined => {
  const result = spawnSync("git", gitArgs, { cwd: root, encoding: "utf8" })
  return result.status === 0 ? result.stdout : undefined
}

const packageDirs = Fs.readdirSync(Path.join(root, "packages")).filter((dir) =>
  Fs.existsSync(Path.join(root, "packages", dir, "package.json"))
).sort()

/** The lines of a package's test sources that are code (comment lines left out): what they load and read. */
const testCode = (dir: string): string => {
  const out: Array<string> = []
  const walk = (path: string) => {
    if (!Fs.existsSync(path)) return
    for (const entry of Fs.readdirSync(path, { withFileTypes: true })) {
      const full = Path.join(path, entry.name)
      if (entry.isDirectory()) walk(full)
      else if (/\.[cm]?[jt]s$/.test(entry.name)) {
        out.push(...Fs.readFileSync(full, "utf8").split("\n").filter((line) => !/^\s*(\/\/|\/?\*)/.test(line)))
      }
    }
  }
  walk(Path.join(root, "packages", dir, "test"))
  return out.join("\n")
}

/**
 * The packages `--changed` runs. A package's code is changed by a change of its files (its tests and Markdown aside)
 * or of the code of a package it depends on (its package.json's `@erp-client/*` dependencies of any kind),
 * transitively. The tests that run: those of every package whose tests import changed code or name its folder (the
 * Effect 4 tests that run the Effect 3 command do), whose tests changed or load a changed test helper, or whose tests
 * read a changed Markdown file. `undefined`: every test.
 */
let editionsCheck = false
const changedPackages = (flag: string): ReadonlyArray<string> | undefined => {
  const base = flag.startsWith("--changed=")
    ? flag.slice("--changed=".length)
    : git(["merge-base", "HEAD", "main"])?.trim() ?? "HEAD"
  const diff = git(["diff", "--name-only", base])
  const untracked = git(["ls-files", "--others", "--exclude-standard"])
  if (diff === undefined || untracked === undefined) {
    console.log(`--changed: git could not compare with ${base}: every test runs`)
    return undefined
  }
  const files = [...new Set([...diff.split("\n"), ...untracked.split("\n")].filter((file) => file !== ""))]
  const code = new Map(packageDirs.map((dir) => [dir, testCode(dir)]))
  const dirOf = new Map<string, string>()
  const nameOf = new Map<string, string>()
  const uses = new Map<string, ReadonlyArray<string>>()
  for (const dir of packageDirs) {
    const manifest = JSON.parse(Fs.readFileSync(Path.join(root, "packages", dir, "package.json"), "utf8")) as {
      name: string
      dependencies?: Record<string, string>
      devDependencies?: Record<string, string>
      peerDependencies?: Record<string, string>
    }
    dirOf.set(manifest.name, dir)
    nameOf.set(dir, manifest.name)
    uses.set(dir, Object.keys({ ...manifest.dependencies, ...manifest.devDependencies, ...manifest.peerDependencies }))
  }
  const changedCode = new Set<string>()
  const selected = new Set<string>()
  for (const file of files) {
    const match = /^packages\/([^/]+)\//.exec(file)
    if (file.endsWith(".md")) {
      if (match !== null) selected.add(match[1]!)
      for (const dir of packageDirs) if (code.get(dir)!.includes(Path.basename(file))) selected.add(dir)
    } else if (match !== null && file.startsWith(`packages/${match[1]}/test/`)) {
      // A test or a test helper: that package's tests, and those of the packages whose tests load its helpers.
      selected.add(match[1]!)
      const helper = new RegExp(`(\\.\\./\\.\\./|packages/)${match[1]}/test/`)
      for (const dir of packageDirs) if (helper.test(code.get(dir)!)) selected.add(dir)
    } else if (match !== null && packageDirs.includes(match[1]!)) changedCode.add(match[1]!)
    else {
      console.log(`--changed: ${file} is outside the packages: every test runs`)
      return undefined
    }
  }
  // The Effect 4 packages built from an Effect 3 package's source (scripts/editions.ts) change with it, and the
  // check of those copies (test/editions.test.ts) runs.
  const twinOf = (dir: string) => dir in PAIRS && packageDirs.includes(`effect4-${dir}`) ? `effect4-${dir}` : undefined
  for (let grew = true; grew;) {
    grew = false
    for (const dir of packageDirs) {
      const changes = uses.get(dir)!.some((name) => changedCode.has(dirOf.get(name) ?? "")) ||
        packageDirs.some((other) => changedCode.has(other) && twinOf(other) === dir)
      if (!changedCode.has(dir) && changes) {
        changedCode.add(dir)
        grew = true
      }
    }
  }
  editionsCheck = [...changedCode].some((dir) => twinOf(dir) !== undefined)
  const testsUse = (dir: string, other: string): boolean =>
    dir === other ||
    new RegExp(`(from |import\\()"${nameOf.get(other)}["/]`).test(code.get(dir)!) ||
    new RegExp(`(\\.\\./\\.\\./|packages/)${other}/`).test(code.get(dir)!)
  for (const dir of packageDirs) if ([...changedCode].some((other) => testsUse(dir, other))) selected.add(dir)
  console.log(
    `--changed (since ${base.slice(0, 12)}): ${files.length} files changed; ` +
      (selected.size === 0 ? "no package to test" : `testing ${[...selected].sort().join(", ")}`) +
      (editionsCheck ? " and the editions' copies (test/editions.test.ts)" : "")
  )
  return [...selected].sort()
}

const only = changedFlag === undefined ? undefined : changedPackages(changedFlag)
const effect3Dirs = packageDirs.filter((dir) => !dir.startsWith("effect4-"))
const effect4Dirs = packageDirs.filter((dir) => dir.startsWith("effect4-"))
const chosen = (dirs: ReadonlyArray<string>) =>
  dirs.filter((dir) => Fs.existsSync(Path.join(root, "packages", dir, "test")) && (only?.includes(dir) ?? true))
const timings: Array<string> = []
const timed = (name: string, body: () => void) => {
  const started = Date.now()
  body()
  timings.push(`${name} ${Math.round((Date.now() - started) / 1000)} s`)
}

// The Effect 3 edition and the kernel.
const effect3 = chosen(effect3Dirs)
if (effect3.length > 0 || editionsCheck) {
  timed("Effect 3 edition and kernel", () => {
    const report = Path.join(build, "vitest-report-effect3.json")
    Fs.rmSync(report, { force: true })
    const filters = only === undefined
      ? []
      : [...effect3.map((dir) => `packages/${dir}/`), ...(editionsCheck ? ["test/editions.test.ts"] : [])]
    if (run(Path.join(root, "node_modules", ".bin", "vitest"), ["run", ...filters, ...args], root) !== 0) failed = true
    add(report)
  })
}

// The Effect 4 edition.
const [major, minor] = process.versions.node.split(".").map(Number) as [number, number]
const effect4 = chosen(effect4Dirs)
if (effect4.length > 0 && (major > 22 || (major === 22 && minor >= 19))) {
  timed("Effect 4 edition", () => {
    const report = Path.join(build, "vitest-report-effect4.json")
    Fs.rmSync(report, { force: true })
    console.log(`\n=== ${effect4.join(", ")} (Effect 4, vitest 5)`)
    // vitest 5 is the Effect 4 packages' own (this root's is vitest 3); each package is a project, named by its name.
    const projects = only === undefined ? [] : effect4.flatMap((dir) => ["--project", `@erp-client/${dir}`])
    const vitest5 = Path.join(root, "packages", effect4[0]!, "node_modules", ".bin", "vitest")
    const vitestArgs = ["run", "--root", root, "--config", "vitest.effect4.config.ts", ...projects]
    const reporters = ["--reporter", "default", "--reporter", "json", "--outputFile.json", report]
    if (run(vitest5, [...vitestArgs, ...reporters, ...args], root) !== 0) failed = true
    add(report)
  })
} else if (effect4.length > 0) {
  console.log(
    `\nThe Effect 4 edition's suite (${effect4.join(", ")}) needs Node >= 22.19, this is ${process.version}: ` +
      "not run here (CI runs it on Node 24)."
  )
}

Fs.writeFileSync(Path.join(build, "vitest-report.json"), JSON.stringify(totals))
console.log(
  `\nall suites: ${totals.numPassedTests} passed, ${totals.numFailedTests} failed` +
    (totals.numRuntimeErrorTestSuites > 0 ? `, ${totals.numRuntimeErrorTestSuites} suites failed to run` : "") +
    (timings.length > 0 ? ` (${timings.join(", ")})` : "")
)
process.exit(failed || totals.numFailedTests > 0 || totals.numRuntimeErrorTestSuites > 0 ? 1 : 0)
