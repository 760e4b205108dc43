import * as JsonText from "@erp-client/core/JsonText"
import { Either } from "effect"
import { Redis } from "ioredis"
import { type ChildProcess, spawn } from "node:child_process"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { BIN, erp, openRequestsAfterwards, ROOT, SECRET, startSandbox } from "./harness.js"

// `erp mcp` as an assistant's host runs it: the compiled command started with ERP_BASE_URL and ERP_API_KEY in its
// environment, spoken to in JSON-RPC 2.0, one message a line on its stdin, its answers read from its stdout (the MCP
// stdio transport), against a sandbox on loopback.

type Started = Awaited<ReturnType<typeof startSandbox>>

interface Message {
  readonly id?: string | number | null
  readonly result?: any
  readonly error?: { readonly code: number; readonly message: string }
  readonly method?: string
}

/** A client of the MCP server: requests by id, answers as they come, everything the process wrote. */
class Client {
  readonly child: ChildProcess
  stdout = ""
  stderr = ""
  readonly messages: Array<Message> = []
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
  private nextId = 1
  private readonly waiting = new Map<string | number | null, (message: Message) => void>()

  constructor(args: ReadonlyArray<string>, env: Record<string, string | undefined>) {
    const all: Record<string, string> = {}
    for (const [k, v] of Object.entries({ ...process.env, CI: "", ...env })) if (v !== undefined) all[k] = v
    this.child = spawn(process.execPath, [BIN, "mcp", ...args], {
      cwd: ROOT,
      env: all,
      stdio: ["pipe", "pipe", "pipe"]
    })
    let buffered = ""
    this.child.stdout!.setEncoding("utf8")
    this.child.stdout!.on("data", (chunk: string) => {
      this.stdout += chunk
      buffered += chunk
      let end: number
      while ((end = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, end)
        buffered = buffered.slice(end + 1)
        const message = JSON.parse(line) as Message
        this.messages.push(message)
        const id = message.id === undefined ? undefined : message.id
        if (id !== undefined && this.waiting.has(id)) {
          this.waiting.get(id)!(message)
          this.waiting.delete(id)
        }
      }
    })
    this.child.stderr!.setEncoding("utf8")
    this.child.stderr!.on("data", (chunk: string) => (this.stderr += chunk))
    const guard = setTimeout(() => this.child.kill("SIGKILL"), 90_000)
    this.exited = new Promise((resolve) =>
      this.child.on("close", (code, signal) => {
        clearTimeout(guard)
        resolve({ code, signal })
      })
    )
  }

  send(message: Record<string, unknown>): void {
    this.child.stdin!.write(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n")
  }

  /** Writes a line as it is (not JSON, a batch). */
  sendLine(line: string): void {
    this.child.stdin!.write(line + "\n")
  }

  /** The answer to the message with `id` (already sent, or sent now with `request`). */
  answer(id: string | number | null): Promise<Message> {
    const seen = this.messages.find((message) => message.id === id)
    if (seen !== undefined) return Promise.resolve(seen)
    return new Promise((resolve) => this.waiting.set(id, resolve))
  }

  request(method: string, params?: unknown, id: string | number = this.nextId++): Promise<Message> {
    const answer = this.answer(id)
    this.send(params === undefined ? { id, method } : { id, method, params })
    return answer
  }

  async initialize(): Promise<Message> {
    const answer = await this.request("initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "mcp.test", version: "1.0.0" }
    })
    this.send({ method: "notifications/initialized" })
    return answer
  }

  /** A tool's answer: its text blocks, and whether it is an error. */
  async call(name: string, args?: Record<string, unknown>) {
    const answer = await this.request("tools/call", args === undefined ? { name } : { name, arguments: args })
    expect(answer.error, JSON.stringify(answer.error)).toBeUndefined()
    return {
      texts: (answer.result.content as Array<{ type: string; text: string }>).map((block) => block.text),
      isError: answer.result.isError === true
    }
  }

  /** Closes stdin, as a host does to end the server; resolves with how it ended. */
  end() {
    this.child.stdin!.end()
    return this.exited
  }
}

const clients: Array<Client> = []
const started: Array<Started> = []
const start = (args: ReadonlyArray<string>, env: Record<string, string | undefined>) => {
  const client = new Client(args, env)
  clients.push(client)
  return client
}

