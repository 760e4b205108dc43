/**
 * The Model Context Protocol as `erp mcp` serves it, over JSON-RPC 2.0 and free of any transport: a connection takes
 * the messages one client sent (a line of stdio, the body of an HTTP POST) and says its answers through the `reply`
 * each message came with. `mcpStdio.ts` and `mcpHttp.ts` carry them.
 *
 * Written here rather than taken from @effect/ai's `McpServer` (0.37), which, tried with the official SDK's client:
 * advertises `listChanged` for lists that never change; answers `logging/setLevel` and `resources/subscribe`, never
 * advertised, with -32603 "Not implemented" (the spec: -32601); serves requests before `initialize`; names its
 * internal schema types in the errors of malformed params (`prompts/get` without its arguments is -32603 with a
 * schema dump; the spec: -32602); writes no `outputSchema` (its `Tool` class drops it) and gives handlers no progress
 * token; and writes results with `JSON.stringify`, which would send the record `{"id": 12345678901234567890}` as
 * `12345678901234567000`. Here every answer is put together as text, the records in it as the server wrote them.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"

/** A JSON Schema, as written into `tools/list`. */
export type JsonSchema = Readonly<Record<string, unknown>>

/** What a tool says of its progress; sent as `notifications/progress` when the call asked for it. */
export interface Progress {
  readonly report: (progress: number, total?: number, message?: string) => Effect.Effect<void>
}

/** A tool's result: text blocks and, for a tool with an `outputSchema`, the structured content as JSON text. */
export interface ToolResult {
  readonly texts: ReadonlyArray<string>
  readonly structured?: string | undefined
  readonly isError: boolean
}

export interface ToolDefinition {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly inputSchema: JsonSchema
  readonly outputSchema?: JsonSchema | undefined
  readonly annotations: Readonly<Record<string, unknown>>
  /** Never fails: a tool's failure is a result with `isError`, which the assistant reads. */
  readonly call: (args: Readonly<Record<string, unknown>>, progress: Progress) => Effect.Effect<ToolResult>
}

export interface ResourceDefinition {
  readonly uri: string
  readonly name: string
  readonly description: string
  readonly mimeType: string
  readonly annotations?: Readonly<Record<string, unknown>> | undefined
  readonly read: Effect.Effect<string>
}

export interface PromptArgument {
  readonly name: string
  readonly description: string
  readonly required: boolean
}

export interface PromptDefinition {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly arguments: ReadonlyArray<PromptArgument>
  /** The prompt's text (a user message), its arguments checked as declared. */
  readonly get: (args: Readonly<Record<string, string>>) => Effect.Effect<string>
  /** Values for an argument starting with what was typed (`completion/complete`), at most 100. */
  readonly complete?: (argument: string, value: string) => Effect.Effect<ReadonlyArray<string>>
}

/** What a connection reports of the calls it served, for the log: never an argument's value or a result. */
export interface CallEvent {
  readonly method: string
  readonly tool?: string | undefined
  readonly millis: number
  readonly outcome: "ok" | "tool error" | "error" | "cancelled"
  readonly client?: string | undefined
  /** The connection's label (an HTTP session's short id), when it has one. */
  readonly connection?: string | undefined
}

export interface ServerDefinition {
  readonly name: string
  readonly version: string
  readonly instructions: string
  readonly tools: ReadonlyArray<ToolDefinition>
  /** Tools not listed that a call may still name, each to say why it is not offered. */
  readonly unlisted?: ReadonlyArray<ToolDefinition> | undefined
  readonly resources: ReadonlyArray<ResourceDefinition>
  readonly prompts: ReadonlyArray<PromptDefinition>
  /** Each request served, once answered. */
  readonly onCall?: ((event: CallEvent) => Effect.Effect<void>) | undefined
  /** The least time between two progress notifications of one call. */
  readonly progressIntervalMillis?: number | undefined
}

/** A JSON-RPC id as the client sent it. */
export type ClientId = string | number

