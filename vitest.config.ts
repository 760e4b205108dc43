import { defineConfig } from "vitest/config"

// The packages' tests, and the repository's own (test/: the editions' shared source and their names; scripts/test/:
// the release scripts).
const include = ["packages/*/test/**/*.test.ts", "test/**/*.test.ts", "scripts/test/*.test.ts"]
// The Effect 4 edition runs on its own vitest 5 (scripts/test.ts runs it after this one).
const exclude = ["packages/effect4-*/**", "**/node_modules/**"]
// Files that need a fresh process state, each run in a worker thread of its own: the OpenTelemetry test's exporter
// sends every metric of the process's registry (Effect 3's is global), where other files would have left theirs; the
// streams' Telemetry test checks a line said once per endpoint and process (PagingText.pageSizeLine), which another
// file's export could have said first.
const ownWorker = ["packages/otel/test/**/*.test.ts", "packages/streams/test/Telemetry.test.ts"]

export default defineConfig({
  test: {
    // Tests start real loopback servers and child processes: keep them bounded, never hanging.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Most files wait on sockets, child processes and timers rather than compute: vitest's default of one worker per
    // core but one (a single worker on CI's two cores) left the machine idle for most of the run. Two: the suite in
    // about 5 minutes instead of 8 to 9 on two cores. Three were faster still, but the tests that measure real time
    // (the Redis limiter's windows, the sandbox's timeouts) then met a starved event loop on a busy machine.
    maxWorkers: 2,
    minWorkers: 1,
    poolOptions: {
      // Files share their worker's modules: Effect, the platform and our packages are loaded once per worker, not
      // once per file (a fresh process per file spent more CPU loading them than on many of the files' tests; with
      // two workers, core, sandbox and testing took 21 s of CPU instead of 50). So a test must not count on a
      // module's state starting fresh: one that checks what a process does once (a cache, a once-only log, a global
      // metric) runs in a child process (as client/test/LazyRedis.test.ts does), reads what changed during the test,
      // gives the state its own instance (Effect 4's metrics: a `Metric.MetricRegistry` of its own), or is listed in
      // `ownWorker` above.
      forks: { isolate: false },
      threads: { isolate: true }
    },
    // The CLI tests run the compiled command: build it from the sources under test first (about a second).
    globalSetup: ["scripts/build-cli.ts"],
    // scripts/test.ts (pnpm test) reads the JSON report and adds the Effect 4 edition's to it; written on every run,
    // so it never depends on the environment saying it is CI.
    reporters: ["default", ["json", { outputFile: "build/vitest-report-effect3.json" }]],
    projects: [
      { extends: true, test: { name: "shared", include, exclude: [...exclude, ...ownWorker], pool: "forks" } },
      { extends: true, test: { name: "own worker", include: ownWorker, exclude, pool: "threads", globalSetup: [] } }
    ]
  }
})
