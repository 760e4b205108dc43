import * as NodeContext from "@effect/platform-node/NodeContext"
import { afterAll, beforeAll, describe, expect, it, vi } from "@effect/vitest"
import * as Seed from "@erp-client/fake-erp/Seed"
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
import ts from "typescript"
import * as Cli from "../src/Cli.js"
import * as SchemaDraft from "../src/internal/schemaDraft.js"
import * as Invoices from "./fixtures/Invoices.js"
import { erp, ROOT, type Run, startSandbox } from "./harness.js"

// `erp api infer`: drafted from the sandbox's invoices and odd partners by the compiled command, the modules it prints
// compile strict under NodeNext (in a folder inside the repository, so `effect` and `@erp-client/streams` resolve as
// they would in an application), decode every record sampled, refuse records of the wrong types, and match the
// hand-written Invoice schema (test/fixtures/Invoices.ts) field by field; the drafted `resource`, added to the
// command line's resources, gives `erp invoices list` and `get`. Records of 10,000 fields, records whose names and
// values hold bidi and invisible characters, and records of megabytes (`erp sandbox --large-records`, drafted by a
// command whose heap is held to 64 MB) are drafted into modules that compile too.

type Started = Awaited<ReturnType<typeof startSandbox>>
let env: Started
let dir: string
// The command's runs on the records of megabytes, of 10,000 fields and of hidden characters.
let large: Run
let wide: Run
let hostile: Run
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

// Records of 10,000 fields: past what TypeScript types in one struct (TS2859), made on demand.
const WIDE_FIELDS = 10_000
const wideRecord = (index: number) => {
  const record: Record<string, unknown> = { id: index + 1 }
  for (let k = 0; k < WIDE_FIELDS; k++) record[`field_${k}`] = k % 2 === 0 ? index * k : `v${k}`
  return record
}

// What a reader of the module would not see as it is: bidi controls (Trojan Source), zero-width and invisible
// characters, a byte order mark, a tag character, a C1 control, a non-breaking space, a line separator.
const HIDDEN = "\u202e\u2066\u200b\u200d\u2060\ufeff\u00ad\u3164\u{e0041}\u009b\u00a0\u2028"
const hostileRecord = (index: number) => ({
  id: index + 1,
  [`note${HIDDEN}`]: `n${index}`,
  // A closed set seen many times: a literal, one of whose values holds them
  status: index % 2 === 0 ? `paid${HIDDEN}"; evil()` : "open"
})
// Any character of those kinds, raw; a line feed and the space are the only whitespace and controls a module needs.
const RAW_HIDDEN = /[^\P{C}\n]|[\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]|[^\S \n]/u

// `erp sandbox ARGS` as a subprocess while `body` runs with its base URL and key; then interrupted.
const serving = async <A>(args: ReadonlyArray<string>, body: (env: Record<string, string>) => Promise<A>) => {
  let result: A | undefined
  let resolveUrl: (url: string) => void = () => {}
  const printed = new Promise<string>((resolve) => (resolveUrl = resolve))
  const server = await erp(["sandbox", "--port", "0", ...args], {
    via: "node",
    // It serves while the body runs: within the set-up's bound (a busy machine took over 60 s for the large records).
    killAfterMillis: 220_000,
    onStdout: (text) => {
      const url = /export ERP_BASE_URL=(\S+)/.exec(text)
      if (url !== null) resolveUrl(url[1]!)
    },
    interruptWhen: printed.then(async (url) => {
      result = await body({ ERP_BASE_URL: url, ERP_API_KEY: "sandbox-key" })
    })
  })
  expect(server.code).toBe(130)
  return result!
}

