import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { cacheDir, cacheName, replacedBy } from "../src/internal/codeCache.js"
import { BIN, erp, startSandbox } from "./harness.js"

// The code cache of the compiled command (src/internal/codeCache.ts): where it lives, when it is written, and that a
// cache it cannot trust or use costs nothing but time.

describe("where the code cache lives", () => {
  it("in the user's cache directory, off with NODE_DISABLE_COMPILE_CACHE, nowhere without a home", () => {
    expect(cacheDir({}, "/home/ana")).toBe("/home/ana/.cache/erp-client/code-cache")
    expect(cacheDir({ XDG_CACHE_HOME: "/var/cache/ana" }, "/home/ana")).toBe("/var/cache/ana/erp-client/code-cache")
    // A relative XDG_CACHE_HOME is to be ignored (the XDG spec).
    expect(cacheDir({ XDG_CACHE_HOME: "cache" }, "/home/ana")).toBe("/home/ana/.cache/erp-client/code-cache")
    expect(cacheDir({ NODE_DISABLE_COMPILE_CACHE: "1" }, "/home/ana")).toBeUndefined()
    expect(cacheDir({}, "")).toBeUndefined()
  })

  it("one file per bundle (its content and its place), Node version, architecture and V8 flags", () => {
    const runtime = { version: "v24.1.0", arch: "x64" }
    const bundle = { hash: "abc", path: "/usr/lib/node_modules/@erp-client/cli/dist/erp.cjs" }
    expect(cacheName(bundle, runtime, [])).toMatch(/^abc-[0-9a-f]{8}-v24\.1\.0-x64\.v8cache$/)
    expect(cacheName(bundle, runtime, ["--optimize-for-size"])).toMatch(/-x64-optimizeforsize\.v8cache$/)
    const name = cacheName(bundle, runtime, [])
    expect(cacheName({ ...bundle, hash: "abd" }, runtime, [])).not.toBe(name)
    expect(cacheName({ ...bundle, path: "/home/ana/app/node_modules/@erp-client/cli/dist/erp.cjs" }, runtime, []))
      .not.toBe(name)
    expect(cacheName(bundle, { ...runtime, version: "v22.1.0" }, [])).not.toBe(name)
    expect(cacheName(bundle, runtime, [])).toBe(name)
  })

  it("a new cache replaces those of the same place made from another bundle, and no others", () => {
    const runtime = { version: "v24.1.0", arch: "x64" }
    const here = "/usr/lib/node_modules/@erp-client/cli/dist/erp.cjs"
    const current = cacheName({ hash: "b2", path: here }, runtime, [])
    const older = cacheName({ hash: "b1", path: here }, runtime, [])
    const olderFlags = cacheName({ hash: "b1", path: here }, runtime, ["--optimize-for-size"])
    const olderNode = cacheName({ hash: "b1", path: here }, { ...runtime, version: "v22.1.0" }, [])
    const sameOtherNode = cacheName({ hash: "b2", path: here }, { ...runtime, version: "v22.1.0" }, [])
    const elsewhere = cacheName(
      { hash: "b1", path: "/home/ana/app/node_modules/@erp-client/cli/dist/erp.cjs" },
      runtime,
      []
    )
    const listing = [
      current,
      older,
      olderFlags,
      olderNode,
      `${older}.4242.tmp`,
      sameOtherNode,
      elsewhere,
      "notes.txt"
    ]
    expect(replacedBy(current, listing)).toEqual([older, olderFlags, olderNode, `${older}.4242.tmp`])
  })
})

let env: Awaited<ReturnType<typeof startSandbox>>
let home: string

beforeAll(async () => {
  env = await startSandbox({ partners: 20 })
  home = Fs.mkdtempSync(Path.join(Os.tmpdir(), "erp-code-cache-"))
})

afterAll(async () => {
  await env?.close()
  if (home !== undefined) Fs.rmSync(home, { recursive: true, force: true })
})

