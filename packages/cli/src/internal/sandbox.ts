/**
 * `erp sandbox`: the built-in ERP server, for trying the command line and the client without an account.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import type * as FaultModule from "@erp-client/sandbox/Fault"
import type * as RateLimit from "@erp-client/sandbox/RateLimit"
import type * as Sandbox from "@erp-client/sandbox/Sandbox"
import type * as Seed from "@erp-client/sandbox/Seed"
import * as Effect from "effect/Effect"
import { repeatable, shownDefault } from "./common.js"
import { UsageError } from "./errors.js"

// The sandbox is loaded only when `erp sandbox` runs (dynamic imports below), so the commands that talk to the ERP
// never load the server. The sandbox's fault kinds, by the name `--fault` takes.
const faultNames = [
  "429",
  "500",
  "502",
  "503",
  "504",
  "drop",
  "drop-mid-body",
  "malformed",
  "not-envelope",
  "unknown-code",
  "hang",
  "unauthorized"
] as const

// How seeded partners may stray from the contract (`--odd-kind`), as the sandbox names them (a test holds the two
// lists equal).
export const oddKindNames = [
  "tax-number-empty",
  "tax-number-null",
  "tax-number-absent",
  "tax-number-eu-vat",
  "tax-number-spaces",
  "tax-number-slashes",
  "tax-number-number",
  "company-name-null",
  "company-name-empty",
  "customer-flag-string",
  "customer-flag-boolean",
  "customer-flag-absent",
  "extra-object"
] as const satisfies ReadonlyArray<Seed.OddKind>

const faultKinds = (Fault: typeof FaultModule): Record<(typeof faultNames)[number], FaultModule.Fault> => ({
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
})

export const sandbox = Command.make(
  "sandbox",
  {
    port: Options.integer("port").pipe(
      Options.withPseudoName("N"),
      Options.withDescription("The port to listen on; 0 picks a free one."),
      shownDefault(8080)
    ),
    host: Options.text("host").pipe(
      Options.withPseudoName("ADDRESS"),
      Options.withDescription("The address to listen on."),
      shownDefault("127.0.0.1")
    ),
    partners: Options.integer("partners").pipe(
      Options.withPseudoName("N"),
      Options.withDescription("How many seeded partners the list starts with."),
      shownDefault(1000)
    ),
    seed: Options.integer("seed").pipe(
      Options.withPseudoName("N"),
      Options.withDescription("The seed of the partners, the latency jitter, the random faults and the drift."),
      shownDefault(1)
    ),
    key: Options.text("key").pipe(
      Options.withPseudoName("KEY"),
      Options.withDescription("A valid API key. Default: sandbox-key."),
      repeatable
    ),
    limit: Options.integer("limit").pipe(
      Options.withPseudoName("N"),
      Options.withDescription("Requests per window, per API key and endpoint; more are answered 429."),
      shownDefault(100)
    ),
    window: Options.integer("window").pipe(
      Options.withPseudoName("SECONDS"),
      Options.withDescription("The rate-limit window (a sliding window)."),
      shownDefault(30)
    ),
    resetUnit: Options.choice("reset-unit", ["epoch-seconds", "epoch-millis", "seconds"]).pipe(
      Options.withDescription("What X-RateLimit-Reset counts in (the contract does not say)."),
      shownDefault<"epoch-seconds" | "epoch-millis" | "seconds">("epoch-seconds")
    ),
    noRateLimit: Options.boolean("no-rate-limit").pipe(Options.withDescription("Serve without a rate limit.")),
    maxListCount: Options.integer("max-list-count").pipe(
      Options.withPseudoName("N"),
      Options.withDescription("The largest page served; a larger list_count gets this many records."),
      shownDefault(500)
    ),
    latency: Options.integer("latency").pipe(
      Options.withPseudoName("MS"),
      Options.withDescription("Milliseconds added to every answer."),
      shownDefault(0)
    ),
    jitter: Options.integer("jitter").pipe(
      Options.withPseudoName("MS"),
      Options.withDescription("Up to this many random (seeded) milliseconds more."),
      shownDefault(0)
    ),
    faultRate: Options.float("fault-rate").pipe(
      Options.withPseudoName("SHARE"),
      Options.withDescription("The share of requests (0 to 1) that get one of the --fault kinds, seeded."),
      shownDefault(0)
    ),
    fault: Options.choice("fault", faultNames).pipe(
      Options.withDescription("A fault to serve at random, see --fault-rate."),
      repeatable
    ),
    inserts: Options.integer("inserts").pipe(
      Options.withPseudoName("N"),
      Options.withDescription("Partners inserted at random positions before every list answer (data that changes)."),
      shownDefault(0)
    ),
    deletes: Options.integer("deletes").pipe(
      Options.withPseudoName("N"),
      Options.withDescription("Partners deleted at random positions before every list answer."),
      shownDefault(0)
    ),
    oddRate: Options.float("odd-rate").pipe(
      Options.withPseudoName("SHARE"),
      Options.withDescription(
        "The share of seeded partners (0 to 1) that stray from the contract as real data does: an empty, null or " +
          "VAT-form tax number, a null company name, a customer flag as a string, … (seeded; see --odd-kind)."
      ),
      shownDefault(0)
    ),
    oddKind: Options.choice("odd-kind", oddKindNames).pipe(
      Options.withDescription("Only these ways of straying, with --odd-rate (default: all of them)."),
      repeatable
    ),
    defaultListCount: Options.integer("default-list-count").pipe(
      Options.withPseudoName("N"),
      Options.withDescription("Serve N records when list_count is missing (default: such a request is refused)."),
      Options.optional
    ),
    tooManyRequestsBody: Options.choice("too-many-requests-body", ["envelope", "html", "empty"] as const).pipe(
      Options.withDescription("The body of a 429 (the contract does not show it)."),
      shownDefault<"envelope" | "html" | "empty">("envelope")
    ),
    unauthorizedMessage: Options.text("unauthorized-message").pipe(
      Options.withPseudoName("TEXT"),
      Options.withDescription("result.message for a refused key."),
      shownDefault("Unauthorized")
    ),
    notFoundMessage: Options.text("not-found-message").pipe(
      Options.withPseudoName("TEXT"),
      Options.withDescription("result.message for a partner that does not exist."),
      shownDefault("Not found")
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
      if (!(args.oddRate >= 0 && args.oddRate <= 1)) {
        return yield* new UsageError({ reason: `--odd-rate must be from 0 to 1, got ${args.oddRate}` })
      }
      if (args.oddKind.length > 0 && args.oddRate === 0) {
        return yield* new UsageError({ reason: "--odd-kind needs --odd-rate" })
      }
      if (args.defaultListCount._tag === "Some" && !(args.defaultListCount.value >= 1)) {
        return yield* new UsageError({ reason: `--default-list-count must be 1 or more` })
      }
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
      const [Fault, Serve] = yield* Effect.promise(() =>
        Promise.all([import("@erp-client/sandbox/Fault"), import("@erp-client/sandbox/Serve")])
      )
      const faults = faultKinds(Fault)
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
            randomFaults: { rate: args.faultRate, faults: args.fault.map((kind) => faults[kind]), seed: args.seed }
          }
          : {}),
        ...(args.inserts > 0 || args.deletes > 0
          ? { drift: { inserts: args.inserts, deletes: args.deletes, seed: args.seed } }
          : {}),
        ...(args.oddRate > 0
          ? { oddRecords: { rate: args.oddRate, ...(args.oddKind.length > 0 ? { kinds: args.oddKind } : {}) } }
          : {}),
        ...(args.defaultListCount._tag === "Some" ? { defaultListCount: args.defaultListCount.value } : {}),
        tooManyRequestsBody: args.tooManyRequestsBody,
        messages: { unauthorized: args.unauthorizedMessage, notFound: args.notFoundMessage }
      }
      return yield* Serve.serve(options)
    })
).pipe(Command.withDescription(
  "Run the built-in ERP sandbox server: seeded partners, the contract's envelope, auth and rate limit, faults on " +
    "demand. It prints its base URL and key."
))