/** Where the lines answering a message go. */
export type Reply = (line: string) => Effect.Effect<void>

/** What one line (or body) held: the messages to handle, or the error line to answer it with. */
export type Parsed =
  | { readonly _tag: "Messages"; readonly messages: ReadonlyArray<unknown>; readonly batch: boolean }
  | { readonly _tag: "Invalid"; readonly line: string }

export interface Connection {
  /**
   * Handles one message: a request is answered through `reply` (with its progress notifications before the answer,
   * when it asked for them), a notification is not. Succeeds once the answer is said, or the request cancelled.
   */
  readonly handle: (message: unknown, reply: Reply) => Effect.Effect<void>
  /** The client as it named itself in `initialize`, once it has. */
  readonly client: () => string | undefined
  /** Whether `initialize` has been answered (an HTTP session begins with it). */
  readonly initialized: () => boolean
  /** Cancels the requests in flight (they are not answered). */
  readonly cancelAll: Effect.Effect<void>
}

// JSON-RPC's own error codes (https://www.jsonrpc.org/specification#error_object).
export const PARSE_ERROR = -32700
export const INVALID_REQUEST = -32600
export const METHOD_NOT_FOUND = -32601
export const INVALID_PARAMS = -32602
export const INTERNAL_ERROR = -32603

/** The protocol versions answered as asked; any other is answered with the latest. */
export const PROTOCOL_VERSIONS: ReadonlyArray<string> = ["2025-06-18", "2025-03-26", "2024-11-05"]

/** How deep a message may nest its arrays and objects: deeper is refused before anything walks it. */
export const MAX_DEPTH = 64

/** A message, a line or a body, larger than this is refused (its text is never held longer). */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const isClientId = (value: unknown): value is ClientId =>
  typeof value === "string" || (typeof value === "number" && Number.isFinite(value))

/** A JSON-RPC error answer. */
export const errorLine = (id: ClientId | null, code: number, message: string): string =>
  JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } })

const resultLine = (id: ClientId, resultText: string) =>
  `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${resultText}}`

// How deep `text` nests, counted without parsing (brackets outside strings), stopping past `limit`: JSON.parse and
// every walk after it are then never handed a message deep enough to exhaust the stack.
const nestsDeeperThan = (text: string, limit: number): boolean => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92) i++ // a backslash: the next character is escaped
      else if (c === 34) inString = false
    } else if (c === 34) inString = true
    else if (c === 91 || c === 123) {
      if (++depth > limit) return true
    } else if (c === 93 || c === 125) depth--
  }
  return false
}

/** One line of stdio or one HTTP body, parsed: a message, a batch of them, or the error to answer it with. */
export const parse = (text: string): Parsed => {
  if (text.length > MAX_MESSAGE_BYTES) {
    return {
      _tag: "Invalid",
      line: errorLine(null, INVALID_REQUEST, `Invalid Request: a message is at most ${MAX_MESSAGE_BYTES} bytes`)
    }
  }
  if (nestsDeeperThan(text, MAX_DEPTH)) {
    return {
      _tag: "Invalid",
      line: errorLine(null, INVALID_REQUEST, `Invalid Request: the message nests deeper than ${MAX_DEPTH} levels`)
    }
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    return { _tag: "Invalid", line: errorLine(null, PARSE_ERROR, `Parse error: ${(error as Error).message}`) }
  }
  if (Array.isArray(parsed)) {
    return parsed.length === 0
      ? { _tag: "Invalid", line: errorLine(null, INVALID_REQUEST, "Invalid Request: an empty batch") }
      : { _tag: "Messages", messages: parsed, batch: true }
  }
  return { _tag: "Messages", messages: [parsed], batch: false }
}

/** Whether a message is a request (it is answered), as opposed to a notification or a response. */
export const isRequest = (message: unknown): boolean =>
  isObject(message) && typeof message.method === "string" && message.id !== undefined

