/**
 * `erp <resource> get`, from a resource's declaration (`@erp-client/streams/Resource`): records by its selectors (for
 * partners, `--id` and `--company-name`), as the server sent them: one, or many in one process.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as ErpClient from "@erp-client/client/ErpClient"
import type * as ErpError from "@erp-client/core/ErpError"
import * as Resource from "@erp-client/streams/Resource"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Equal from "effect/Equal"
import * as Hash from "effect/Hash"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Sink from "../Sink.js"
import { AnyRecord, Argv, note, redis, repeatable, shownDefault, verbose, withClient } from "./common.js"
import { contractOf, recordName, strictFlag } from "./contract.js"
import { UsageError } from "./errors.js"
import { sentence } from "./help.js"
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

/** One lookup: a selector of the resource and the value asked for. */
export interface Wanted {
  readonly selector: Resource.Selector
  readonly value: string | number
}

/**
 * The lookups in the order they were given. The parser keeps each selector's flag apart; their order is read back
 * from the arguments, and if that reading does not account for every value, they come selector by selector.
 */
export const inputOrder = (
  argv: ReadonlyArray<string>,
  selectors: ReadonlyArray<Resource.Selector>,
  given: ReadonlyArray<ReadonlyArray<string | number>>
): ReadonlyArray<Wanted> => {
  const flags = selectors.map((selector) => `--${selector.flag}`)
  const kinds: Array<number> = []
  for (let i = 0; i < argv.length; i++) {
    // The parser takes an option's value from the next argument (it refuses --id=3 for a repeated option).
    const at = flags.indexOf(argv[i]!.toLowerCase())
    if (at < 0) continue
    kinds.push(at)
    i++
  }
  const inOrder = () => selectors.flatMap((selector, s) => given[s]!.map((value) => ({ selector, value })))
  if (selectors.some((_, s) => kinds.filter((kind) => kind === s).length !== given[s]!.length)) return inOrder()
  const next = selectors.map(() => 0)
  return kinds.map((s) => ({ selector: selectors[s]!, value: given[s]![next[s]!++]! }))
}

/**
 * One line of `--stdin`: a line starting with a selector's prefix is that selector's value (for partners, `name:`
 * then anything is a company name, even one made of digits); a line of only digits is a value of the first whole-number
 * selector (an id); any other line is a value of the first text selector as it is; a blank line is nothing.
 */
export const parseLine = (
  selectors: ReadonlyArray<Resource.Selector>,
  line: string,
  number: number
): Either.Either<Wanted | undefined, UsageError> => {
  if (line.trim() === "") return Either.right(undefined)
  for (const selector of selectors) {
    if (selector.prefix !== undefined && line.startsWith(selector.prefix)) {
      return Either.right({ selector, value: line.slice(selector.prefix.length) })
    }
  }
  const integer = selectors.find((selector) => selector.kind === "integer")
  const text = selectors.find((selector) => selector.kind === "text")
  if (integer !== undefined && /^\s*\d+\s*$/.test(line)) {
    const value = Number(line.trim())
    return Number.isSafeInteger(value)
      ? Either.right({ selector: integer, value })
      : Either.left(
        new UsageError({ reason: `stdin line ${number}: ${line.trim()} is too large for ${article(integer.param)}` })
      )
  }
  if (text !== undefined) return Either.right({ selector: text, value: line })
  return Either.left(
    new UsageError({ reason: `stdin line ${number}: ${JSON.stringify(line)} is not a whole number` })
  )
}

const article = (word: string) => `${/^[aeiou]/i.test(word) ? "an" : "a"} ${word}`

// A lookup as `Effect.cachedFunction` keys it: by its query as NotFound names it (`id=7`, `company_name="…"`), so a
// repeated value is one lookup, hashed by that text (an Equivalence alone would hash every key alike).
class Key implements Equal.Equal {
  readonly key: string
  constructor(readonly wanted: Wanted) {
    this.key = Resource.query(wanted.selector, wanted.value).selector
  }
  [Equal.symbol](that: Equal.Equal): boolean {
    return that instanceof Key && that.key === this.key
  }
  [Hash.symbol](): number {
    return Hash.string(this.key)
  }
}

