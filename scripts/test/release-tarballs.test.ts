// `pnpm release-tarballs` and `pnpm run docs` (issue 41): one edition's tarballs with `--edition`, a pool that says
// what runs at least every 15 s and keeps its order and its bound, and the docs cache's key and reuse. Fast: the script
// itself only with `--dry-run`, the pool on a timer driven by hand, the cache in a temporary workspace.
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { docgenTask, docsKey, isCached } from "../docs.js"
import { type Every, PROGRESS_EVERY, runTasks, type Task, TaskFailed } from "../tasks.js"
import { editionPackages, packages, ROOT } from "../workspace.js"

const TSX = Path.join(ROOT, "node_modules", "tsx", "dist", "cli.mjs")

const releaseTarballs = (...args: Array<string>) =>
  spawnSync(process.execPath, [TSX, "scripts/release-tarballs.ts", ...args], { cwd: ROOT, encoding: "utf8" })

describe("pnpm release-tarballs --dry-run", () => {
  it("--edition 4: the Effect 4 packages, the kernel and the command, each built, its reference written, packed", () => {
    const run = releaseTarballs("--edition", "4", "--dry-run")
    expect(run.status, run.stderr).toBe(0)
    const plan = run.stdout.split("\n").filter((line) => line.startsWith("- ")).map((line) => line.split(" (")[0])
    const effect4 = ["effect4-client", "effect4-core", "effect4-otel", "effect4-streams", "effect4-testing"]
    for (const dir of [...effect4, "kernel", "fake-erp", "cli"]) {
      expect(plan).toContain(`- pack ${dir}`)
    }
    // The API reference of each package whose tarball holds one: not the command's.
    for (const dir of [...effect4, "kernel", "fake-erp"]) expect(plan).toContain(`- docgen ${dir}`)
    expect(plan).not.toContain("- docgen cli")
    expect(plan.filter((line) => line.startsWith("- pack "))).toHaveLength(8)
    expect(plan).not.toContain("- pack core")
    expect(run.stdout).toContain("(edition 4)")
    expect(run.stdout).toContain("its examples not checked: --check-examples")
    const checked = releaseTarballs("--edition", "4", "--check-examples", "--dry-run")
    expect(checked.status, checked.stderr).toBe(0)
    expect(checked.stdout).toContain("its examples type-checked and run")
  })

  it("--edition 3: no Effect 4 package", () => {
    const run = releaseTarballs("--edition=3", "--dry-run")
    expect(run.status, run.stderr).toBe(0)
    const packs = run.stdout.split("\n").filter((line) => line.startsWith("- pack ")).map((line) => line.split(" ")[2])
    expect(packs.sort()).toEqual([
      "cli",
      "client",
      "core",
      "fake-erp",
      "kernel",
      "otel",
      "sandbox",
      "streams",
      "testing"
    ])
  })

  it("an edition other than 3 or 4, or an unknown argument, is refused with what it takes", () => {
    const five = releaseTarballs("--edition", "5", "--dry-run")
    expect(five.status).toBe(2)
    expect(five.stderr).toContain("--edition takes 3 or 4")
    const unknown = releaseTarballs("--editon", "4", "--dry-run")
    expect(unknown.status).toBe(2)
    expect(unknown.stderr).toContain("unknown argument --editon")
  })
})

describe("editionPackages", () => {
  it("gives the kernel and the command to both editions, and every package without one", () => {
    const all = packages(ROOT)
    expect(editionPackages(all, "4")).toEqual(expect.arrayContaining(["kernel", "cli", "effect4-core"]))
    expect(editionPackages(all, "3")).toEqual(expect.arrayContaining(["kernel", "cli", "core"]))
    expect(editionPackages(all, "3").some((dir) => dir.startsWith("effect4-"))).toBe(false)
    expect(editionPackages(all, undefined)).toEqual(all.map((p) => p.dir))
  })
})

// A timer driven by hand: the pool asks for its period, the test says when it fires.
const handTimer = () => {
  const state = { period: 0, tick: () => {}, stopped: false }
  const timer: Every = (ms, tick) => {
    state.period = ms
    state.tick = tick
    return () => {
      state.stopped = true
    }
  }
  return { state, timer }
}

const deferred = () => {
  let resolve: (note?: string) => void = () => {}
  let reject: (error: unknown) => void = () => {}
  const promise = new Promise<string | void>((ok, ko) => {
    resolve = ok
    reject = ko
  })
  return { promise, resolve, reject }
}

const settle = () => new Promise((resolve) => setImmediate(resolve))

