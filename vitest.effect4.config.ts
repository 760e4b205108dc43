// The Effect 4 edition's tests: every `packages/effect4-*` package as a project of one run of vitest 5 (the packages'
// own vitest; this root's is vitest 3, for the Effect 3 edition, so nothing is imported from "vitest" here). One run
// shares its two workers among the packages: run one after another, the small packages left a worker idle while the
// largest finished. scripts/test.ts runs it (`vitest run --root . --config vitest.effect4.config.ts`); each package's
// own vitest.config.ts holds its test settings, and still serves `vitest run` in that package.
export default {
  test: {
    projects: ["packages/effect4-*"],
    // Most files wait on sockets, child processes and timers rather than compute (see vitest.config.ts).
    maxWorkers: 2
  }
}
