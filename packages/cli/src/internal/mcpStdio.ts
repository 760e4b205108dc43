/**
 * The Model Context Protocol's stdio transport for `erp mcp`: JSON-RPC 2.0 messages, one a line, read from stdin and
 * written to stdout, as an `RpcServer.Protocol` for @effect/ai's `McpServer.run`.
 *
 * Written here rather than taken from @effect/rpc 0.76 (`RpcServer.layerProtocolStdio` with
 * `RpcSerialization.layerNdJsonRpc`), which, tried against its own McpServer: answers a string id `"7"` as the
 * number 7; on a string id that is not digits (`"abc"`), or a line that is not JSON, answers nothing and stops
 * answering anything after it; answers an unknown method with a defect under id -32603; fails a `tools/call` without
 * `arguments` (optional in MCP) with code 0; and interrupts the server when stdin ends, losing the answers in flight.
 * Here the server sees ids of its own (a sequence) and the client gets back the id it sent, whatever it was; an
 * unknown method is -32601, a line that is not JSON -32700 (and the next line is read), a missing `arguments` is `{}`;
 * and when stdin ends, the requests already read are answered before `done` succeeds.
 */
import * as McpSchema from "@effect/ai/McpSchema"
import type * as RpcMessage from "@effect/rpc/RpcMessage"
import * as RpcServer from "@effect/rpc/RpcServer"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Mailbox from "effect/Mailbox"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

/** A JSON-RPC id as the client sent it. */
type ClientId = string | number

/** What the transport needs of the process: stdin's lines, and writing one line to stdout. */
export interface Io<E> {
  readonly lines: Stream.Stream<string, E>
  /** Writes `line` (a newline follows); fails once the reader has gone. */
  readonly write: (line: string) => Effect.Effect<void, unknown>
}

export interface Options<E> extends Io<E> {
  /** Added to the answer to `initialize`: how to use this server, for the assistant (MCP's `instructions`). */
  readonly instructions?: string | undefined
}

export interface StdioProtocol {
  readonly protocol: RpcServer.Protocol["Type"]
  /**
   * Succeeds once stdin has ended and every request read from it has been answered and written, or once stdout's
   * reader has gone (nothing more can be said).
   */
  readonly done: Effect.Effect<void>
}

// JSON-RPC's own error codes (https://www.jsonrpc.org/specification#error_object).
const PARSE_ERROR = McpSchema.PARSE_ERROR_CODE
const INVALID_REQUEST = McpSchema.INVALID_REQUEST_ERROR_CODE
const METHOD_NOT_FOUND = McpSchema.METHOD_NOT_FOUND_ERROR_CODE
const INVALID_PARAMS = McpSchema.INVALID_PARAMS_ERROR_CODE
const INTERNAL_ERROR = McpSchema.INTERNAL_ERROR_CODE

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const errorLine = (id: ClientId | null, code: number, message: string, data?: unknown) =>
  JSON.stringify({ jsonrpc: "2.0", id, error: data === undefined ? { code, message } : { code, message, data } })

/**
 * The failure of an encoded `Cause` as a JSON-RPC error: the first failure's `code` and `message` (an `McpError`), a
 * defect's text as an internal error; `undefined` for an interruption only (a cancelled request is not answered).
 */
export const errorOfCause = (
  cause: unknown
): { readonly code: number; readonly message: string; readonly data?: unknown } | undefined => {
  if (!isObject(cause)) return { code: INTERNAL_ERROR, message: "Internal error" }
  switch (cause._tag) {
    case "Fail": {
      const error = cause.error
      if (isObject(error) && typeof error.message === "string") {
        return {
          code: typeof error.code === "number" && Number.isInteger(error.code) && error.code !== 0
            ? error.code
            : INTERNAL_ERROR,
          message: error.message,
          ...(error.data === undefined ? {} : { data: error.data })
        }
      }
      return { code: INTERNAL_ERROR, message: "Internal error" }
    }
    case "Die": {
      const defect = cause.defect
      // Params that do not match the method's schema are answered by RpcServer as a defect whose text is the schema's
      // complaint (a tree: the schema on its first line, what is wrong beneath): what the client needs to fix the call.
      if (typeof defect === "string") {
        const wrong = defect.split("\n").slice(1).map((line) => line.replace(/^[\s└├│─]+/, "")).filter((line) =>
          line !== ""
        )
        return { code: INVALID_PARAMS, message: `Invalid params: ${wrong.length > 0 ? wrong.join(" ") : defect}` }
      }
      return {
        code: INTERNAL_ERROR,
        message: isObject(defect) && typeof defect.message === "string" ? defect.message : "Internal error"
      }
    }
    case "Sequential":
    case "Parallel":
      return errorOfCause(cause.left) ?? errorOfCause(cause.right)
    case "Interrupt":
    case "Empty":
      return undefined
    default:
      return { code: INTERNAL_ERROR, message: "Internal error" }
  }
}

