import { Slots } from "@erp-client/kernel"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { type ChildProcess, spawn } from "node:child_process"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { BIN, ROOT, SECRET, startSandbox } from "./harness.js"

// `erp mcp` driven by the official MCP SDK's client (1.32.2), as hosts drive it: over stdio (the SDK starts the
// compiled command) and over Streamable HTTP (`erp mcp --http`, with and without a bearer token), against sandboxes on
// loopback. Every byte the server wrote on stderr, in every mode, is checked for the key, its digest and the token.

const TOKEN = "mcp-token-never-print-7c41d0a9"
// A partner of the kind `id-beyond-double` (the sandbox's Seed: 12345678901234567890 plus 1000 times its index).
let BIG_ID: string

type Started = Awaited<ReturnType<typeof startSandbox>>
const sandboxes: Array<Started> = []
const children: Array<ChildProcess> = []
const stderrs: Array<() => string> = []

const environment = (env: Record<string, string | undefined>) => {
  const all: Record<string, string> = {}
  for (const [k, v] of Object.entries({ ...process.env, CI: "", ERP_MCP_TOKEN: undefined, ...env })) {
    if (v !== undefined) all[k] = v
  }
  return all
}

/** The SDK's client on `erp mcp` over stdio, the command started by the SDK's transport. */
const overStdio = async (args: ReadonlyArray<string>, env: Record<string, string | undefined>) => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, "mcp", ...args],
    env: environment(env),
    cwd: ROOT,
    stderr: "pipe"
  })
  let stderr = ""
  transport.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
  stderrs.push(() => stderr)
  const client = new Client({ name: "mcpSdk.test", version: "1.0.0" })
  await client.connect(transport)
  return { client, close: () => client.close(), stderr: () => stderr }
}

/** `erp mcp --http` on a port the OS picks, and the address it said it serves at. */
const startHttp = async (args: ReadonlyArray<string>, env: Record<string, string | undefined>) => {
  const child = spawn(process.execPath, [BIN, "mcp", "--http", "--port", "0", ...args], {
    cwd: ROOT,
    env: environment(env),
    stdio: ["ignore", "pipe", "pipe"]
  })
  children.push(child)
  let stderr = ""
  let stdout = ""
  stderrs.push(() => stderr)
  child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal }))
  )
  const url = await new Promise<string | undefined>((resolve) => {
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8")
      const found = /serving MCP at (http:\/\/\S+)/.exec(stderr)
      if (found !== null) resolve(found[1])
    })
    void exited.then(() => resolve(undefined))
  })
  return { child, url, exited, stderr: () => stderr, stdout: () => stdout }
}

const overHttp = async (url: string, token?: string) => {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: token === undefined ? {} : { headers: { Authorization: `Bearer ${token}` } }
  })
  const client = new Client({ name: "mcpSdk.test", version: "1.0.0" })
  await client.connect(transport)
  return { client, close: () => client.close() }
}

const textOf = (result: Awaited<ReturnType<Client["callTool"]>>) =>
  (result.content as Array<{ type: string; text: string }>).map((block) => block.text)

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL")
  await Promise.all(sandboxes.map((s) => s.close()))
  const digest = await Slots.keyIdOf(SECRET)
  for (const stderr of stderrs) {
    expect(stderr()).not.toContain(SECRET)
    expect(stderr()).not.toContain(digest.slice(0, 8))
    expect(stderr()).not.toContain(TOKEN)
  }
})

// What the three checks of the issue need: a count long enough that a host's timeout would end it without progress,
// a list to page by cursor, and a partner whose id is beyond a double.
const COUNTED = 150_000
// How long the host waits for an answer without progress: three times the server's one notification a second.
const HOST_TIMEOUT = 3_000
const LISTED = 3_000
let counted: Started
let listed: Started
let bigRecord: string

beforeAll(async () => {
  // 150 pages of 1,000 at 30 requests a second: 5 s at the least, more than the host waits without progress.
  counted = await startSandbox({ partners: COUNTED, rateLimit: { limit: 30, window: "1 second" } })
  listed = await startSandbox({
    partners: LISTED,
    oddRecords: { rate: 0.01, kinds: ["id-beyond-double"] },
    rateLimit: { limit: 1_000, window: "30 seconds" }
  })
  sandboxes.push(counted, listed)
  const index = Array.from({ length: LISTED }, (_, i) => i).find((i) => listed.sandbox.oddKindAt(i)._tag === "Some")!
  BIG_ID = (12345678901234567890n + 1000n * BigInt(index)).toString()
  const response = await fetch(`${listed.sandbox.baseUrl}/partner/get?id=${BIG_ID}`, {
    headers: { "X-API-KEY": SECRET }
  })
  const body = await response.text()
  expect(body).toContain(`"id":${BIG_ID}`)
  bigRecord = body.slice(body.indexOf("\"data\":") + 7, body.lastIndexOf("}"))
}, 60_000)

const countEnv = () => ({ ...counted.env, ERP_RATE_LIMIT: "30", ERP_RATE_WINDOW: "1" })

