import * as NodeContext from "@effect/platform-node/NodeContext"
import { afterAll, beforeAll, describe, expect, it, vi } from "@effect/vitest"
import type * as Resource from "@erp-client/streams/Resource"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import * as Cli from "../src/Cli.js"
import * as Invoices from "./fixtures/Invoices.js"
import { erp, ROOT, startSandbox } from "./harness.js"

// `erp api infer`: drafted from the sandbox's invoices and odd partners by the compiled command, the modules it prints
// compile strict under NodeNext (in a folder inside the repository, so `effect` and `@erp-client/streams` resolve as
// they would in an application), decode every record sampled, refuse records of the wrong types, and match the
// hand-written Invoice schema (test/fixtures/Invoices.ts) field by field; the drafted `resource`, added to the
// command line's resources, gives `erp invoices list` and `get`.

type Started = Awaited<ReturnType<typeof startSandbox>>
let env: Started
let dir: string
const saved = { ...process.env }

interface Drafted {
  readonly text: string
  readonly records: ReadonlyArray<unknown>
}
const drafted: Record<string, Drafted> = {}

// Each record of the list, as `erp api list` writes it (NDJSON), parsed.
const listed = async (endpoint: string) => {
  const run = await erp(["api", "list", endpoint], { via: "node", env: env.env })
  expect(run.code, run.stderr).toBe(0)
  return run.stdout.trim().split("\n").map((line) => JSON.parse(line) as unknown)
}

const ODD_KINDS = [
  "number-beyond-double",
  "decimal-as-written",
  "tax-number-null",
  "tax-number-number",
  "company-name-null",
  "customer-flag-boolean",
  "extra-object"
] as const

beforeAll(async () => {
  env = await startSandbox({
    partners: 300,
    invoices: 200,
    oddRecords: { rate: 0.3, kinds: ODD_KINDS }
  })
  Object.assign(process.env, env.env)
  const build = Path.join(ROOT, "packages/cli/build")
  Fs.mkdirSync(build, { recursive: true })
  dir = Fs.mkdtempSync(Path.join(build, "infer-test-"))
  for (const [endpoint, file] of [["invoice/list", "Invoice.ts"], ["partner/list", "Partner.ts"]] as const) {
    const run = await erp(["api", "infer", endpoint], { via: "node", env: env.env })
    expect(run.stderr).toBe("")
    expect(run.code).toBe(0)
    Fs.writeFileSync(Path.join(dir, file), run.stdout)
    drafted[file] = { text: run.stdout, records: await listed(endpoint) }
  }
}, 120_000)

afterAll(async () => {
  process.env = saved
  await env?.close()
  if (dir !== undefined) Fs.rmSync(dir, { recursive: true, force: true })
})

// The drafted module, loaded as an application would load it.
const load = async (file: string) =>
  await import(pathToFileURL(Path.join(dir, file)).href) as Record<string, Schema.Schema<any, any>> & {
    readonly resource: Resource.Resource<any, any>
  }

// A schema's type, said plainly: a refinement is its base type, except Int; a union its members, sorted.
const typeOf = (ast: AST.AST): string => {
  switch (ast._tag) {
    case "Refinement":
      return Option.getOrUndefined(AST.getSchemaIdAnnotation(ast)) === Schema.IntSchemaId ? "Int" : typeOf(ast.from)
    case "NumberKeyword":
      return "Number"
    case "StringKeyword":
      return "String"
    case "BooleanKeyword":
      return "Boolean"
    case "Literal":
      return JSON.stringify(ast.literal)
    case "Union":
      return ast.types.map(typeOf).sort().join(" | ")
    default:
      return ast._tag
  }
}

const fieldsOf = (schema: Schema.Schema<any, any>) => {
  const ast = schema.ast as AST.TypeLiteral
  expect(ast._tag).toBe("TypeLiteral")
  return {
    fields: Object.fromEntries(
      ast.propertySignatures.map((p) => [String(p.name), { optional: p.isOptional, type: typeOf(p.type) }])
    ),
    // Every other field kept: one index signature, string keys, any value.
    keepsOthers: ast.indexSignatures.length === 1 && ast.indexSignatures[0]!.type._tag === "UnknownKeyword"
  }
}

