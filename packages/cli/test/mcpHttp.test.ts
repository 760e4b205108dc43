import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { Progress } from "@modelcontextprotocol/sdk/types.js"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Logger from "effect/Logger"
import * as Redacted from "effect/Redacted"
import * as Http from "node:http"
import { afterEach, describe, expect, it } from "vitest"
import * as Http_ from "../src/internal/mcpHttp.js"
import * as Protocol from "../src/internal/mcpProtocol.js"

// `erp mcp --http`'s transport, served in this process on loopback (port 0) with a few fake tools, and driven by the
// official SDK's client as an assistant's host drives it, beside plain requests for what the SDK never sends.

const TOKEN = "test-token-5f0c2a9e71d34b8c"
const BIG = "{\"id\":12345678901234567890,\"name\":\"Exact\"}"

/** What the fake tools saw: the calls cancelled, by tool. */
const cancelled: Array<string> = []
let waiting: Deferred.Deferred<void> = Deferred.unsafeMake(undefined as never)

const tool = (
  name: string,
  call: Protocol.ToolDefinition["call"]
): Protocol.ToolDefinition => ({
  name,
  title: name,
  description: `the ${name} tool`,
  inputSchema: { type: "object", properties: {} },
  annotations: { readOnlyHint: true },
  call
})

const definition: Protocol.ServerDefinition = {
  name: "erp-test",
  version: "0.0.0",
  instructions: "a test server",
  progressIntervalMillis: 0,
  resources: [],
  prompts: [],
  tools: [
    // Four steps, each said as progress, 10 ms apart.
    tool("steps", (_, progress) =>
      Effect.gen(function*() {
        for (let step = 1; step <= 4; step++) {
          yield* Effect.sleep("10 millis")
          yield* progress.report(step, 4, `step ${step}`)
        }
        return { texts: ["four steps"], isError: false }
      })),
    // A record whose id a double would round.
    tool("big", () => Effect.succeed({ texts: [BIG], isError: false })),
    // Waits until cancelled, and says it was.
    tool("wait", () =>
      Deferred.succeed(waiting, undefined).pipe(
        Effect.zipRight(Effect.never),
        Effect.onInterrupt(() => Effect.sync(() => cancelled.push("wait")))
      ))
  ]
}

interface Running {
  readonly url: string
  readonly logs: ReadonlyArray<string>
  readonly stop: () => Promise<number>
}

const running: Array<Running> = []
const clients: Array<Client> = []

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close().catch(() => undefined)))
  await Promise.all(running.splice(0).map((server) => server.stop()))
})

/** Serves the fake tools; every log line (logfmt, annotations included) is kept. */
const start = async (options: { readonly token?: string; readonly host?: string } = {}): Promise<Running> => {
  const logs: Array<string> = []
  const logger = Logger.make((entry) => void logs.push(Logger.logfmtLogger.log(entry)))
  const listening = Effect.runSync(Deferred.make<string>())
  const fiber = Effect.runFork(
    Effect.scoped(Http_.serve(Protocol.make(definition), {
      host: options.host ?? "127.0.0.1",
      port: 0,
      token: options.token === undefined ? undefined : Redacted.make(options.token),
      onListen: (url) => Deferred.succeed(listening, url)
    })).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
  )
  const url = await Effect.runPromise(Effect.raceFirst(
    Deferred.await(listening),
    Fiber.join(fiber).pipe(Effect.flatMap(() => Effect.die("the server ended before listening")))
  ))
  const server: Running = {
    url,
    logs,
    stop: async () => {
      const began = performance.now()
      await Effect.runPromise(Fiber.interrupt(fiber))
      return performance.now() - began
    }
  }
  running.push(server)
  return server
}

const connect = async (url: string, token?: string) => {
  const client = new Client({ name: "http-test-client", version: "1.0.0" })
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: token === undefined ? {} : { headers: { Authorization: `Bearer ${token}` } }
  })
  clients.push(client)
  await client.connect(transport)
  return { client, transport }
}

