/**
 * The tools of `erp mcp`: what each takes (a JSON Schema an assistant reads, and the schema its arguments are checked
 * with), what it says it does and costs, what it answers (an `outputSchema` where the shape is known), and what it
 * does, on the command line's client. A kind of record declared for the command line (`Cli.resources`) gets
 * `<name>_get`, `<name>_list` and `<name>_count`; any endpoint is reached with `api_get`, `api_list`, `api_count`, and
 * `api_post` when writes are allowed; `api_endpoints` says which endpoints there are to call.
 *
 * Every answer that holds records holds them as the server wrote them (`exact: true`: `Exact.json`, `Page.json`), put
 * together as text here: a record's numbers are never parsed and written again (`12345678901234567890` stays so).
 * The same holds for arguments: a whole number a JSON number cannot carry exactly is refused, and one given as a
 * string of digits is sent as written.
 */
import * as ErpClient from "@erp-client/client/ErpClient"
import * as JsonText from "@erp-client/core/JsonText"
import * as ListQuery from "@erp-client/core/ListQuery"
import * as ListCursor from "@erp-client/kernel/ListCursor"
import * as ListEndpoint from "@erp-client/streams/ListEndpoint"
import * as Resource from "@erp-client/streams/Resource"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Crypto from "node:crypto"
import { AnyRecord } from "./common.js"
import { contractOf, recordName } from "./contract.js"
import type * as Protocol from "./mcpProtocol.js"

/** A JSON Schema, as written into `tools/list`. */
export type JsonSchema = Protocol.JsonSchema

/**
 * Where a call that makes more than one request has got to: told after each page (records so far, and the total only
 * when it is truly known). The server decides whether and how often the host hears of it.
 */
export type Progress = Protocol.Progress

/** A `Progress` that tells no one. */
export const noProgress: Progress = { report: () => Effect.void }

/** What a tool answers: text blocks, the first the data (JSON), the others notes for the assistant. */
export interface Answer {
  readonly texts: ReadonlyArray<string>
  /**
   * The JSON text of the answer's `structuredContent` (numbers as the server wrote them), when the tool has an
   * `outputSchema`: the same text as `texts[0]`.
   */
  readonly structured?: string
}

/** A tool's call that cannot be made as asked (its arguments), said so that the assistant can correct it. */
export class ToolInputError extends Schema.TaggedError<ToolInputError>()("InvalidArguments", {
  reason: Schema.String
}) {
  override get message(): string {
    return this.reason
  }
}

/**
 * A list continued by a cursor changed since the cursor was given by more than the cursor can follow: going on could
 * skip records, so nothing is returned (see `Cursor`).
 */
export class ListChanged extends Schema.TaggedError<ListChanged>()("ListChanged", {
  reason: Schema.String
}) {
  override get message(): string {
    return this.reason
  }
}

/** A failure a tool reports to the assistant: the client's typed errors, or its arguments. */
export interface ToolFailure {
  readonly _tag: string
  readonly message: string
}

export interface Tool {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly inputSchema: JsonSchema
  /** The shape of `Answer.structured`, for the tools whose answer's shape is known (declared resources'). */
  readonly outputSchema?: JsonSchema
  /** The toolset it belongs to: a declared resource's name (`partners`), `api`, or `writes` (`api_post`). */
  readonly toolset: string
  /** Changes the ERP: offered only with `--allow-writes`, and annotated as destructive. */
  readonly write: boolean
  readonly call: (args: unknown, progress: Progress) => Effect.Effect<Answer, ToolFailure>
}

/** What the tools share: the client, what was seen of the endpoints, and how cursors are signed. */
export interface Context {
  readonly client: ErpClient.Service
  /** Notes the fields of the records read from `endpoint` (and that `endpoint` answered). */
  readonly sawFields: (endpoint: string, records: ReadonlyArray<unknown>) => void
  /** The endpoints that answered so far, each with the fields of the records read from it (`makeFieldsSeen`). */
  readonly fieldsSeen: () => ReadonlyMap<string, ReadonlySet<string>>
  /** The key cursors are signed with: random, made once per process (`makeCursorSecret`), never shown. */
  readonly cursorSecret: Uint8Array
  /** The largest `limit` of a list tool, and its default. */
  readonly maxLimit: number
  readonly defaultLimit: number
  /** Check the records of a list or count against its conditions (`ListEndpoint.ListOptions.checkConditions`). */
  readonly checkConditions: boolean
}

/** The endpoints `makeFieldsSeen` keeps at most, and the fields of each. */
const SEEN_ENDPOINTS = 200
const SEEN_FIELDS = 500

/** The fields of the records the tools read, by endpoint: `Context.sawFields` and `Context.fieldsSeen`. */
export const makeFieldsSeen = (): Pick<Context, "sawFields" | "fieldsSeen"> => {
  const seen = new Map<string, Set<string>>()
  return {
    sawFields: (endpoint, records) => {
      let fields = seen.get(endpoint)
      if (fields === undefined) {
        // Bounded: endpoints an assistant makes up, or records of thousands of fields, cannot grow it without end.
        if (seen.size >= SEEN_ENDPOINTS) return
        seen.set(endpoint, fields = new Set())
      }
      for (const record of records) {
        if (typeof record === "object" && record !== null && !Array.isArray(record)) {
          for (const field of Object.keys(record)) if (fields.size < SEEN_FIELDS) fields.add(field)
        }
      }
    },
    fieldsSeen: () => seen
  }
}

/** A fresh key to sign cursors with, for one process: cursors of another process (or run) are refused. */
export const makeCursorSecret = (): Uint8Array => Crypto.randomBytes(32)