/** Whether a message is the request that begins a session. */
export const isInitialize = (message: unknown): boolean =>
  isRequest(message) && (message as { readonly method: unknown }).method === "initialize"

/** A request's progress token, when it asked for progress. */
export const progressTokenOf = (message: unknown): string | number | undefined => {
  if (!isObject(message) || !isObject(message.params) || !isObject(message.params._meta)) return undefined
  const token = message.params._meta.progressToken
  return typeof token === "string" || (typeof token === "number" && Number.isFinite(token)) ? token : undefined
}

// A request's params that cannot serve: answered -32602 with what is wrong, in the protocol's own words.
class InvalidParams {
  readonly _tag = "InvalidParams"
  constructor(readonly message: string) {}
}

const fail = (message: string) => Effect.fail(new InvalidParams(`Invalid params: ${message}`))

const stringParam = (params: Record<string, unknown>, name: string, where: string) =>
  typeof params[name] === "string"
    ? Effect.succeed(params[name])
    : fail(`${where} needs "${name}", a string${params[name] === undefined ? "" : `, not ${describe(params[name])}`}`)

const describe = (value: unknown) =>
  value === null ? "null" : Array.isArray(value) ? "an array" : typeof value === "object" ? "an object" : typeof value

const text = (value: string) => JSON.stringify(value)

const toolLine = (tool: ToolDefinition) =>
  JSON.stringify({
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: tool.inputSchema,
    ...(tool.outputSchema === undefined ? {} : { outputSchema: tool.outputSchema }),
    annotations: tool.annotations
  })

const toolResultText = (result: ToolResult) =>
  `{"content":[${result.texts.map((t) => `{"type":"text","text":${text(t)}}`).join(",")}]` +
  (result.structured === undefined || result.isError ? "" : `,"structuredContent":${result.structured}`) +
  `,"isError":${result.isError}}`

/** The server: each client it serves gets a connection of its own (`label` names it in `onCall`'s events). */
export interface Server {
  readonly connect: (label?: string) => Connection
}