afterAll(async () => {
  for (const client of clients) if (client.child.exitCode === null) client.child.kill("SIGKILL")
  await Promise.all(started.map((s) => s.close()))
  // Whatever the server wrote, on stdout or stderr, in any run: never the key.
  for (const client of clients) {
    expect(client.stdout).not.toContain(SECRET)
    expect(client.stderr).not.toContain(SECRET)
  }
})

// The sandbox's answer to a request, as its body is written: the data's text (and each element's) as sent.
const served = async (s: Started, path: string) => {
  const response = await fetch(`${s.sandbox.baseUrl}/${path}`, { headers: { "X-API-KEY": SECRET } })
  return Either.getOrThrow(JsonText.dataText(await response.text()))
}

const PARTNERS = 200

describe("erp mcp, read-only, against a sandbox with records a float would change", () => {
  let s: Started
  let client: Client

  beforeAll(async () => {
    s = await startSandbox({
      partners: PARTNERS,
      invoices: 30,
      oddRecords: { rate: 0.25, kinds: ["number-beyond-double", "decimal-as-written"] },
      rateLimit: { limit: 1_000, window: "30 seconds" }
    })
    started.push(s)
    client = start([], s.env)
  })

  it("initializes with the protocol version asked for, and says how to use it", async () => {
    const answer = await client.initialize()
    expect(answer.result.protocolVersion).toBe("2025-06-18")
    expect(answer.result.serverInfo.name).toBe("erp")
    expect(Object.keys(answer.result.capabilities).sort()).toEqual(["completions", "prompts", "resources", "tools"])
    expect(answer.result.instructions).toContain("erp://contract")
  })

  it("lists its read-only tools, each with a JSON schema for its input and a description", async () => {
    const { result } = await client.request("tools/list")
    const names = result.tools.map((tool: { name: string }) => tool.name)
    expect(names).toEqual([
      "partners_get",
      "partners_list",
      "partners_count",
      "api_get",
      "api_list",
      "api_count",
      "api_endpoints"
    ])
    for (const tool of result.tools) {
      expect(tool.inputSchema.type, tool.name).toBe("object")
      expect(tool.inputSchema.additionalProperties, tool.name).toBe(false)
      expect(tool.description.length, tool.name).toBeGreaterThan(100)
      expect(tool.annotations, tool.name).toMatchObject({ readOnlyHint: true, destructiveHint: false })
    }
    const get = result.tools.find((tool: { name: string }) => tool.name === "partners_get")
    expect(Object.keys(get.inputSchema.properties)).toEqual(["id", "company_name"])
    const list = result.tools.find((tool: { name: string }) => tool.name === "partners_list")
    expect(Object.keys(list.inputSchema.properties)).toEqual(["customers", "where", "limit", "cursor"])
    // The declared kind's tools say the shape of their answers; the api_ tools' shapes are not known.
    expect(list.outputSchema).toMatchObject({ type: "object" })
    expect(result.tools.find((tool: { name: string }) => tool.name === "api_list").outputSchema).toBeUndefined()
    expect(list.inputSchema.properties.limit).toMatchObject({ type: "integer", default: 100, maximum: 1000 })
  })

  it("partners_get: a partner by id and by company name, exactly as the server wrote it", async () => {
    const byId = await client.call("partners_get", { id: 42 })
    expect(byId.isError).toBe(false)
    expect(byId.texts[0]).toBe((await served(s, "partner/get?id=42")).data)
    const name = JSON.parse(byId.texts[0]!).company_name as string
    const byName = await client.call("partners_get", { company_name: name })
    expect(byName.texts[0]).toBe(byId.texts[0])
    // An id as a string of digits is the same partner.
    expect((await client.call("partners_get", { id: "42" })).texts[0]).toBe(byId.texts[0])
  })

  it("partners_get: numbers beyond a double and decimals as written reach the assistant as written", async () => {
    const odd = Array.from({ length: PARTNERS }, (_, i) => i).filter((i) => s.sandbox.oddKindAt(i)._tag === "Some")
    expect(odd.length).toBeGreaterThan(10)
    for (const index of odd.slice(0, 6)) {
      const id = JSON.parse((await served(s, `partner/get?id=${index + 1}`)).data).id
      const { texts } = await client.call("partners_get", { id })
      expect(texts[0]).toBe((await served(s, `partner/get?id=${id}`)).data)
      expect(texts[0]).toMatch(/"credit_limit":12345678901234567890|"balance":1\.10,"rate":1e2,"discount":-0\.0/)
    }
  })

  it("partners_get: NotFound is an error the assistant reads, and the server goes on", async () => {
    const missing = await client.call("partners_get", { id: 99_999 })
    expect(missing).toEqual({ isError: true, texts: ["NotFound: partner/get: not found (id=99999)"] })
    const name = await client.call("partners_get", { company_name: "No Such & Co" })
    expect(name.texts[0]).toBe("NotFound: partner/get: not found (company_name=\"No Such & Co\")")
    expect((await client.call("partners_get", { id: 1 })).isError).toBe(false)
  })

  it("partners_get: arguments that cannot be a lookup are said, not sent", async () => {
    const before = (await s.run(s.sandbox.stats)).requests
    expect((await client.call("partners_get", {})).texts[0]).toBe(
      "InvalidArguments: give exactly one of id, company_name"
    )
    expect((await client.call("partners_get", { id: 1, company_name: "x" })).isError).toBe(true)
    const misspelt = await client.call("partners_get", { ids: 1 })
    expect(misspelt.isError).toBe(true)
    expect(misspelt.texts[0]).toMatch(/^InvalidArguments: ids: is unexpected/)
    expect((await client.call("partners_get", { id: -1 })).texts[0]).toMatch(/^InvalidArguments: id: /)
    expect((await s.run(s.sandbox.stats)).requests).toBe(before)
  })

  it("partners_list: at most limit records (100 by default), exactly as sent, and says there are more", async () => {
    const all = (await served(s, "partner/list?list_offset=0&list_count=1000")).elements!
    expect(all).toHaveLength(PARTNERS)
    const { isError, texts } = await client.call("partners_list")
    expect(isError).toBe(false)
    // The cursor (opaque, signed) is the answer's own; the records are the server's text.
    const cursor = JSON.parse(texts[0]!).cursor as string
    expect(cursor).toMatch(/^[\w-]+\.[\w-]+$/)
    expect(texts[0]).toBe(
      `{"endpoint":"partner/list","where":{},"returned":100,"more":true,"cursor":${JSON.stringify(cursor)},` +
        `"records":[${all.slice(0, 100).join(",")}]}`
    )
    expect(texts[1]).toMatch(/^More partners match than the 100 returned/)
    const next = await client.call("partners_list", { cursor })
    expect(JSON.parse(next.texts[0]!).records.map((r: { id: number }) => r.id)).toEqual(
      all.slice(100, 200).map((text) => JSON.parse(text).id)
    )
    const all3 = await client.call("partners_list", { limit: 3 })
    expect(JSON.parse(all3.texts[0]!).records.map((r: { id: number }) => r.id)).toEqual([1, 2, 3])
    const whole = await client.call("partners_list", { limit: 1000 })
    expect(whole.texts).toHaveLength(1)
    expect(JSON.parse(whole.texts[0]!)).toMatchObject({ returned: PARTNERS, more: false })
  })

  it("partners_list: filters, customers and any field with where", async () => {
    const customers = await client.call("partners_list", { customers: true, limit: 5 })
    const answer = JSON.parse(customers.texts[0]!)
    expect(answer).toMatchObject({ where: { is_customer: "1" }, returned: 5, more: true })
    expect(answer.records.every((r: { is_customer: number }) => r.is_customer === 1)).toBe(true)
    const name = JSON.parse((await served(s, "partner/get?id=7")).data).company_name
    const one = await client.call("partners_list", { where: { company_name: name } })
    expect(one.texts).toHaveLength(1)
    expect(JSON.parse(one.texts[0]!)).toMatchObject({ returned: 1, more: false, records: [{ id: 7 }] })
    const bad = await client.call("partners_list", { where: { "is customer": 1 } })
    expect(bad.isError).toBe(true)
    expect(bad.texts[0]).toMatch(/^InvalidArguments: where: /)
    expect((await client.call("partners_list", { limit: 5000 })).texts[0]).toMatch(/^InvalidArguments: limit: /)
  })

  it("partners_count: how many partners are customers, without a record sent to the assistant", async () => {
    const visible = await s.run(s.sandbox.visiblePartners)
    const customers = visible.filter((partner) => partner.is_customer === 1).length
    const { isError, texts } = await client.call("partners_count", { customers: true })
    expect(isError).toBe(false)
    expect(JSON.parse(texts[0]!)).toMatchObject({ endpoint: "partner/list", count: customers })
    expect(JSON.parse((await client.call("partners_count")).texts[0]!).count).toBe(PARTNERS)
  })

  it("api_get, api_list and api_count reach any endpoint, records exactly as sent", async () => {
    const get = await client.call("api_get", { endpoint: "invoice/get", params: { id: 3 } })
    expect(get.texts[0]).toBe((await served(s, "invoice/get?id=3")).data)
    const invoices = (await served(s, "invoice/list?list_offset=0&list_count=1000")).elements!
    const list = await client.call("api_list", { endpoint: "invoice/list", limit: 4 })
    expect(list.texts[0]).toMatch(
      /^\{"endpoint":"invoice\/list","where":\{\},"returned":4,"more":true,"cursor":"[^"]+",/
    )
    expect(list.texts[0]).toContain(`"records":[${invoices.slice(0, 4).join(",")}]}`)
    const count = await client.call("api_count", { endpoint: "invoice/list" })
    expect(JSON.parse(count.texts[0]!).count).toBe(invoices.length)
    expect((await client.call("api_get", { endpoint: "partner/get", params: { id: 99_999 } })).texts[0]).toBe(
      "NotFound: partner/get: not found (id=99999)"
    )
    const outside = await client.call("api_get", { endpoint: "../admin" })
    expect(outside.isError).toBe(true)
    expect(outside.texts[0]).toMatch(/^InvalidArguments: /)
    expect((await client.call("api_count")).texts[0]).toMatch(/^InvalidArguments: endpoint: is missing/)
  })

  it("resources: the contract in short, the fields seen, the limit and what is left of it", async () => {
    const { result } = await client.request("resources/list")
    expect(result.resources.map((r: { uri: string }) => r.uri)).toEqual([
      "erp://contract",
      "erp://fields",
      "erp://endpoints",
      "erp://limit"
    ])
    const contents = async (uri: string) => (await client.request("resources/read", { uri })).result.contents[0]
    expect(await contents("erp://contract")).toMatchObject({ uri: "erp://contract", mimeType: "text/markdown" })
    expect(await contents("erp://limit")).toMatchObject({ mimeType: "application/json" })
    const read = async (uri: string) => (await contents(uri)).text
    const endpoints = JSON.parse(await read("erp://endpoints"))
    expect(JSON.stringify(endpoints)).toContain("partner/list")
    expect(await read("erp://contract")).toMatch(/Rate limit: at most 100 requests per endpoint in any 30s/)
    const fields = JSON.parse(await read("erp://fields"))
    expect(fields.declared["partner/list"]).toEqual(["id", "company_name", "tax_number", "is_customer"])
    expect(fields.filters["partner/list"]).toEqual({ customers: { is_customer: 1 } })
    expect(fields.seen["partner/list"]).toEqual(expect.arrayContaining(["id", "email", "address", "credit_limit"]))
    const limit = JSON.parse(await read("erp://limit"))
    expect(limit).toMatchObject({ limit: 100, windowSeconds: 30, shared: "this process" })
    expect(limit.endpoints["partner/get"].used).toBeGreaterThan(0)
    expect(limit.endpoints["partner/get"].left).toBe(100 - limit.endpoints["partner/get"].used)
  })

  it("prompts: ask_erp and partner_summary", async () => {
    const { result } = await client.request("prompts/list")
    expect(result.prompts.map((p: { name: string }) => p.name)).toEqual(["ask_erp", "partner_summary"])
    const asked = await client.request("prompts/get", {
      name: "ask_erp",
      arguments: { question: "how many of our partners are customers?" }
    })
    expect(asked.result.messages[0].content.text).toContain("how many of our partners are customers?")
    expect(asked.result.messages[0].content.text).toContain("partners_count")
  })

  it("writes are refused: api_post is not listed, and a call to it says why", async () => {
    const refused = await client.call("api_post", { endpoint: "partner/get", params: { id: 1 } })
    expect(refused.isError).toBe(true)
    expect(refused.texts[0]).toMatch(/^WritesNotAllowed: api_post .* without --allow-writes/)
    const posts = (await s.run(s.sandbox.requests)).filter((request) => request.method === "POST")
    expect(posts).toEqual([])
  })

  it("JSON-RPC as clients write it: ids back as sent, errors for what is not a request, then more", async () => {
    expect((await client.request("ping", undefined, "abc")).result).toEqual({})
    expect((await client.request("ping", undefined, "7")).id).toBe("7")
    expect((await client.request("ping", undefined, 0)).id).toBe(0)
    client.sendLine("{not json")
    expect((await client.answer(null)).error!.code).toBe(-32700)
    expect((await client.request("no/such/method")).error).toMatchObject({ code: -32601 })
    expect((await client.request("tools/call", {})).error).toEqual({
      code: -32602,
      message: "Invalid params: tools/call needs \"name\", a string"
    })
    // Methods this server never advertised: not found, not "not implemented".
    expect((await client.request("logging/setLevel", { level: "debug" })).error).toMatchObject({ code: -32601 })
    expect((await client.request("resources/subscribe", { uri: "erp://limit" })).error).toMatchObject({
      code: -32601
    })
    // Missing prompt arguments: -32602 naming them.
    expect((await client.request("prompts/get", { name: "partner_summary" })).error).toEqual({
      code: -32602,
      message: "Invalid params: partner_summary: \"partner\" is required (its arguments: partner)"
    })
    expect((await client.request("tools/call", { name: "no_such_tool" })).error).toMatchObject({ code: -32602 })
    // A batch: each message answered on its own.
    client.sendLine(JSON.stringify([{ jsonrpc: "2.0", id: "b1", method: "ping" }, {
      jsonrpc: "2.0",
      id: "b2",
      method: "tools/call",
      params: { name: "partners_get", arguments: { id: 2 } }
    }]))
    expect((await client.answer("b1")).result).toEqual({})
    expect(JSON.parse((await client.answer("b2")).result.content[0].text).id).toBe(2)
    // A tool without arguments (optional in MCP).
    expect(JSON.parse((await client.call("partners_count")).texts[0]!).count).toBe(PARTNERS)
    expect((await client.request("ping")).result).toEqual({})
  })

  it("ends with exit 0 when stdin ends, with stdout holding the protocol only and stderr nothing", async () => {
    const exit = await client.end()
    expect(exit).toEqual({ code: 0, signal: null })
    expect(client.stderr).toBe("")
    for (const line of client.stdout.split("\n").filter((line) => line !== "")) {
      expect(JSON.parse(line).jsonrpc).toBe("2.0")
    }
  })
})