// One argument: its JSON Schema, and the schema its value is checked with.
interface Param {
  readonly json: JsonSchema
  readonly schema: Schema.Schema.AnyNoContext
}

const param = (schema: Schema.Schema.AnyNoContext, json: JsonSchema): Param => ({ schema, json })

// A field of the arguments' struct: an argument's schema, or it made optional; neither needs a service.
type Field = Schema.Schema.AnyNoContext | Schema.optional<Schema.Schema.AnyNoContext>

/**
 * The first whole number in `value` that a JSON number cannot carry exactly (past 2^53 - 1: JSON.parse already made it
 * the nearest double, a neighbour's value), with its path (`where.id`), walked without recursion (arguments nested
 * however deep cannot overflow the stack).
 */
const inexactNumber = (value: unknown): { readonly path: string; readonly value: number } | undefined => {
  const stack: Array<readonly [unknown, string]> = [[value, ""]]
  while (stack.length > 0) {
    const [item, path] = stack.pop()!
    if (typeof item === "number") {
      if (Number.isInteger(item) && !Number.isSafeInteger(item)) return { path, value: item }
    } else if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) stack.push([item[i], `${path}[${i}]`])
    } else if (typeof item === "object" && item !== null) {
      const entries = Object.entries(item)
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, v] = entries[i]!
        stack.push([v, path === "" ? key : `${path}.${key}`])
      }
    }
  }
  return undefined
}

const inexactRefusal = (found: { readonly path: string; readonly value: number }) => {
  const read = `it arrived as ${BigInt(found.value)}, a neighbour's value`
  return new ToolInputError({
    reason: found.path === "body" || found.path.startsWith("body.") || found.path.startsWith("body[")
      ? `${found.path}: a whole number past 2^53 - 1 (${Number.MAX_SAFE_INTEGER}) cannot be passed as a JSON number ` +
        `(${read}): give the body as JSON text in json instead, where its digits are sent as written`
      : `${found.path}: a whole number past 2^53 - 1 (${Number.MAX_SAFE_INTEGER}) cannot be passed as a JSON number ` +
        `(${read}): pass it as a string of digits, e.g. "12345678901234571890"`
  })
}

// The arguments of a tool: a JSON Schema object (no other properties), and their check, which names every argument
// that is wrong or unknown (a misspelt `customer` is said, not ignored), after refusing any number the JSON could not
// carry exactly.
const argumentsOf = (params: Readonly<Record<string, Param>>, required: ReadonlyArray<string> = []) => {
  const fields: Record<string, Field> = {}
  const properties: Record<string, JsonSchema> = {}
  for (const [name, { json, schema }] of Object.entries(params)) {
    fields[name] = required.includes(name) ? schema : Schema.optional(schema)
    properties[name] = json
  }
  const decode = Schema.decodeUnknownEither(Schema.Struct(fields), { onExcessProperty: "error", errors: "all" })
  return {
    json: {
      type: "object",
      properties,
      ...(required.length > 0 ? { required } : {}),
      additionalProperties: false
    } as JsonSchema,
    decode: (args: unknown): Either.Either<Record<string, unknown>, ToolInputError> => {
      const inexact = inexactNumber(args)
      if (inexact !== undefined) return Either.left(inexactRefusal(inexact))
      return Either.mapLeft(decode(args ?? {}), (error) =>
        new ToolInputError({
          reason: ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) =>
            `${issue.path.length === 0 ? "arguments" : issue.path.join(".")}: ${issue.message}`
          ).join("; ")
        }))
    }
  }
}

const Digits = Schema.String.pipe(Schema.pattern(/^[0-9]+$/))

// A whole number, or a string of digits (an id past 2^53 - 1, which a JSON number cannot carry exactly).
const wholeNumber = (description: string) =>
  param(Schema.Union(Schema.NonNegativeInt, Digits), {
    anyOf: [{ type: "integer", minimum: 0 }, { type: "string", pattern: "^[0-9]+$" }],
    description
  })

const text = (description: string) => param(Schema.String, { type: "string", description })

const ConditionValue = Schema.Union(Schema.String, Schema.Number, Schema.Boolean)

const whereParam = (endpoint: string) =>
  param(Schema.Record({ key: Schema.String, value: ConditionValue }), {
    type: "object",
    additionalProperties: { type: ["string", "number", "boolean"] },
    description: `Only records whose FIELD equals VALUE, as {"FIELD": VALUE} (sent as list_condition[FIELD]=VALUE to ` +
      `${endpoint}; true is sent as 1, false as 0). FIELD: a field of the records (api_endpoints and erp://fields ` +
      "list the fields declared and seen; one that is neither is refused once the fields are known). Whole numbers " +
      "past 2^53 - 1 go as strings of digits (\"12345678901234571890\"), sent as written. A server that ignores a " +
      "condition is an error (ConditionIgnored), not the whole list."
  })

const paramsParam = param(Schema.Record({ key: Schema.String, value: Schema.Union(Schema.String, Schema.Number) }), {
  type: "object",
  additionalProperties: { type: ["string", "number"] },
  description:
    "Query parameters, as {\"NAME\": VALUE}, sent URL-encoded (the values may hold anything). Whole numbers past " +
    "2^53 - 1 go as strings of digits (\"12345678901234571890\"), sent as written."
})

const endpointParam = param(Schema.String, {
  type: "string",
  description: "The endpoint's path after the ERP's base address, e.g. partner/get or invoice/list: segments of " +
    "letters, digits, _ and - joined by /. api_endpoints lists the endpoints known."
})

const limitParam = (context: Context) =>
  param(Schema.Int.pipe(Schema.between(1, context.maxLimit)), {
    type: "integer",
    minimum: 1,
    maximum: context.maxLimit,
    default: context.defaultLimit,
    description: `The most records to return (default ${context.defaultLimit}, at most ${context.maxLimit}). When ` +
      "more match, the answer says so and gives a cursor to go on with."
  })