const lookup = (cacheHome: string, extra: Record<string, string> = {}) =>
  erp(["partners", "get", "--id", "3"], { via: "node", env: { ...env.env, XDG_CACHE_HOME: cacheHome, ...extra } })

const filesIn = (dir: string) => (Fs.existsSync(dir) ? Fs.readdirSync(dir) : [])

describe("the compiled command's code cache", () => {
  it("is written by the first run, private to the user, and read (not written again) by the next", async () => {
    const cacheHome = Path.join(home, "first")
    const dir = Path.join(cacheHome, "erp-client/code-cache")
    const first = await lookup(cacheHome)
    expect(first.code).toBe(0)
    expect(JSON.parse(first.stdout).id).toBe(3)
    const [file] = filesIn(dir)
    expect(file).toMatch(/^[0-9a-f]{16}-[0-9a-f]{8}-v\d+\.\d+\.\d+-[a-z0-9]+(-[a-z]+)*\.v8cache$/)
    expect(Fs.statSync(dir).mode & 0o777).toBe(0o700)
    expect(Fs.statSync(Path.join(dir, file!)).mode & 0o777).toBe(0o600)
    const written = Fs.statSync(Path.join(dir, file!)).mtimeMs
    const second = await lookup(cacheHome)
    expect(second.code).toBe(0)
    expect(second.stdout).toBe(first.stdout)
    expect(Fs.statSync(Path.join(dir, file!)).mtimeMs).toBe(written)
    expect(filesIn(dir)).toEqual([file])
  })

  it("writing a cache removes the caches this place's earlier bundles left, and keeps those of other places", async () => {
    const cacheHome = Path.join(home, "upgraded")
    const dir = Path.join(cacheHome, "erp-client/code-cache")
    Fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
    const runtime = { version: process.version, arch: process.arch }
    const bundle = Path.join(Path.dirname(BIN), "erp.cjs")
    const earlier = cacheName({ hash: "0123456789abcdef", path: bundle }, runtime, [])
    const elsewhere = cacheName({ hash: "0123456789abcdef", path: "/opt/erp/dist/erp.cjs" }, runtime, [])
    for (const name of [earlier, elsewhere]) Fs.writeFileSync(Path.join(dir, name), "an earlier cache", { mode: 0o600 })
    expect((await lookup(cacheHome)).code).toBe(0)
    const files = filesIn(dir)
    expect(files).toHaveLength(2)
    expect(files).toContain(elsewhere)
    expect(files).not.toContain(earlier)
  })

  it("a cache V8 refuses (damaged) is replaced, and the run answers as ever", async () => {
    const cacheHome = Path.join(home, "damaged")
    const dir = Path.join(cacheHome, "erp-client/code-cache")
    expect((await lookup(cacheHome)).code).toBe(0)
    const [file] = filesIn(dir)
    Fs.writeFileSync(Path.join(dir, file!), Buffer.from("not a code cache at all".repeat(100)), { mode: 0o600 })
    const run = await lookup(cacheHome)
    expect(run.code).toBe(0)
    expect(run.stderr).toBe("")
    expect(JSON.parse(run.stdout).id).toBe(3)
    expect(Fs.readFileSync(Path.join(dir, file!)).toString("utf8", 0, 23)).not.toBe("not a code cache at all")
  })

  it("a directory others can write to is neither read nor written", async () => {
    const cacheHome = Path.join(home, "shared")
    const dir = Path.join(cacheHome, "erp-client/code-cache")
    Fs.mkdirSync(dir, { recursive: true })
    Fs.chmodSync(dir, 0o777)
    const run = await lookup(cacheHome)
    expect(run.code).toBe(0)
    expect(filesIn(dir)).toEqual([])
  })

  it("NODE_DISABLE_COMPILE_CACHE turns it off", async () => {
    const cacheHome = Path.join(home, "off")
    const run = await lookup(cacheHome, { NODE_DISABLE_COMPILE_CACHE: "1" })
    expect(run.code).toBe(0)
    expect(Fs.existsSync(Path.join(cacheHome, "erp-client"))).toBe(false)
  })
})