describe("erp mcp --allow-writes", () => {
  it("offers api_post, annotated as a write, and sends it", async () => {
    const s = await startSandbox({ partners: 20 })
    started.push(s)
    const client = start(["--allow-writes"], s.env)
    await client.initialize()
    const { result } = await client.request("tools/list")
    const post = result.tools.find((tool: { name: string }) => tool.name === "api_post")
    expect(post.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: false })
    expect(Object.keys(post.inputSchema.properties)).toEqual(["endpoint", "params", "json", "body"])
    const answer = await client.call("api_post", { endpoint: "partner/get", params: { id: 5 }, json: "{\"n\":1.10}" })
    expect(answer.isError).toBe(false)
    expect(JSON.parse(answer.texts[0]!).id).toBe(5)
    const posts = (await s.run(s.sandbox.requests)).filter((request) => request.method === "POST")
    expect(posts).toHaveLength(1)
    const notJson = await client.call("api_post", { endpoint: "partner/get", json: "{1.10" })
    expect(notJson.texts[0]).toMatch(/^InvalidArguments: json: not JSON/)
    expect(await client.end()).toEqual({ code: 0, signal: null })
  })
})

describe("erp mcp under a strict rate limit", () => {
  // 10 per 5 s, for the reason given at `erp mcp --redis` below: a burst's answers must be read within a window of
  // its start, and a starved process reading 25 of them took over 5 s (16 x 429 at 25 per 5 s, 10 x 429 at 10 per
  // 2 s, under load).
  it("30 calls at once: each answered, at the server's pace, no 429; stdin's end waits for the answers", async () => {
    const s = await startSandbox({ partners: 60, rateLimit: { limit: 10, window: "5 seconds" } })
    started.push(s)
    const client = start(["--verbose"], { ...s.env, ERP_RATE_LIMIT: "10", ERP_RATE_WINDOW: "5" })
    await client.initialize()
    const answers = Array.from({ length: 30 }, (_, i) => client.call("partners_get", { id: i + 1 }))
    // The host is done asking: the server answers what it was asked, then ends.
    const exit = client.end()
    const all = await Promise.all(answers)
    expect(all.filter((answer) => answer.isError)).toEqual([])
    expect(all.map((answer) => JSON.parse(answer.texts[0]!).id)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1))
    expect(await exit).toEqual({ code: 0, signal: null })
    const stats = await s.run(s.sandbox.stats)
    expect(stats.tooManyRequests).toBe(0)
    expect(stats.byEndpoint["/partner/get"]).toBe(30)
    expect(stats.maxObservedInWindow["/partner/get"]).toBeLessThanOrEqual(10)
    // The waits are logged with --verbose, on stderr; stdout holds the protocol only.
    expect(client.stderr).toMatch(/level=INFO .*message="waiting \d+ ms for the client-side rate limit"/)
    for (const line of client.stdout.split("\n").filter((line) => line !== "")) {
      expect(JSON.parse(line).jsonrpc).toBe("2.0")
    }
  })
})