describe("erp api infer", () => {
  it("drafts the sandbox's invoices as the hand-written Invoice schema has them, field by field", async () => {
    const generated = fieldsOf((await load("Invoice.ts")).Invoice!)
    const strict = fieldsOf(Invoices.StrictInvoice)
    const loose = fieldsOf(Invoices.Invoice)
    expect(generated.keepsOthers).toBe(true)
    expect(loose.keepsOthers).toBe(true)
    expect(drafted["Invoice.ts"]!.text).toContain("from 200 records.")
    // The contract's fields: required, and of the same types (a pattern is not drafted: the same base type)...
    for (const [name, field] of Object.entries(strict.fields)) {
      if (name === "currency") continue
      expect(generated.fields[name], name).toEqual(field)
    }
    expect(strict.fields.paid!.type).toBe("0 | 1")
    expect(generated.fields.id!.type).toBe("Int")
    // ...except the currency, a closed set of values seen many times, a literal of three letters each
    expect(generated.fields.currency).toEqual({ optional: false, type: `"EUR" | "HUF" | "USD"` })
    expect(strict.fields.currency).toEqual({ optional: false, type: "String" })
    // The loose schema's fields are all there, required, of the same type or a refinement of it (Int of Number)
    for (const [name, field] of Object.entries(loose.fields)) {
      expect(generated.fields[name]!.optional, name).toBe(field.optional)
      expect([field.type, field.type === "Number" ? "Int" : field.type], name).toContain(generated.fields[name]!.type)
    }
    // What the hand-written schemas keep untyped, the draft types too: the dates
    expect(generated.fields.issued_on).toEqual({ optional: false, type: "String" })
    expect(generated.fields.due_on).toEqual({ optional: false, type: "String" })
    expect(Object.keys(generated.fields)).toEqual(Object.keys(env.sandbox.invoiceAt(0)))
  })

  it("the modules compile strict under NodeNext", async () => {
    Fs.writeFileSync(
      Path.join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          exactOptionalPropertyTypes: true,
          noUnusedLocals: true,
          module: "NodeNext",
          moduleResolution: "NodeNext",
          target: "ES2022",
          lib: ["ES2022"],
          types: ["node"],
          noEmit: true,
          skipLibCheck: true
        },
        files: ["Invoice.ts", "Partner.ts"]
      })
    )
    const tsc = Path.join(ROOT, "node_modules/typescript/bin/tsc")
    const result = await new Promise<{ code: number; out: string }>((resolve) =>
      execFile(
        process.execPath,
        [tsc, "-p", dir],
        { cwd: dir },
        (error, stdout, stderr) => resolve({ code: error === null ? 0 : Number(error.code ?? 1), out: stdout + stderr })
      )
    )
    expect(result.out).toBe("")
    expect(result.code).toBe(0)
  }, 180_000)

  it("decodes every record sampled, keeping the fields it does not type; refuses records of the wrong types", async () => {
    const { Invoice } = await load("Invoice.ts")
    const decode = Schema.decodeUnknownEither(Invoice!)
    const { records } = drafted["Invoice.ts"]!
    expect(records.length).toBe(200)
    for (const record of records) expect(Either.isRight(decode(record)), JSON.stringify(record)).toBe(true)
    const first = records[0] as Record<string, unknown>
    expect(decode({ ...first, note: { kept: [1] } })).toEqual(Either.right({ ...first, note: { kept: [1] } }))
    for (
      const wrong of [
        { total: "12.50" },
        { paid: 2 },
        { id: 1.5 },
        { currency: "GBP" },
        { number: null },
        { partner_id: "7" }
      ]
    ) {
      expect(Either.isLeft(decode({ ...first, ...wrong })), JSON.stringify(wrong)).toBe(true)
    }
    const { number: _, ...withoutNumber } = first
    expect(Either.isLeft(decode(withoutNumber))).toBe(true)
  })

  it("partners that stray: null, unions, optional nested objects, numbers beyond a double kept as the library keeps them", async () => {
    const { text, records } = drafted["Partner.ts"]!
    const { Partner } = await load("Partner.ts")
    const { fields, keepsOthers } = fieldsOf(Partner!)
    expect(keepsOthers).toBe(true)
    expect(fields.id).toEqual({ optional: false, type: "Int" })
    expect(fields.company_name).toEqual({ optional: false, type: "String | null" })
    expect(fields.tax_number).toEqual({ optional: false, type: "Int | String | null" })
    expect(fields.is_customer).toEqual({ optional: false, type: "0 | 1 | Boolean" })
    // 12345678901234567890 and 9007199254740993 are read from the text: Number (Int would refuse them), noted
    expect(fields.credit_limit).toEqual({ optional: false, type: "Number" })
    expect(fields.ledger_ref).toEqual({ optional: true, type: "Number | UndefinedKeyword" })
    expect(text).toMatch(/values? beyond a double \(12345678901234567890\)/)
    expect(text).toMatch(/values? beyond a double \(9007199254740993\)/)
    expect(fields.custom_fields!.optional).toBe(true)
    const decode = Schema.decodeUnknownEither(Partner!)
    expect(records.length).toBe(300)
    for (const record of records) expect(Either.isRight(decode(record)), JSON.stringify(record)).toBe(true)
    const first = records[0] as Record<string, unknown>
    expect(Either.isLeft(decode({ ...first, company_name: 5 }))).toBe(true)
    expect(Either.isLeft(decode({ ...first, custom_fields: { segment: 1 } }))).toBe(true)
  })

  it("its resource, added to the command line's resources, gives erp invoices list and get", async () => {
    const { resource } = await load("Invoice.ts")
    expect(resource).toMatchObject({ name: "invoices", list: "invoice/list", get: "invoice/get", idField: "id" })
    const run = async (...args: Array<string>) => {
      let stdout = ""
      const out = vi.spyOn(process.stdout, "write").mockImplementation((chunk: any, done?: any) => {
        stdout += String(chunk)
        if (typeof done === "function") done()
        return true
      })
      try {
        const code = await Effect.runPromise(
          Cli.main(["node", "erp", ...args], { resources: [...Cli.resources, resource] }).pipe(
            Effect.provide(NodeContext.layer)
          )
        )
        return { code, stdout }
      } finally {
        out.mockRestore()
      }
    }
    const list = await run("invoices", "list")
    expect(list.code).toBe(0)
    expect(list.stdout.trim().split("\n").map((line) => JSON.parse(line))).toEqual(drafted["Invoice.ts"]!.records)
    const get = await run("invoices", "get", "--id", "42")
    expect(get.code).toBe(0)
    expect(JSON.parse(get.stdout)).toEqual(env.sandbox.invoiceAt(41))
    const table = await run("invoices", "list", "--format", "table")
    expect(table.stdout.split("\n")[0]).toMatch(/^id +number +partner_id +issued_on +due_on$/)
  })

  it("refuses what it cannot draft: a bad name or sample, an endpoint that serves nothing", async () => {
    const badName = await erp(["api", "infer", "invoice/list", "--name", "class"], { via: "node", env: env.env })
    expect(badName.code).toBe(2)
    expect(badName.stderr).toContain("not a TypeScript identifier")
    const badSample = await erp(["api", "infer", "invoice/list", "--sample", "0"], { via: "node", env: env.env })
    expect(badSample.code).toBe(2)
    const nothing = await startSandbox({ partners: 0 })
    try {
      const empty = await erp(["api", "infer", "partner/list"], { via: "node", env: nothing.env })
      expect(empty.stdout).toBe("")
      expect(empty.stderr).toBe("erp: partner/list served no records: there is nothing to draft from\n")
      expect(empty.code).toBe(1)
    } finally {
      await nothing.close()
    }
    const few = await erp(["api", "infer", "invoice/list", "--sample", "7"], { via: "node", env: env.env })
    expect(few.code).toBe(0)
    expect(few.stdout).toContain("from 7 records.")
    const badWhere = await erp(["api", "infer", "invoice/list", "--where", "bad field=1"], {
      via: "node",
      env: env.env
    })
    expect([badWhere.code, badWhere.stdout]).toEqual([2, ""])
    expect(badWhere.stderr).toContain("--where: condition field \"bad field\"")
  })

  it("--where drafts from the records the server serves under the condition, and says so in the module", async () => {
    const unpaid = (drafted["Invoice.ts"]!.records as ReadonlyArray<{ readonly paid: number }>)
      .filter((invoice) => invoice.paid === 0)
    expect(unpaid.length).toBeGreaterThan(20)
    const run = await erp(["api", "infer", "invoice/list", "--where", "paid=0"], { via: "node", env: env.env })
    expect([run.code, run.stderr]).toEqual([0, ""])
    expect(run.stdout).toContain(
      `drafted by \`erp api infer invoice/list --where "paid=0"\` from ${unpaid.length} records.`
    )
    // Only unpaid invoices were sampled: the flag is one value now, where the whole list gives Literal(0, 1).
    expect(run.stdout).toContain("  paid: Schema.Literal(0)\n")
    expect(drafted["Invoice.ts"]!.text).toContain("  paid: Schema.Literal(0, 1)\n")
  })
})