const cursorParam = param(Schema.String, {
  type: "string",
  description: "Go on with the list where an earlier answer of this server left off: its \"cursor\", as given " +
    "(opaque). The records follow the last one that answer returned, in order, none twice. The list's where, " +
    "filters and params are the cursor's: give none, or the same ones; limit may differ."
})

// The client's rule for an endpoint's path, checked before anything is sent.
const endpointOf = (value: unknown) =>
  Either.mapLeft(ErpClient.validateEndpoint(value as string), (error) => new ToolInputError({ reason: error.message }))

// Values as written: a string of digits stays those digits (numbers reaching here are safe integers or decimals).
const paramsOf = (value: unknown): ErpClient.Params =>
  Object.entries((value ?? {}) as Record<string, string | number>).map(([name, v]) => [name, String(v)] as const)

const whereOf = (endpoint: string, value: unknown): Either.Either<ListQuery.Conditions, ToolInputError> => {
  const where = (value ?? {}) as ListQuery.Conditions
  return Either.mapBoth(ListQuery.validateConditions(endpoint, where), {
    onLeft: (error) => new ToolInputError({ reason: `where: ${error.reason}` }),
    onRight: () => where
  })
}

/**
 * The fields a `where` may name on `endpoint`: those the contract declares for it and those seen in the records read
 * from it (or from `alsoSeenAt`, the same kind of record's get endpoint); `undefined` when none is known yet (nothing
 * declared, nothing read), when the condition is sent as it is and the check of the records
 * (`ConditionIgnored`) is what catches a server that ignores it. Without that check (`--no-check-where`), conditions
 * are taken as given, fields the records do not carry included (a server may filter on them): `undefined` too.
 */
const knownFields = (
  context: Context,
  endpoint: string,
  declared: ReadonlyArray<string>,
  alsoSeenAt: ReadonlyArray<string> = []
): ReadonlyArray<string> | undefined => {
  if (!context.checkConditions) return undefined
  const seen = context.fieldsSeen()
  const fields = new Set(declared)
  for (const at of [endpoint, ...alsoSeenAt]) for (const field of seen.get(at) ?? []) fields.add(field)
  return fields.size === 0 ? undefined : [...fields]
}

// A where that names a field the records are known not to have would answer nothing (or, from a server that ignores
// it, everything): refused, with the fields that exist.
const checkWhereFields = (
  endpoint: string,
  where: ListQuery.Conditions,
  known: ReadonlyArray<string> | undefined,
  declaredToo: boolean
): Either.Either<ListQuery.Conditions, ToolInputError> => {
  if (known === undefined) return Either.right(where)
  const unknown = Object.keys(where).filter((field) => !known.includes(field))
  if (unknown.length === 0) return Either.right(where)
  return Either.left(
    new ToolInputError({
      reason: `where: ${unknown.map((field) => JSON.stringify(field)).join(", ")} ${
        unknown.length === 1 ? "is not a field" : "are not fields"
      } of the records of ${endpoint}: the fields that exist are ${known.join(", ")} (${
        declaredToo
          ? "declared by the contract, and seen in the records read so far"
          : "seen in the records read so far"
      }; api_endpoints lists them)`
    })
  )
}

// Conditions as an answer repeats them: the values as sent.
const whereText = (where: ListQuery.Conditions) =>
  JSON.stringify(Object.fromEntries(Object.entries(where).map(([field, v]) => [field, ListQuery.conditionValue(v)])))

// --- Cursors -------------------------------------------------------------------------------------------------------

/**
 * A cursor: where a list answer left off, for the next call to go on from there, by the kernel's rule
 * (`ListCursor`: drift-safe paging's, across calls that may be minutes apart). It carries the list it continues
 * (endpoint, where with the filters folded in, params, all as given) and the position: `o`, just past the last record
 * returned, and `k`, the keys of the last ones returned. Signed with HMAC-SHA256 under the process's `cursorSecret`:
 * a cursor changed in any way, made up, or from another process is refused.
 */
interface Cursor {
  readonly e: string
  readonly w: ListQuery.Conditions
  readonly p: ErpClient.Params
  readonly o: number
  readonly k: ReadonlyArray<string>
}

const positionOf = (cursor: Cursor | undefined): ListCursor.Position | undefined =>
  cursor === undefined ? undefined : { offset: cursor.o, keys: cursor.k }

const CursorSchema = Schema.Struct({
  v: Schema.Literal(1),
  e: Schema.String,
  w: Schema.Record({ key: Schema.String, value: ConditionValue }),
  p: Schema.Array(Schema.Tuple(Schema.String, Schema.String)),
  o: Schema.NonNegativeInt,
  k: Schema.Array(Schema.String)
})
const decodeCursor = Schema.decodeUnknownEither(Schema.parseJson(CursorSchema))

const TAMPERED = "cursor: the cursor is not one this server gave, or was changed: call again without cursor (a " +
  "cursor holds only while this server runs)"

const sign = (secret: Uint8Array, payload: string) =>
  Crypto.createHmac("sha256", secret).update(payload).digest("base64url")

const encodeCursor = (secret: Uint8Array, cursor: Cursor): string => {
  const payload = Buffer.from(JSON.stringify({ v: 1, ...cursor })).toString("base64url")
  return `${payload}.${sign(secret, payload)}`
}