/** The transport: see the module's comment. */
export const make = <E>(options: Options<E>): Effect.Effect<StdioProtocol, never, Scope.Scope> =>
  Effect.gen(function*() {
    const finished = yield* Deferred.make<void>()
    // The client's id of each request the server is handling, by the server's id for it, and its method.
    const pending = new Map<string, { readonly id: ClientId; readonly method: string }>()
    let nextId = 0
    let inputEnded = false
    // Lines to write, in the order they were said; one writer, so a slow reader holds the server back in order.
    const out = yield* Mailbox.make<string>()
    const settle = () => {
      if (inputEnded && pending.size === 0) out.unsafeDone(Exit.void)
    }
    const say = (line: string) => out.offer(line)

    const protocol = yield* RpcServer.Protocol.make((writeRequest) =>
      Effect.gen(function*() {
        const request = (method: string, id: ClientId | undefined, params: unknown) => {
          const internal = id === undefined ? "" : String(++nextId)
          if (id !== undefined) pending.set(internal, { id, method })
          const message: RpcMessage.RequestEncoded = {
            _tag: "Request",
            id: internal,
            tag: method,
            payload: params,
            headers: []
          }
          return writeRequest(0, message)
        }

        const receive = (message: unknown): Effect.Effect<void> => {
          if (!isObject(message) || message.jsonrpc !== "2.0") {
            const id = isObject(message) && (typeof message.id === "string" || typeof message.id === "number")
              ? message.id
              : null
            return say(errorLine(id, INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message"))
          }
          const id = message.id
          const method = message.method
          // An answer to a request of the server's: it sends none (no sampling, roots or elicitation).
          if (typeof method !== "string") return Effect.void
          if (id === undefined) {
            // A notification: never answered. A cancellation names the client's id of the request; the server knows
            // the request by its own.
            if (!McpSchema.ClientNotificationRpcs.requests.has(method)) return Effect.void
            if (method === "notifications/cancelled") {
              const params = isObject(message.params) ? message.params : {}
              const entry = [...pending].find(([, request]) => request.id === params.requestId)
              if (entry === undefined) return Effect.void
              return request(method, undefined, { ...params, requestId: entry[0] })
            }
            return request(method, undefined, message.params)
          }
          if (typeof id !== "string" && typeof id !== "number") {
            return say(errorLine(null, INVALID_REQUEST, "Invalid Request: the id must be a string or a number"))
          }
          if (!McpSchema.ClientRequestRpcs.requests.has(method)) {
            return say(errorLine(id, METHOD_NOT_FOUND, `Method not found: ${method}`))
          }
          // `arguments` is optional in MCP (a tool without parameters), required by @effect/ai's schema.
          const params = method === "tools/call" && isObject(message.params) && message.params.arguments === undefined
            ? { ...message.params, arguments: {} }
            : message.params
          return request(method, id, params)
        }

        const readLine = (line: string): Effect.Effect<void> => {
          if (line.trim() === "") return Effect.void
          let parsed: unknown
          try {
            parsed = JSON.parse(line)
          } catch (error) {
            return say(errorLine(null, PARSE_ERROR, `Parse error: ${(error as Error).message}`))
          }
          // A batch (MCP 2025-03-26): each message is handled, and answered, on its own.
          return Array.isArray(parsed)
            ? parsed.length === 0
              ? say(errorLine(null, INVALID_REQUEST, "Invalid Request: an empty batch"))
              : Effect.forEach(parsed, receive, { discard: true })
            : receive(parsed)
        }

        yield* options.lines.pipe(
          Stream.runForEach(readLine),
          Effect.tapErrorCause((cause) => Effect.logError("stdin failed; answering what was asked", cause)),
          Effect.ignore,
          Effect.ensuring(Effect.sync(() => {
            inputEnded = true
            settle()
          })),
          Effect.forkScoped,
          Effect.interruptible
        )

        yield* Mailbox.toStream(out).pipe(
          Stream.runForEach(options.write),
          // A reader that went away (the client ended): nothing more can be said.
          Effect.ignore,
          Effect.ensuring(Deferred.done(finished, Exit.void)),
          Effect.forkScoped,
          Effect.interruptible
        )

        const answer = (response: RpcMessage.FromServerEncoded): Effect.Effect<void> => {
          switch (response._tag) {
            case "Exit": {
              const request = pending.get(response.requestId)
              if (request === undefined) return Effect.void
              pending.delete(response.requestId)
              const exit = response.exit
              let line: string | undefined
              if (exit._tag === "Success") {
                const result = request.method === "initialize" && options.instructions !== undefined &&
                    isObject(exit.value)
                  ? { ...exit.value, instructions: options.instructions }
                  : exit.value
                line = JSON.stringify({ jsonrpc: "2.0", id: request.id, result })
              } else {
                const error = errorOfCause(exit.cause)
                line = error === undefined ? undefined : errorLine(request.id, error.code, error.message, error.data)
              }
              return Effect.zipRight(line === undefined ? Effect.void : say(line), Effect.sync(settle))
            }
            case "Defect":
              return Effect.logError("MCP server defect", response.defect)
            default:
              return Effect.void
          }
        }

        return {
          disconnects: yield* Mailbox.make<number>(),
          send: (_clientId, response) => {
            const message = response as RpcMessage.FromServerEncoded | RpcMessage.RequestEncoded
            if (message._tag === "Request") {
              // The server's notifications (`notifications/tools/list_changed`, …); it sends no requests of its own.
              return message.id === undefined || message.id === ""
                ? say(JSON.stringify({ jsonrpc: "2.0", method: message.tag, params: message.payload }))
                : Effect.void
            }
            return answer(message)
          },
          end: () => Effect.void,
          clientIds: Effect.succeed(new Set([0])),
          initialMessage: Effect.succeedNone,
          supportsAck: false,
          supportsTransferables: false,
          supportsSpanPropagation: false
        }
      })
    )
    return { protocol, done: Deferred.await(finished) }
  })
