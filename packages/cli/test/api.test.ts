import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { erp, type Run, SECRET, startSandbox } from "./harness.js"

type Started = Awaited<ReturnType<typeof startSandbox>>

const PARTNERS = 120
let sandbox: Started
let echo: { readonly url: string; readonly hits: Map<string, number>; readonly close: () => Promise<void> }
let dir: string
const outputs: Array<Run> = []
const record = (run: Run) => {
  outputs.push(run)
  return run
}

const seededLines = () => Array.from({ length: PARTNERS }, (_, i) => JSON.stringify(sandbox.sandbox.partnerAt(i)))

// An endpoint the sandbox does not have: answers with the envelope whose data is what it received (never the key),
// or 503 on /fail; counts requests by path.
const startEcho = () =>
  new Promise<typeof echo>((resolve) => {
    const hits = new Map<string, number>()
    const server = Http.createServer((request, response) => {
      const url = new URL(request.url ?? "/", "http://echo.invalid")
      hits.set(url.pathname, (hits.get(url.pathname) ?? 0) + 1)
      let body = ""
      request.on("data", (chunk) => (body += chunk))
      request.on("end", () => {
        if (url.pathname === "/fail") {
          response.writeHead(503, { "content-type": "text/html" }).end("<h1>503</h1>")
          return
        }
        const data = {
          method: request.method,
          path: url.pathname,
          query: [...url.searchParams],
          keyValid: request.headers["x-api-key"] === SECRET,
          body: body === "" ? null : JSON.parse(body)
        }
        response.writeHead(200, { "content-type": "application/json" })
        response.end(JSON.stringify({ result: { code: 1, message: null }, data }))
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resolve({
        url: `http://127.0.0.1:${port}`,
        hits,
        close: () => new Promise((done) => server.close(() => done()))
      })
    })
  })

beforeAll(async () => {
  sandbox = await startSandbox({ partners: PARTNERS, rateLimit: { limit: 1_000, window: "30 seconds" } })
  echo = await startEcho()
  dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "erp-api-"))
})

afterAll(async () => {
  await sandbox?.close()
  await echo?.close()
  if (dir !== undefined) Fs.rmSync(dir, { recursive: true, force: true })
})

const echoEnv = () => ({ ERP_BASE_URL: echo.url, ERP_API_KEY: SECRET })