const readCursor = (secret: Uint8Array, text: string): Either.Either<Cursor, ToolInputError> => {
  const tampered = Either.left(new ToolInputError({ reason: TAMPERED }))
  const dot = text.indexOf(".")
  if (dot < 0) return tampered
  const payload = text.slice(0, dot)
  // Compared as text: base64url decoding ignores what it cannot read, and a changed character must not pass.
  const given = Buffer.from(text.slice(dot + 1))
  const expected = Buffer.from(sign(secret, payload))
  if (given.length !== expected.length || !Crypto.timingSafeEqual(given, expected)) return tampered
  const decoded = decodeCursor(Buffer.from(payload, "base64url").toString("utf8"))
  return Either.isLeft(decoded) ? tampered : Either.right(decoded.right)
}

// Conditions as sent, in one order: two wheres that send the same list are equal.
const sentWhere = (where: ListQuery.Conditions) =>
  JSON.stringify(
    Object.entries(where).map(([field, v]) => [field, ListQuery.conditionValue(v)]).sort(([a], [b]) =>
      a! < b! ? -1 : a! > b! ? 1 : 0
    )
  )

/**
 * The list a call reads: the cursor's, when one is given (and then where, filters and params given too must be its
 * own), or the one given.
 */
const continued = (
  context: Context,
  cursorText: unknown,
  asked: {
    readonly endpoint: string
    readonly where: ListQuery.Conditions | undefined
    readonly params: ErpClient.Params | undefined
  }
): Either.Either<
  { readonly where: ListQuery.Conditions; readonly params: ErpClient.Params; readonly after: Cursor | undefined },
  ToolInputError
> => {
  if (cursorText === undefined) {
    return Either.right({ where: asked.where ?? {}, params: asked.params ?? [], after: undefined })
  }
  return Either.flatMap(readCursor(context.cursorSecret, cursorText as string), (after) => {
    if (after.e !== asked.endpoint) {
      return Either.left(
        new ToolInputError({
          reason: `cursor: the cursor goes on with ${after.e}, not ${asked.endpoint}: call ${after.e} with it, or ` +
            `call again without cursor`
        })
      )
    }
    const sameWhere = asked.where === undefined || sentWhere(asked.where) === sentWhere(after.w)
    const sameParams = asked.params === undefined || JSON.stringify(asked.params) === JSON.stringify(after.p)
    if (!sameWhere || !sameParams) {
      return Either.left(
        new ToolInputError({
          reason: `cursor: the cursor goes on with the list of ${after.e} where ${whereText(after.w)}` +
            (after.p.length === 0 ? "" : ` with params ${JSON.stringify(Object.fromEntries(after.p))}`) +
            `, not the one asked: give the cursor with no where, filters or params (or the same ones), or call ` +
            "again without cursor for the other list"
        })
      )
    }
    return Either.right({ where: after.w, params: after.p, after })
  })
}

// Nothing matched a where whose fields could not be checked: a misspelt field answers nothing too.
const uncheckedNote = (endpoint: string, where: ListQuery.Conditions) =>
  `No record matched. ${endpoint} had not been read before, so the fields of where (${
    Object.keys(where).join(", ")
  }) could not be checked: if one is misspelt, nothing matches it. Call without where (limit 1) to see the fields ` +
  "of its records; from then on a where naming another is refused."

/**
 * Up to `limit` records of a list, as the server wrote them, paged by the client: pages of `limit + 1` (plus the
 * margin a cursor looks back over; the server may serve fewer: they are followed), one at a time, and the one record
 * past `limit` tells whether more match; then the answer gives a cursor to go on. Reading stops there: pages still in
 * flight are cancelled. Progress is told after each page.
 */
const listAnswer = (
  context: Context,
  endpoint: string,
  options: {
    readonly where: ListQuery.Conditions
    readonly params: ErpClient.Params
    readonly after: Cursor | undefined
    readonly idField: string
    readonly limit: number
    readonly what: string
    readonly countTool: string
    /** The where names fields not known to exist (the endpoint was never read): an empty answer says so. */
    readonly unchecked?: boolean | undefined
  },
  progress: Progress
): Effect.Effect<Answer, ToolFailure> =>
  Effect.suspend(() => {
    const { after, limit, what } = options
    const position = positionOf(after)
    const start = ListCursor.startOf(position)
    const reader = ListCursor.makeReader({ limit, idField: options.idField, start, after: position })
    return ListEndpoint.pages(endpoint, AnyRecord, {
      where: options.where,
      checkConditions: context.checkConditions,
      params: options.params,
      startOffset: start,
      pageSize: Math.min(ListCursor.firstPage(position, limit), 10_000),
      concurrency: 1,
      exact: true
    }).pipe(
      Stream.tap((page) =>
        Effect.suspend(() => {
          context.sawFields(endpoint, page.raw)
          reader.feed(page)
          return progress.report(reader.kept(), undefined, `${reader.kept()} ${what} read from ${endpoint}`)
        })
      ),
      Stream.takeUntil(() => reader.done()),
      Stream.runDrain,
      Effect.provideService(ErpClient.ErpClient, context.client),
      Effect.flatMap(() => {
        const result = reader.finish()
        if (result === undefined) {
          return Effect.fail(
            new ListChanged({
              reason: `${endpoint} changed since this cursor was given: none of the last ${what} returned is within ` +
                `${ListCursor.MARGIN} records of where the cursor left off, before or after (more than ` +
                `${ListCursor.MARGIN - 1} ${what} were removed or added before it, or the last ones returned were ` +
                `removed). Going on could skip ${what}, so nothing is returned: call again without cursor to read ` +
                "the list from its start."
            })
          )
        }
        const next = result.more ? result.next() : undefined
        const cursor = next === undefined ? undefined : encodeCursor(context.cursorSecret, {
          e: endpoint,
          w: options.where,
          p: options.params,
          o: next.offset,
          k: next.keys
        })
        const data = `{"endpoint":${JSON.stringify(endpoint)},"where":${whereText(options.where)},"returned":` +
          `${result.records.length},"more":${result.more},` +
          `${cursor === undefined ? "" : `"cursor":${JSON.stringify(cursor)},`}"records":[${
            result.records.map((record) => record.text).join(",")
          }]}`
        const notes: Array<string> = []
        if (result.shift === undefined) {
          notes.push(
            `The list changed since the cursor was given: the last ${what} it went on from was removed since. These ` +
              `${what} follow the last one still there: none that was in the list then is skipped or repeated.`
          )
        } else if (result.shift !== 0) {
          notes.push(
            `The list changed since the cursor was given: the last ${what} returned is now ${Math.abs(result.shift)} ` +
              `place${Math.abs(result.shift) === 1 ? "" : "s"} ${result.shift > 0 ? "later" : "earlier"} (${what} ` +
              `added or removed before it). These ${what} follow it: none that was in the list then is skipped or ` +
              "repeated."
          )
        }
        if (options.unchecked === true && result.records.length === 0) {
          notes.push(uncheckedNote(endpoint, options.where))
        }
        if (result.repeated > 0) {
          notes.push(
            `${result.repeated} record${result.repeated === 1 ? "" : "s"} with the ${options.idField} of one the ` +
              "cursor's answer returned (read again as the list moved, or a record repeating another's id) " +
              `${result.repeated === 1 ? "was" : "were"} left out.`
          )
        }
        if (result.more) {
          notes.push(
            `More ${what} match than the ${limit} returned (limit ${limit}): to go on, call again with ` +
              `"cursor" from this answer (the records after these, in order); or narrow the list with where, ` +
              `raise limit (at most ${context.maxLimit}), or count them with ${options.countTool}.`
          )
        }
        return Effect.succeed({ texts: [data, ...notes], structured: data })
      })
    )
  })