beforeAll(async () => {
  env = await startSandbox({
    partners: 300,
    invoices: 200,
    oddRecords: { rate: 0.3, kinds: ODD_KINDS },
    resources: [
      { list: "wide/list", get: "wide/get", records: { count: 25, record: wideRecord } },
      { list: "hostile/list", get: "hostile/get", records: { count: 40, record: hostileRecord } }
    ]
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
  wide = await erp(["api", "infer", "wide/list"], { via: "node", env: env.env })
  Fs.writeFileSync(Path.join(dir, "Wide.ts"), wide.stdout)
  hostile = await erp(["api", "infer", "hostile/list", "-p", `q=${HIDDEN}.`], { via: "node", env: env.env })
  Fs.writeFileSync(Path.join(dir, "Hostile.ts"), hostile.stdout)
  // 40 records of 2 MB each, drafted by a command whose heap may not pass 64 MB: the draft holds a page at a time,
  // where all the records sampled (80 MB of text, more parsed) were held before.
  large = await serving(
    ["--no-rate-limit", "--large-records", "40", "--large-record-bytes", "2000000"],
    (served) =>
      erp(["api", "infer", "large/list", "--sample", "40"], {
        via: "node",
        killAfterMillis: 200_000,
        env: { ...served, NODE_OPTIONS: "--max-old-space-size=64" }
      })
  )
  Fs.writeFileSync(Path.join(dir, "Large.ts"), large.stdout)
}, 240_000)

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
    expect(drafted["Invoice.ts"]!.text).toContain("drafted from 200 records for the client's Effect 3 edition")
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
        files: ["Invoice.ts", "Partner.ts", "Wide.ts", "Hostile.ts", "Large.ts"]
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
  }, 240_000)

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
    // What to do with it: the library's streams in an application. The module names no file of the client's source,
    // which a user of the installed command does not have; the test adds it to the resources as a clone can.
    expect(drafted["Invoice.ts"]!.text).toContain(
      " * In your application (`Resource` of @erp-client/streams), `Resource.stream(resource)` streams every record of"
    )
    expect(drafted["Invoice.ts"]!.text).not.toMatch(/packages\/|Cli\.ts|pnpm/)
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
    expect(badName.stderr).toContain("a reserved word of JavaScript")
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
    expect(few.stdout).toContain("drafted from 7 records")
    expect(few.stdout).toContain(" *   erp api infer invoice/list --edition 3 --sample 7\n")
    const badWhere = await erp(["api", "infer", "invoice/list", "--where", "bad field=1"], {
      via: "node",
      env: env.env
    })
    expect([badWhere.code, badWhere.stdout]).toEqual([2, ""])
    expect(badWhere.stderr).toContain("--where: condition field \"bad field\"")
  })

  it("pointed at a get endpoint, which refuses or serves no list, it says to give a list endpoint, as its help shows", async () => {
    const cases = [
      [["partner/get"], "erp: partner/get: the server reported an error (code 0): id or company_name is required"],
      [["invoice/get", "-p", "id=3"], "erp: invoice/get: cannot decode data: expected an array of records, got object"]
    ] as const
    for (const [args, said] of cases) {
      const run = await erp(["api", "infer", ...args], { via: "node", env: env.env })
      expect([run.code, run.stdout]).toEqual([1, ""])
      const list = args[0].replace("/get", "/list")
      expect(run.stderr).toBe(
        `${said}; erp api infer reads a list endpoint, and ${args[0]} may not be one: try erp api infer ${list}\n`
      )
    }
    // Not found is an answer, said as it is, with its exit code.
    const missing = await erp(["api", "infer", "invoice/get", "-p", "id=99999"], { via: "node", env: env.env })
    expect([missing.code, missing.stderr]).toEqual([4, "erp: invoice/get: not found\n"])
    const help = Cli.helpPage(["api", "infer", "--help"], { color: false })!
    expect(help).toContain("e.g. partner/list")
    expect(help).not.toContain("partner/get")
    expect(Cli.helpPage(["api", "list", "--help"], { color: false })).toContain("e.g. partner/list")
    expect(Cli.helpPage(["api", "get", "--help"], { color: false })).toContain("e.g. partner/get")
  })

  it("--where drafts from the records the server serves under the condition, and says so in the module", async () => {
    const unpaid = (drafted["Invoice.ts"]!.records as ReadonlyArray<{ readonly paid: number }>)
      .filter((invoice) => invoice.paid === 0)
    expect(unpaid.length).toBeGreaterThan(20)
    const run = await erp(["api", "infer", "invoice/list", "--where", "paid=0"], { via: "node", env: env.env })
    expect([run.code, run.stderr]).toEqual([0, ""])
    expect(run.stdout).toContain(`drafted from ${unpaid.length} records`)
    expect(run.stdout).toContain(` *   erp api infer invoice/list --edition 3 --where "paid=0"\n`)
    // Only unpaid invoices were sampled: the flag is one value now, where the whole list gives Literal(0, 1).
    expect(run.stdout).toContain("  paid: Schema.Literal(0)\n")
    expect(drafted["Invoice.ts"]!.text).toContain("  paid: Schema.Literal(0, 1)\n")
  })

  it("a name that cannot be a value and a type of a strict module is refused before any request, saying why", async () => {
    const before = (await env.run(env.sandbox.stats)).requests
    const names = ["eval", "arguments", "undefined", "object", "never", "as", "let", "Resource", "otherFields", "a-b"]
    const runs = await Promise.all(
      names.map((name) => erp(["api", "infer", "invoice/list", "--name", name], { via: "node", env: env.env }))
    )
    for (const [i, run] of runs.entries()) {
      const why = SchemaDraft.nameProblem(names[i]!)
      expect(why, names[i]).toBeDefined()
      expect([run.code, run.stdout, run.stderr], names[i]).toEqual([
        2,
        "",
        `erp: --name ${JSON.stringify(names[i])}: ${why}, so the module would not compile; choose another name\n`
      ])
    }
    expect((await env.run(env.sandbox.stats)).requests).toBe(before)
  })

  it("the names refused are those the compiler refuses: each name's module is compiled", () => {
    // Every name refused, beside names near them that a module may take.
    const refused = [
      ..."break class const enum export import new null super this typeof void yield let static implements interface"
        .split(" "),
      ..."package private protected public await eval arguments any boolean number string symbol bigint object"
        .split(" "),
      ..."undefined never unknown as Schema Resource otherFields resource".split(" ")
    ]
    const accepted = "type from of async Object Undefined intrinsic globalThis NaN Infinity Symbol require $ _x"
      .split(" ")
    const read = SchemaDraft.draft([`{"id":1,"name":"a"}`, `{"id":2,"name":"b"}`])
    if (!read.ok) throw new Error(read.failure.reason)
    const files = [...refused, ...accepted].map((name, i) => {
      const file = Path.join(dir, `Name${i}.ts`)
      Fs.writeFileSync(
        file,
        SchemaDraft.render(read.value, {
          name,
          edition: 3,
          resourcePackage: "@erp-client/streams",
          endpoint: "name/list",
          get: "name/get"
        })
      )
      return file
    })
    const program = ts.createProgram(files, {
      strict: true,
      exactOptionalPropertyTypes: true,
      noUnusedLocals: true,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      lib: ["lib.es2022.d.ts"],
      types: ["node"],
      noEmit: true,
      skipLibCheck: true
    })
    const compiles = files.map((file) => {
      const source = program.getSourceFile(file)!
      return program.getSyntacticDiagnostics(source).length + program.getSemanticDiagnostics(source).length === 0
    })
    const names = [...refused, ...accepted]
    expect(names.filter((_, i) => !compiles[i])).toEqual(refused)
    expect(names.filter((name) => SchemaDraft.nameProblem(name) !== undefined)).toEqual(refused)
  }, 120_000)

  it("records of 10,000 fields: the first 500 declared and the rest kept by otherFields, in a module that compiles", async () => {
    expect([wide.code, wide.stderr]).toEqual([0, ""])
    const { Wide } = await load("Wide.ts")
    const { fields, keepsOthers } = fieldsOf(Wide!)
    expect(keepsOthers).toBe(true)
    expect(Object.keys(fields)).toEqual(["id", ...Array.from({ length: 499 }, (_, k) => `field_${k}`)])
    expect(wide.stdout).toContain(
      `9501 more fields seen here ("field_499", "field_500", "field_501", …) are not declared: a draft declares`
    )
    const record = wideRecord(7)
    expect(Schema.decodeUnknownEither(Wide!)(record)).toEqual(Either.right(record))
    expect(Either.isLeft(Schema.decodeUnknownEither(Wide!)({ ...record, field_1: 1 }))).toBe(true)
  })

  it("names and values with bidi and invisible characters: escaped in every string and comment, the same values", async () => {
    expect([hostile.code, hostile.stderr]).toEqual([0, ""])
    expect(hostile.stdout).not.toMatch(RAW_HIDDEN)
    const escaped = "\\u202e\\u2066\\u200b\\u200d\\u2060\\ufeff\\u00ad\\u3164\\u{e0041}\\u009b\\u00a0\\u2028"
    expect(hostile.stdout).toContain(` *   erp api infer hostile/list --edition 3 -p "q=${escaped}."\n`)
    expect(hostile.stdout).toContain(`  "note${escaped}": Schema.String,`)
    expect(hostile.stdout).toContain(`  status: Schema.Literal("open", "paid${escaped}\\"; evil()")\n`)
    // The module, loaded, holds the names and values the server sent, character for character
    const { Hostile } = await load("Hostile.ts")
    const { fields } = fieldsOf(Hostile!)
    expect(Object.keys(fields)).toEqual(["id", `note${HIDDEN}`, "status"])
    expect(fields.status!.type).toBe(["open", `paid${HIDDEN}"; evil()`].map((v) => JSON.stringify(v)).join(" | "))
    const decode = Schema.decodeUnknownEither(Hostile!)
    for (const index of [0, 1, 38]) expect(decode(hostileRecord(index))).toEqual(Either.right(hostileRecord(index)))
    expect(Either.isLeft(decode({ ...hostileRecord(0), status: "paid\"; evil()" }))).toBe(true)
  })

  it("records of 2 MB: drafted with a heap held to 64 MB, long and deep values summarised", async () => {
    expect([large.code, large.signal, large.stderr]).toEqual([0, null, ""])
    expect(large.stdout).toContain("drafted from 40 records")
    expect(large.stdout).toContain(" *   erp api infer large/list --edition 3 --sample 40\n")
    const { Large } = await load("Large.ts")
    const { fields } = fieldsOf(Large!)
    expect(fields).toMatchObject({
      id: { type: "Int" },
      kind: { type: `"archive" | "attachment" | "report"` },
      text: { type: "String" },
      wide: { type: "TypeLiteral" },
      deep: { type: "TypeLiteral" },
      lines: { type: "TupleType" }
    })
    expect(large.stdout).toContain(`100 more fields seen here ("field_500", "field_501", "field_502", …)`)
    // Nesting past 16 levels is Unknown
    expect(large.stdout).toMatch(/ {32}next: Schema\.Unknown\n/)
    const record = Seed.largeRecordAt(3, 2_000_000)
    expect(Schema.decodeUnknownEither(Large!)(record)).toEqual(Either.right(record))
  })
})
