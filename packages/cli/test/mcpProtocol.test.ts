import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import * as Protocol from "../src/internal/mcpProtocol.js"

// The protocol as a client meets it, without a transport: messages handed to a connection, the lines it says
// collected, on the TestClock.

const RECORD = "{\"id\":12345678901234567890,\"price\":1.10}"

const server = (
  blocked: Deferred.Deferred<void>,
  interrupted: { count: number },
  events: Array<Protocol.CallEvent>
) =>
  Protocol.make({
    onCall: (event) => Effect.sync(() => void events.push(event)),
    name: "erp",
    version: "test",
    instructions: "Read erp://contract first.",
    progressIntervalMillis: 1_000,
    tools: [
      {
        name: "record",
        title: "A record",
        description: "One record with a number beyond a double.",
        inputSchema: { type: "object", properties: {}, additionalProperties: false },
        outputSchema: { type: "object" },
        annotations: { readOnlyHint: true },
        call: () => Effect.succeed({ texts: [RECORD], structured: RECORD, isError: false })
      },
      {
        name: "pages",
        title: "Pages",
        description: "Ten pages a second apart, each reported.",
        inputSchema: { type: "object" },
        annotations: {},
        call: (_args, progress) =>
          Effect.gen(function*() {
            for (let page = 1; page <= 10; page++) {
              yield* Effect.sleep("500 millis")
              yield* progress.report(page * 100)
            }
            return { texts: ["{\"count\":1000}"], isError: false }
          })
      },
      {
        name: "wait",
        title: "Wait",
        description: "Waits until released.",
        inputSchema: { type: "object" },
        annotations: {},
        call: () =>
          Effect.as(Deferred.await(blocked), { texts: ["released"], isError: false }).pipe(
            Effect.onInterrupt(() => Effect.sync(() => interrupted.count++))
          )
      }
    ],
    unlisted: [{
      name: "write",
      title: "A write",
      description: "Refused.",
      inputSchema: { type: "object" },
      annotations: {},
      call: () => Effect.succeed({ texts: ["WritesNotAllowed: read-only"], isError: true })
    }],
    resources: [{
      uri: "erp://contract",
      name: "contract",
      description: "The contract.",
      mimeType: "text/markdown",
      read: Effect.succeed("# The ERP\n")
    }],
    prompts: [{
      name: "partner_summary",
      title: "Summarize a partner",
      description: "Summarize one partner.",
      arguments: [{ name: "partner", description: "Its id or company name.", required: true }],
      get: ({ partner }) => Effect.succeed(`Look up ${partner}.`),
      complete: (_argument, value) =>
        Effect.succeed(["Acme GmbH", "Acme Kft.", "Bolt"].filter((v) => v.startsWith(value)))
    }]
  })

const setup = Effect.gen(function*() {
  const blocked = yield* Deferred.make<void>()
  const interrupted = { count: 0 }
  const events: Array<Protocol.CallEvent> = []
  const connection = server(blocked, interrupted, events).connect("s1")
  const lines: Array<string> = []
  const reply: Protocol.Reply = (line) => Effect.sync(() => void lines.push(line))
  const send = (message: Record<string, unknown>) => connection.handle({ jsonrpc: "2.0", ...message }, reply)
  const answer = (id: number | string) => {
    const found = lines.map((line) => JSON.parse(line)).find((message) => message.id === id)
    return found
  }
  const initialize = send({
    id: 0,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "test", version: "1" } }
  })
  return { blocked, connection, events, interrupted, lines, reply, send, answer, initialize }
})

