/**
 * The Model Context Protocol's Streamable HTTP transport (MCP 2025-06-18, "Transports") for `erp mcp --http`: one
 * endpoint, `/mcp`, where several clients share one server (one process, one request limit), each in a session of
 * its own, a connection of `mcpProtocol.ts`.
 *
 * - POST carries a JSON-RPC message, or a batch of them (MCP 2025-03-26). `initialize` begins a session: its answer names it in `Mcp-Session-Id`,
 *   and every later message carries it (none: 400; one this server does not hold: 404, and the client initializes
 *   anew). A body of notifications and responses alone is answered 202 without a body. A body with requests is
 *   answered as an event stream (`text/event-stream`: the progress of its requests, then their answers, then the end)
 *   when a request asked for progress or the client accepts nothing else, else as `application/json` (the answer, or
 *   the batch's answers): a plain answer needs no stream.
 * - DELETE ends the session, its calls cancelled. GET is 405: the server never speaks first (no sampling, no list
 *   that changes), so it holds no stream open for it.
 * - A client that goes away before its answers are said has its requests cancelled. The spec would have a server
 *   keep working for a client that may resume the stream, but resuming needs the events kept (an event store) and
 *   this server keeps none: the answers could reach nobody, and the service's requests they would still make count
 *   against the shared limit.
 * - With a token (`ERP_MCP_TOKEN`), every request shows it as `Authorization: Bearer …` (401 otherwise); without
 *   one, the server listens on loopback only. A request sent by a web page whose origin is not this machine is
 *   refused (403): a page could otherwise reach a loopback server through a name it rebinds to 127.0.0.1.
 *
 * Served with @effect/platform's HttpServer on NodeHttpServer (as the sandbox serves), the event stream a streamed
 * response; the body alone is read from the Node request itself, to stop at `MAX_MESSAGE_BYTES` and answer 413
 * (the platform's reader joins every chunk into a new buffer and destroys the socket past its limit).
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Mailbox from "effect/Mailbox"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Crypto from "node:crypto"
import * as Http from "node:http"
import * as Net from "node:net"
import * as Protocol from "./mcpProtocol.js"

/**
 * The server could not start: it cannot listen, or was asked to serve beyond this machine without a token (`settings`:
 * what the command was given refuses it, a usage error).
 */
export class McpHttpError extends Schema.TaggedError<McpHttpError>()("McpHttpError", {
  reason: Schema.String,
  settings: Schema.Boolean
}) {
  override get message(): string {
    return this.reason
  }
}

export interface HttpOptions {
  readonly host: string
  /** 0: the OS picks. */
  readonly port: number
  /** ERP_MCP_TOKEN: when set, every request must show it as a bearer token. */
  readonly token: Redacted.Redacted<string> | undefined
  /** Called once listening, with the address clients use (http://HOST:PORT/mcp). */
  readonly onListen: (url: string) => Effect.Effect<void>
}

/** The one path served. */
export const PATH = "/mcp"

/** Sessions held at once: a client that never ends its session (most never do) costs one until it is pushed out. */
export const MAX_SESSIONS = 1_000

// The spec's error codes beside JSON-RPC's: -32000 for a request the transport refuses, -32001 for an unknown session
// (as the official SDK answers).
const REFUSED = -32000
const SESSION_NOT_FOUND = -32001

const loopback = new Net.BlockList()
loopback.addSubnet("127.0.0.0", 8, "ipv4")
loopback.addAddress("::1", "ipv6")

const unbracketed = (host: string) => (host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host)

/** Whether `host` (a name or an address, IPv6 bracketed or not) names this machine's loopback interface. */
export const isLoopback = (host: string): boolean => {
  const name = unbracketed(host).toLowerCase()
  if (name === "localhost" || name.endsWith(".localhost")) return true
  const family = Net.isIP(name)
  return family !== 0 && loopback.check(name, family === 4 ? "ipv4" : "ipv6")
}