/** The three checks, on a connected client: count with progress, page by cursor, an exact record. */
const countWithProgress = async (client: Client) => {
  const progress: Array<number> = []
  const began = Date.now()
  const result = await client.callTool({ name: "partners_count", arguments: {} }, undefined, {
    timeout: HOST_TIMEOUT,
    resetTimeoutOnProgress: true,
    onprogress: (notification) => progress.push(notification.progress)
  })
  expect(result.isError, textOf(result).join()).toBeFalsy()
  expect(JSON.parse(textOf(result)[0]!)).toMatchObject({ count: COUNTED })
  expect(result.structuredContent).toMatchObject({ endpoint: "partner/list", count: COUNTED })
  // The host's timeout would have ended the count (150 requests at the server's 30 a second: 5 s at the least); it went
  // on, reset by each notification.
  expect(Date.now() - began).toBeGreaterThan(HOST_TIMEOUT)
  expect(progress.length).toBeGreaterThanOrEqual(2)
  expect([...progress].sort((a, b) => a - b)).toEqual(progress)
  expect(progress.at(-1)!).toBeLessThanOrEqual(COUNTED)
}

const pageByCursor = async (client: Client) => {
  const ids: Array<string> = []
  let cursor: string | undefined
  let calls = 0
  do {
    const result = await client.callTool({
      name: "partners_list",
      arguments: cursor === undefined ? { limit: 1_000 } : { limit: 1_000, cursor }
    })
    expect(result.isError, textOf(result).join()).toBeFalsy()
    const text = textOf(result)[0]!
    // Ids as written (some beyond a double): read from the text, not from a parsed number.
    for (const match of text.matchAll(/\{"id":(\d+),/g)) ids.push(match[1]!)
    cursor = (JSON.parse(text) as { cursor?: string }).cursor
    calls++
  } while (cursor !== undefined && calls < 10)
  const served = (await listed.run(listed.sandbox.visiblePartners)).length
  expect(served).toBe(LISTED)
  expect(ids).toHaveLength(LISTED)
  expect(new Set(ids).size).toBe(LISTED)
  expect(ids).toContain(BIG_ID)
  expect(calls).toBe(3)
}

const exactRecord = async (client: Client) => {
  const result = await client.callTool({ name: "partners_get", arguments: { id: BIG_ID } })
  expect(result.isError, textOf(result).join()).toBeFalsy()
  expect(textOf(result)[0]).toBe(bigRecord)
  const asNumber = await client.callTool({ name: "partners_get", arguments: { id: Number(BIG_ID) } })
  expect(asNumber.isError).toBe(true)
  expect(textOf(asNumber)[0]).toContain("pass it as a string of digits")
}

describe("the official SDK's client over stdio", () => {
  it("counts 150,000 partners with progress and no timeout", async () => {
    const { client, close } = await overStdio([], countEnv())
    await countWithProgress(client)
    await close()
  }, 60_000)

  it(
    "pages a 3,000-partner list by cursor, every record once, and gets an exact record for an id beyond a double",
    async () => {
      const { client, close } = await overStdio([], listed.env)
      await pageByCursor(client)
      await exactRecord(client)
      await close()
    },
    60_000
  )

  it("--tools partners_get lists one tool; --toolsets partners only the partner tools", async () => {
    const one = await overStdio(["--tools", "partners_get"], listed.env)
    expect((await one.client.listTools()).tools.map((tool) => tool.name)).toEqual(["partners_get"])
    await one.close()
    const partners = await overStdio(["--toolsets", "partners"], listed.env)
    expect((await partners.client.listTools()).tools.map((tool) => tool.name)).toEqual([
      "partners_get",
      "partners_list",
      "partners_count"
    ])
    await partners.close()
  }, 60_000)

  it("--verbose logs no key, no digest of it", async () => {
    const { client, close, stderr } = await overStdio(["--verbose"], countEnv())
    await client.callTool({ name: "partners_list", arguments: { limit: 5 } })
    await close()
    // afterAll reads every stderr for the key, its digest and the token; this one logged something to read.
    expect(stderr()).toContain("mcp: ")
  }, 60_000)
})

describe("the official SDK's client over Streamable HTTP", () => {
  it("without a token, on loopback: the count with progress, paging by cursor, an exact record", async () => {
    const server = await startHttp([], { ...countEnv() })
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
    expect(server.stderr()).toContain("(no token: loopback only)")
    const { client, close } = await overHttp(server.url!)
    await countWithProgress(client)
    await close()
    server.child.kill("SIGTERM")
    expect(await server.exited).toEqual({ code: 143, signal: null })
    expect(server.stdout()).toBe("")
    // Each client's calls are logged: the tool, how it ended, never an argument.
    expect(server.stderr()).toMatch(/mcp: session \S+ \(mcpSdk\.test\) tools\/call partners_count: ok in \d+ ms/)
  }, 60_000)

  it(
    "with ERP_MCP_TOKEN: refused without it, served with it; the cursor and the exact record as over stdio",
    async () => {
      const server = await startHttp([], { ...listed.env, ERP_MCP_TOKEN: TOKEN })
      expect(server.stderr()).toContain("(bearer token required)")
      const refused = await fetch(server.url!, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" })
      })
      expect(refused.status).toBe(401)
      await expect(overHttp(server.url!, "not-the-token")).rejects.toThrow()
      const { client, close } = await overHttp(server.url!, TOKEN)
      await pageByCursor(client)
      await exactRecord(client)
      await close()
      server.child.kill("SIGTERM")
      await server.exited
    },
    60_000
  )

  it("refuses to start on a non-loopback address without a token: exit 2, one line", async () => {
    const server = await startHttp(["--host", "0.0.0.0"], listed.env)
    expect(server.url).toBeUndefined()
    expect((await server.exited).code).toBe(2)
    expect(server.stderr()).toMatch(/ERP_MCP_TOKEN/)
  }, 30_000)
})