describe("mcpProtocol", () => {
  it.effect("initialize: the version asked for, capabilities only as served, the instructions", () =>
    Effect.gen(function*() {
      const { answer, connection, initialize } = yield* setup
      expect(connection.initialized()).toBe(false)
      yield* initialize
      const result = answer(0).result
      expect(result.protocolVersion).toBe("2025-06-18")
      // No list ever changes, nothing to subscribe to, no logging level to set.
      expect(result.capabilities).toEqual({ tools: {}, resources: {}, prompts: {}, completions: {} })
      expect(result.instructions).toBe("Read erp://contract first.")
      expect(connection.initialized()).toBe(true)
      expect(connection.client()).toBe("test")
    }))

  it.effect("an unknown protocol version is answered with the latest", () =>
    Effect.gen(function*() {
      const { answer, send } = yield* setup
      yield* send({
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2023-01-01", capabilities: {}, clientInfo: { name: "old", version: "1" } }
      })
      expect(answer(1).result.protocolVersion).toBe(Protocol.PROTOCOL_VERSIONS[0])
    }))

  it.effect("initialize without params: -32602 saying what it needs, no internal names", () =>
    Effect.gen(function*() {
      const { answer, send } = yield* setup
      yield* send({ id: 1, method: "initialize" })
      expect(answer(1).error.code).toBe(Protocol.INVALID_PARAMS)
      expect(answer(1).error.message).toBe("Invalid params: initialize needs \"protocolVersion\", a string")
    }))

  it.effect("requests before initialize are refused (ping is served)", () =>
    Effect.gen(function*() {
      const { answer, send } = yield* setup
      yield* send({ id: 1, method: "tools/list" })
      yield* send({ id: 2, method: "ping" })
      expect(answer(1).error.code).toBe(Protocol.INVALID_REQUEST)
      expect(answer(1).error.message).toContain("before initialize")
      expect(answer(2).result).toEqual({})
    }))

  it.effect("methods never advertised are not found (-32601)", () =>
    Effect.gen(function*() {
      const { answer, initialize, send } = yield* setup
      yield* initialize
      yield* send({ id: 1, method: "logging/setLevel", params: { level: "debug" } })
      yield* send({ id: 2, method: "resources/subscribe", params: { uri: "erp://contract" } })
      yield* send({ id: 3, method: "sampling/createMessage", params: {} })
      for (const id of [1, 2, 3]) expect(answer(id).error.code).toBe(Protocol.METHOD_NOT_FOUND)
    }))

  it.effect("tools/list: output schemas written; a tool's structured content kept exactly as the tool wrote it", () =>
    Effect.gen(function*() {
      const { answer, initialize, lines, send } = yield* setup
      yield* initialize
      yield* send({ id: 1, method: "tools/list" })
      expect(answer(1).result.tools.map((tool: { name: string }) => tool.name)).toEqual(["record", "pages", "wait"])
      expect(answer(1).result.tools[0].outputSchema).toEqual({ type: "object" })
      yield* send({ id: 2, method: "tools/call", params: { name: "record" } })
      const line = lines.find((l) => l.startsWith("{\"jsonrpc\":\"2.0\",\"id\":2,"))!
      expect(line).toContain(`"structuredContent":${RECORD}`)
      expect(answer(2).result.content).toEqual([{ type: "text", text: RECORD }])
    }))

  it.effect("an unlisted tool answers with its own error; an unknown one is -32602", () =>
    Effect.gen(function*() {
      const { answer, events, initialize, send } = yield* setup
      yield* initialize
      yield* send({ id: 1, method: "tools/call", params: { name: "write", arguments: {} } })
      yield* send({ id: 2, method: "tools/call", params: { name: "nope", arguments: {} } })
      yield* send({ id: 3, method: "tools/call", params: { name: "record", arguments: [1] } })
      expect(answer(1).result).toEqual({
        content: [{ type: "text", text: "WritesNotAllowed: read-only" }],
        isError: true
      })
      expect(answer(2).error).toEqual({
        code: Protocol.INVALID_PARAMS,
        message: "Invalid params: no tool is named \"nope\": tools/list lists them"
      })
      expect(answer(3).error.message).toBe("Invalid params: \"arguments\" must be an object, not an array")
      // The log is told how each ended: a tool's own failure, a request refused; never an argument.
      expect(events.map(({ method, outcome, tool }) => [method, tool, outcome])).toEqual([
        ["initialize", undefined, "ok"],
        ["tools/call", "write", "tool error"],
        ["tools/call", "nope", "error"],
        ["tools/call", "record", "error"]
      ])
      expect(events[1]).toMatchObject({ client: "test", connection: "s1" })
    }))

  it.effect("progress: only for a call with a token, at most one a second, never after the answer", () =>
    Effect.gen(function*() {
      const { answer, initialize, lines, send } = yield* setup
      yield* initialize
      const withToken = yield* Effect.fork(
        send({ id: 1, method: "tools/call", params: { name: "pages", _meta: { progressToken: "p1" } } })
      )
      const without = yield* Effect.fork(send({ id: 2, method: "tools/call", params: { name: "pages" } }))
      yield* TestClock.adjust("5 seconds")
      yield* Fiber.join(withToken)
      yield* Fiber.join(without)
      const progress = lines.map((line) => JSON.parse(line)).filter((m) => m.method === "notifications/progress")
      // Pages at 0.5 s, 1 s, … 5 s: the first said, then one a second at most.
      expect(progress.map((m) => m.params)).toEqual([
        { progressToken: "p1", progress: 100 },
        { progressToken: "p1", progress: 300 },
        { progressToken: "p1", progress: 500 },
        { progressToken: "p1", progress: 700 },
        { progressToken: "p1", progress: 900 }
      ])
      const answered = lines.findIndex((line) => line.includes("\"id\":1,"))
      expect(lines.slice(answered).some((line) => line.includes("notifications/progress"))).toBe(false)
      expect(answer(2).result.content[0].text).toBe("{\"count\":1000}")
    }))

  it.effect("notifications/cancelled: the call is not answered, and the connection goes on", () =>
    Effect.gen(function*() {
      const { answer, initialize, lines, send } = yield* setup
      yield* initialize
      const call = yield* Effect.fork(send({ id: "w", method: "tools/call", params: { name: "wait" } }))
      yield* Effect.yieldNow()
      yield* send({ method: "notifications/cancelled", params: { requestId: "w", reason: "user" } })
      yield* Fiber.join(call)
      expect(lines.some((line) => line.includes("\"id\":\"w\""))).toBe(false)
      yield* send({ id: 5, method: "ping" })
      expect(answer(5).result).toEqual({})
    }))

  it.effect("handle interrupted (the client went away): its call is interrupted, unanswered, and its id free", () =>
    Effect.gen(function*() {
      const { answer, initialize, interrupted, lines, send } = yield* setup
      yield* initialize
      const handling = yield* Effect.fork(send({ id: 9, method: "tools/call", params: { name: "wait" } }))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(handling)
      expect(interrupted.count).toBe(1)
      expect(lines.some((line) => line.includes("\"id\":9,"))).toBe(false)
      yield* send({ id: 9, method: "ping" })
      expect(answer(9).result).toEqual({})
    }))

  it.effect("an id in use is refused; 7 and \"7\" are two ids", () =>
    Effect.gen(function*() {
      const { answer, blocked, initialize, lines, send } = yield* setup
      yield* initialize
      const first = yield* Effect.fork(send({ id: 7, method: "tools/call", params: { name: "wait" } }))
      yield* Effect.yieldNow()
      yield* send({ id: 7, method: "ping" })
      yield* send({ id: "7", method: "ping" })
      expect(answer(7).error.message).toContain("is in use")
      expect(answer("7").result).toEqual({})
      yield* Deferred.succeed(blocked, undefined)
      yield* Fiber.join(first)
      expect(lines.filter((line) => line.includes("\"id\":7,")).length).toBe(2)
    }))

  it.effect("resources/read names the content's type; an unknown uri is -32602", () =>
    Effect.gen(function*() {
      const { answer, initialize, send } = yield* setup
      yield* initialize
      yield* send({ id: 1, method: "resources/read", params: { uri: "erp://contract" } })
      yield* send({ id: 2, method: "resources/read", params: { uri: "erp://nope" } })
      expect(answer(1).result).toEqual({
        contents: [{ uri: "erp://contract", mimeType: "text/markdown", text: "# The ERP\n" }]
      })
      expect(answer(2).error.code).toBe(Protocol.INVALID_PARAMS)
    }))

  it.effect("prompts: arguments described; missing or unknown ones -32602 naming them; completion completes", () =>
    Effect.gen(function*() {
      const { answer, initialize, send } = yield* setup
      yield* initialize
      yield* send({ id: 1, method: "prompts/list" })
      expect(answer(1).result.prompts[0].arguments).toEqual([
        { name: "partner", description: "Its id or company name.", required: true }
      ])
      yield* send({ id: 2, method: "prompts/get", params: { name: "partner_summary" } })
      expect(answer(2).error).toEqual({
        code: Protocol.INVALID_PARAMS,
        message: "Invalid params: partner_summary: \"partner\" is required (its arguments: partner)"
      })
      yield* send({
        id: 3,
        method: "prompts/get",
        params: { name: "partner_summary", arguments: { partner: 5, x: "" } }
      })
      expect(answer(3).error.message).toBe(
        "Invalid params: partner_summary: \"partner\" must be a string; \"x\" is not an argument of partner_summary " +
          "(its arguments: partner)"
      )
      yield* send({ id: 4, method: "prompts/get", params: { name: "partner_summary", arguments: { partner: "7" } } })
      expect(answer(4).result.messages).toEqual([{ role: "user", content: { type: "text", text: "Look up 7." } }])
      yield* send({
        id: 5,
        method: "completion/complete",
        params: { ref: { type: "ref/prompt", name: "partner_summary" }, argument: { name: "partner", value: "Ac" } }
      })
      expect(answer(5).result).toEqual({ completion: { values: ["Acme GmbH", "Acme Kft."], total: 2, hasMore: false } })
    }))
})

