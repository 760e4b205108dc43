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
import * as Schema from "effect/Schema"
import { Declared, repeatable, shownDefault } from "./common.js"
import { UsageError } from "./errors.js"
import { sandboxResources } from "./sandboxResources.js"

/**
 * The sandbox could not listen where it was told: the port is taken, not allowed, or the address is not this
 * machine's. One line says which (the platform's `ServeError` alone says nothing).
 */
export class SandboxListenError extends Schema.TaggedError<SandboxListenError>()("SandboxListenError", {
  host: Schema.String,
  port: Schema.Number,
  code: Schema.String
}) {
  override get message(): string {
    switch (this.code) {
      case "EADDRINUSE":
        return `port ${this.port} on ${this.host} is taken: another program listens on it (pick another with ` +
          "--port, or --port 0 for a free one)"
      case "EACCES":
        return `not allowed to listen on port ${this.port} on ${this.host}`
      case "EADDRNOTAVAIL":
        return `cannot listen on ${this.host}: not an address of this machine`
      default:
        return `cannot listen on ${this.host} port ${this.port}: ${this.code}`
    }
  }
}

/** The Node error code of why listening failed (`EADDRINUSE`, ...), or its message. */
const listenFailure = (cause: unknown): string => {
  const error = cause as { readonly code?: unknown; readonly message?: unknown } | null
  return typeof error?.code === "string"
    ? error.code
    : typeof error?.message === "string" && error.message !== ""
    ? error.message
    : "unknown error"
}

/** `--max-list-count-from N:MAX`: from the N-th list page on, at most MAX records a page. */
const parseStep = (text: string): { readonly fromRequest: number; readonly max: number } | undefined => {
  const match = /^(\d+):(\d+)$/.exec(text.trim())
  if (match === null) return undefined
  const [fromRequest, max] = [Number(match[1]), Number(match[2])]
  return fromRequest >= 1 && max >= 1 && max <= 1_000_000 ? { fromRequest, max } : undefined
}

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
  "extra-object",
  "number-beyond-double",
  "decimal-as-written",
  "id-beyond-double",
  "duplicate-id"
] as const satisfies ReadonlyArray<Seed.OddKind>

