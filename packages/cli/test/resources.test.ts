import * as NodeContext from "@effect/platform-node/NodeContext"
import { afterAll, beforeAll, describe, expect, it, vi } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Cli from "../src/Cli.js"
import * as Invoices from "./fixtures/Invoices.js"
import { startSandbox } from "./harness.js"

// A new kind of record is its declaration and one line: the command line built with `Invoices.resource` added to
// `Cli.resources` has `erp invoices list` and `get`, run here in this process against the sandbox's invoices.

type Started = Awaited<ReturnType<typeof startSandbox>>
let env: Started
const saved = { ...process.env }

beforeAll(async () => {
  env = await startSandbox({ partners: 20, invoices: 30 })
  Object.assign(process.env, env.env)
})

afterAll(async () => {
  process.env = saved
  await env?.close()
})

/** `erp ARGS` with invoices declared: its exit code, and what it wrote to stdout and stderr. */
const erp = async (...args: Array<string>) => {
  let stdout = ""
  let stderr = ""
  const out = vi.spyOn(process.stdout, "write").mockImplementation((chunk: any, done?: any) => {
    stdout += String(chunk)
    if (typeof done === "function") done()
    return true
  })
  const err = vi.spyOn(process.stderr, "write").mockImplementation((chunk: any) => {
    stderr += String(chunk)
    return true
  })
  try {
    const code = await Effect.runPromise(
      Cli.main(["node", "erp", ...args], { resources: [...Cli.resources, Invoices.resource] }).pipe(
        Effect.provide(NodeContext.layer)
      )
    )
    return { code, stdout, stderr }
  } finally {
    out.mockRestore()
    err.mockRestore()
  }
}

describe("a resource declared in one file, added in one line", () => {
  it("invoices list: every invoice once, as the server sent it; --unpaid is its filter", async () => {
    const all = await erp("invoices", "list", "--page-size", "7")
    expect(all.stderr).toBe("")
    expect(all.code).toBe(0)
    const invoices = all.stdout.trim().split("\n").map((line) => JSON.parse(line))
    expect(invoices.map((invoice) => invoice.id)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1))
    expect(invoices[0]).toEqual(await env.run(Effect.sync(() => env.sandbox.invoiceAt(0))))

    const unpaid = await erp("invoices", "list", "--unpaid")
    expect(unpaid.code).toBe(0)
    const ids = unpaid.stdout.trim().split("\n").map((line) => JSON.parse(line))
    expect(ids.length).toBe(invoices.filter((invoice) => invoice.paid === 0).length)
    expect(ids.every((invoice) => invoice.paid === 0)).toBe(true)
  })

  it("invoices list --format table: the declared columns; csv: the declared fields first", async () => {
    const table = await erp("invoices", "list", "--format", "table")
    expect(table.code).toBe(0)
    const [header, rule, first] = table.stdout.split("\n")
    expect(header).toBe("id        number            total         paid")
    expect(rule).toBe("--------  ----------------  ------------  ----")
    const invoice = env.sandbox.invoiceAt(0)
    expect(first).toMatch(new RegExp(`^1 +${invoice.number} +${invoice.total} +${invoice.paid === 1 ? "yes" : "no"}$`))
    const csv = await erp("invoices", "list", "--format", "csv")
    expect(csv.stdout.split("\r\n")[0]).toBe("id,number,partner_id,total,issued_on,due_on,currency,paid,other_fields")
  })

  it("invoices get: by --id and --number in the order asked, a missing one said and exit 4", async () => {
    const invoice = env.sandbox.invoiceAt(4)
    const found = await erp("invoices", "get", "--number", invoice.number, "--id", "2")
    expect(found.stderr).toBe("")
    expect(found.code).toBe(0)
    expect(found.stdout.trim().split("\n").map((line) => JSON.parse(line).id)).toEqual([5, 2])
    const missing = await erp("invoices", "get", "--id", "999")
    expect(missing.code).toBe(4)
    expect(missing.stderr).toContain("invoice/get: not found (id=999)")
  })

  it("invoices --help names its commands; invoices get --help its selectors", async () => {
    const group = await erp("invoices", "--help")
    expect(group.stdout).toContain("Export invoices: NDJSON (default), CSV or a table, to stdout or a file")
    expect(group.stdout).toContain("Look up invoices by id or number (many in one run), one JSON object a line")
    const get = await erp("invoices", "get", "--help")
    expect(get.stdout).toContain("--number NUMBER")
    expect(get.stdout).toContain("An invoice's number (INV-2024-000042).")
  })

  it("every shipped resource has its list command and help, whatever the set holds (partners among them)", () => {
    expect(Cli.resources.map((resource) => resource.name)).toContain("partners")
    for (const resource of Cli.resources) {
      expect(Cli.helpPage([resource.name, "list", "--help"], { color: false }), resource.name).toContain(
        `erp ${resource.name} list`
      )
      expect(Cli.helpIndex().pages[`erp ${resource.name}`], resource.name).toBeDefined()
    }
  })
})