describe("mcpProtocol.parse", () => {
  it("a message, a batch, a line that is not JSON, an empty batch", () => {
    expect(Protocol.parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}")).toEqual({
      _tag: "Messages",
      messages: [{ jsonrpc: "2.0", id: 1, method: "ping" }],
      batch: false
    })
    expect(Protocol.parse("[{\"a\":1},{\"b\":2}]")).toMatchObject({ _tag: "Messages", batch: true })
    const notJson = Protocol.parse("{nope")
    expect(notJson._tag === "Invalid" && JSON.parse(notJson.line).error.code).toBe(Protocol.PARSE_ERROR)
    const empty = Protocol.parse("[]")
    expect(empty._tag === "Invalid" && JSON.parse(empty.line).error.code).toBe(Protocol.INVALID_REQUEST)
  })

  it("a message nested 100,000 deep is refused before anything walks it; brackets in strings do not count", () => {
    const deep = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"a":${"[".repeat(100_000)}${
      "]".repeat(100_000)
    }}}}`
    const parsed = Protocol.parse(deep)
    expect(parsed._tag).toBe("Invalid")
    expect(parsed._tag === "Invalid" && JSON.parse(parsed.line).error).toEqual({
      code: Protocol.INVALID_REQUEST,
      message: `Invalid Request: the message nests deeper than ${Protocol.MAX_DEPTH} levels`
    })
    const inString = `{"text":"${"[".repeat(1_000)}\\"${"{".repeat(1_000)}"}`
    expect(Protocol.parse(inString)._tag).toBe("Messages")
  })
})