const initializeBody = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "plain", version: "1" } }
})

const post = (url: string, body: string, headers: Record<string, string> = {}) =>
  fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body
  })

/** A JSON answer's body, to read fields of. */
const json = async (response: Response): Promise<any> => response.json()

const waitFor = async (check: () => boolean, what: string) => {
  const until = Date.now() + 5_000
  while (!check()) {
    if (Date.now() > until) throw new Error(`waited 5 s for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

const freshWait = () => {
  waiting = Effect.runSync(Deferred.make<void>())
  cancelled.length = 0
  return Effect.runPromise(Deferred.await(waiting))
}

describe("erp mcp --http, driven by the official SDK's client", () => {
  it("initializes, lists the tools, and calls them: progress as it comes, numbers as written", async () => {
    const server = await start()
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
    const { client, transport } = await connect(server.url)
    expect(transport.sessionId).toMatch(/^[0-9a-f]{32}$/)
    expect(client.getServerVersion()?.name).toBe("erp-test")

    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).toEqual(["steps", "big", "wait"])

    const progress: Array<Progress> = []
    const result = await client.callTool({ name: "steps", arguments: {} }, undefined, {
      onprogress: (p) => progress.push(p)
    })
    expect(result.content).toEqual([{ type: "text", text: "four steps" }])
    expect(progress.map((p) => p.progress)).toEqual([1, 2, 3, 4])
    expect(progress[3]).toMatchObject({ total: 4, message: "step 4" })

    // Without progress asked, the answer comes as JSON; the record's text is the server's, to the last digit.
    const big = await client.callTool({ name: "big", arguments: {} })
    expect(big.content).toEqual([{ type: "text", text: BIG }])

    await waitFor(() => server.logs.some((line) => line.includes("started")), "the session's log line")
    const started = server.logs.find((line) => line.includes("started"))!
    expect(started).toContain("http-test-client")
    expect(started).not.toContain(transport.sessionId!)
  })

  it("answers as the client accepts: JSON alone, an event stream alone, a batch as an array", async () => {
    const server = await start()
    const init = await post(server.url, initializeBody, { accept: "application/json" })
    expect(init.status).toBe(200)
    expect(init.headers.get("content-type")).toBe("application/json")
    const session = init.headers.get("mcp-session-id")!
    expect((await json(init)).result.serverInfo.name).toBe("erp-test")
    const headers = { "mcp-session-id": session }

    const initialized = await post(
      server.url,
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
      headers
    )
    expect(initialized.status).toBe(202)
    expect(await initialized.text()).toBe("")

    const batch = await post(
      server.url,
      "[{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"nope\"}]",
      { ...headers, accept: "application/json" }
    )
    const answers = (await batch.json()) as Array<{ id: number; result?: object; error?: { code: number } }>
    expect(answers.sort((a, b) => a.id - b.id)).toEqual([
      { jsonrpc: "2.0", id: 2, result: {} },
      { jsonrpc: "2.0", id: 3, error: { code: Protocol.METHOD_NOT_FOUND, message: "Method not found: nope" } }
    ])

    // A client that takes only a stream gets one, its progress first, then the answer, then the end.
    const streamed = await post(
      server.url,
      "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"steps\",\"_meta\":{\"progressToken\":\"p\"}}}",
      { ...headers, accept: "text/event-stream" }
    )
    expect(streamed.headers.get("content-type")).toBe("text/event-stream")
    const events = (await streamed.text()).split("\n\n").filter((e) => e !== "")
    expect(events).toHaveLength(5)
    expect(
      events.slice(0, 4).every((e) => e.startsWith("event: message\ndata: ") && e.includes("notifications/progress"))
    )
      .toBe(true)
    expect(JSON.parse(events[4]!.split("data: ")[1]!)).toMatchObject({ id: 4, result: { isError: false } })

    // A client that takes JSON alone and asks for progress: the answer, without the progress it cannot be sent.
    const plain = await post(
      server.url,
      "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"steps\",\"_meta\":{\"progressToken\":\"p\"}}}",
      { ...headers, accept: "application/json" }
    )
    expect((await json(plain)).result.content).toEqual([{ type: "text", text: "four steps" }])

    expect((await post(server.url, "{\"jsonrpc\":", headers)).status).toBe(400)
    expect((await post(server.url, initializeBody, { accept: "text/html" })).status).toBe(406)
    expect((await post(server.url, initializeBody, { "content-type": "text/plain" })).status).toBe(415)
    expect((await fetch(server.url, { headers })).status).toBe(405)
    expect((await fetch(server.url.replace("/mcp", "/other"), { method: "POST", body: initializeBody })).status).toBe(
      404
    )
  })

  it("cancels a call the client aborts, by notification or by going away", async () => {
    const server = await start()
    const { client, transport } = await connect(server.url)

    // Aborted with progress asked (an event stream), then without (JSON): the SDK sends notifications/cancelled.
    for (const onprogress of [() => {}, undefined]) {
      const began = freshWait()
      const controller = new AbortController()
      const call = client.callTool({ name: "wait", arguments: {} }, undefined, {
        signal: controller.signal,
        ...(onprogress === undefined ? {} : { onprogress })
      })
      await began
      controller.abort("enough")
      await expect(call).rejects.toThrow()
      await waitFor(() => cancelled.includes("wait"), "the call's cancellation")
    }

    // A client that closes its connection mid-call: nobody is left to read the answer, so the call ends.
    const began = freshWait()
    const gone = new AbortController()
    const request = fetch(server.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": transport.sessionId!
      },
      body: "{\"jsonrpc\":\"2.0\",\"id\":\"raw\",\"method\":\"tools/call\",\"params\":{\"name\":\"wait\"}}",
      signal: gone.signal
    })
    await began
    gone.abort()
    await expect(request).rejects.toThrow()
    await waitFor(() => cancelled.includes("wait"), "the call's cancellation after the client went")

    // The session still serves.
    expect((await client.callTool({ name: "big", arguments: {} })).content).toEqual([{ type: "text", text: BIG }])
  })

  it("holds sessions: none is 400, an unknown one 404, and DELETE ends one", async () => {
    const server = await start()
    const { client, transport } = await connect(server.url)
    const ping = "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}"

    const missing = await post(server.url, ping)
    expect(missing.status).toBe(400)
    expect((await json(missing)).error.message).toContain("Mcp-Session-Id")
    const unknown = await post(server.url, ping, { "mcp-session-id": "0".repeat(32) })
    expect(unknown.status).toBe(404)
    expect((await json(unknown)).error.code).toBe(-32001)
    const version = await post(server.url, ping, {
      "mcp-session-id": transport.sessionId!,
      "mcp-protocol-version": "1999-01-01"
    })
    expect(version.status).toBe(400)
    expect((await post(server.url, ping, { "mcp-session-id": transport.sessionId! })).status).toBe(200)

    const session = transport.sessionId!
    const began = freshWait()
    const call = client.callTool({ name: "wait", arguments: {} })
    await began
    await transport.terminateSession()
    await waitFor(() => cancelled.includes("wait"), "the session's calls cancelled")
    await client.close()
    await expect(call).rejects.toThrow()
    expect((await post(server.url, ping, { "mcp-session-id": session })).status).toBe(404)
    expect((await fetch(server.url, { method: "DELETE", headers: { "mcp-session-id": session } })).status).toBe(404)
    expect((await fetch(server.url, { method: "DELETE" })).status).toBe(400)
    await waitFor(() => server.logs.some((line) => line.includes("ended (by the client)")), "the session's end logged")
    expect(server.logs.find((line) => line.includes("ended (by the client)"))).toContain("http-test-client")
  })

  it(`holds ${Http_.MAX_SESSIONS} sessions, pushing out the one idle longest for a new one`, async () => {
    const server = await start()
    const initialize = async () => {
      const response = await post(server.url, initializeBody, { accept: "application/json" })
      expect(response.status).toBe(200)
      await response.arrayBuffer()
      return response.headers.get("mcp-session-id")!
    }
    // The oldest session is busy (a call in flight): it stays; the next oldest, idle, is the one to go.
    const busy = await connect(server.url)
    const began = freshWait()
    const call = busy.client.callTool({ name: "wait", arguments: {} })
    await began
    const idle = await initialize()
    const batches: Array<ReadonlyArray<string>> = []
    for (let made = 2; made < Http_.MAX_SESSIONS; made += 25) {
      batches.push(await Promise.all(Array.from({ length: Math.min(25, Http_.MAX_SESSIONS - made) }, initialize)))
    }
    const ping = "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}"
    const status = async (session: string) => (await post(server.url, ping, { "mcp-session-id": session })).status
    expect(await status(idle)).toBe(200)
    // Used just now, `idle` is no longer the least recently used: one of the first batch made after it goes instead.
    const newest = await initialize()
    expect(await status(newest)).toBe(200)
    expect(await status(idle)).toBe(200)
    const firstBatch = await Promise.all(batches[0]!.map(status))
    expect(firstBatch.filter((s) => s === 404)).toHaveLength(1)
    expect(await Promise.all(batches[1]!.map(status))).toEqual(batches[1]!.map(() => 200))
    expect(server.logs.filter((line) => line.includes("least recently used"))).toHaveLength(1)
    expect(cancelled).toEqual([])
    expect(await busy.client.ping()).toEqual({})
    await busy.client.close()
    await expect(call).rejects.toThrow()
  })

  it("refuses a web page of another origin, and takes this machine's", async () => {
    const server = await start()
    for (const origin of ["http://evil.example", "http://127.0.0.1.evil.example:8080", "null"]) {
      const refused = await post(server.url, initializeBody, { origin })
      expect(refused.status, origin).toBe(403)
    }
    for (const origin of ["http://localhost:6274", "http://127.0.0.1:3000", "http://[::1]:80"]) {
      const taken = await post(server.url, initializeBody, { origin })
      expect(taken.status, origin).toBe(200)
    }
  })

  it("with a token, serves only who shows it, and logs it nowhere", async () => {
    const server = await start({ token: TOKEN, host: "localhost" })
    expect(server.url).toMatch(/^http:\/\/localhost:\d+\/mcp$/)

    for (const token of [undefined, "wrong-token", `${TOKEN}x`]) {
      const error = await connect(server.url, token).then(() => undefined, (e: unknown) => e)
      expect(error).toBeInstanceOf(StreamableHTTPError)
      expect((error as StreamableHTTPError).code).toBe(401)
    }
    const refused = await post(server.url, initializeBody, { authorization: "Basic Zm9vOmJhcg==" })
    expect(refused.status).toBe(401)
    expect(refused.headers.get("www-authenticate")).toBe("Bearer")

    const { client } = await connect(server.url, TOKEN)
    const progress: Array<number> = []
    await client.callTool({ name: "steps", arguments: {} }, undefined, { onprogress: (p) => progress.push(p.progress) })
    expect(progress).toEqual([1, 2, 3, 4])
    await client.close()
    await server.stop()
    running.splice(running.indexOf(server), 1)

    expect(server.logs.some((line) => line.includes("started"))).toBe(true)
    expect(server.logs.some((line) => line.includes("ended"))).toBe(true)
    for (const line of server.logs) {
      expect(line).not.toContain(TOKEN)
      expect(line.toLowerCase()).not.toContain("bearer")
    }
  })

  it("refuses to start beyond loopback without a token, or where it cannot listen", async () => {
    const attempt = (host: string, port: number, token?: string) =>
      Effect.runPromiseExit(Effect.scoped(Http_.serve(Protocol.make(definition), {
        host,
        port,
        token: token === undefined ? undefined : Redacted.make(token),
        onListen: () => Effect.void
      })))
    for (const host of ["0.0.0.0", "::", "192.0.2.1", "example.com"]) {
      const exit = await attempt(host, 0)
      expect(Exit.isFailure(exit) && String(exit.cause)).toContain("set ERP_MCP_TOKEN to serve beyond this machine")
    }
    const empty = await attempt("127.0.0.1", 0, " ")
    expect(Exit.isFailure(empty) && String(empty.cause)).toContain("ERP_MCP_TOKEN is empty")

    const busy = Http.createServer()
    await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve))
    try {
      const exit = await attempt("127.0.0.1", (busy.address() as { port: number }).port)
      expect(Exit.isFailure(exit) && String(exit.cause)).toContain("the port is in use")
    } finally {
      await new Promise((resolve) => busy.close(resolve))
    }

    expect(Http_.isLoopback("127.0.0.1")).toBe(true)
    expect(Http_.isLoopback("127.8.9.10")).toBe(true)
    expect(Http_.isLoopback("::1")).toBe(true)
    expect(Http_.isLoopback("[::1]")).toBe(true)
    expect(Http_.isLoopback("::ffff:127.0.0.1")).toBe(true)
    expect(Http_.isLoopback("LocalHost")).toBe(true)
    expect(Http_.isLoopback("128.0.0.1")).toBe(false)
    expect(Http_.isLoopback("localhost.example.com")).toBe(false)
  })

  it("refuses a body past the message limit without holding it", async () => {
    const server = await start()
    const tooBig = await post(server.url, "x".repeat(Protocol.MAX_MESSAGE_BYTES + 1))
    expect(tooBig.status).toBe(413)
    expect((await json(tooBig)).error.message).toContain(`${Protocol.MAX_MESSAGE_BYTES} bytes`)

    // Sent in chunks, with no length said first: refused once past the limit, while the client is still sending. The
    // server answers 413 and closes; a client still writing may see the close (EPIPE, ECONNRESET) before it reads the
    // answer, which is a refusal too.
    const { port } = new URL(server.url)
    let sent = 0
    const outcome = await new Promise<number | string>((resolve) => {
      const request = Http.request({
        host: "127.0.0.1",
        port,
        path: "/mcp",
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json" }
      }, (response) => {
        response.resume()
        resolve(response.statusCode!)
      })
      request.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message))
      const chunk = Buffer.alloc(1024 * 1024, "x")
      const send = () => {
        while (sent < 2 * Protocol.MAX_MESSAGE_BYTES && request.write(chunk)) sent += chunk.length
        if (sent < 2 * Protocol.MAX_MESSAGE_BYTES) request.once("drain", send)
        else request.end()
      }
      send()
    })
    expect([413, "EPIPE", "ECONNRESET"]).toContain(outcome)
    // And the server goes on.
    const after = await post(server.url, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }))
    expect(after.status).not.toBe(413)
  })

  // Not a timing: the bound tells closing at once from waiting for the client's keep-alive connection to idle out
  // (Node's keepAliveTimeout, 5 s), with room for a loaded machine. The prompt stop itself is measured by hand
  // (docs/mcp.md, "Ending and signals").
  const PROMPTLY = 2_500

  it("stops at once when interrupted: idle, and with a call in flight", async () => {
    const idle = await start()
    const { client } = await connect(idle.url)
    await client.listTools()
    running.splice(running.indexOf(idle), 1)
    expect(await idle.stop()).toBeLessThan(PROMPTLY)

    const busy = await start()
    const second = await connect(busy.url)
    const began = freshWait()
    const call = second.client.callTool({ name: "wait", arguments: {} }, undefined, { onprogress: () => {} })
    await began
    running.splice(running.indexOf(busy), 1)
    expect(await busy.stop()).toBeLessThan(PROMPTLY)
    expect(cancelled).toEqual(["wait"])
    await second.client.close()
    await expect(call).rejects.toThrow()
    expect(busy.logs.some((line) => line.includes("ended (the server stopped)"))).toBe(true)
  })
})
