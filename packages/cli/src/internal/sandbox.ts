/**
 * `erp sandbox`: the built-in ERP server, for trying the command line and the client without an account.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Fault from "@erp-client/sandbox/Fault"
import type * as RateLimit from "@erp-client/sandbox/RateLimit"
import type * as Sandbox from "@erp-client/sandbox/Sandbox"
import * as Serve from "@erp-client/sandbox/Serve"
import * as Effect from "effect/Effect"
import { UsageError } from "./errors.js"

// The sandbox's fault kinds, by the name `--fault` takes.
const faultKinds = {
  "429": Fault.Fault.TooManyRequests({ resetAfter: "1 second" }),
  "500": Fault.Fault.Status({ status: 500 }),
  "502": Fault.Fault.Status({ status: 502 }),
  "503": Fault.Fault.Status({ status: 503 }),
  "504": Fault.Fault.Status({ status: 504 }),
  "drop": Fault.Fault.DropBeforeResponse(),
  "drop-mid-body": Fault.Fault.DropMidBody({}),
  "malformed": Fault.Fault.MalformedJson(),
  "not-envelope": Fault.Fault.NotEnvelope({}),
  "unknown-code": Fault.Fault.UnknownCode({}),
  "hang": Fault.Fault.Hang(),
  "unauthorized": Fault.Fault.Unauthorized()
} as const

export const sandbox = Command.make(
  "sandbox",
  {
    port: Options.integer("port").pipe(Options.withDefault(8080), Options.withDescription("0 picks a free port")),
    host: Options.text("host").pipe(Options.withDefault("127.0.0.1")),
    partners: Options.integer("partners").pipe(Options.withDefault(1000)),
    seed: Options.integer("seed").pipe(Options.withDefault(1)),
    key: Options.text("key").pipe(Options.repeated, Options.withDescription("a valid API key (repeatable)")),
    limit: Options.integer("limit").pipe(Options.withDefault(100), Options.withDescription("requests per window")),
    window: Options.integer("window").pipe(Options.withDefault(30), Options.withDescription("window in seconds")),
    resetUnit: Options.choice("reset-unit", ["epoch-seconds", "epoch-millis", "seconds"]).pipe(
      Options.withDefault("epoch-seconds" as const)
    ),
    noRateLimit: Options.boolean("no-rate-limit"),
    maxListCount: Options.integer("max-list-count").pipe(Options.withDefault(500)),
    latency: Options.integer("latency").pipe(Options.withDefault(0), Options.withDescription("added ms per request")),
    jitter: Options.integer("jitter").pipe(Options.withDefault(0), Options.withDescription("random extra ms, up to")),
    faultRate: Options.float("fault-rate").pipe(
      Options.withDefault(0),
      Options.withDescription("share of requests (0 to 1) that get one of the --fault kinds, seeded")
    ),
    fault: Options.choice("fault", Object.keys(faultKinds) as Array<keyof typeof faultKinds>).pipe(
      Options.repeated,
      Options.withDescription("a fault to inject at random (repeatable)")
    ),
    inserts: Options.integer("inserts").pipe(
      Options.withDefault(0),
      Options.withDescription("partners inserted at random positions before every list answer (data that changes)")
    ),
    deletes: Options.integer("deletes").pipe(
      Options.withDefault(0),
      Options.withDescription("partners deleted at random positions before every list answer")
    )
  },
  (args) =>
    Effect.gen(function*() {
      const ranges: ReadonlyArray<readonly [string, number, number, number]> = [
        ["port", args.port, 0, 65_535],
        ["partners", args.partners, 0, 100_000_000],
        ["seed", args.seed, 0, 4_294_967_295],
        ["limit", args.limit, 1, 1_000_000],
        ["window", args.window, 1, 86_400],
        ["max-list-count", args.maxListCount, 1, 1_000_000],
        ["latency", args.latency, 0, 600_000],
        ["jitter", args.jitter, 0, 600_000],
        ["inserts", args.inserts, 0, 10_000],
        ["deletes", args.deletes, 0, 10_000]
      ]
      if (!(args.faultRate >= 0 && args.faultRate <= 1)) {
        return yield* new UsageError({ reason: `--fault-rate must be from 0 to 1, got ${args.faultRate}` })
      }
      if (args.faultRate > 0 && args.fault.length === 0) {
        return yield* new UsageError({ reason: "--fault-rate needs at least one --fault" })
      }
      for (const [name, value, min, max] of ranges) {
        if (value < min || value > max) {
          return yield* new UsageError({ reason: `--${name} must be from ${min} to ${max}, got ${value}` })
        }
      }
      const options: Sandbox.Options = {
        port: args.port,
        host: args.host,
        partners: args.partners,
        seed: args.seed,
        ...(args.key.length > 0 ? { apiKeys: args.key } : {}),
        rateLimit: args.noRateLimit
          ? false
          : { limit: args.limit, window: `${args.window} seconds`, resetUnit: args.resetUnit as RateLimit.ResetUnit },
        maxListCount: args.maxListCount,
        latency: { base: `${args.latency} millis`, jitter: `${args.jitter} millis` },
        ...(args.faultRate > 0
          ? {
            randomFaults: { rate: args.faultRate, faults: args.fault.map((kind) => faultKinds[kind]), seed: args.seed }
          }
          : {}),
        ...(args.inserts > 0 || args.deletes > 0
          ? { drift: { inserts: args.inserts, deletes: args.deletes, seed: args.seed } }
          : {})
      }
      return yield* Serve.serve(options)
    })
).pipe(Command.withDescription("run the built-in ERP sandbox server (prints its base URL and key)"))
