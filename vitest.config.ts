import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["packages/*/test/**/*.test.ts"],
    // Tests start real loopback servers and child processes: keep them bounded, never hanging.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // CI reads the JSON report to print its one-line totals.
    reporters: process.env.CI ? ["default", ["json", { outputFile: "build/vitest-report.json" }]] : ["default"]
  }
})