// A selector's placeholder in the usage line: N for a whole number, else the flag's last word (`--company-name NAME`).
const placeholder = (selector: Resource.Selector) =>
  selector.kind === "integer" ? "N" : selector.flag.split("-").pop()!.toUpperCase()

/** What `<resource> get` does, in one line (its summary in `erp --help`). */
export const getSummary = (resource: Resource.Any): string =>
  `Look up ${resource.name} by ${
    resource.selectors.map((selector) => selector.flag.replace(/-/g, " ")).join(" or ")
  } (many in one run), one JSON object a line`

/** `erp <resource> get`, for a resource with a get endpoint and selectors. */
export const getCommand = (resource: Resource.Any, endpoint: string) => {
  const selectors = resource.selectors
  const flagsText = selectors.map((selector) => `--${selector.flag}`).join(" or ")
  const integer = selectors.find((selector) => selector.kind === "integer")
  const text = selectors.find((selector) => selector.kind === "text")
  const words = (selector: Resource.Selector) => selector.flag.replace(/-/g, " ")
  const stdinRule = [
    [
      integer === undefined ? undefined : `a line of only digits is ${article(words(integer))}`,
      text === undefined ? undefined : `any other line ${article(words(text))} as it is`
    ].filter((part) => part !== undefined).join(", "),
    ...selectors.flatMap((selector) =>
      selector.prefix === undefined ? [] : [
        `${selector.prefix}TEXT is always the ${words(selector)} TEXT` +
        (integer === undefined ? "" : ` (for ${article(words(selector))} made of digits)`)
      ]
    )
  ].join("; ")
  const stdinSelectors = Stdin.lines.pipe(
    Stream.zipWithIndex,
    Stream.mapEffect(([line, index]) => parseLine(selectors, line, index + 1)),
    Stream.filter((wanted): wanted is Wanted => wanted !== undefined)
  )
  const name = recordName(resource)
  return Command.make(
    "get",
    {
      // Text, checked here: @effect/cli 0.77 refuses a repeated integer option given once ("'3' is not a integer").
      values: Options.all(
        Object.fromEntries(selectors.map((selector) => [
          selector.flag,
          Options.text(selector.flag).pipe(
            Options.withPseudoName(placeholder(selector)),
            Options.withDescription(sentence(selector.description)),
            repeatable
          )
        ]))
      ),
      stdin: Options.boolean("stdin").pipe(
        Options.withDescription(
          `Read the lookups from stdin, one a line: ${stdinRule}. Blank lines are skipped.`
        )
      ),
      concurrency: Options.integer("concurrency").pipe(
        Options.withPseudoName("N"),
        Options.withDescription(
          "Requests in flight at once, 1 to 16; the output keeps the input's order. A lookup waiting to retry holds " +
            "no place: the others go on."
        ),
        shownDefault(4)
      ),
      strict: strictFlag(resource),
      redis,
      verbose
    },
    (args) =>
      Effect.gen(function*() {
        const given: Array<ReadonlyArray<string | number>> = []
        for (const selector of selectors) {
          const values = args.values[selector.flag] ?? []
          if (selector.kind === "integer") {
            const numbers: Array<number> = []
            for (const value of values) {
              if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) {
                return yield* new UsageError({
                  reason: `--${selector.flag} ${JSON.stringify(value)}: expected a whole number`
                })
              }
              numbers.push(Number(value))
            }
            given.push(numbers)
          } else given.push(values)
        }
        const count = given.reduce((n, values) => n + values.length, 0)
        if (args.stdin && count > 0) {
          return yield* new UsageError({ reason: `--stdin cannot be used with ${flagsText}` })
        }
        if (!args.stdin && count === 0) {
          const each = selectors.map((selector) => `--${selector.flag} ${placeholder(selector)}`)
          return yield* new UsageError({ reason: `say what to look up: ${each.join(", ")} or --stdin` })
        }
        if (args.concurrency < 1 || args.concurrency > 16) {
          return yield* new UsageError({ reason: "--concurrency must be from 1 to 16" })
        }
        const listed = args.stdin ? undefined : inputOrder(yield* Argv, selectors, given)
        const strict = args.strict && resource.strict !== undefined
        let notFound = 0
        let failed = 0
        yield* withClient(
          args,
          Effect.gen(function*() {
            const client = yield* ErpClient.ErpClient
            const contract = contractOf(resource, endpoint)
            // One record: its value, and its text exactly as the server wrote it (numbers included). Any object: a
            // record is written as the server wrote it and checked against the contract on the side (an id past
            // 2^53 - 1 too: written as sent, reported). With --strict the client checks it and fails.
            const fetchOne = (key: Key) => {
              const query = Resource.query(key.wanted.selector, key.wanted.value)
              return strict
                ? client.get(endpoint, resource.strict!, { ...query, exact: true })
                : client.get(endpoint, AnyRecord, { ...query, exact: true })
            }
            const write = (
              result: Either.Either<
                ErpClient.Exact<unknown>,
                { readonly error: LookupFailure; readonly wanted: Wanted }
              >
            ) => {
              if (Either.isRight(result)) {
                // A record that strays from the contract is shown all the same, with a line saying how.
                const stray = contract(result.right.value, result.right.json)
                return Effect.zipRight(
                  stray === undefined ? Effect.void : note(stray),
                  Sink.writeStdoutData(`${result.right.json}\n`)
                )
              }
              const { error, wanted } = result.left
              if (error._tag === "NotFound") notFound++
              else failed++
              return note(describeLookupFailure(error, Resource.query(wanted.selector, wanted.value).selector))
            }
            const settled = (wanted: Wanted, effect: Effect.Effect<ErpClient.Exact<unknown>, ErpError.ErpError>) =>
              effect.pipe(
                Effect.map(Either.right),
                Effect.catchIf(isLookupFailure, (error) => Effect.succeed(Either.left({ error, wanted })))
              )
            // One lookup (the usual `get --id N`) needs neither the sharing nor the stream below, whose machinery
            // costs a short command's start more than its request (`pnpm bench startup`).
            if (listed !== undefined && listed.length === 1) {
              return yield* Effect.flatMap(settled(listed[0]!, fetchOne(new Key(listed[0]!))), write)
            }
            // One request per distinct record: a repeated value (in flight or answered) shares the first one's
            // answer, and every line is still answered in its place. Keyed by the query as NotFound names it (`id=7`).
            const once = yield* Effect.cachedFunction(fetchOne)
            // --concurrency bounds the requests in flight, not the lookups under way: one whose retries wait holds no
            // place, and the others go on (up to Resource.lookahead ahead of it), so failing lookups are retried side
            // by side instead of one retry budget after another.
            const inFlight = ErpClient.makeInFlight(args.concurrency)
            const lookup = (wanted: Wanted) =>
              settled(wanted, once(new Key(wanted))).pipe(Effect.locally(ErpClient.currentInFlight, inFlight))
            // In input order, whatever order the answers come in.
            yield* (listed === undefined ? stdinSelectors : Stream.fromIterable(listed)).pipe(
              Stream.mapEffect(lookup, { concurrency: Resource.lookahead }),
              Stream.runForEach(write)
            )
          })
        )
        if (notFound + failed > 0) return yield* new LookupsFailed({ notFound, failed })
      })
  ).pipe(
    Command.withDescription(
      `Look up ${resource.name} by ${selectors.map((selector) => `--${selector.flag}`).join(" or ")} ` +
        `(${
          selectors.length === 1
            ? "repeatable"
            : selectors.length === 2
            ? "both repeatable, mixed"
            : "all repeatable, mixed"
        }) or from --stdin: one JSON object a line, exactly as the server sent it, in the order asked. One that does ` +
        `not exist or fails gets a line on stderr (${endpoint}: not found (${selectors[0]!.param}=…), ${endpoint} ${
          Resource.query(selectors[0]!, selectors[0]!.kind === "integer" ? 7 : "x").selector
        }: the server reported an error …); the others are still written, and the exit status is then 4 (not ` +
        `found only) or 1 (any other failure). Unauthorized (3) and rate limited past the budget (5) end the batch ` +
        `at once. A ${name} is looked up once however often it is asked.`
    )
  )
}