describe("erp api get", () => {
  it("prints the data exactly as sent; -p values are URL-encoded (an awkward company name)", async () => {
    const index = seededLines().findIndex((l) => /[&+=%#]/.test(JSON.parse(l).company_name))
    const name = sandbox.sandbox.partnerAt(index).company_name
    await sandbox.run(sandbox.sandbox.resetStats)
    const run = record(await erp(["api", "get", "partner/get", "-p", `company_name=${name}`], { env: sandbox.env }))
    expect(run.code).toBe(0)
    expect(run.stderr).toBe("")
    // Same text, key order included.
    expect(run.stdout).toBe(seededLines()[index] + "\n")
    const [request] = await sandbox.run(sandbox.sandbox.requests)
    expect(request!.query).toEqual([["company_name", name]])
  })

  it("exit 4 for Not found, naming what was looked up", async () => {
    const run = record(await erp(["api", "get", "partner/get", "-p", "id=99999"], { env: sandbox.env }))
    expect(run.code).toBe(4)
    expect(run.stdout).toBe("")
    expect(run.stderr).toBe("erp: partner/get: not found (id=99999)\n")
  })

  it("exit 2 for an endpoint that is not a relative path, before any setting is read", async () => {
    const run = record(await erp(["api", "get", "../partner/get"], { env: { ERP_BASE_URL: undefined } }))
    expect(run.code).toBe(2)
    expect(run.stderr).toMatch(/^erp: \.\.\/partner\/get: invalid request: an endpoint is a relative path[^\n]*\n$/)
  })

  it("exit 1 for an endpoint the server does not have (404), in one line", async () => {
    const run = record(await erp(["api", "get", "no/such-endpoint"], { env: sandbox.env }))
    expect(run.code).toBe(1)
    expect(run.stderr).toBe(
      "erp: GET no/such-endpoint: unexpected HTTP status 404 (the server said: Unknown endpoint)\n"
    )
  })
})

describe("erp api list", () => {
  it("every record exactly as sent, in order (ListEndpoint.pages)", async () => {
    const run = record(await erp(["api", "list", "partner/list", "--page-size", "50"], { env: sandbox.env }))
    expect(run.code).toBe(0)
    expect(run.stderr).toBe("")
    expect(run.stdout.trimEnd().split("\n")).toEqual(seededLines())
  })

  it("-p on every page, --safe with --id-field: overlapping pages, every record once", async () => {
    await sandbox.run(sandbox.sandbox.resetStats)
    const run = record(
      await erp(
        ["api", "list", "partner/list", "-p", "tag=a&b=c", "--safe", "--id-field", "id", "--page-size", "40"],
        { env: sandbox.env }
      )
    )
    expect(run.code).toBe(0)
    expect(run.stdout.trimEnd().split("\n")).toEqual(seededLines())
    const lists = (await sandbox.run(sandbox.sandbox.requests)).filter((r) => r.endpoint === "/partner/list")
    expect(lists.length).toBeGreaterThan(3)
    for (const request of lists) expect(request.query).toContainEqual(["tag", "a&b=c"])
    // Drift-safe pages overlap: they advance by less than their size.
    const offsets = lists.map((r) => Number(new Map(r.query).get("list_offset"))).sort((a, b) => a - b)
    expect(offsets[1]! - offsets[0]!).toBeLessThan(40)
  })

  it("pointed at a get endpoint, which refuses a request without its id, says to give a list endpoint", async () => {
    const run = record(await erp(["api", "list", "partner/get", "--output", "never.ndjson"], { env: sandbox.env }))
    expect([run.code, run.stdout]).toEqual([1, ""])
    expect(run.stderr).toBe(
      "erp: partner/get: the server reported an error (code 0): id or company_name is required; erp api list reads a " +
        "list endpoint, and partner/get may not be one: try erp api list partner/list\n"
    )
  })

  it("--format table: the first fields of the first page's records", async () => {
    const run = record(await erp(["api", "list", "partner/list", "--format", "table"], { env: sandbox.env }))
    expect(run.code).toBe(0)
    const lines = run.stdout.trimEnd().split("\n")
    expect(lines[0]!.split(/\s{2,}/)).toEqual(["id", "company_name", "tax_number", "is_customer", "email", "phone"])
    expect(lines).toHaveLength(PARTNERS + 2)
    expect(lines[PARTNERS + 1]).toMatch(new RegExp(`^${PARTNERS}\\s`))
  })
})

describe("erp api post", () => {
  it("sends --data as the JSON body with -p in the query; prints the data", async () => {
    const run = record(
      await erp([
        "api",
        "post",
        "order/create",
        "--data",
        "{\"partner_id\":7,\"lines\":[{\"sku\":\"A-1\"}]}",
        "-p",
        "q=1&2"
      ], {
        env: echoEnv()
      })
    )
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout)).toEqual({
      method: "POST",
      path: "/order/create",
      query: [["q", "1&2"]],
      keyValid: true,
      body: { partner_id: 7, lines: [{ sku: "A-1" }] }
    })
  })

  it("reads --data @FILE and --data @- (stdin)", async () => {
    const file = Path.join(dir, "body.json")
    Fs.writeFileSync(file, "{\"from\": \"file\"}\n")
    const fromFile = record(await erp(["api", "post", "echo/file", "--data", `@${file}`], { env: echoEnv() }))
    expect(fromFile.code).toBe(0)
    expect(JSON.parse(fromFile.stdout).body).toEqual({ from: "file" })
    const fromStdin = record(
      await erp(["api", "post", "echo/stdin", "--data", "@-"], { env: echoEnv(), stdin: "[1, \"two\", null]" })
    )
    expect(fromStdin.code).toBe(0)
    expect(JSON.parse(fromStdin.stdout).body).toEqual([1, "two", null])
  })

  it("is never retried after a transient failure, where a GET is", async () => {
    const env = { ...echoEnv(), ERP_RETRIES: "2" }
    const posted = record(await erp(["api", "post", "fail", "--data", "{}"], { env }))
    expect(posted.code).toBe(1)
    expect(posted.stderr).toBe("erp: POST fail: unexpected HTTP status 503\n")
    expect(echo.hits.get("/fail")).toBe(1)
    const got = record(await erp(["api", "get", "fail"], { env }))
    expect(got.code).toBe(1)
    expect(echo.hits.get("/fail")).toBe(1 + 3)
  })

  it("refuses --data that is not JSON as a usage error, sending nothing", async () => {
    const run = record(await erp(["api", "post", "echo/bad", "--data", "{nope"], { env: echoEnv() }))
    expect(run.code).toBe(2)
    expect(run.stderr).toMatch(/^erp: --data: not JSON \([^\n]*\)\n$/)
    expect(echo.hits.get("/echo/bad")).toBeUndefined()
  })
})

describe("the key", () => {
  it("never appears on stdout or stderr of erp api", () => {
    expect(outputs.length).toBeGreaterThan(10)
    for (const run of outputs) {
      expect(run.stdout).not.toContain(SECRET)
      expect(run.stderr).not.toContain(SECRET)
    }
  })
})