// A page's origin may call the server when it is this machine's (a tool served on localhost) or the very host served:
// a name that only resolves here, as a rebound one does, is neither.
const originAllowed = (origin: string, served: string): boolean => {
  let hostname: string
  try {
    hostname = new URL(origin).hostname
  } catch {
    return false // "null" (a sandboxed frame, a file), or not a URL
  }
  return isLoopback(hostname) || unbracketed(hostname).toLowerCase() === unbracketed(served).toLowerCase()
}

// The token is compared as a digest, in constant time: the time taken tells nothing of how much of it was right, and
// digests have one length whatever was sent.
const digest = (text: string) => Crypto.createHash("sha256").update(text, "utf8").digest()

const bearer = (header: string | undefined): string | undefined => {
  const match = header === undefined ? null : /^Bearer +(\S+) *$/i.exec(header)
  return match === null ? undefined : match[1]
}

const essence = (mediaType: string) => mediaType.split(";")[0]!.trim().toLowerCase()

// What the client takes back: no Accept header takes anything.
const accepted = (header: string | undefined) => {
  const types = header === undefined || header.trim() === "" ? ["*/*"] : header.split(",").map(essence)
  return {
    json: types.some((type) => type === "application/json" || type === "application/*" || type === "*/*"),
    stream: types.some((type) => type === "text/event-stream" || type === "text/*" || type === "*/*")
  }
}

const jsonContent = { contentType: "application/json" }

const refusal = (status: number, code: number, message: string, headers?: Record<string, string>) =>
  HttpServerResponse.text(Protocol.errorLine(null, code, message), { status, ...jsonContent, headers })

// One event of the stream: a line of JSON-RPC as `data`, split where it breaks (a result's structured text may hold
// line breaks outside strings), which the reader joins back with "\n", whitespace to JSON as the break was.
const event = (line: string) =>
  `event: message\n${line.split(/\r\n|\r|\n/).map((part) => `data: ${part}`).join("\n")}\n\n`

const eventStreamHeaders = { "cache-control": "no-cache, no-transform", "x-accel-buffering": "no" }

const eventStream = (lines: Stream.Stream<string>, headers: Record<string, string>) => {
  const encoder = new TextEncoder()
  return HttpServerResponse.stream(Stream.map(lines, (line) => encoder.encode(event(line))), {
    contentType: "text/event-stream",
    headers: { ...eventStreamHeaders, ...headers }
  })
}

type Body =
  | { readonly _tag: "Text"; readonly text: string }
  | { readonly _tag: "TooLarge" }
  | { readonly _tag: "Failed" }

// The body, as UTF-8 text, stopping once it passes MAX_MESSAGE_BYTES: past that, what comes is read and dropped (the
// answer closes the connection), never held.
const readBody = (request: Http.IncomingMessage): Effect.Effect<Body> =>
  Effect.async<Body>((resume) => {
    const declared = Number(request.headers["content-length"])
    if (Number.isFinite(declared) && declared > Protocol.MAX_MESSAGE_BYTES) {
      request.resume()
      return resume(Effect.succeed({ _tag: "TooLarge" }))
    }
    let chunks: Array<Buffer> = []
    let size = 0
    const stop = () => {
      request.off("data", onData)
      request.off("end", onEnd)
      request.off("error", onError)
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size <= Protocol.MAX_MESSAGE_BYTES) return void chunks.push(chunk)
      stop()
      chunks = []
      request.resume()
      resume(Effect.succeed({ _tag: "TooLarge" }))
    }
    const onEnd = () => {
      stop()
      resume(Effect.succeed({ _tag: "Text", text: Buffer.concat(chunks, size).toString("utf8") }))
    }
    const onError = () => {
      stop()
      resume(Effect.succeed({ _tag: "Failed" }))
    }
    request.on("data", onData)
    request.on("end", onEnd)
    request.on("error", onError)
    return Effect.sync(stop)
  })

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const isInitialize = (message: unknown) =>
  Protocol.isRequest(message) && (message as { method: string }).method === "initialize"

