/**
 * The tools of `erp mcp`: what each takes (a JSON Schema an assistant reads, and the schema its arguments are checked
 * with), what it says it does and costs, and what it does, on the command line's client. A kind of record declared
 * for the command line (`Cli.resources`) gets `<name>_get`, `<name>_list` and `<name>_count`; any endpoint is reached
 * with `api_get`, `api_list`, `api_count`, and `api_post` when writes are allowed.
 *
 * Every answer that holds records holds them as the server wrote them (`exact: true`: `Exact.json`, `Page.json`), put
 * together as text here: a record's numbers are never parsed and written again (`12345678901234567890` stays so).
 */
import * as ErpClient from "@erp-client/client/ErpClient"
import * as JsonText from "@erp-client/core/JsonText"
import * as ListQuery from "@erp-client/core/ListQuery"
import * as ListEndpoint from "@erp-client/streams/ListEndpoint"
import * as Resource from "@erp-client/streams/Resource"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { AnyRecord } from "./common.js"
import { contractOf, recordName } from "./contract.js"

/** A JSON Schema, as written into `tools/list`. */
export type JsonSchema = Readonly<Record<string, unknown>>

/** What a tool answers: text blocks, the first the data (JSON), the others notes for the assistant. */
export interface Answer {
  readonly texts: ReadonlyArray<string>
}

/** A tool's call that cannot be made as asked (its arguments), said so that the assistant can correct it. */
export class ToolInputError extends Schema.TaggedError<ToolInputError>()("InvalidArguments", {
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
  /** Changes the ERP: offered only with `--allow-writes`, and annotated as destructive. */
  readonly write: boolean
  readonly call: (args: unknown) => Effect.Effect<Answer, ToolFailure>
}

/** What the tools share: the client, and where the fields of the records they read are noted. */
export interface Context {
  readonly client: ErpClient.Service
  /** The fields of the records read from `endpoint` (for `erp://fields`). */
  readonly sawFields: (endpoint: string, records: ReadonlyArray<unknown>) => void
  /** The largest `limit` of a list tool, and its default. */
  readonly maxLimit: number
  readonly defaultLimit: number
  /** Check the records of a list or count against its conditions (`ListEndpoint.ListOptions.checkConditions`). */
  readonly checkConditions: boolean
}

// One argument: its JSON Schema, and the schema its value is checked with.
interface Param {
  readonly json: JsonSchema
  readonly schema: Schema.Schema.AnyNoContext
}

const param = (schema: Schema.Schema.AnyNoContext, json: JsonSchema): Param => ({ schema, json })

// A field of the arguments' struct: an argument's schema, or it made optional; neither needs a service.
type Field = Schema.Schema.AnyNoContext | Schema.optional<Schema.Schema.AnyNoContext>

// The arguments of a tool: a JSON Schema object (no other properties), and their check, which names every argument
// that is wrong or unknown (a misspelt `customer` is said, not ignored).
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
    decode: (args: unknown): Either.Either<Record<string, unknown>, ToolInputError> =>
      Either.mapLeft(decode(args ?? {}), (error) =>
        new ToolInputError({
          reason: ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) =>
            `${issue.path.length === 0 ? "arguments" : issue.path.join(".")}: ${issue.message}`
          ).join("; ")
        }))
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
      `${endpoint}; true is sent as 1, false as 0). FIELD: letters, digits and _. erp://fields lists the fields seen ` +
      "so far. Pass numbers past 2^53 - 1 as strings. A server that ignores a condition is an error " +
      "(ConditionIgnored), not the whole list."
  })

const paramsParam = param(Schema.Record({ key: Schema.String, value: Schema.Union(Schema.String, Schema.Number) }), {
  type: "object",
  additionalProperties: { type: ["string", "number"] },
  description:
    "Query parameters, as {\"NAME\": VALUE}, sent URL-encoded (the values may hold anything). Pass numbers " +
    "past 2^53 - 1 as strings."
})

const endpointParam = param(Schema.String, {
  type: "string",
  description: "The endpoint's path after the ERP's base address, e.g. partner/get or invoice/list: segments of " +
    "letters, digits, _ and - joined by /."
})

const limitParam = (context: Context) =>
  param(Schema.Int.pipe(Schema.between(1, context.maxLimit)), {
    type: "integer",
    minimum: 1,
    maximum: context.maxLimit,
    default: context.defaultLimit,
    description: `The most records to return (default ${context.defaultLimit}, at most ${context.maxLimit}). When ` +
      "more match, the answer says so: narrow the list with where, or count it with a count tool."
  })

// The client's rule for an endpoint's path, checked before anything is sent.
const endpointOf = (value: unknown) =>
  Either.mapLeft(ErpClient.validateEndpoint(value as string), (error) => new ToolInputError({ reason: error.message }))

