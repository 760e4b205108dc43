import { defineConfig } from "vitest/config"

// The Effect 4 edition's tests run on vitest 5 (this package's own), one package at a time (scripts/test.ts).
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The copies of the source both editions share (scripts/editions.ts), written before any test imports them.
    globalSetup: ["../../scripts/editions.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    maxWorkers: 2,
    passWithNoTests: true
  }
})
