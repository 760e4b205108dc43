/**
 * Runs an `erp` command in this process, for tests: the arguments in; its exit code and what it wrote to stdout and
 * stderr out. Against a sandbox on a socket (`erp: sandbox`, a `Sandbox.Service` of `Sandbox.layer`), the in-memory
 * sandbox (`httpClient` of `Sandbox.makeHttpClient`), or any base URL and key.
 *
 * @since 0.1.0
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Sandbox from "@erp-client/sandbox/Sandbox"
import type * as Resource from "@erp-client/streams/Resource"
import * as Clock from "effect/Clock"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Util from "node:util"
import * as Cli from "./Cli.js"
import { CommandHttpClient } from "./internal/clientLayer.js"
import * as SandboxResources from "./internal/sandboxResources.js"

/**
 * How one command ended.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Result {
  /** The exit code (`Cli.ExitCode`). */
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/**
 * What a command runs against, and with which kinds of record.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Options {
  /** The kinds of record with commands of their own (default `Cli.resources`): yours added, `[...Cli.resources, x]`. */
  readonly resources?: ReadonlyArray<Resource.Any> | undefined
  /** The ERP: its base URL and API key, as `ERP_BASE_URL` and `ERP_API_KEY` (a `Sandbox.Service` is one). */
  readonly erp?: { readonly baseUrl: string; readonly apiKey: string } | undefined
  /**
   * The HttpClient the command sends with in place of Node's fetch: the in-memory sandbox's
   * (`Sandbox.makeHttpClient`), whose `sandbox` is then `erp`.
   */
  readonly httpClient?: HttpClient.HttpClient | undefined
  /** More settings (`ERP_RETRIES: "0"`), read before the process's environment. */
  readonly env?: Readonly<Record<string, string>> | undefined
}

// The command writes to the process's stdout and stderr, so runs take turns: one at a time in a process.
const turn = Effect.unsafeMakeSemaphore(1)

// stdout and stderr, written to `into` while the run lasts, then given back. Hand-written because the command writes
// to `process.stdout` itself (its pipe handling, `internal/stdout.ts`), not through a service a test could replace.
const captured = (into: { stdout: string; stderr: string }) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const out = process.stdout.write
      const err = process.stderr.write
      const capture = (stream: "stdout" | "stderr") =>
      (
        chunk: string | Uint8Array,
        encoding?: BufferEncoding | ((error?: Error | null) => void),
        done?: (error?: Error | null) => void
      ): boolean => {
        into[stream] += typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8")
        const callback = typeof encoding === "function" ? encoding : done
        if (callback !== undefined) queueMicrotask(() => callback(null))
        return true
      }
      process.stdout.write = capture("stdout") as typeof process.stdout.write
      process.stderr.write = capture("stderr") as typeof process.stderr.write
      return { out, err }
    }),
    ({ err, out }) =>
      Effect.sync(() => {
        process.stdout.write = out
        process.stderr.write = err
      })
  )

// Effect's Console (the sandbox's lines, the command's log lines on stderr) written to `into` as Node's console
// writes them (`log`, `info`, `debug` to stdout; `warn`, `error` to stderr): a test runner's console may not be the
// process's stdout.
const capturingConsole = (base: Console.Console, into: { stdout: string; stderr: string }): Console.Console => {
  const to = (stream: "stdout" | "stderr") => (...args: ReadonlyArray<unknown>): void => {
    into[stream] += `${Util.format(...args)}\n`
  }
  const say = (stream: "stdout" | "stderr") => (...args: ReadonlyArray<unknown>) =>
    Effect.sync(() => to(stream)(...args))
  return {
    ...base,
    log: say("stdout"),
    info: say("stdout"),
    debug: say("stdout"),
    warn: say("stderr"),
    error: say("stderr"),
    unsafe: {
      ...base.unsafe,
      log: to("stdout"),
      info: to("stdout"),
      debug: to("stdout"),
      warn: to("stderr"),
      error: to("stderr")
    }
  }
}

/**
 * Runs `erp ARGS` in this process (`args` as after the executable: `["products", "list"]`): its exit code, stdout
 * and stderr. Settings come from `options.erp` and `options.env`, then the process's environment. The command runs
 * on the real clock, as a user's does, even in an `it.effect` test (the in-memory sandbox then follows it too), and
 * runs take turns (they share the process's stdout).
 *
 * @example
 * ```ts
 * import { CliTest } from "@erp-client/cli"
 * import { Sandbox } from "@erp-client/sandbox"
 * import { Effect } from "effect"
 *
 * // `erp partners get --id 7` against the sandbox in memory
 * const program = Effect.gen(function*() {
 *   const { httpClient, sandbox } = yield* Sandbox.makeHttpClient({ partners: 10 })
 *   const { code, stdout } = yield* CliTest.run(["partners", "get", "--id", "7"], { erp: sandbox, httpClient })
 *   return [code, JSON.parse(stdout).id]
 * }).pipe(Effect.scoped)
 *
 * Effect.runPromise(program).then(console.log) // => [ 0, 7 ]
 * ```
 *
 * @since 0.1.0
 * @category Programs
 */
export const run = (args: ReadonlyArray<string>, options: Options = {}): Effect.Effect<Result> =>
  Effect.suspend(() => {
    const output = { stdout: "", stderr: "" }
    const settings = new Map(Object.entries({
      ...(options.erp === undefined ? {} : { ERP_BASE_URL: options.erp.baseUrl, ERP_API_KEY: options.erp.apiKey }),
      ...options.env
    }))
    const command = Cli.main(["node", "erp", ...args], { resources: options.resources }).pipe(
      Effect.provide(NodeContext.layer),
      Effect.withConfigProvider(ConfigProvider.fromMap(settings).pipe(ConfigProvider.orElse(ConfigProvider.fromEnv))),
      Effect.provideService(CommandHttpClient, options.httpClient),
      (command) => Console.consoleWith((base) => Effect.withConsole(command, capturingConsole(base, output))),
      Effect.withClock(Clock.make())
    )
    return turn.withPermits(1)(
      Effect.scoped(Effect.zipRight(captured(output), command)).pipe(
        Effect.map((code): Result => ({ code, stdout: output.stdout, stderr: output.stderr }))
      )
    )
  })

/**
 * What `erp sandbox` serves of `resources`, as the sandbox's `resources` option: each one whose endpoints the sandbox
 * does not serve already (partners and invoices), 100 records made by its `sample` (records of its id field alone
 * without one), found by `get` with its selectors. For a sandbox of a test's own (`Sandbox.layer`,
 * `Sandbox.makeHttpClient`) that serves your declarations as `erp sandbox` does.
 *
 * @example
 * ```ts
 * import { CliTest } from "@erp-client/cli"
 * import { Resource } from "@erp-client/streams"
 * import { Schema } from "effect"
 *
 * const products = Resource.make({
 *   name: "products",
 *   description: "Export and look up products",
 *   list: "product/list",
 *   get: "product/get",
 *   schema: Schema.Struct({ id: Schema.Number, name: Schema.String }),
 *   sample: (index) => ({ id: index + 1, name: `Product ${index + 1}` })
 * })
 * const [served] = CliTest.served([products])
 * console.log(served.list, served.get, served.lookups) // => product/list product/get [ 'id' ]
 * ```
 *
 * @since 0.1.0
 * @category Programs
 */
export const served = (resources: ReadonlyArray<Resource.Any>): Array<Sandbox.ResourceOptions> =>
  SandboxResources.sandboxResources(resources, Sandbox.endpoints)
