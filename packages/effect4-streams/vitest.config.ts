import { defineConfig } from "vitest/config"

// The Effect 4 edition's tests run on vitest 5 (this package's own), every package a project of one run
// (vitest.effect4.config.ts, which scripts/test.ts runs).
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The copies of the source both editions share (scripts/editions.ts), written before any test imports them.
    globalSetup: ["../../scripts/editions.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // A worker for each file, unlike the other packages' files (see the root vitest.config.ts): Telemetry.test.ts
    // checks a line said once per endpoint and process (PagingText.pageSizeLine), which another file's export in the
    // same worker could have said first.
    isolate: true,
    maxWorkers: 2,
    passWithNoTests: true
  }
})
