import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Fault } from "@erp-client/sandbox"
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { erp, ROOT, startSandbox } from "./harness.js"

// How the process ends: its event loop runs out, with the command's exit code, never by `process.exit` (bin.ts says
// why: an exit while V8 compiles in the background can hang for ever, nodejs/node#54918). A command that leaves
// something open (ioredis's 2 s timer after a Redis that was never reached, once) would be ended by bin.ts's guard a
// second later, by `process.exit`: these runs say it did not come to that.

const SPY = Path.join(ROOT, "packages/cli/test/fixtures/exitSpy.mjs")
let env: Awaited<ReturnType<typeof startSandbox>>
let dir: string

beforeAll(async () => {
  env = await startSandbox({ partners: 30 })
  dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "erp-ending-"))
})

afterAll(async () => {
  await env?.close()
  Fs.rmSync(dir, { recursive: true, force: true })
})

// `erp args`, with the spy preloaded: its exit code and the process.exit calls it made.
let runs = 0
const spied = async (args: ReadonlyArray<string>, options: Parameters<typeof erp>[1] = {}) => {
  const log = Path.join(dir, `exits-${runs++}.log`)
  const run = await erp(args, {
    via: "node",
    ...options,
    env: { ...env.env, ...options.env, NODE_OPTIONS: `--import ${pathToFileURL(SPY).href}`, ERP_TEST_EXIT_SPY: log }
  })
  return { ...run, exits: Fs.existsSync(log) ? Fs.readFileSync(log, "utf8") : "" }
}

describe("how erp ends", () => {
  it("the spy sees a process.exit", () => {
    const log = Path.join(dir, "spy-check.log")
    expect(() =>
      execFileSync(process.execPath, ["--import", pathToFileURL(SPY).href, "-e", "process.exit(3)"], {
        env: { ...process.env, ERP_TEST_EXIT_SPY: log }
      })
    ).toThrow()
    expect(Fs.readFileSync(log, "utf8")).toBe("process.exit(3)\n")
  })

  it("a success, a failure and a Redis never reached: their codes, without process.exit", async () => {
    const found = await spied(["partners", "get", "--id", "3"])
    expect([found.code, found.exits]).toEqual([0, ""])
    const missing = await spied(["partners", "get", "--id", "999999"])
    expect([missing.code, missing.exits, missing.stderr]).toEqual([4, "", expect.stringContaining("not found")])
    const redis = await spied(["partners", "get", "--id", "3", "--redis", "redis://127.0.0.1:1"])
    expect([redis.code, redis.exits, redis.stderr]).toEqual([1, "", expect.stringContaining("store failed")])
  })

  it("Ctrl-C with a request in flight: 130, without process.exit", async () => {
    await env.run(env.sandbox.inject(Fault.Fault.Hang(), { times: 1, endpoint: "/partner/list", after: 1 }))
    const run = await spied(["partners", "list", "--page-size", "10", "--concurrency", "1"], {
      interruptWhen: env.listRequests(2)
    })
    expect([run.code, run.stderr, run.exits]).toEqual([130, "erp: interrupted (SIGINT)\n", ""])
  })
})