describe("erp mcp against a server stricter than the client", () => {
  it("the client at its defaults, the server allowing 5 per 1 s: 20 calls at once go at the server's pace", async () => {
    const s = await startSandbox({ partners: 30, rateLimit: { limit: 5, window: "1 second" } })
    started.push(s)
    const client = start([], { ...s.env, ERP_RATE_LIMIT: undefined, ERP_RATE_WINDOW: undefined })
    await client.initialize()
    const all = await Promise.all(Array.from({ length: 20 }, (_, i) => client.call("partners_get", { id: i + 1 })))
    expect(all.filter((answer) => answer.isError)).toEqual([])
    const log = (await s.run(s.sandbox.requests)).filter((entry) => entry.endpoint === "/partner/get")
    const answered = log.filter((entry) => entry.status === 200)
    expect(answered).toHaveLength(20)
    // The first 20 go at once, before any answer: the server takes 5. From the first answers on, the client keeps
    // the server's 5 in its window (a second, read from its reset in whole seconds: up to two): no 429 after that
    // burst, and the 20 served within about four of those windows, not 30 s apart.
    const refused = log.filter((entry) => entry.status === 429)
    expect(refused.length).toBeLessThanOrEqual(15)
    expect(Math.max(0, ...refused.map((entry) => entry.timeMillis)) - log[0]!.timeMillis).toBeLessThan(500)
    expect(answered.at(-1)!.timeMillis - log[0]!.timeMillis).toBeLessThan(10_000)
    const read = async (uri: string) => (await client.request("resources/read", { uri })).result.contents[0].text
    const limit = JSON.parse(await read("erp://limit"))
    expect(limit).toMatchObject({ limit: 100, windowSeconds: 30 })
    expect(limit.endpoints["partner/get"]).toMatchObject({ limit: 5, learnedFrom: "X-RateLimit-Limit" })
    expect(limit.endpoints["partner/get"].windowSeconds).toBeGreaterThanOrEqual(1)
    expect(limit.endpoints["partner/get"].windowSeconds).toBeLessThanOrEqual(2.1)
  })
})