/**
 * Every record of a list counted, none returned: the client pages through it at the server's pace, telling progress
 * after each page.
 */
const countAnswer = (
  context: Context,
  endpoint: string,
  options: {
    readonly where: ListQuery.Conditions
    readonly params: ErpClient.Params
    readonly what: string
    readonly unchecked?: boolean | undefined
  },
  progress: Progress
): Effect.Effect<Answer, ToolFailure> =>
  ListEndpoint.pages(endpoint, AnyRecord, {
    where: options.where,
    checkConditions: context.checkConditions,
    params: options.params
  }).pipe(
    Stream.runFoldEffect({ count: 0, pages: 0 }, (sum, page) =>
      Effect.suspend(() => {
        if (sum.pages === 0) context.sawFields(endpoint, page.raw)
        const next = { count: sum.count + page.raw.length, pages: sum.pages + 1 }
        return Effect.as(
          progress.report(
            next.count,
            undefined,
            `${next.count} ${options.what} counted in ${endpoint} (${next.pages} page${next.pages === 1 ? "" : "s"})`
          ),
          next
        )
      })),
    Effect.map(({ count, pages }): Answer => {
      const data = `{"endpoint":${JSON.stringify(endpoint)},"where":${whereText(options.where)},"count":${count},` +
        `"pages":${pages}}`
      return {
        texts: options.unchecked === true && count === 0 ? [data, uncheckedNote(endpoint, options.where)] : [data],
        structured: data
      }
    }),
    Effect.provideService(ErpClient.ErpClient, context.client)
  )

// What a list of N records costs, for the descriptions.
const COSTS = "The rate limit counts requests, not records: the client asks for pages of 1,000 records (fewer when " +
  "the server serves fewer), one request each, plus one or a few at the end of the list, and every request waits " +
  "for its turn (calls made at once are answered at the server's pace, never refused for it)."

const selectorWords = (selector: Resource.Selector) => selector.flag.replace(/-/g, " ")

/** A declared filter's argument: its flag, `_` for `-` (`customers`). */
export const filterArgument = (filter: Resource.Filter): string => filter.flag.replace(/-/g, "_")

/** A resource's filters in a sentence: `Filter: "customers": true for customers only (is_customer=1).` */
export const filtersSentence = (resource: Resource.Any): string => {
  if (resource.filters.length === 0) return ""
  const each = resource.filters.map((filter) => {
    const said = filter.description.replace(/\.$/, "").replace(/^./, (c) => c.toLowerCase())
    return `"${filterArgument(filter)}": true for ${said}`
  })
  return `Filter${each.length === 1 ? "" : "s"}: ${each.join("; ")}.`
}

// The fields a resource declares: its contract's, and those its filters name.
const declaredFields = (resource: Resource.Any): ReadonlyArray<string> => [
  ...new Set([...resource.fields, ...resource.filters.flatMap((filter) => Object.keys(filter.where))])
]

/**
 * A record of `resource` as an `outputSchema` says it: an object, its declared fields named and described but not
 * typed, any other field allowed. Real records stray from the contract (null, "", a number as a string, a field
 * absent), and a host checks `structuredContent` against the schema: it must accept every record the server may send.
 */
export const recordSchema = (resource: Resource.Any): JsonSchema => {
  const one = recordName(resource)
  const describe = (field: string) => {
    const selector = resource.selectors.find((s) => s.param === field)
    const filters = resource.filters.filter((filter) => Object.keys(filter.where).includes(field))
    return [
      selector?.description ?? `The ${one}'s ${field.replace(/_/g, " ")}.`,
      ...filters.map((filter) =>
        `${JSON.stringify(filter.where[field])} for the "${filterArgument(filter)}" filter (${
          filter.description.replace(/\.$/, "")
        }).`
      ),
      "As the server wrote it: may be null, empty, of another form, or absent."
    ].join(" ")
  }
  return {
    type: "object",
    description: `A ${one} exactly as the server wrote it: the fields the contract declares, and any other the ` +
      "server sends.",
    properties: Object.fromEntries(resource.fields.map((field) => [field, { description: describe(field) }])),
    additionalProperties: true
  }
}

