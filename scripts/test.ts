/**
 * `pnpm test`: the whole test suite. The Effect 3 edition and the kernel on vitest 3 (vitest.config.ts), then the
 * Effect 4 edition, package by package, on its own vitest 5 (each `packages/effect4-*` has its config). The Effect 4
 * edition needs Node >= 22.19 (its `engines`, and vitest 5's): on an older Node its suite is said not to run, and CI
 * runs it on Node 24. Writes one JSON report, `build/vitest-report.json`, with the totals of every run (.ci/run reads
 * it) and exits non-zero when anything failed or did not run to the end.
 */
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Url from "node:url"

const root = Path.resolve(Path.dirname(Url.fileURLToPath(import.meta.url)), "..")
const build = Path.join(root, "build")
Fs.mkdirSync(build, { recursive: true })
const args = process.argv.slice(2)

interface Totals {
  numPassedTests: number
  numFailedTests: number
  numPendingTests: number
  numRuntimeErrorTestSuites: number
}
const totals: Totals = { numPassedTests: 0, numFailedTests: 0, numPendingTests: 0, numRuntimeErrorTestSuites: 0 }
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
  totals.numRuntimeErrorTestSuites += r.numRuntimeErrorTestSuites ?? 0
}

const run = (command: string, commandArgs: ReadonlyArray<string>, cwd: string): number =>
  spawnSync(command, commandArgs, { cwd, stdio: "inherit" }).status ?? 1

// The Effect 3 edition and the kernel.
const effect3Report = Path.join(build, "vitest-report-effect3.json")
Fs.rmSync(effect3Report, { force: true })
const vitest3 = Path.join(root, "node_modules", ".bin", "vitest")
if (run(vitest3, ["run", ...args], root) !== 0) failed = true
add(effect3Report)

// The Effect 4 edition.
const [major, minor] = process.versions.node.split(".").map(Number) as [number, number]
const effect4 = Fs.readdirSync(Path.join(root, "packages")).filter((dir) => dir.startsWith("effect4-")).sort()
if (major > 22 || (major === 22 && minor >= 19)) {
  for (const dir of effect4) {
    const cwd = Path.join(root, "packages", dir)
    if (!Fs.existsSync(Path.join(cwd, "test"))) continue
    const report = Path.join(build, `vitest-report-${dir}.json`)
    Fs.rmSync(report, { force: true })
    console.log(`\n=== ${dir} (Effect 4, vitest 5)`)
    const vitest5 = Path.join(cwd, "node_modules", ".bin", "vitest")
    if (
      run(
        vitest5,
        ["run", "--reporter", "default", "--reporter", "json", "--outputFile.json", report, ...args],
        cwd
      ) !==
        0
    ) failed = true
    add(report)
  }
} else {
  console.log(
    `\nThe Effect 4 edition's suite (${effect4.join(", ")}) needs Node >= 22.19, this is ${process.version}: ` +
      "not run here (CI runs it on Node 24)."
  )
}

Fs.writeFileSync(Path.join(build, "vitest-report.json"), JSON.stringify(totals))
console.log(
  `\nall suites: ${totals.numPassedTests} passed, ${totals.numFailedTests} failed` +
    (totals.numRuntimeErrorTestSuites > 0 ? `, ${totals.numRuntimeErrorTestSuites} suites failed to run` : "")
)
process.exit(failed || totals.numFailedTests > 0 || totals.numRuntimeErrorTestSuites > 0 ? 1 : 0)