describe("runTasks", () => {
  it("runs at most `concurrency` at a time, each after what it waits for, and says what runs on every tick", async () => {
    const { state, timer } = handTimer()
    let now = 0
    const lines: Array<string> = []
    const gates = new Map(["a", "b", "c", "d"].map((name) => [name, deferred()]))
    const started: Array<string> = []
    const task = (name: string, after?: Array<string>): Task => ({
      name,
      ...(after === undefined ? {} : { after }),
      run: (_signal, say) => {
        started.push(name)
        if (name === "a") say("parsing modules")
        return gates.get(name)!.promise
      }
    })
    const pool = runTasks([task("a"), task("d", ["a"]), task("b"), task("c")], {
      label: "test",
      concurrency: 2,
      every: PROGRESS_EVERY,
      print: (line) => lines.push(line),
      now: () => now,
      timer
    })
    await settle()
    expect(state.period).toBeLessThanOrEqual(15_000)
    // d waits for a: b starts beside a.
    expect(started).toEqual(["a", "b"])
    now = 75_000
    state.tick()
    expect(lines.at(-1)).toBe("test 1:15: 0 of 4 done; running a (1:15, parsing modules), b (1:15)")
    gates.get("a")!.resolve("from the cache")
    await settle()
    expect(lines).toContain("test 1:15: a done in 1:15 (from the cache)")
    expect(started).toEqual(["a", "b", "d"])
    gates.get("b")!.resolve()
    await settle()
    expect(started).toEqual(["a", "b", "d", "c"])
    gates.get("c")!.resolve()
    gates.get("d")!.resolve()
    await pool
    expect(state.stopped).toBe(true)
  })

  it("refuses progress less often than every 15 s", () => {
    expect(() => runTasks([], { label: "test", concurrency: 2, every: 20_000, print: () => {} })).toThrow(/15 s/)
  })

  it("stops at the first failure: nothing more starts, the others are told to stop", async () => {
    const { timer } = handTimer()
    const started: Array<string> = []
    let aborted = false
    const failing = deferred()
    const pool = runTasks([
      { name: "fails", run: () => (started.push("fails"), failing.promise) },
      {
        name: "long",
        run: (signal) =>
          new Promise<void>((resolve) => {
            started.push("long")
            signal.addEventListener("abort", () => {
              aborted = true
              resolve()
            })
          })
      },
      { name: "never", run: () => (started.push("never"), Promise.resolve()) }
    ], { label: "test", concurrency: 2, every: PROGRESS_EVERY, print: () => {}, timer })
    failing.reject(new TaskFailed("fails", "exited with 1", ["error TS2322"]))
    await expect(pool).rejects.toThrow("fails: exited with 1")
    expect(aborted).toBe(true)
    expect(started).toEqual(["fails", "long"])
  })
})

describe("the docs cache", () => {
  const temporary: Array<string> = []
  afterEach(() => {
    for (const dir of temporary.splice(0)) Fs.rmSync(dir, { recursive: true, force: true })
  })

  // A workspace of three packages: a imports b (a dev dependency); c is unrelated.
  const workspace = () => {
    const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "erp-docs-cache-"))
    temporary.push(root)
    const write = (file: string, text: string) => {
      Fs.mkdirSync(Path.dirname(Path.join(root, file)), { recursive: true })
      Fs.writeFileSync(Path.join(root, file), text)
    }
    write("pnpm-lock.yaml", "lockfileVersion: '9.0'\n")
    write("packages/a/package.json", JSON.stringify({ name: "a", devDependencies: { b: "workspace:^" } }))
    write("packages/a/docgen.json", "{}")
    write("packages/a/src/index.ts", "export * as A from \"./A.js\"\n")
    write("packages/b/package.json", JSON.stringify({ name: "b" }))
    write("packages/b/src/index.ts", "export const b = 1\n")
    write("packages/c/package.json", JSON.stringify({ name: "c" }))
    write("packages/c/src/index.ts", "export const c = 1\n")
    return { root, write }
  }

  it("keys a package's pages by its sources and those of the packages it imports, not others'", () => {
    const { root, write } = workspace()
    const key = () => docsKey(root, packages(root), "a")
    const first = key()
    expect(key()).toBe(first)
    write("packages/c/src/index.ts", "export const c = 2\n")
    expect(key()).toBe(first)
    write("packages/b/src/index.ts", "export const b = 2\n")
    const second = key()
    expect(second).not.toBe(first)
    write("packages/a/docgen.json", "{ \"enforceExamples\": true }")
    expect(key()).not.toBe(second)
  })

  it("copies a package's pages from the cache under its key, without running docgen", async () => {
    const { root } = workspace()
    const all = packages(root)
    const cache = Path.join(root, "cache")
    const entry = Path.join(cache, "a", docsKey(root, all, "a"), "modules")
    Fs.mkdirSync(entry, { recursive: true })
    Fs.writeFileSync(Path.join(entry, "A.ts.md"), "## A overview\n")
    // No docgen in this workspace: running it would fail the task.
    const task = docgenTask("a", {
      root,
      all,
      cache,
      refresh: false,
      checkExamples: false,
      log: Path.join(root, "docs.log")
    })
    await expect(task.run(new AbortController().signal, () => {})).resolves.toBe("from the cache")
    expect(Fs.readFileSync(Path.join(root, "packages/a/docs/modules/A.ts.md"), "utf8")).toBe("## A overview\n")
  })

  it("serves pages made without checking the examples to the tarballs, not to `pnpm run docs`", () => {
    const { root } = workspace()
    const all = packages(root)
    const cache = Path.join(root, "cache")
    const entry = Path.join(cache, "a", docsKey(root, all, "a"))
    Fs.mkdirSync(Path.join(entry, "modules"), { recursive: true })
    const options = { root, all, cache, refresh: false, log: Path.join(root, "docs.log") }
    expect(isCached("a", { ...options, checkExamples: false })).toBe(true)
    expect(isCached("a", { ...options, checkExamples: true })).toBe(false)
    Fs.writeFileSync(Path.join(entry, "examples-checked"), "")
    expect(isCached("a", { ...options, checkExamples: true })).toBe(true)
    expect(isCached("a", { ...options, checkExamples: true, refresh: true })).toBe(false)
  })
})