const whereOutput = {
  type: "object",
  description: "The conditions the list was read with, the values as sent.",
  additionalProperties: { type: "string" }
}

/** The `outputSchema` of `<name>_list`. */
export const listSchema = (resource: Resource.Any): JsonSchema => ({
  type: "object",
  properties: {
    endpoint: { type: "string", description: "The list endpoint read." },
    where: whereOutput,
    returned: { type: "integer", minimum: 0, description: "How many records are in records." },
    more: { type: "boolean", description: "Whether more records match than were returned." },
    cursor: {
      type: "string",
      description: "When more is true: give it back as cursor to get the records after these."
    },
    records: { type: "array", items: recordSchema(resource) }
  },
  required: ["endpoint", "where", "returned", "more", "records"],
  additionalProperties: false
})

/** The `outputSchema` of `<name>_count`. */
export const countSchema: JsonSchema = {
  type: "object",
  properties: {
    endpoint: { type: "string", description: "The list endpoint counted." },
    where: whereOutput,
    count: { type: "integer", minimum: 0, description: "How many records match." },
    pages: { type: "integer", minimum: 0, description: "The requests for pages it took." }
  },
  required: ["endpoint", "where", "count", "pages"],
  additionalProperties: false
}

/** `<name>_get`, `<name>_list` and `<name>_count` for a declared kind of record. */
export const resourceTools = (context: Context, resource: Resource.Any): ReadonlyArray<Tool> => {
  const one = recordName(resource)
  const tools: Array<Tool> = []
  const get = resource.get
  if (get !== undefined && resource.selectors.length > 0) {
    const selectors = resource.selectors
    const args = argumentsOf(
      Object.fromEntries(selectors.map((selector) => [
        selector.param,
        selector.kind === "integer"
          ? wholeNumber(
            `${selector.description} A whole number; past 2^53 - 1, a string of digits ("12345678901234571890").`
          )
          : text(`${selector.description}`)
      ]))
    )
    const contract = contractOf(resource, get)
    tools.push({
      name: `${resource.name}_get`,
      title: `Look up a ${one}`,
      description: `One ${one} by ${selectors.map(selectorWords).join(" or by ")} (give exactly one of ` +
        `${selectors.map((selector) => selector.param).join(", ")}), from ${get}: the record exactly as the server ` +
        "wrote it, every field included (numbers as written: quote them as given). A record that strays from the " +
        `contract is returned all the same, with a note saying how. One that does not exist is an error saying ` +
        `NotFound, not an empty answer. One request.`,
      inputSchema: args.json,
      outputSchema: recordSchema(resource),
      toolset: resource.name,
      write: false,
      call: (input) =>
        Effect.gen(function*() {
          const given = yield* args.decode(input)
          const asked = selectors.filter((selector) => given[selector.param] !== undefined)
          if (asked.length !== 1) {
            return yield* new ToolInputError({
              reason: `give exactly one of ${selectors.map((selector) => selector.param).join(", ")}`
            })
          }
          const selector = asked[0]!
          const raw = given[selector.param] as string | number
          // A string of digits is an id as the server knows it, sent as written (past 2^53 - 1 too); within
          // 2^53 - 1, a number like any other.
          const exactDigits = typeof raw === "string" && selector.kind === "integer" &&
            !Number.isSafeInteger(Number(raw))
          const query = exactDigits
            ? { params: [[selector.param, raw]] as const, selector: `${selector.param}=${raw}` }
            : Resource.query(selector, typeof raw === "string" && selector.kind === "integer" ? Number(raw) : raw)
          const found = yield* context.client.get(get, AnyRecord, { ...query, exact: true })
          context.sawFields(get, [found.value])
          const stray = contract(found.value, found.json)
          return {
            texts: stray === undefined ? [found.json] : [found.json, `Note: ${stray}.`],
            structured: found.json
          }
        })
    })
  }
  const filterParams = Object.fromEntries(
    resource.filters.map((filter) => [
      filterArgument(filter),
      param(Schema.Boolean, { type: "boolean", description: filter.description })
    ])
  )
  const declared = declaredFields(resource)
  // The list asked for: its where with the filters folded in, its fields checked; `undefined` when neither a where
  // nor a filter was given (with a cursor: the cursor's).
  const filterWhere = (given: Record<string, unknown>) =>
    Either.flatMap(whereOf(resource.list, given.where), (where) => {
      const filtered = resource.filters.some((filter) => given[filterArgument(filter)] !== undefined)
      if (given.where === undefined && !filtered) return Either.right(undefined)
      let all = where
      for (const filter of resource.filters) {
        if (given[filterArgument(filter)] === true) all = { ...all, ...filter.where }
      }
      return checkWhereFields(
        resource.list,
        all,
        knownFields(context, resource.list, declared, get === undefined ? [] : [get]),
        true
      )
    })
  const filtersSaid = filtersSentence(resource)
  const listArgs = argumentsOf({
    ...filterParams,
    where: whereParam(resource.list),
    limit: limitParam(context),
    cursor: cursorParam
  })
  tools.push({
    name: `${resource.name}_list`,
    title: `List ${resource.name}`,
    description: `${resource.name[0]!.toUpperCase()}${resource.name.slice(1)} from ${resource.list}, filtered, at ` +
      `most limit of them (default ${context.defaultLimit}), each exactly as the server wrote it: ` +
      `{"endpoint", "where", "returned", "more", "cursor", "records": [...]}; when more match, "more" is true and ` +
      `"cursor" goes on with the next ones (call again with it: in order, none twice). The client pages through ` +
      `the list; to know how many match, use ${resource.name}_count, which returns no records. ${filtersSaid} ` +
      `${COSTS} A list of up to limit records costs about one request.`,
    inputSchema: listArgs.json,
    outputSchema: listSchema(resource),
    toolset: resource.name,
    write: false,
    call: (input, progress) =>
      Effect.gen(function*() {
        const given = yield* listArgs.decode(input)
        const where = yield* filterWhere(given)
        const list = yield* continued(context, given.cursor, { endpoint: resource.list, where, params: undefined })
        return yield* listAnswer(context, resource.list, {
          ...list,
          idField: resource.idField,
          limit: (given.limit as number | undefined) ?? context.defaultLimit,
          what: resource.name,
          countTool: `${resource.name}_count`
        }, progress)
      })
  })
  const countArgs = argumentsOf({ ...filterParams, where: whereParam(resource.list) })
  tools.push({
    name: `${resource.name}_count`,
    title: `Count ${resource.name}`,
    description: `How many ${resource.name} match the filters (all of them without any), from ${resource.list}: ` +
      `{"endpoint", "where", "count", "pages"}, no records. E.g. how many ${resource.name} are customers: ` +
      `{"customers": true}. ${filtersSaid} The client pages through the whole list, telling progress as it goes. ` +
      `${COSTS} 10,000 ${resource.name} cost about 12 requests; at the contract's 100 requests per 30 s, 100,000 ` +
      "take about 30 s (longer when other calls share the limit).",
    inputSchema: countArgs.json,
    outputSchema: countSchema,
    toolset: resource.name,
    write: false,
    call: (input, progress) =>
      Effect.gen(function*() {
        const given = yield* countArgs.decode(input)
        const where = yield* filterWhere(given)
        return yield* countAnswer(
          context,
          resource.list,
          { where: where ?? {}, params: [], what: resource.name },
          progress
        )
      })
  })
  return tools
}