const faultKinds = (
  Fault: typeof FaultModule,
  retryAfter: FaultModule.RetryAfter | undefined
): Record<(typeof faultNames)[number], FaultModule.Fault> => ({
  "429": Fault.Fault.TooManyRequests({ resetAfter: "1 second", retryAfter }),
  "500": Fault.Fault.Status({ status: 500, retryAfter }),
  "502": Fault.Fault.Status({ status: 502, retryAfter }),
  "503": Fault.Fault.Status({ status: 503, retryAfter }),
  "504": Fault.Fault.Status({ status: 504, retryAfter }),
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
    resetUnit: Options.choice("reset-unit", ["epoch-seconds", "epoch-millis", "seconds", "iso", "http-date"]).pipe(
      Options.withDescription(
        "What X-RateLimit-Reset counts in (the contract does not say); iso and http-date write it as a date."
      ),
      shownDefault<RateLimit.ResetUnit>("epoch-seconds")
    ),
    noLimitHeaders: Options.boolean("no-limit-headers").pipe(
      Options.withDescription("Send no X-RateLimit-* headers: the client must find the limit from the 429s alone.")
    ),
    limitRetryAfter: Options.boolean("limit-retry-after").pipe(
      Options.withDescription("The window's 429s also carry Retry-After: the seconds until it allows again.")
    ),
    resetSkew: Options.integer("reset-skew").pipe(
      Options.withPseudoName("SECONDS"),
      Options.withDescription(
        "Shift X-RateLimit-Reset by this many seconds, on answers and 429s alike: negative puts the reset in the " +
          "past, as a server with a slow clock does (--reset-skew=-3600); 3600 is absurd."
      ),
      shownDefault(0)
    ),
    noRateLimit: Options.boolean("no-rate-limit").pipe(Options.withDescription("Serve without a rate limit.")),
    maxListCount: Options.integer("max-list-count").pipe(
      Options.withPseudoName("N"),
      Options.withDescription("The largest page served; a larger list_count gets this many records."),
      shownDefault(500)
    ),
    maxListCountFrom: Options.text("max-list-count-from").pipe(
      Options.withPseudoName("N:MAX"),
      Options.withDescription(
        "From the N-th list page served on, at most MAX records a page (the largest page changes mid-list; " +
          "4:50 with --max-list-count 100 serves 100, 100, 100, then 50)."
      ),
      repeatable
    ),
    ignoreOffset: Options.boolean("ignore-offset").pipe(
      Options.withDescription("Serve every list page from offset 0, whatever list_offset says (a broken server).")
    ),
    hiddenRate: Options.float("hidden-rate").pipe(
      Options.withPseudoName("SHARE"),
      Options.withDescription(
        "The share of seeded partners (0 to 1) held but never served, as permissions or soft deletes do: a page is " +
          "cut with them and they are dropped after, so pages come back short while more follow; get answers Not " +
          "found (seeded)."
      ),
      shownDefault(0)
    ),
    // Text, read as an integer below: @effect/cli 0.77 fails a repeated integer option given only once.
    hiddenPosition: Options.text("hidden-position").pipe(
      Options.withPseudoName("N"),
      Options.withDescription("Hide the seeded partner at this zero-based list position (instead of --hidden-rate)."),
      repeatable
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
    inject: Options.choice("inject", faultNames).pipe(
      Options.withDescription(
        "A fault queued at start: served to --inject-times requests in a row after --inject-after requests, in " +
          "the order given (e.g. three truncated bodies in a row: --inject malformed --inject-times 3)."
      ),
      repeatable
    ),
    injectTimes: Options.integer("inject-times").pipe(
      Options.withPseudoName("N"),
      Options.withDescription("How many requests in a row get each --inject fault."),
      shownDefault(1)
    ),
    injectAfter: Options.integer("inject-after").pipe(
      Options.withPseudoName("N"),
      Options.withDescription("How many requests pass before the --inject faults start."),
      shownDefault(0)
    ),
    outage: Options.float("outage").pipe(
      Options.withPseudoName("SECONDS"),
      Options.withDescription(
        "An outage this long: from the first request past --outage-after, every request gets --outage-status " +
          "with a gateway's page (not counted in the rate limit)."
      ),
      Options.optional
    ),
    outageAfter: Options.integer("outage-after").pipe(
      Options.withPseudoName("N"),
      Options.withDescription("How many requests pass before the outage starts."),
      shownDefault(0)
    ),
    outageStatus: Options.integer("outage-status").pipe(
      Options.withPseudoName("N"),
      Options.withDescription("The HTTP status of the outage's answers."),
      shownDefault(503)
    ),
    outageBody: Options.choice("outage-body", ["html", "envelope", "empty"] as const).pipe(
      Options.withDescription("The body of the outage's answers: a gateway's page, the error envelope, or none."),
      shownDefault<"html" | "envelope" | "empty">("html")
    ),
    outageEndpoint: Options.choice("outage-endpoint", ["partner/list", "partner/get"] as const).pipe(
      Options.withDescription("Only this endpoint is out (default: every endpoint)."),
      Options.optional
    ),
    retryAfter: Options.integer("retry-after").pipe(
      Options.withPseudoName("SECONDS"),
      Options.withDescription(
        "Send Retry-After with the outage's answers and the 5xx and 429 faults (default: none)."
      ),
      Options.optional
    ),
    retryAfterDate: Options.boolean("retry-after-date").pipe(
      Options.withDescription("Send --retry-after as an HTTP date that many seconds after each answer.")
    ),
    failingEvery: Options.integer("failing-every").pipe(
      Options.withPseudoName("N"),
      Options.withDescription(
        "partner/get of every id divisible by N fails every time with --failing-status (records a server cannot read)."
      ),
      Options.optional
    ),
    failingStatus: Options.integer("failing-status").pipe(
      Options.withPseudoName("STATUS"),
      Options.withDescription("The HTTP status of --failing-every's answers, with the error envelope."),
      shownDefault(500)
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
      Options.withDescription(
        "Only these ways of straying, with --odd-rate. Default: each way that keeps the integer id and every " +
          "number's value; number-beyond-double, decimal-as-written (numbers a float would change, written " +
          "exactly), id-beyond-double and duplicate-id only when named."
      ),
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
        ["deletes", args.deletes, 0, 10_000],
        ["reset-skew", args.resetSkew, -31_536_000, 31_536_000],
        ["inject-times", args.injectTimes, 1, 1_000_000],
        ["inject-after", args.injectAfter, 0, 1_000_000],
        ["outage-after", args.outageAfter, 0, 1_000_000],
        ["outage-status", args.outageStatus, 100, 599]
      ]
      const badPosition = args.hiddenPosition.find((text) => !/^\d{1,9}$/.test(text))
      if (badPosition !== undefined) {
        return yield* new UsageError({ reason: `--hidden-position takes a list position from 0, got ${badPosition}` })
      }
      const hiddenPositions = args.hiddenPosition.map(Number)
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
      if (!(args.hiddenRate >= 0 && args.hiddenRate <= 1)) {
        return yield* new UsageError({ reason: `--hidden-rate must be from 0 to 1, got ${args.hiddenRate}` })
      }
      if (args.hiddenRate > 0 && args.hiddenPosition.length > 0) {
        return yield* new UsageError({ reason: "--hidden-rate and --hidden-position do not go together" })
      }
      const schedule = args.maxListCountFrom.map(parseStep)
      const badStep = schedule.findIndex((step) => step === undefined)
      if (badStep >= 0) {
        return yield* new UsageError({
          reason: `--max-list-count-from takes N:MAX (N and MAX from 1), got ${args.maxListCountFrom[badStep]}`
        })
      }
      if (args.outage._tag === "Some" && !(args.outage.value > 0 && args.outage.value <= 86_400)) {
        return yield* new UsageError({ reason: `--outage must be from 0 to 86400 seconds, got ${args.outage.value}` })
      }
      if (args.retryAfter._tag === "Some" && !(args.retryAfter.value >= 0 && args.retryAfter.value <= 86_400)) {
        return yield* new UsageError({ reason: `--retry-after must be from 0 to 86400, got ${args.retryAfter.value}` })
      }
      if (args.failingEvery._tag === "Some" && args.failingEvery.value < 1) {
        return yield* new UsageError({ reason: `--failing-every must be 1 or more, got ${args.failingEvery.value}` })
      }
      if (!(args.failingStatus >= 400 && args.failingStatus <= 599)) {
        return yield* new UsageError({ reason: `--failing-status must be from 400 to 599, got ${args.failingStatus}` })
      }
      if (args.retryAfterDate && args.retryAfter._tag === "None") {
        return yield* new UsageError({ reason: "--retry-after-date needs --retry-after" })
      }
      for (const [name, value, min, max] of ranges) {
        if (value < min || value > max) {
          return yield* new UsageError({ reason: `--${name} must be from ${min} to ${max}, got ${value}` })
        }
      }
      const [Fault, Serve, SandboxModule] = yield* Effect.promise(() =>
        Promise.all([
          import("@erp-client/sandbox/Fault"),
          import("@erp-client/sandbox/Serve"),
          import("@erp-client/sandbox/Sandbox")
        ])
      )
      // The command line's declared resources the sandbox has no records of its own for, from their samples.
      const resources = sandboxResources(yield* Declared, SandboxModule.endpoints)
      const retryAfter: FaultModule.RetryAfter | undefined = args.retryAfter._tag === "None"
        ? undefined
        : args.retryAfterDate
        ? { after: `${args.retryAfter.value} seconds`, format: "http-date" }
        : String(args.retryAfter.value)
      const faults = faultKinds(Fault, retryAfter)
      const inject: Array<{ readonly fault: FaultModule.Fault } & Sandbox.InjectOptions> = args.inject.map((kind) => ({
        fault: faults[kind],
        times: args.injectTimes,
        after: args.injectAfter
      }))
      if (args.outage._tag === "Some") {
        inject.push({
          fault: Fault.Fault.Outage({
            duration: `${Math.round(args.outage.value * 1000)} millis`,
            status: args.outageStatus,
            body: args.outageBody,
            retryAfter
          }),
          after: args.outageAfter,
          ...(args.outageEndpoint._tag === "Some" ? { endpoint: `/${args.outageEndpoint.value}` } : {})
        })
      }
      const options: Sandbox.Options = {
        port: args.port,
        host: args.host,
        partners: args.partners,
        seed: args.seed,
        ...(args.key.length > 0 ? { apiKeys: args.key } : {}),
        rateLimit: args.noRateLimit
          ? false
          : {
            limit: args.limit,
            window: `${args.window} seconds`,
            resetUnit: args.resetUnit as RateLimit.ResetUnit,
            resetSkew: args.resetSkew * 1000,
            ...(args.noLimitHeaders ? { headers: false } : {}),
            ...(args.limitRetryAfter ? { retryAfter: true } : {})
          },
        maxListCount: args.maxListCount,
        ...(args.failingEvery._tag === "Some"
          ? { failingIds: { every: args.failingEvery.value, status: args.failingStatus } }
          : {}),
        ...(schedule.length > 0 ? { maxListCountSchedule: schedule.filter((step) => step !== undefined) } : {}),
        ...(args.ignoreOffset ? { ignoreOffset: true } : {}),
        ...(args.hiddenRate > 0 ? { hidden: { rate: args.hiddenRate, seed: args.seed } } : {}),
        ...(hiddenPositions.length > 0 ? { hidden: { positions: hiddenPositions } } : {}),
        ...(inject.length > 0 ? { inject } : {}),
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
        ...(resources.length > 0 ? { resources } : {}),
        tooManyRequestsBody: args.tooManyRequestsBody,
        messages: { unauthorized: args.unauthorizedMessage, notFound: args.notFoundMessage }
      }
      return yield* Serve.serve(options).pipe(
        Effect.catchTag("ServeError", (error) =>
          new SandboxListenError({ host: args.host, port: args.port, code: listenFailure(error.cause) }))
      )
    })
).pipe(Command.withDescription(
  "Run the built-in ERP sandbox server: seeded partners, the contract's envelope, auth and rate limit, faults on " +
    "demand, and where the contract is silent, the ways real servers differ (odd records, hidden records, clamped " +
    "or changing pages, outages, skewed resets). It prints its base URL and key."
))
