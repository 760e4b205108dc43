/**
 * The command as the executable runs it: `bin.ts` loads this module's bundle (`dist/erp.cjs`, built by
 * scripts/build-cli.ts) through the code cache (`codeCache.ts`) once it knows the command must run.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import * as Cli from "../Cli.js"

/**
 * Runs the command line of `argv` (as `process.argv` has it) with `signals`, the run of `NodeRuntime.runMain`: an
 * unref'd process would end while the command waits on a timer that Effect keeps, hence the interval; every failure
 * has been said by `Cli.main` (no error reporting), and no pretty logger (it prints to stdout, which carries data only;
 * Cli.ts sends logs to stderr itself). `onEnd` gets the exit code once the command has ended.
 */
export const start = (argv: ReadonlyArray<string>, signals: Cli.Signals, onEnd: (code: number) => void): void => {
  const keepAlive = setInterval(() => {}, 2 ** 31 - 1)
  const fiber = Effect.runFork(Cli.main(argv, { signals }).pipe(Effect.provide(NodeContext.layer)))
  fiber.addObserver((exit) => {
    clearInterval(keepAlive)
    Cli.teardown(exit, onEnd)
  })
}

/** The `--help` pages, for the build to write beside the executable (`dist/help.json`). */
export const helpIndex = Cli.helpIndex