/**
 * The endpoints there are to call, as JSON text: the declared kinds of record (their list and get endpoints, tools,
 * fields, selectors and filters), and every endpoint this server has had an answer from, with the fields seen in its
 * records. Reading it sends no request. Served as the tool `api_endpoints` and the resource `erp://endpoints`.
 */
export const catalogue = (context: Context, resources: ReadonlyArray<Resource.Any>): string =>
  JSON.stringify({
    declared: resources.map((resource) => ({
      name: resource.name,
      description: resource.description,
      list: resource.list,
      ...(resource.get === undefined ? {} : { get: resource.get }),
      tools: [
        ...(resource.get === undefined || resource.selectors.length === 0 ? [] : [`${resource.name}_get`]),
        `${resource.name}_list`,
        `${resource.name}_count`
      ],
      idField: resource.idField,
      fields: resource.fields,
      selectors: resource.selectors.map((selector) => ({
        param: selector.param,
        kind: selector.kind,
        description: selector.description
      })),
      filters: Object.fromEntries(
        resource.filters.map((
          filter
        ) => [filterArgument(filter), { where: filter.where, description: filter.description }])
      )
    })),
    called: [...context.fieldsSeen()].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0).map(([endpoint, fields]) => ({
      endpoint,
      fieldsSeen: [...fields]
    })),
    note: "Any other endpoint of the ERP is reached with api_get, api_list and api_count by its path (segments of " +
      "letters, digits, _ and -); list endpoints end in /list by the API's convention, lookups in /get. " +
      "called lists only the endpoints that answered this server; fieldsSeen, the fields of the records read from " +
      "each (a where may name them)."
  })

interface WhereAt {
  readonly where: ListQuery.Conditions | undefined
  readonly unchecked: boolean
}

/**
 * `api_get`, `api_list`, `api_count` and `api_endpoints` for any endpoint, and `api_post` (offered only with
 * `--allow-writes`). `resources`: the declared kinds of record, whose fields a `where` on their list endpoint may name.
 */