const paramsOf = (value: unknown): ErpClient.Params =>
  Object.entries((value ?? {}) as Record<string, string | number>).map(([name, v]) => [name, String(v)] as const)

const whereOf = (endpoint: string, value: unknown): Either.Either<ListQuery.Conditions, ToolInputError> => {
  const where = (value ?? {}) as ListQuery.Conditions
  return Either.mapBoth(ListQuery.validateConditions(endpoint, where), {
    onLeft: (error) => new ToolInputError({ reason: `where: ${error.reason}` }),
    onRight: () => where
  })
}

// Conditions as an answer repeats them: the values as sent.
const whereText = (where: ListQuery.Conditions) =>
  JSON.stringify(Object.fromEntries(Object.entries(where).map(([field, v]) => [field, ListQuery.conditionValue(v)])))

/**
 * Up to `limit` records of a list, as the server wrote them, paged by the client: pages of `limit + 1` (the server may
 * serve fewer; they are followed), one at a time, and the one record past `limit` tells whether more match. The
 * stream ends there: pages still in flight are cancelled.
 */
const listAnswer = (
  context: Context,
  endpoint: string,
  options: {
    readonly where: ListQuery.Conditions
    readonly params: ErpClient.Params
    readonly limit: number
    readonly what: string
    readonly countTool: string
  }
) =>
  ListEndpoint.pages(endpoint, AnyRecord, {
    where: options.where,
    checkConditions: context.checkConditions,
    params: options.params,
    pageSize: Math.min(options.limit + 1, 10_000),
    concurrency: 1,
    exact: true
  }).pipe(
    Stream.tap((page) => Effect.sync(() => context.sawFields(endpoint, page.raw))),
    Stream.mapConcat((page) => page.json ?? page.raw.map((record) => JSON.stringify(record))),
    Stream.take(options.limit + 1),
    Stream.runCollect,
    Effect.map((chunk): Answer => {
      const texts = Chunk.toReadonlyArray(chunk)
      const more = texts.length > options.limit
      const records = more ? texts.slice(0, options.limit) : texts
      const data = `{"endpoint":${JSON.stringify(endpoint)},"where":${whereText(options.where)},"returned":` +
        `${records.length},"more":${more},"records":[${records.join(",")}]}`
      return {
        texts: more
          ? [
            data,
            `More ${options.what} match than the ${options.limit} returned (limit ${options.limit}): narrow the list ` +
            `with where, raise limit (at most ${context.maxLimit}), or count them with ${options.countTool}.`
          ]
          : [data]
      }
    }),
    Effect.provideService(ErpClient.ErpClient, context.client)
  )

/** Every record of a list counted, none returned: the client pages through it at the server's pace. */
const countAnswer = (
  context: Context,
  endpoint: string,
  options: { readonly where: ListQuery.Conditions; readonly params: ErpClient.Params }
) =>
  ListEndpoint.pages(endpoint, AnyRecord, {
    where: options.where,
    checkConditions: context.checkConditions,
    params: options.params
  }).pipe(
    Stream.runFold({ count: 0, pages: 0 }, (sum, page) => {
      if (sum.pages === 0) context.sawFields(endpoint, page.raw.slice(0, 1))
      return { count: sum.count + page.raw.length, pages: sum.pages + 1 }
    }),
    Effect.map(({ count, pages }): Answer => ({
      texts: [
        `{"endpoint":${JSON.stringify(endpoint)},"where":${whereText(options.where)},"count":${count},` +
        `"pages":${pages}}`
      ]
    })),
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
          ? wholeNumber(`${selector.description} A whole number; as a string of digits past 2^53 - 1.`)
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
          // A string of digits is an id as the server knows it; within 2^53 - 1, a number like any other.
          const value = typeof raw === "string" && selector.kind === "integer" && Number.isSafeInteger(Number(raw))
            ? Number(raw)
            : raw
          const query = Resource.query(selector, value)
          const found = yield* context.client.get(get, AnyRecord, { ...query, exact: true })
          context.sawFields(get, [found.value])
          const stray = contract(found.value, found.json)
          return { texts: stray === undefined ? [found.json] : [found.json, `Note: ${stray}.`] }
        })
    })
  }
  const filterParams = Object.fromEntries(
    resource.filters.map((filter) => [
      filterArgument(filter),
      param(Schema.Boolean, { type: "boolean", description: filter.description })
    ])
  )
  const filterWhere = (given: Record<string, unknown>) =>
    Either.map(whereOf(resource.list, given.where), (where) => {
      let all = where
      for (const filter of resource.filters) {
        if (given[filterArgument(filter)] === true) all = { ...all, ...filter.where }
      }
      return all
    })
  const filtersSaid = filtersSentence(resource)
  const listArgs = argumentsOf({ ...filterParams, where: whereParam(resource.list), limit: limitParam(context) })
  tools.push({
    name: `${resource.name}_list`,
    title: `List ${resource.name}`,
    description: `${resource.name[0]!.toUpperCase()}${resource.name.slice(1)} from ${resource.list}, filtered, at ` +
      `most limit of them (default ${context.defaultLimit}), each exactly as the server wrote it: ` +
      `{"endpoint", "where", "returned", "more", "records": [...]}; when more match, "more" is true and a note ` +
      `says so. The client pages through the list; to know how many match, use ${resource.name}_count, which ` +
      `returns no records. ${filtersSaid} ${COSTS} A list of up to limit records costs about one request.`,
    inputSchema: listArgs.json,
    write: false,
    call: (input) =>
      Effect.gen(function*() {
        const given = yield* listArgs.decode(input)
        const where = yield* filterWhere(given)
        return yield* listAnswer(context, resource.list, {
          where,
          params: [],
          limit: (given.limit as number | undefined) ?? context.defaultLimit,
          what: resource.name,
          countTool: `${resource.name}_count`
        })
      })
  })
  const countArgs = argumentsOf({ ...filterParams, where: whereParam(resource.list) })
  tools.push({
    name: `${resource.name}_count`,
    title: `Count ${resource.name}`,
    description: `How many ${resource.name} match the filters (all of them without any), from ${resource.list}: ` +
      `{"endpoint", "where", "count", "pages"}, no records. E.g. how many ${resource.name} are customers: ` +
      `{"customers": true}. ${filtersSaid} The client pages through the whole list. ${COSTS} 10,000 ` +
      `${resource.name} cost about 12 requests; at the contract's 100 requests per 30 s, 100,000 take about ` +
      "30 s (longer when other calls share the limit).",
    inputSchema: countArgs.json,
    write: false,
    call: (input) =>
      Effect.gen(function*() {
        const given = yield* countArgs.decode(input)
        const where = yield* filterWhere(given)
        return yield* countAnswer(context, resource.list, { where, params: [] })
      })
  })
  return tools
}