describe("erp mcp --redis", () => {
  const REDIS = "redis://127.0.0.1:6379"
  const PREFIX = `erp-test:mcp:${process.pid}:${Date.now().toString(36)}`
  const admin = new Redis(REDIS, { lazyConnect: true, maxRetriesPerRequest: 1 })
  afterAll(async () => {
    let cursor = "0"
    do {
      const [next, keys] = await admin.scan(cursor, "MATCH", `${PREFIX}:*`, "COUNT", 1000)
      cursor = next
      if (keys.length > 0) await admin.del(...keys)
    } while (cursor !== "0")
    await admin.quit()
  })

  // 30 per 5 s rather than 10 per 1 s: the limiter keeps a slot for a window and a margin after its request started,
  // or a window after it ended once it has; a request still unanswered by then lets the slot's next one go, and the
  // two can arrive within one server window. On a loaded machine a burst from a fresh process took one to two
  // seconds to reach the server (10 x 429 at 10 per 2 s); five seconds of window are room enough, the pace and the
  // sharing tested the same.
  it("shares the limit with an export running beside it: together within it, no 429", async () => {
    const s = await startSandbox({ partners: 300, rateLimit: { limit: 30, window: "5 seconds" } })
    started.push(s)
    const env = { ...s.env, ERP_RATE_LIMIT: "30", ERP_RATE_WINDOW: "5", ERP_REDIS_PREFIX: PREFIX }
    const client = start(["--redis", REDIS], env)
    await client.initialize()
    const exported = erp(["partners", "list", "--page-size", "10", "--redis", REDIS], { via: "node", env })
    const calls = Array.from({ length: 20 }, (_, i) => client.call("partners_list", { where: { id: i + 1 } }))
    const answers = await Promise.all(calls)
    expect(answers.map((answer) => JSON.parse(answer.texts[0]!).records[0].id)).toEqual(
      Array.from({ length: 20 }, (_, i) => i + 1)
    )
    const run = await exported
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout.split("\n").filter((line) => line !== "")).toHaveLength(300)
    expect(await client.end()).toEqual({ code: 0, signal: null })
    const stats = await s.run(s.sandbox.stats)
    expect(stats.byEndpoint["/partner/list"]).toBeGreaterThanOrEqual(20 + 31)
    expect(stats.tooManyRequests).toBe(0)
    expect(stats.maxObservedInWindow["/partner/list"]).toBeLessThanOrEqual(30)
  })
})

