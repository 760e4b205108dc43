/**
 * `erp partners get`: partners by id or company name, as the server sent them: one, or many in one process.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as ErpClient from "@erp-client/client/ErpClient"
import type * as ErpError from "@erp-client/core/ErpError"
import * as Partner from "@erp-client/core/Partner"
import * as Partners from "@erp-client/streams/Partners"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Equal from "effect/Equal"
import * as Hash from "effect/Hash"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Sink from "../Sink.js"
import { AnyRecord, Argv, note, redis, repeatable, shownDefault, verbose, withClient } from "./common.js"
import { contractOf, strictFlag } from "./contract.js"
import { UsageError } from "./errors.js"
import * as Stdin from "./stdin.js"

/**
 * Some of the lookups of a batch failed, each with its line on stderr already: `notFound` do not exist, `failed` failed
 * for another reason (an error the server reported, an answer that does not decode, the connection after retries).
 */
export class LookupsFailed extends Schema.TaggedError<LookupsFailed>()("LookupsFailed", {
  notFound: Schema.Number,
  failed: Schema.Number
}) {
  override get message(): string {
    return `${this.notFound} not found, ${this.failed} failed`
  }
}

/**
 * The failures of one lookup that leave the others to go on. `Unauthorized`, `RateLimited` (past the budget), a rate
 * limiter that cannot be reached and a refused request end the batch: every lookup after it would fail the same way.
 */
const lookupFailures = [
  "NotFound",
  "ApiError",
  "DecodeError",
  "TransportError",
  "TimeoutError",
  "HttpStatusError",
  "ResponseTooLarge"
] as const

type LookupFailure = Extract<ErpError.ErpError, { readonly _tag: typeof lookupFailures[number] }>

const isLookupFailure = (error: ErpError.ErpError): error is LookupFailure =>
  (lookupFailures as ReadonlyArray<string>).includes(error._tag)

/**
 * A failed lookup's line names the lookup after the endpoint: `partner/get id=7: the server reported an error (code
 * 0): Internal error`. A not found one keeps its own wording (`partner/get: not found (id=99999)`).
 */
export const describeLookupFailure = (error: LookupFailure, selector: string): string => {
  if (error._tag === "NotFound") return error.message
  // Each message starts with the endpoint (and the method, for failures of the request itself).
  const start = "method" in error ? `${error.method} ${error.endpoint}: ` : `${error.endpoint}: `
  const said = error.message.startsWith(start) ? error.message.slice(start.length) : error.message
  return `${error.endpoint} ${selector}: ${said}`
}

/**
 * The lookups in the order they were given. The parser keeps `--id` and `--company-name` apart; their order is read
 * back from the arguments, and if that reading does not account for every value, ids come first.
 */
export const inputOrder = (
  argv: ReadonlyArray<string>,
  ids: ReadonlyArray<number>,
  names: ReadonlyArray<string>
): ReadonlyArray<Partners.Selector> => {
  const kinds: Array<"id" | "name"> = []
  for (let i = 0; i < argv.length; i++) {
    // The parser takes an option's value from the next argument (it refuses --id=3 for a repeated option).
    const name = argv[i]!.toLowerCase()
    if (name !== "--id" && name !== "--company-name") continue
    kinds.push(name === "--id" ? "id" : "name")
    i++
  }
  const counted = kinds.filter((kind) => kind === "id").length
  if (counted !== ids.length || kinds.length - counted !== names.length) {
    return [...ids.map((id) => ({ id })), ...names.map((companyName) => ({ companyName }))]
  }
  let id = 0
  let name = 0
  return kinds.map((kind) => kind === "id" ? { id: ids[id++]! } : { companyName: names[name++]! })
}

/**
 * One line of `--stdin`: only digits is an id, `name:` then anything is that company name (a name made of digits),
 * any other line is a company name as it is; a blank line is nothing.
 */
// A lookup as `Effect.cachedFunction` keys it: by its query as NotFound names it (`id=7`, `company_name="…"`), so a
// repeated id or name is one lookup, hashed by that text (an Equivalence alone would hash every key alike).
class Wanted implements Equal.Equal {
  readonly key: string
  constructor(readonly by: Partners.Selector) {
    this.key = Partners.query(by).selector
  }
  [Equal.symbol](that: Equal.Equal): boolean {
    return that instanceof Wanted && that.key === this.key
  }
  [Hash.symbol](): number {
    return Hash.string(this.key)
  }
}

export const parseLine = (line: string, number: number): Either.Either<Partners.Selector | undefined, UsageError> => {
  if (line.trim() === "") return Either.right(undefined)
  if (line.startsWith("name:")) return Either.right({ companyName: line.slice("name:".length) })
  if (!/^\s*\d+\s*$/.test(line)) return Either.right({ companyName: line })
  const id = Number(line.trim())
  return Number.isSafeInteger(id)
    ? Either.right({ id })
    : Either.left(new UsageError({ reason: `stdin line ${number}: ${line.trim()} is too large for an id` }))
}