// A request without its progress token, for a client that takes no stream: it asked for notifications it could not
// be sent.
const withoutProgress = (message: unknown): unknown => {
  if (!isObject(message) || !isObject(message.params) || !isObject(message.params._meta)) return message
  const { progressToken: _, ...meta } = message.params._meta
  return { ...message, params: { ...message.params, _meta: meta } }
}

interface Session {
  readonly id: string
  /** Names the session in the log and in the calls' events: not the id, which is the client's to keep. */
  readonly label: string
  readonly connection: Protocol.Connection
  /** POSTs of the session being answered: a session with none may be pushed out for a new one. */
  open: number
}

const describeListenError = (cause: unknown): string => {
  const code = isObject(cause) && typeof cause.code === "string" ? cause.code : undefined
  switch (code) {
    case "EADDRINUSE":
      return "the port is in use (another server, or an `erp mcp --http` already running)"
    case "EACCES":
      return "permission denied (ports below 1024 need privileges)"
    case "EADDRNOTAVAIL":
      return "no interface of this machine has that address"
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return "the host name does not resolve"
    default:
      return cause instanceof Error ? cause.message : String(cause)
  }
}

const urlHost = (host: string) => (host.includes(":") && !host.startsWith("[") ? `[${host}]` : host)

/**
 * Serves until interrupted; fails at once when it cannot listen, or when `host` is not a loopback address and no
 * token is set. Interrupted, the calls in flight are cancelled and every connection closed, idle ones included.
 */