describe("erp mcp from a script", () => {
  it("printf '…' | erp mcp: the requests after initialize are its session's, each answered, then exit 0", async () => {
    const s = await startSandbox({ partners: 20 })
    started.push(s)
    const lines = [
      { jsonrpc: "2.0", id: 0, method: "tools/list" },
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "sh", version: "1" } }
      },
      { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "partners_count" } },
      { jsonrpc: "2.0", id: 3, method: "tools/list" }
    ]
    const run = await erp(["mcp"], {
      env: s.env,
      via: "node",
      stdin: lines.map((l) => JSON.stringify(l)).join("\n") + "\n"
    })
    expect(run.code, run.stderr).toBe(0)
    const answers = new Map(
      run.stdout.split("\n").filter((l) => l !== "").map((l) => [JSON.parse(l).id, JSON.parse(l)])
    )
    // Before initialize: refused; after it, in the same pipe: served.
    expect(answers.get(0).error.code).toBe(-32600)
    expect(answers.get(1).result.protocolVersion).toBe("2025-06-18")
    expect(JSON.parse(answers.get(2).result.content[0].text).count).toBe(20)
    expect(answers.get(3).result.tools.length).toBeGreaterThan(5)
  })
})

describe("erp mcp's failures", () => {
  it("a key the server refuses: Unauthorized as a tool error, the key in no byte", async () => {
    const s = await startSandbox({ partners: 5 })
    started.push(s)
    const wrong = "sk-wrong-key-never-print-91c3"
    const client = start([], { ...s.env, ERP_API_KEY: wrong })
    await client.initialize()
    const answer = await client.call("partners_get", { id: 1 })
    expect(answer.isError).toBe(true)
    expect(answer.texts[0]).toMatch(/^Unauthorized: /)
    expect(await client.end()).toEqual({ code: 0, signal: null })
    expect(client.stdout + client.stderr).not.toContain(wrong)
  })

  it("a server that ignores conditions: list and count tools are errors saying so; --no-check-where counts all", async () => {
    const s = await startSandbox({ partners: 50, ignoreConditions: "all" })
    started.push(s)
    const visible = await s.run(s.sandbox.visiblePartners)
    const customers = visible.filter((partner) => partner.is_customer === 1).length
    const [checked, unchecked] = [start([], s.env), start(["--no-check-where"], s.env)]
    await Promise.all([checked.initialize(), unchecked.initialize()])
    // A field the resource neither declares nor has shown is refused before anything is sent, with the fields there are.
    const unknown = await checked.call("partners_list", { where: { nonexistent_field: 1 } })
    expect(unknown.isError).toBe(true)
    expect(unknown.texts[0]).toMatch(/^InvalidArguments: where: .*nonexistent_field.*company_name/)
    // A declared field the server ignores: the records served do not satisfy it, and the tool says so.
    const name = JSON.parse((await checked.call("partners_get", { id: 7 })).texts[0]!).company_name as string
    const said = new RegExp(
      "^ConditionIgnored: partner/list: the server ignored the condition (company_name=|is_customer=1)"
    )
    for (
      const [tool, args] of [
        ["partners_list", { where: { company_name: name } }],
        ["partners_count", { customers: true }],
        ["api_list", { endpoint: "partner/list", where: { company_name: name } }],
        ["api_count", { endpoint: "partner/list", where: { company_name: name } }]
      ] as const
    ) {
      const answer = await checked.call(tool, args)
      expect(answer.isError, tool).toBe(true)
      expect(answer.texts, tool).toHaveLength(1)
      expect(answer.texts[0], tool).toMatch(said)
    }
    expect(customers).toBeLessThan(50)
    const all = await unchecked.call("partners_count", { where: { nonexistent_field: 1 } })
    expect(all.isError).toBe(false)
    expect(JSON.parse(all.texts[0]!)).toMatchObject({ where: { nonexistent_field: "1" }, count: 50 })
    expect(await Promise.all([checked.end(), unchecked.end()])).toEqual([
      { code: 0, signal: null },
      { code: 0, signal: null }
    ])
  })

  it("flags that cannot go together, or name no tool: exit 2 and one line naming what there is", async () => {
    const s = await startSandbox({ partners: 5 })
    started.push(s)
    const cases: ReadonlyArray<readonly [ReadonlyArray<string>, RegExp]> = [
      [["--tools", "nope"], /^erp: --tools: no tool is named nope \(the tools: partners_get, .*api_endpoints/],
      [
        ["--toolsets", "partners,nope"],
        /^erp: --toolsets: no toolset is named nope \(the toolsets: partners, api, writes\)/
      ],
      [["--toolsets", "writes"], /^erp: api_post changes the ERP: offered only with --allow-writes/],
      [["--read-only", "--allow-writes"], /^erp: --read-only and --allow-writes say opposite things/],
      [["--port", "8400"], /^erp: --host and --port are for --http/]
    ]
    for (const [args, said] of cases) {
      const run = await erp(["mcp", ...args], { env: s.env, via: "node" })
      expect(run.code, args.join(" ")).toBe(2)
      expect(run.stdout).toBe("")
      expect(run.stderr).toMatch(said)
      expect(run.stderr.trim().split("\n"), args.join(" ")).toHaveLength(1)
    }
    expect((await s.run(s.sandbox.stats)).requests).toBe(0)
  })

  it("without ERP_API_KEY: exit 2 and one line saying what to set, nothing on stdout", async () => {
    const client = start([], { ERP_BASE_URL: "http://127.0.0.1:9", ERP_API_KEY: undefined })
    const exit = await client.exited
    expect(exit.code).toBe(2)
    expect(client.stdout).toBe("")
    expect(client.stderr).toBe("erp: ERP_API_KEY is not set: export ERP_API_KEY=<your API key>\n")
  })

  it("notifications/cancelled: the call's request is cancelled, it gets no answer, and the server goes on", async () => {
    const s = await startSandbox({ partners: 5, latency: { base: "10 seconds" } })
    started.push(s)
    const client = start([], s.env)
    await client.initialize()
    client.send({ id: "slow", method: "tools/call", params: { name: "partners_get", arguments: { id: 1 } } })
    while ((await s.run(s.sandbox.stats)).inFlight === 0) await new Promise((resolve) => setTimeout(resolve, 20))
    client.send({ method: "notifications/cancelled", params: { requestId: "slow", reason: "the user moved on" } })
    expect(await openRequestsAfterwards(s)).toBe(0)
    expect((await client.request("ping")).result).toEqual({})
    expect(await client.end()).toEqual({ code: 0, signal: null })
    expect(client.messages.filter((message) => message.id === "slow")).toEqual([])
  })

  it("SIGTERM stops it in order: a call in flight is cancelled, exit 143", async () => {
    const s = await startSandbox({ partners: 5, latency: { base: "10 seconds" } })
    started.push(s)
    const client = start([], s.env)
    await client.initialize()
    void client.call("partners_get", { id: 1 }).catch(() => {})
    while ((await s.run(s.sandbox.stats)).inFlight === 0) await new Promise((resolve) => setTimeout(resolve, 20))
    client.child.kill("SIGTERM")
    const exit = await client.exited
    expect(exit.code).toBe(143)
    expect(client.stderr).toBe("erp: interrupted (SIGTERM)\n")
    expect(await openRequestsAfterwards(s)).toBe(0)
  })
})
