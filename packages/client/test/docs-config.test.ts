import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as Path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

// docs/configuration.md's settings tables are written from the code (scripts/docs-config.ts, run by `pnpm run docs`):
// the variables from Environment.ts, the defaults from ErpConfig.defaults, ErpRateLimiter.defaults and
// ErpRateLimiterRedis.defaults, the OTEL_* variables from what @erp-client/otel reads. A default or variable changed
// in the code without the page written again fails here.
const ROOT = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../../..")
const TSX = Path.join(ROOT, "node_modules/tsx/dist/esm/index.mjs")

describe("docs/configuration.md", () => {
  it("holds the settings tables the code gives", () => {
    const run = spawnSync(
      process.execPath,
      ["--import", pathToFileURL(TSX).href, Path.join(ROOT, "scripts/docs-config.ts"), "--check"],
      { cwd: ROOT, encoding: "utf8", timeout: 60_000 }
    )
    expect(run.status, run.stderr).toBe(0)
    expect(run.stdout).toContain("the settings tables are what the code gives")
  })
})