/** `api_get`, `api_list`, `api_count` for any endpoint, and with `allowWrites`, `api_post`. */
export const apiTools = (context: Context): ReadonlyArray<Tool> => {
  const getArgs = argumentsOf({ endpoint: endpointParam, params: paramsParam }, ["endpoint"])
  const listArgs = argumentsOf(
    { endpoint: endpointParam, params: paramsParam, where: whereParam("the endpoint"), limit: limitParam(context) },
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
  return [
    {
      name: "api_get",
      title: "GET any endpoint",
      description: "GET any endpoint of the ERP (read-only): the envelope's data exactly as the server wrote it " +
        "(numbers as written). Errors the server reports (NotFound, Unauthorized, others with their message) come " +
        "back as errors saying so. One request. For partners, partners_get is simpler.",
      inputSchema: getArgs.json,
      write: false,
      call: (input) =>
        Effect.gen(function*() {
          const given = yield* getArgs.decode(input)
          const endpoint = yield* endpointOf(given.endpoint)
          const params = paramsOf(given.params)
          const selector = params.map(([name, value]) => `${name}=${value}`).join(" ")
          const data = yield* context.client.get(endpoint, Schema.Unknown, { params, selector, exact: true })
          return { texts: [data.json] }
        })
    },
    {
      name: "api_list",
      title: "List any list endpoint",
      description: "Records of any list endpoint (read-only), filtered, at most limit of them (default " +
        `${context.defaultLimit}), each exactly as the server wrote it: {"endpoint", "where", "returned", "more", ` +
        "\"records\": [...]}; when more match, \"more\" is true and a note says so. The client does the paging " +
        `(list_offset, list_count): never pass them. To know how many match, use api_count. ${COSTS}`,
      inputSchema: listArgs.json,
      write: false,
      call: (input) =>
        Effect.gen(function*() {
          const given = yield* listArgs.decode(input)
          const endpoint = yield* endpointOf(given.endpoint)
          const where = yield* whereOf(endpoint, given.where)
          return yield* listAnswer(context, endpoint, {
            where,
            params: paramsOf(given.params),
            limit: (given.limit as number | undefined) ?? context.defaultLimit,
            what: "records",
            countTool: "api_count"
          })
        })
    },
    {
      name: "api_count",
      title: "Count the records of any list endpoint",
      description: "How many records of a list endpoint match (read-only): {\"endpoint\", \"where\", \"count\", " +
        `"pages"}, no records. The client pages through the whole list. ${COSTS}`,
      inputSchema: countArgs.json,
      write: false,
      call: (input) =>
        Effect.gen(function*() {
          const given = yield* countArgs.decode(input)
          const endpoint = yield* endpointOf(given.endpoint)
          const where = yield* whereOf(endpoint, given.where)
          return yield* countAnswer(context, endpoint, { where, params: paramsOf(given.params) })
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
