import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["packages/*/test/**/*.test.ts", "scripts/test/*.test.ts"],
    // The Effect 4 edition runs on its own vitest 5 (scripts/test.ts runs it after this one).
    exclude: ["packages/effect4-*/**", "**/node_modules/**"],
    // Tests start real loopback servers and child processes: keep them bounded, never hanging.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Most files wait on sockets, child processes and timers rather than compute: vitest's default of one worker per
    // core but one (a single worker on CI's two cores) left the machine idle for most of the run. Two: the suite in
    // about 5 minutes instead of 8 to 9 on two cores. Three were faster still, but the tests that measure real time
    // (the Redis limiter's windows, the sandbox's timeouts) then met a starved event loop on a busy machine.
    maxWorkers: 2,
    minWorkers: 1,
    // The CLI tests run the compiled command: build it from the sources under test first (about a second).
    globalSetup: ["scripts/build-cli.ts"],
    // scripts/test.ts (pnpm test) reads the JSON report and adds the Effect 4 edition's to it; written on every run,
    // so it never depends on the environment saying it is CI.
    reporters: ["default", ["json", { outputFile: "build/vitest-report-effect3.json" }]]
  }
})
