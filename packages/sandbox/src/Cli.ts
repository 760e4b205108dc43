/**
 * The sandbox as a command: parse the arguments, serve, print where, and run until SIGINT / SIGTERM.
 *
 * @since 0.1.0
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import type * as HttpServerError from "@effect/platform/HttpServerError"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Util from "node:util"
import type * as RateLimit from "./RateLimit.js"
import * as Sandbox from "./Sandbox.js"

/**
 * @since 0.1.0
 * @category Constants
 */
export const usage = `Usage: sandbox [options]
  --port N             port to listen on (default 8080; 0 = any free port)
  --host ADDRESS       address to listen on (default 127.0.0.1)
  --partners N         number of seeded partners (default 1000)
  --seed N             seed of the partners (default 1)
  --key KEY            a valid API key (repeatable; default sandbox-key)
  --limit N            requests per window per key and endpoint (default 100)
  --window SECONDS     rate-limit window (default 30)
  --reset-unit UNIT    X-RateLimit-Reset unit: epoch-seconds | epoch-millis | seconds (default epoch-seconds)
  --no-rate-limit      serve without a rate limit
  --max-list-count N   largest list_count served (default 500)
  --latency MS         added latency per request (default 0)
  --jitter MS          seeded random extra latency, up to MS (default 0)
  --help               print this text`

const integer = (name: string, value: string | undefined, min: number, max: number): Either.Either<number, string> => {
  if (value === undefined) return Either.left(`--${name} needs a value`)
  const n = Number(value)
  return /^\d+$/.test(value) && Number.isSafeInteger(n) && n >= min && n <= max
    ? Either.right(n)
    : Either.left(`--${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`)
}

const optionalInteger = (
  name: string,
  value: string | undefined,
  min: number,
  max: number
): Either.Either<number | undefined, string> =>
  value === undefined ? Either.right(undefined) : integer(name, value, min, max)

const resetUnits: ReadonlyArray<RateLimit.ResetUnit> = ["epoch-seconds", "epoch-millis", "seconds"]

/**
 * What the command line asked for: options for the sandbox, or the help text.
 *
 * @since 0.1.0
 * @category Models
 */
export type Command =
  | { readonly _tag: "Serve"; readonly options: Sandbox.Options }
  | { readonly _tag: "Help" }

/**
 * Parses the arguments (without `node` and the script). A usage error is the `Left`, one line.
 *
 * @since 0.1.0
 * @category Parsing
 */
export const parse = (argv: ReadonlyArray<string>): Either.Either<Command, string> =>
  Either.gen(function*() {
    const { values } = yield* Either.try({
      try: () =>
        Util.parseArgs({
          args: [...argv],
          strict: true,
          allowPositionals: false,
          options: {
            port: { type: "string" },
            host: { type: "string" },
            partners: { type: "string" },
            seed: { type: "string" },
            key: { type: "string", multiple: true },
            limit: { type: "string" },
            window: { type: "string" },
            "reset-unit": { type: "string" },
            "no-rate-limit": { type: "boolean" },
            "max-list-count": { type: "string" },
            latency: { type: "string" },
            jitter: { type: "string" },
            help: { type: "boolean" }
          }
        }),
      // parseArgs reports unknown or malformed options by throwing; its message names the option.
      catch: (cause) => cause instanceof Error ? cause.message : String(cause)
    })
    if (values.help === true) return { _tag: "Help" } as const
    const port = yield* optionalInteger("port", values.port, 0, 65535)
    const partners = yield* optionalInteger("partners", values.partners, 0, 100_000_000)
    const seed = yield* optionalInteger("seed", values.seed, 0, 4294967295)
    const limit = yield* optionalInteger("limit", values.limit, 1, 1_000_000)
    const window = yield* optionalInteger("window", values.window, 1, 86_400)
    const maxListCount = yield* optionalInteger("max-list-count", values["max-list-count"], 1, 1_000_000)
    const latency = yield* optionalInteger("latency", values.latency, 0, 600_000)
    const jitter = yield* optionalInteger("jitter", values.jitter, 0, 600_000)
    const resetUnit = values["reset-unit"]
    if (resetUnit !== undefined && !resetUnits.includes(resetUnit as RateLimit.ResetUnit)) {
      return yield* Either.left(
        `--reset-unit must be one of ${resetUnits.join(", ")}, got ${JSON.stringify(resetUnit)}`
      )
    }
    const options: Sandbox.Options = {
      port: port ?? 8080,
      host: values.host ?? "127.0.0.1",
      partners,
      seed,
      apiKeys: values.key,
      maxListCount,
      rateLimit: values["no-rate-limit"] === true ? false : {
        limit,
        window: window === undefined ? undefined : `${window} seconds`,
        resetUnit: resetUnit as RateLimit.ResetUnit | undefined
      },
      latency: { base: latency ?? 0, jitter: jitter ?? 0 }
    }
    return { _tag: "Serve", options } as const
  })

/**
 * Serves the sandbox, prints its address and key on stdout, and runs until interrupted.
 *
 * @since 0.1.0
 * @category Programs
 */
export const program = (options: Sandbox.Options): Effect.Effect<never, HttpServerError.ServeError> =>
  Layer.launch(
    Layer.effectDiscard(
      Effect.flatMap(Sandbox.Sandbox, (sandbox) =>
        Console.log(
          [
            `ERP sandbox listening on ${sandbox.baseUrl} (${sandbox.partnerCount} partners, seed ${sandbox.seed}, ${
              sandbox.rateLimit === false
                ? "no rate limit"
                : `${sandbox.rateLimit.limit} requests per ${sandbox.rateLimit.windowMillis / 1000} s`
            })`,
            `export ERP_BASE_URL=${sandbox.baseUrl}`,
            `export ERP_API_KEY=${sandbox.apiKey}`,
            "Press Ctrl+C to stop."
          ].join("\n")
        ))
    ).pipe(Layer.provide(Sandbox.layer(options)))
  )

/**
 * Runs the command: exit code 2 on a usage error, otherwise serves until SIGINT / SIGTERM.
 *
 * @since 0.1.0
 * @category Programs
 */
export const main = (argv: ReadonlyArray<string>): void =>
  Either.match(parse(argv), {
    onLeft: (error) => {
      process.stderr.write(`sandbox: ${error}\n${usage}\n`)
      process.exitCode = 2
    },
    onRight: (command) => {
      if (command._tag === "Help") {
        process.stdout.write(`${usage}\n`)
        return
      }
      NodeRuntime.runMain(program(command.options))
    }
  })