export const apiTools = (context: Context, resources: ReadonlyArray<Resource.Any> = []): ReadonlyArray<Tool> => {
  const getArgs = argumentsOf({ endpoint: endpointParam, params: paramsParam }, ["endpoint"])
  const listArgs = argumentsOf(
    {
      endpoint: endpointParam,
      params: paramsParam,
      where: whereParam("the endpoint"),
      limit: limitParam(context),
      cursor: cursorParam
    },
    ["endpoint"]
  )
  const countArgs = argumentsOf(
    { endpoint: endpointParam, params: paramsParam, where: whereParam("the endpoint") },
    ["endpoint"]
  )
  const postArgs = argumentsOf({
    endpoint: endpointParam,
    params: paramsParam,
    json: text(
      "The body as JSON text, sent exactly as written (numbers such as 12345678901234567890 or 1.10 kept). Give " +
        "json or body, not both; neither sends no body."
    ),
    body: param(Schema.Record({ key: Schema.String, value: Schema.Unknown }), {
      type: "object",
      description: "The body as a JSON object (sent as JSON.stringify writes it: a number past 2^53 - 1 or a " +
        "decimal whose digits matter belongs in json instead)."
    })
  }, ["endpoint"])
  const noArgs = argumentsOf({})
  // The where of a list of `endpoint` (`undefined` when none was given), its fields checked when they are known
  // (declared for it, or seen in its records); `unchecked` when it names fields that could not be checked.
  const whereAt = (
    endpoint: string,
    value: unknown
  ): Either.Either<WhereAt, ToolInputError> =>
    Either.flatMap(whereOf(endpoint, value), (where) => {
      if (value === undefined) return Either.right<WhereAt>({ where: undefined, unchecked: false })
      const kinds = resources.filter((resource) => resource.list === endpoint)
      const known = knownFields(
        context,
        endpoint,
        kinds.flatMap(declaredFields),
        kinds.flatMap((resource) => resource.get === undefined ? [] : [resource.get])
      )
      return Either.map(checkWhereFields(endpoint, where, known, kinds.length > 0), (checked): WhereAt => ({
        where: checked,
        unchecked: context.checkConditions && known === undefined && Object.keys(checked).length > 0
      }))
    })
  return [
    {
      name: "api_get",
      title: "GET any endpoint",
      description: "GET any endpoint of the ERP (read-only): the envelope's data exactly as the server wrote it " +
        "(numbers as written). Errors the server reports (NotFound, Unauthorized, others with their message) come " +
        "back as errors saying so. One request. For partners, partners_get is simpler.",
      inputSchema: getArgs.json,
      toolset: "api",
      write: false,
      call: (input) =>
        Effect.gen(function*() {
          const given = yield* getArgs.decode(input)
          const endpoint = yield* endpointOf(given.endpoint)
          const params = paramsOf(given.params)
          const selector = params.map(([name, value]) => `${name}=${value}`).join(" ")
          const data = yield* context.client.get(endpoint, Schema.Unknown, { params, selector, exact: true })
          context.sawFields(endpoint, [data.value])
          return { texts: [data.json] }
        })
    },
    {
      name: "api_list",
      title: "List any list endpoint",
      description: "Records of any list endpoint (read-only), filtered, at most limit of them (default " +
        `${context.defaultLimit}), each exactly as the server wrote it: {"endpoint", "where", "returned", "more", ` +
        "\"cursor\", \"records\": [...]}; when more match, \"more\" is true and \"cursor\" goes on with the next " +
        "ones (call again with it and the same endpoint: in order, none twice). The client does the paging " +
        `(list_offset, list_count): never pass them. To know how many match, use api_count. ${COSTS}`,
      inputSchema: listArgs.json,
      toolset: "api",
      write: false,
      call: (input, progress) =>
        Effect.gen(function*() {
          const given = yield* listArgs.decode(input)
          const endpoint = yield* endpointOf(given.endpoint)
          const { unchecked, where } = yield* whereAt(endpoint, given.where)
          const list = yield* continued(context, given.cursor, {
            endpoint,
            where,
            params: given.params === undefined ? undefined : paramsOf(given.params)
          })
          return yield* listAnswer(context, endpoint, {
            ...list,
            idField: resources.find((resource) => resource.list === endpoint)?.idField ?? "id",
            limit: (given.limit as number | undefined) ?? context.defaultLimit,
            what: "records",
            countTool: "api_count",
            unchecked
          }, progress)
        })
    },
    {
      name: "api_count",
      title: "Count the records of any list endpoint",
      description: "How many records of a list endpoint match (read-only): {\"endpoint\", \"where\", \"count\", " +
        `"pages"}, no records. The client pages through the whole list, telling progress as it goes. ${COSTS}`,
      inputSchema: countArgs.json,
      toolset: "api",
      write: false,
      call: (input, progress) =>
        Effect.gen(function*() {
          const given = yield* countArgs.decode(input)
          const endpoint = yield* endpointOf(given.endpoint)
          const { unchecked, where } = yield* whereAt(endpoint, given.where)
          return yield* countAnswer(
            context,
            endpoint,
            { where: where ?? {}, params: paramsOf(given.params), what: "records", unchecked },
            progress
          )
        })
    },
    {
      name: "api_endpoints",
      title: "The endpoints to call",
      description: "Which endpoints there are to call (the service has over 500; no request is sent): the declared " +
        "kinds of record with their list and get endpoints, tools, fields and filters, and the endpoints this server " +
        "has had an answer from, with the fields seen in their records (what a where may name). The same as the " +
        "resource erp://endpoints.",
      inputSchema: noArgs.json,
      toolset: "api",
      write: false,
      call: (input) =>
        Effect.gen(function*() {
          yield* noArgs.decode(input)
          return { texts: [catalogue(context, resources)] }
        })
    },
    {
      name: "api_post",
      title: "POST to any endpoint (writes)",
      description: "POST a JSON body to any endpoint: this CHANGES the ERP (creates, updates or deletes records). " +
        "Ask the user before calling it. The answer is the envelope's data exactly as the server wrote it. Never " +
        "retried after a transient failure (the server may have acted on it): after a timeout, check with a read " +
        "before posting again. One request.",
      inputSchema: postArgs.json,
      toolset: "writes",
      write: true,
      call: (input) =>
        Effect.gen(function*() {
          const given = yield* postArgs.decode(input)
          const endpoint = yield* endpointOf(given.endpoint)
          const params = paramsOf(given.params)
          if (given.json !== undefined && given.body !== undefined) {
            return yield* new ToolInputError({ reason: "give json or body, not both" })
          }
          if (given.json !== undefined) {
            // Checked here, sent as written: parsed and written again, 12345678901234567890 and 1.10 would change.
            yield* Either.mapLeft(
              JsonText.compact(given.json as string),
              (error) => new ToolInputError({ reason: `json: not JSON (${error.message})` })
            )
          }
          const data = given.json !== undefined
            ? yield* context.client.post(endpoint, Schema.Unknown, {
              json: given.json as string,
              params,
              exact: true
            })
            : yield* context.client.post(endpoint, Schema.Unknown, {
              ...(given.body === undefined ? {} : { body: given.body }),
              params,
              exact: true
            })
          return { texts: [data.json] }
        })
    }
  ]
}
