import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { erp, parseCsv, type Run, SECRET } from "./harness.js"

// Partners as a server may write them: pretty-printed, numbers a float changes (past 2^53, trailing zeros, exponents,
// -0.0), integer-like keys (which JSON.parse moves first) and escapes (`\u00e9`, `\/`, `\"`).
const RECORDS = [
  String.raw`{ "id" : 1, "company_name" : "Exact \"Numbers\" Kft.", "tax_number" : "12345678-1-42", "is_customer" : 1,
    "ref" : 12345678901234567890, "limit" : 1.10, "rate" : 1e2, "zero" : -0.0, "2" : "two", "1" : "one",
    "note" : "caf\u00e9 \/ 1" }`,
  String.raw`{ "id" : 9007199254740993, "company_name" : "Past 2^53 Zrt.", "tax_number" : "87654321-2-13",
    "is_customer" : 0 }`,
  String.raw`{ "id" : 3, "company_name" : "Later Bt.", "tax_number" : "11111111-1-11", "is_customer" : 1,
    "ref" : 9007199254740993, "late" : { "x" : [ 1.50, 2e-7 ] } }`
]

// Each record as the command must write it: one line, everything as the server wrote it but the whitespace.
const LINES = [
  String.raw`{"id":1,"company_name":"Exact \"Numbers\" Kft.","tax_number":"12345678-1-42","is_customer":1,` +
  String
    .raw`"ref":12345678901234567890,"limit":1.10,"rate":1e2,"zero":-0.0,"2":"two","1":"one","note":"caf\u00e9 \/ 1"}`,
  `{"id":9007199254740993,"company_name":"Past 2^53 Zrt.","tax_number":"87654321-2-13","is_customer":0}`,
  `{"id":3,"company_name":"Later Bt.","tax_number":"11111111-1-11","is_customer":1,"ref":9007199254740993,` +
  `"late":{"x":[1.50,2e-7]}}`
]

const envelope = (data: string) => `{\n  "result" : { "code" : 1, "message" : null },\n  "data" : ${data}\n}\n`

let server: Http.Server
let url: string
const posted: Array<string> = []
const outputs: Array<Run> = []

const run = async (args: ReadonlyArray<string>) => {
  const result = await erp(args, { env: { ERP_BASE_URL: url, ERP_API_KEY: SECRET }, via: "node" })
  outputs.push(result)
  return result
}

beforeAll(async () => {
  // A loopback ERP answering with hand-written bodies (the sandbox writes its numbers through JSON.stringify).
  server = Http.createServer((request, response) => {
    const at = new URL(request.url ?? "/", "http://erp.invalid")
    let body = ""
    request.setEncoding("utf8")
    request.on("data", (chunk: string) => (body += chunk))
    request.on("end", () => {
      let data = "null"
      if (at.pathname === "/partner/list") {
        const offset = Number(at.searchParams.get("list_offset"))
        const count = Number(at.searchParams.get("list_count"))
        data = `[\n    ${RECORDS.slice(offset, offset + count).join(",\n    ")}\n  ]`
      } else if (at.pathname === "/partner/get") {
        data = RECORDS[Number(at.searchParams.get("id")) - 1] ?? "null"
      } else if (at.pathname === "/echo") {
        posted.push(body)
        data = body
      }
      response.writeHead(200, { "content-type": "application/json" }).end(envelope(data))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(async () => {
  server?.closeAllConnections()
  await new Promise((resolve) => server?.close(resolve))
})

describe("records exactly as the server wrote them", () => {
  it("partners list, NDJSON: each record as sent; the id past 2^53 - 1 written, and reported as off the contract", async () => {
    const result = await run(["partners", "list", "--page-size", "2", "--verbose"])
    expect(result.code).toBe(0)
    expect(result.stdout).toBe(LINES.join("\n") + "\n")
    // Named by its id as sent (parsed, it would be 9007199254740992, another partner's).
    expect(result.stderr).toMatch(/partner id 9007199254740993 does not match the contract: id: an id past 2\^53 - 1/)
    expect(result.stderr).toMatch(/1 of the 3 records written do not match the contract \(written as sent/)
  })

  it("partners list, CSV: a number's cell is its text as sent; columns in the order written; later fields exact", async () => {
    const result = await run(["partners", "list", "--page-size", "2", "--format", "csv"])
    expect(result.code).toBe(0)
    const rows = parseCsv(result.stdout)
    expect(rows[0]).toEqual([
      "id",
      "company_name",
      "tax_number",
      "is_customer",
      "ref",
      "limit",
      "rate",
      "zero",
      "2",
      "1",
      "note",
      "other_fields"
    ])
    expect(rows[1]).toEqual([
      "1",
      "Exact \"Numbers\" Kft.",
      "12345678-1-42",
      "1",
      "12345678901234567890",
      "1.10",
      "1e2",
      "-0.0",
      "two",
      "one",
      "café / 1",
      ""
    ])
    expect(rows[2]!.slice(0, 4)).toEqual(["9007199254740993", "Past 2^53 Zrt.", "87654321-2-13", "0"])
    // A field the header (from the first page) does not name goes to other_fields, as written.
    expect(rows[3]!.slice(0, 5)).toEqual(["3", "Later Bt.", "11111111-1-11", "1", "9007199254740993"])
    expect(rows[3]!.at(-1)).toBe(`{"late":{"x":[1.50,2e-7]}}`)
    expect(rows).toHaveLength(4)
  })

  it("api list, table: numbers as sent", async () => {
    const result = await run(["api", "list", "partner/list", "--format", "table"])
    expect(result.code).toBe(0)
    const lines = result.stdout.trimEnd().split("\n")
    expect(lines[0]!.split(/\s{2,}/)).toEqual(["id", "company_name", "tax_number", "is_customer", "ref", "limit"])
    expect(lines[2]!.split(/\s{2,}/)).toEqual([
      "1",
      "Exact \"Numbers\" Kft.",
      "12345678-1-42",
      "1",
      "12345678901234567890",
      "1.10"
    ])
    expect(lines[3]!.split(/\s{2,}/)[0]).toBe("9007199254740993")
  })

  it("api list, NDJSON: each record as sent", async () => {
    const result = await run(["api", "list", "partner/list"])
    expect(result.code).toBe(0)
    expect(result.stdout).toBe(LINES.join("\n") + "\n")
  })

  it("api get prints the data as sent", async () => {
    const result = await run(["api", "get", "partner/get", "-p", "id=1"])
    expect(result.code).toBe(0)
    expect(result.stdout).toBe(LINES[0] + "\n")
  })

  it("api post --data sends the text as written (big integers, 1.10 kept) and prints the data as the server wrote it", async () => {
    const text = `{ "amount" : 1.10, "ref" : 12345678901234567890, "at" : -0.0, "note" : "caf\\u00e9" }`
    const result = await run(["api", "post", "echo", "--data", text])
    expect(result.code).toBe(0)
    expect(posted.at(-1)).toBe(text)
    expect(result.stdout).toBe(`{"amount":1.10,"ref":12345678901234567890,"at":-0.0,"note":"caf\\u00e9"}\n`)
    const refused = await run(["api", "post", "echo", "--data", "{\"amount\": 1.10,}"])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toBe("erp: --data: not JSON (expected a string key, found \"}\" (character 16))\n")
    expect(posted).toHaveLength(1)
  })

  it("the key appears in no output", () => {
    expect(outputs.length).toBeGreaterThan(5)
    for (const result of outputs) expect(result.stdout + result.stderr).not.toContain(SECRET)
  })
})