/** The server: each client it serves gets a connection of its own. */
export const make = (server: ServerDefinition): Server => {
  const tools = new Map([...server.unlisted ?? [], ...server.tools].map((tool) => [tool.name, tool]))
  const prompts = new Map(server.prompts.map((prompt) => [prompt.name, prompt]))
  const resources = new Map(server.resources.map((resource) => [resource.uri, resource]))
  const interval = server.progressIntervalMillis ?? 1_000
  // Capabilities as served: no list ever changes, no subscription, no logging level to set.
  const capabilities = JSON.stringify({
    ...(server.tools.length > 0 ? { tools: {} } : {}),
    ...(server.resources.length > 0 ? { resources: {} } : {}),
    ...(server.prompts.length > 0 ? { prompts: {} } : {}),
    ...(server.prompts.some((prompt) => prompt.complete !== undefined) ? { completions: {} } : {})
  })
  const toolsList = `{"tools":[${server.tools.map(toolLine).join(",")}]}`
  const resourcesList = JSON.stringify({
    resources: server.resources.map(({ annotations, description, mimeType, name, uri }) => ({
      uri,
      name,
      description,
      mimeType,
      ...(annotations === undefined ? {} : { annotations })
    }))
  })
  const promptsList = JSON.stringify({
    prompts: server.prompts.map((prompt) => ({
      name: prompt.name,
      title: prompt.title,
      description: prompt.description,
      arguments: prompt.arguments
    }))
  })

  const connect = (label?: string): Connection => {
    let clientName: string | undefined
    let initialized = false
    // The requests in flight by the client's id (its text: 7 and "7" are two ids), for `notifications/cancelled`.
    const inFlight = new Map<string, Fiber.RuntimeFiber<void>>()
    const keyOf = (id: ClientId) => `${typeof id}:${id}`

    const initialize = (params: Record<string, unknown>) =>
      Effect.gen(function*() {
        const version = yield* stringParam(params, "protocolVersion", "initialize")
        if (!isObject(params.capabilities)) {
          return yield* fail("initialize needs \"capabilities\", an object (empty when the client has none)")
        }
        if (!isObject(params.clientInfo) || typeof params.clientInfo.name !== "string") {
          return yield* fail("initialize needs \"clientInfo\", an object with the client's \"name\" and \"version\"")
        }
        clientName = params.clientInfo.name.slice(0, 100)
        initialized = true
        return `{"protocolVersion":${text(PROTOCOL_VERSIONS.includes(version) ? version : PROTOCOL_VERSIONS[0]!)},` +
          `"capabilities":${capabilities},"serverInfo":${
            JSON.stringify({ name: server.name, version: server.version })
          },` +
          `"instructions":${text(server.instructions)}}`
      })

    const callTool = (params: Record<string, unknown>, progress: Progress) =>
      Effect.gen(function*() {
        const name = yield* stringParam(params, "name", "tools/call")
        const tool = tools.get(name)
        if (tool === undefined) {
          return yield* fail(`no tool is named ${text(name)}: tools/list lists them`)
        }
        const args = params.arguments === undefined ? {} : params.arguments
        if (!isObject(args)) return yield* fail(`"arguments" must be an object, not ${describe(args)}`)
        const result = yield* tool.call(args, progress)
        return { text: toolResultText(result), outcome: result.isError ? "tool error" : "ok" } as const
      })

    const readResource = (params: Record<string, unknown>) =>
      Effect.gen(function*() {
        const uri = yield* stringParam(params, "uri", "resources/read")
        const resource = resources.get(uri)
        if (resource === undefined) {
          return yield* fail(`no resource is at ${text(uri)}: resources/list lists them`)
        }
        const content = yield* resource.read
        return JSON.stringify({ contents: [{ uri, mimeType: resource.mimeType, text: content }] })
      })

    const promptArguments = (prompt: PromptDefinition, given: unknown) =>
      Effect.gen(function*() {
        if (given !== undefined && !isObject(given)) return yield* fail(`"arguments" must be an object of strings`)
        const args = (given ?? {}) as Record<string, unknown>
        const wrong: Array<string> = []
        for (const argument of prompt.arguments) {
          const value = args[argument.name]
          if (value === undefined && argument.required) wrong.push(`"${argument.name}" is required`)
          else if (value !== undefined && typeof value !== "string") wrong.push(`"${argument.name}" must be a string`)
        }
        for (const name of Object.keys(args)) {
          if (!prompt.arguments.some((argument) => argument.name === name)) {
            wrong.push(`${text(name)} is not an argument of ${prompt.name}`)
          }
        }
        if (wrong.length > 0) {
          return yield* fail(
            `${prompt.name}: ${wrong.join("; ")} (its arguments: ${
              prompt.arguments.map((argument) => argument.name).join(", ")
            })`
          )
        }
        return args as Record<string, string>
      })

    const getPrompt = (params: Record<string, unknown>) =>
      Effect.gen(function*() {
        const name = yield* stringParam(params, "name", "prompts/get")
        const prompt = prompts.get(name)
        if (prompt === undefined) return yield* fail(`no prompt is named ${text(name)}: prompts/list lists them`)
        const args = yield* promptArguments(prompt, params.arguments)
        const content = yield* prompt.get(args)
        return JSON.stringify({
          description: prompt.description,
          messages: [{ role: "user", content: { type: "text", text: content } }]
        })
      })

    const complete = (params: Record<string, unknown>) =>
      Effect.gen(function*() {
        const ref = params.ref
        const argument = params.argument
        if (!isObject(ref) || typeof ref.type !== "string") return yield* fail("completion/complete needs \"ref\"")
        if (!isObject(argument) || typeof argument.name !== "string" || typeof argument.value !== "string") {
          return yield* fail("completion/complete needs \"argument\": {\"name\", \"value\"}, both strings")
        }
        let values: ReadonlyArray<string> = []
        if (ref.type === "ref/prompt") {
          const prompt = typeof ref.name === "string" ? prompts.get(ref.name) : undefined
          if (prompt === undefined) return yield* fail(`no prompt is named ${text(String(ref.name))}`)
          if (!prompt.arguments.some((a) => a.name === argument.name)) {
            return yield* fail(`${text(argument.name)} is not an argument of ${prompt.name}`)
          }
          if (prompt.complete !== undefined) values = yield* prompt.complete(argument.name, argument.value)
        } else if (ref.type !== "ref/resource") {
          return yield* fail(`"ref.type" is ref/prompt or ref/resource, not ${text(ref.type)}`)
        }
        const shown = values.slice(0, 100)
        return JSON.stringify({
          completion: { values: shown, total: values.length, hasMore: values.length > shown.length }
        })
      })

    // The progress of one call: said when it asked for it, at most every `interval` ms, and never after its answer.
    const progressOf = (token: string | number | undefined, reply: Reply) => {
      let last: number | undefined
      let done = false
      const progress: Progress = {
        report: (value, total, message) =>
          token === undefined ? Effect.void : Effect.flatMap(Clock.currentTimeMillis, (now) => {
            if (done || (last !== undefined && now - last < interval)) return Effect.void
            last = now
            return reply(JSON.stringify({
              jsonrpc: "2.0",
              method: "notifications/progress",
              params: {
                progressToken: token,
                progress: value,
                ...(total === undefined ? {} : { total }),
                ...(message === undefined ? {} : { message })
              }
            }))
          })
      }
      return { progress, finish: () => (done = true) }
    }

    // A method's answer: its result's text, and how the call ended for the log (a tool's own failure is an answer).
    type Answered = { readonly text: string; readonly outcome: "ok" | "tool error" }

    const respond = (
      method: string,
      params: Record<string, unknown>
    ): Effect.Effect<string, InvalidParams> | undefined => {
      switch (method) {
        case "initialize":
          return initialize(params)
        case "ping":
          return Effect.succeed("{}")
        case "tools/list":
          return server.tools.length > 0 ? Effect.succeed(toolsList) : undefined
        case "resources/list":
          return server.resources.length > 0 ? Effect.succeed(resourcesList) : undefined
        case "resources/templates/list":
          return server.resources.length > 0 ? Effect.succeed("{\"resourceTemplates\":[]}") : undefined
        case "resources/read":
          return server.resources.length > 0 ? readResource(params) : undefined
        case "prompts/list":
          return server.prompts.length > 0 ? Effect.succeed(promptsList) : undefined
        case "prompts/get":
          return server.prompts.length > 0 ? getPrompt(params) : undefined
        case "completion/complete":
          return server.prompts.some((prompt) => prompt.complete !== undefined) ? complete(params) : undefined
        default:
          // Not served (`logging/setLevel`, `resources/subscribe`, …): never advertised, so not found.
          return undefined
      }
    }

    const dispatch = (
      method: string,
      params: Record<string, unknown>,
      progress: Progress
    ): Effect.Effect<Answered, InvalidParams> | undefined => {
      if (method === "tools/call") return server.tools.length > 0 ? callTool(params, progress) : undefined
      const result = respond(method, params)
      return result === undefined ? undefined : Effect.map(result, (text) => ({ text, outcome: "ok" as const }))
    }

    const request = (message: Record<string, unknown>, id: ClientId, method: string, reply: Reply) =>
      Effect.gen(function*() {
        if (message.params !== undefined && !isObject(message.params)) {
          return yield* reply(errorLine(id, INVALID_PARAMS, "Invalid params: params must be an object"))
        }
        if (!initialized && method !== "initialize" && method !== "ping") {
          return yield* reply(errorLine(
            id,
            INVALID_REQUEST,
            `Invalid Request: ${method} before initialize: a session begins with initialize`
          ))
        }
        const key = keyOf(id)
        if (inFlight.has(key)) {
          return yield* reply(errorLine(id, INVALID_REQUEST, `Invalid Request: the id ${text(String(id))} is in use`))
        }
        const { finish, progress } = progressOf(progressTokenOf(message), reply)
        const work = dispatch(method, (message.params ?? {}) as Record<string, unknown>, progress)
        if (work === undefined) return yield* reply(errorLine(id, METHOD_NOT_FOUND, `Method not found: ${method}`))
        const started = Date.now()
        const tool = method === "tools/call" && isObject(message.params) && typeof message.params.name === "string"
          ? message.params.name.slice(0, 100)
          : undefined
        // How the call ended, for the log.
        const said = (outcome: CallEvent["outcome"]) =>
          server.onCall === undefined
            ? Effect.void
            : server.onCall({
              method,
              tool,
              millis: Date.now() - started,
              outcome,
              client: clientName,
              connection: label
            })
        // The call runs as a fiber of its own, known by its id from the moment it starts (a cancellation can name
        // it); `handle` interrupted (the transport's client went away) interrupts it too.
        const call = work.pipe(
          Effect.exit,
          Effect.flatMap((exit): Effect.Effect<"ok" | "tool error" | "error" | "cancelled"> => {
            finish()
            if (Exit.isSuccess(exit)) {
              return Effect.as(
                reply(resultLine(id, exit.value.text)),
                exit.value.outcome
              )
            }
            if (Cause.isInterruptedOnly(exit.cause)) return Effect.succeed("cancelled")
            const failure = Cause.failureOption(exit.cause)
            const defect = Cause.squash(exit.cause)
            return Effect.as(
              reply(
                failure._tag === "Some"
                  ? errorLine(id, INVALID_PARAMS, failure.value.message)
                  : errorLine(
                    id,
                    INTERNAL_ERROR,
                    `Internal error: ${defect instanceof Error ? defect.message : "the server failed"}`
                  )
              ),
              "error"
            )
          }),
          Effect.flatMap(said),
          Effect.onInterrupt(() => said("cancelled")),
          Effect.ensuring(Effect.sync(() => inFlight.delete(key))),
          // Forked below where nothing may interrupt, it is itself interruptible (a cancellation).
          Effect.interruptible,
          Effect.forkDaemon
        )
        yield* Effect.uninterruptibleMask((restore) =>
          Effect.gen(function*() {
            const fiber = yield* call
            // A call done already (its `ensuring` ran) is not kept: its id is free again.
            if (fiber.unsafePoll() === null) inFlight.set(key, fiber)
            yield* restore(Fiber.join(fiber)).pipe(
              Effect.onInterrupt(() => Fiber.interrupt(fiber)),
              Effect.catchAllCause(() => Effect.void)
            )
          })
        )
      })

    const notification = (method: string, params: unknown) => {
      if (method === "notifications/cancelled" && isObject(params) && isClientId(params.requestId)) {
        const fiber = inFlight.get(keyOf(params.requestId))
        return fiber === undefined ? Effect.void : Fiber.interrupt(fiber).pipe(Effect.asVoid)
      }
      // `notifications/initialized`, progress of the client's own: nothing to do.
      return Effect.void
    }

    const handle = (message: unknown, reply: Reply): Effect.Effect<void> => {
      if (!isObject(message) || message.jsonrpc !== "2.0") {
        const id = isObject(message) && isClientId(message.id) ? message.id : null
        return reply(errorLine(id, INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message"))
      }
      const { id, method } = message
      // An answer to a request of the server's: it sends none (no sampling, roots or elicitation).
      if (typeof method !== "string") return Effect.void
      if (id === undefined) return notification(method, message.params)
      if (!isClientId(id)) {
        return reply(errorLine(null, INVALID_REQUEST, "Invalid Request: the id must be a string or a number"))
      }
      return request(message, id, method, reply)
    }

    return {
      handle,
      client: () => clientName,
      initialized: () => initialized,
      cancelAll: Effect.suspend(() => Fiber.interruptAll([...inFlight.values()]))
    }
  }

  return { connect }
}
