/**
 * `erp sandbox`'s flags of what goes wrong: slow answers, faults at random or queued, outages and their
 * Retry-After, and records a server always fails to read.
 */
import * as Options from "@effect/cli/Options"
import type * as FaultModule from "@erp-client/sandbox/Fault"
import { repeatable, shownDefault } from "../common.js"

// The sandbox's fault kinds, by the name `--fault` takes.
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
  "unauthorized",
  "empty-page"
] as const

/** Each fault kind `--fault` and `--inject` name, as the sandbox's `Fault`. */
export const faultKinds = (
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
  "unauthorized": Fault.Fault.Unauthorized(),
  "empty-page": Fault.Fault.EmptyPage()
})

/** Time added to every answer. */
export const latency = {
  latency: Options.integer("latency").pipe(
    Options.withPseudoName("MS"),
    Options.withDescription("Milliseconds added to every answer."),
    shownDefault(0)
  ),
  jitter: Options.integer("jitter").pipe(
    Options.withPseudoName("MS"),
    Options.withDescription("Up to this many random (seeded) milliseconds more."),
    shownDefault(0)
  )
}

/** Faults served at random (`--fault-rate`) or queued at start (`--inject`). */
export const faults = {
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
  )
}

/** An outage, and the Retry-After sent with it and with the 5xx and 429 faults. */
export const outage = {
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
  )
}

/** Records a server cannot read: their `partner/get` always fails. */
export const failing = {
  failingEvery: Options.integer("failing-every").pipe(
    Options.withPseudoName("N"),
    Options.withDescription(
      "Make partner/get of every id divisible by N fail every time with --failing-status (records a server cannot " +
        "read)."
    ),
    Options.optional
  ),
  failingStatus: Options.integer("failing-status").pipe(
    Options.withPseudoName("STATUS"),
    Options.withDescription("The HTTP status of --failing-every's answers, with the error envelope."),
    shownDefault(500)
  )
}