const stdinSelectors = Stdin.lines.pipe(
  Stream.zipWithIndex,
  Stream.mapEffect(([line, index]) => parseLine(line, index + 1)),
  Stream.filter((selector): selector is Partners.Selector => selector !== undefined)
)

export const partnersGet = Command.make(
  "get",
  {
    // Text, checked here: @effect/cli 0.77 refuses a repeated integer option given once ("'3' is not a integer").
    id: Options.text("id").pipe(Options.withPseudoName("N"), Options.withDescription("A partner's id."), repeatable),
    companyName: Options.text("company-name").pipe(
      Options.withPseudoName("NAME"),
      Options.withDescription("A partner's exact company name (any characters; sent URL-encoded)."),
      repeatable
    ),
    stdin: Options.boolean("stdin").pipe(
      Options.withDescription(
        "Read the lookups from stdin, one a line: a line of only digits is an id, any other line a company name as " +
          "it is; name:TEXT is always the company name TEXT (for a name made of digits). Blank lines are skipped."
      )
    ),
    concurrency: Options.integer("concurrency").pipe(
      Options.withPseudoName("N"),
      Options.withDescription("Lookups in flight at once, 1 to 16; the output keeps the input's order."),
      shownDefault(4)
    ),
    strict: strictFlag,
    redis,
    verbose
  },
  (args) =>
    Effect.gen(function*() {
      const ids: Array<number> = []
      for (const id of args.id) {
        if (!/^\d+$/.test(id) || !Number.isSafeInteger(Number(id))) {
          return yield* new UsageError({ reason: `--id ${JSON.stringify(id)}: expected a whole number` })
        }
        ids.push(Number(id))
      }
      const given = ids.length + args.companyName.length
      if (args.stdin && given > 0) {
        return yield* new UsageError({ reason: "--stdin cannot be used with --id or --company-name" })
      }
      if (!args.stdin && given === 0) {
        return yield* new UsageError({ reason: "say what to look up: --id N, --company-name NAME or --stdin" })
      }
      if (args.concurrency < 1 || args.concurrency > 16) {
        return yield* new UsageError({ reason: "--concurrency must be from 1 to 16" })
      }
      const selectors = args.stdin
        ? stdinSelectors
        : Stream.fromIterable(inputOrder(yield* Argv, ids, args.companyName))
      let notFound = 0
      let failed = 0
      yield* withClient(
        args,
        Effect.gen(function*() {
          const client = yield* ErpClient.ErpClient
          const contract = contractOf(Partners.GET)
          // One partner: its value, and its text exactly as the server wrote it (numbers included).
          const fetchPartner = (by: Partners.Selector) =>
            args.strict
              ? client.get(Partners.GET, Partner.StrictPartner, { ...Partners.query(by), exact: true })
              : client.get(Partners.GET, AnyRecord, { ...Partners.query(by), exact: true })
          // One request per distinct partner: a repeated id or name (in flight or answered) shares the first one's
          // answer, and every line is still answered in its place. Keyed by the query as NotFound names it (`id=7`).
          const once = yield* Effect.cachedFunction((wanted: Wanted) => fetchPartner(wanted.by))
          const lookup = (by: Partners.Selector) =>
            once(new Wanted(by)).pipe(
              Effect.map(Either.right),
              Effect.catchIf(isLookupFailure, (error) => Effect.succeed(Either.left({ error, by })))
            )
          // In input order, whatever order the answers come in.
          yield* selectors.pipe(
            Stream.mapEffect(lookup, { concurrency: args.concurrency }),
            Stream.runForEach((result) => {
              if (Either.isRight(result)) {
                // A partner that strays from the contract is shown all the same, with a line saying how.
                const stray = contract(result.right.value, result.right.json)
                return Effect.zipRight(
                  stray === undefined ? Effect.void : note(stray),
                  Sink.writeStdout(`${result.right.json}\n`)
                )
              }
              const { by, error } = result.left
              if (error._tag === "NotFound") notFound++
              else failed++
              return note(describeLookupFailure(error, Partners.query(by).selector))
            })
          )
        })
      )
      if (notFound + failed > 0) return yield* new LookupsFailed({ notFound, failed })
    })
).pipe(
  Command.withDescription(
    "Look up partners by --id or --company-name (both repeatable, mixed) or from --stdin: one JSON object a line, " +
      "exactly as the server sent it, in the order asked. One that does not exist or fails gets a line on stderr " +
      "(partner/get: not found (id=…), partner/get id=7: the server reported an error …); the others are still " +
      "written, and the exit status is then 4 (not found only) or 1 (any other failure). Unauthorized (3) and rate " +
      "limited past the budget (5) end the batch at once."
  )
)