export const serve = (
  server: Protocol.Server,
  options: HttpOptions
): Effect.Effect<never, McpHttpError, Scope.Scope> =>
  Effect.gen(function*() {
    if (options.token === undefined && !isLoopback(options.host)) {
      return yield* new McpHttpError({
        reason: `refused to serve MCP on ${options.host} without a token: set ERP_MCP_TOKEN to serve beyond this ` +
          "machine (clients then send it as Authorization: Bearer …)",
        settings: true
      })
    }
    const expected = options.token === undefined ? undefined : Redacted.value(options.token)
    if (expected !== undefined && expected.trim() === "") {
      return yield* new McpHttpError({
        reason: "ERP_MCP_TOKEN is empty: set it to a secret, or unset it",
        settings: true
      })
    }
    const expectedDigest = expected === undefined ? undefined : digest(expected)
    const authorized = (header: string | undefined) => {
      if (expectedDigest === undefined) return true
      const given = bearer(header)
      return Crypto.timingSafeEqual(digest(given ?? ""), expectedDigest) && given !== undefined
    }

    // In the order last used: the first with nothing open is the one pushed out.
    const sessions = new Map<string, Session>()
    const touch = (session: Session) => {
      sessions.delete(session.id)
      sessions.set(session.id, session)
    }
    const clientOf = (session: Session) => JSON.stringify(session.connection.client() ?? "unnamed")
    // Uninterruptible: a session taken out is always cancelled and logged, even when its DELETE's client goes.
    const end = (session: Session, why: string) =>
      Effect.uninterruptible(Effect.suspend(() => {
        sessions.delete(session.id)
        return session.connection.cancelAll.pipe(
          Effect.zipRight(Effect.logInfo(`MCP session ${session.label} ended (${why}): client ${clientOf(session)}`))
        )
      }))

    // The messages of one body, handled at once; interrupted (its client went), each request's call is cancelled with
    // it (`Protocol.Connection.handle`).
    const handleAll = (connection: Protocol.Connection, messages: ReadonlyArray<unknown>, say: Protocol.Reply) =>
      Effect.forEach(messages, (message) => connection.handle(message, say), {
        concurrency: "unbounded",
        discard: true
      })

    const answer = (lines: ReadonlyArray<string>, batch: boolean, headers: Record<string, string> = {}) =>
      HttpServerResponse.text(batch ? `[${lines.join(",")}]` : lines[lines.length - 1]!, { ...jsonContent, headers })

    // Answers said already, as the client takes them.
    const answerAsTaken = (
      lines: ReadonlyArray<string>,
      batch: boolean,
      takes: ReturnType<typeof accepted>,
      headers: Record<string, string> = {}
    ) => takes.json ? answer(lines, batch, headers) : eventStream(Stream.fromIterable(lines), headers)

    const initialize = (message: unknown, batch: boolean, takes: ReturnType<typeof accepted>) =>
      Effect.gen(function*() {
        const label = Crypto.randomBytes(4).toString("hex")
        const connection = server.connect(label)
        const lines: Array<string> = []
        yield* connection.handle(message, (line) => Effect.sync(() => lines.push(line)))
        if (!connection.initialized()) return answerAsTaken(lines, batch, takes) // its params were wrong: no session
        if (sessions.size >= MAX_SESSIONS) {
          const idle = [...sessions.values()].find((session) => session.open === 0)
          if (idle === undefined) {
            return refusal(503, REFUSED, `Service Unavailable: ${MAX_SESSIONS} sessions are all busy; try again later`)
          }
          yield* end(idle, `the least recently used of ${MAX_SESSIONS}, for a new one`)
        }
        // 128 random bits, in visible ASCII as the spec asks.
        const session: Session = { id: Crypto.randomBytes(16).toString("hex"), label, connection, open: 0 }
        sessions.set(session.id, session)
        yield* Effect.logInfo(`MCP session ${label} started: client ${clientOf(session)}`)
        return answerAsTaken(lines, batch, takes, { "mcp-session-id": session.id })
      })

    const post = (request: HttpServerRequest.HttpServerRequest) =>
      Effect.gen(function*() {
        const headers = request.headers
        if (essence(headers["content-type"] ?? "") !== "application/json") {
          return refusal(415, REFUSED, "Unsupported Media Type: the body is JSON-RPC, sent as application/json")
        }
        const takes = accepted(headers["accept"])
        if (!takes.json && !takes.stream) {
          return refusal(406, REFUSED, "Not Acceptable: answers are application/json or text/event-stream")
        }
        const body = yield* readBody(NodeHttpServerRequest.toIncomingMessage(request))
        if (body._tag === "TooLarge") {
          return refusal(
            413,
            Protocol.INVALID_REQUEST,
            `Invalid Request: a message is at most ${Protocol.MAX_MESSAGE_BYTES} bytes`,
            { connection: "close" }
          )
        }
        if (body._tag === "Failed") return refusal(400, REFUSED, "Bad Request: the body could not be read")
        const parsed = Protocol.parse(body.text)
        if (parsed._tag === "Invalid") return HttpServerResponse.text(parsed.line, { status: 400, ...jsonContent })
        const { batch, messages } = parsed

        if (messages.some(isInitialize)) {
          if (messages.length > 1) {
            return refusal(400, Protocol.INVALID_REQUEST, "Invalid Request: initialize is sent alone, not in a batch")
          }
          return yield* initialize(messages[0], batch, takes)
        }
        const id = headers["mcp-session-id"]
        if (id === undefined) {
          return refusal(400, REFUSED, "Bad Request: no Mcp-Session-Id header: a session begins with initialize")
        }
        const session = sessions.get(id)
        if (session === undefined) {
          return refusal(
            404,
            SESSION_NOT_FOUND,
            "Session not found: it ended, or the server restarted; initialize anew"
          )
        }
        const version = headers["mcp-protocol-version"]
        if (version !== undefined && !Protocol.PROTOCOL_VERSIONS.includes(version)) {
          return refusal(
            400,
            REFUSED,
            `Bad Request: MCP-Protocol-Version ${JSON.stringify(version.slice(0, 40))} is not served (served: ${
              Protocol.PROTOCOL_VERSIONS.join(", ")
            })`
          )
        }
        touch(session)
        const { connection } = session
        const open = Effect.acquireRelease(
          Effect.sync(() => session.open++),
          () => Effect.sync(() => session.open--)
        )

        if (!messages.some(Protocol.isRequest)) {
          // Notifications and responses: nothing to answer, unless one was no message at all.
          const lines: Array<string> = []
          yield* handleAll(connection, messages, (line) => Effect.sync(() => lines.push(line)))
          return lines.length === 0
            ? HttpServerResponse.empty({ status: 202 })
            : HttpServerResponse.text(batch ? `[${lines.join(",")}]` : lines[0]!, { status: 400, ...jsonContent })
        }

        const asksProgress = messages.some((message) => Protocol.progressTokenOf(message) !== undefined)
        if (takes.stream && (asksProgress || !takes.json)) {
          // The stream lives as long as the response is written; the requests are handled while it is.
          const lines = Stream.unwrapScoped(Effect.gen(function*() {
            yield* open
            const out = yield* Mailbox.make<string>()
            yield* handleAll(connection, messages, (line) => Effect.asVoid(out.offer(line))).pipe(
              Effect.ensuring(out.end),
              Effect.interruptible,
              Effect.forkScoped
            )
            return Mailbox.toStream(out)
          }))
          return eventStream(lines, {})
        }

        const lines: Array<string> = []
        yield* open.pipe(
          Effect.zipRight(handleAll(
            connection,
            takes.stream ? messages : messages.map(withoutProgress),
            (line) => Effect.sync(() => lines.push(line))
          )),
          Effect.scoped
        )
        // Every request cancelled (`notifications/cancelled` on another POST): nothing is left to answer.
        return lines.length === 0 ? HttpServerResponse.empty({ status: 202 }) : answer(lines, batch)
      })

    const remove = (request: HttpServerRequest.HttpServerRequest) =>
      Effect.gen(function*() {
        const id = request.headers["mcp-session-id"]
        if (id === undefined) return refusal(400, REFUSED, "Bad Request: no Mcp-Session-Id header to end")
        const session = sessions.get(id)
        if (session === undefined) return refusal(404, SESSION_NOT_FOUND, "Session not found")
        yield* end(session, "by the client")
        return HttpServerResponse.empty({ status: 204 })
      })

    const app = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const origin = request.headers["origin"]
      if (origin !== undefined && !originAllowed(origin, options.host)) {
        return refusal(403, REFUSED, "Forbidden: requests from a web page of another origin are refused")
      }
      if (!authorized(request.headers["authorization"])) {
        return refusal(401, REFUSED, "Unauthorized: send the server's token as Authorization: Bearer …", {
          "www-authenticate": "Bearer"
        })
      }
      if (new URL(request.url, "http://host").pathname !== PATH) {
        return refusal(404, REFUSED, `Not Found: MCP is served at ${PATH}`)
      }
      switch (request.method) {
        case "POST":
          return yield* post(request)
        case "DELETE":
          return yield* remove(request)
        default:
          return refusal(405, REFUSED, "Method Not Allowed: POST messages, DELETE the session", {
            allow: "POST, DELETE"
          })
      }
    }).pipe(
      // The platform answers uninterruptibly; a client that goes away interrupts this, and so cancels its calls.
      Effect.interruptible
    )

    let node: Http.Server | undefined
    const http = yield* NodeHttpServer.make(() => (node = Http.createServer()), {
      host: options.host,
      port: options.port
    }).pipe(
      Effect.mapError((error) =>
        new McpHttpError({
          reason: `cannot serve MCP at http://${urlHost(options.host)}:${options.port}${PATH}: ${
            describeListenError(error.cause)
          }`,
          settings: false
        })
      )
    )
    // Stopping (after the handler is taken off, so no session begins meanwhile): the calls cancelled (their streams
    // then end), and every connection closed, idle keep-alive ones too, so the server closes at once rather than when
    // clients let go.
    yield* Effect.addFinalizer(() =>
      Effect.forEach([...sessions.values()], (session) => end(session, "the server stopped"), { discard: true }).pipe(
        Effect.ensuring(Effect.sync(() => node?.closeAllConnections()))
      )
    )
    // No span per HTTP request: they would carry the session's id in their headers, and the calls have their own.
    yield* http.serve(app).pipe(HttpMiddleware.withTracerDisabledWhenEffect(() => true))
    const port = http.address._tag === "TcpAddress" ? http.address.port : options.port
    yield* options.onListen(`http://${urlHost(options.host)}:${port}${PATH}`)
    return yield* Effect.never
  })
