import { describe, expect, it } from "@effect/vitest"
import * as SchemaDraft from "../src/internal/schemaDraft.js"

// The decisions of `erp api infer`: samples (records as the server wrote them) to a shape, a shape to a module.

const draftOf = (texts: ReadonlyArray<string>, options?: SchemaDraft.Options) => {
  const read = SchemaDraft.draft(texts, options)
  if (!read.ok) throw new Error(read.failure.reason)
  return read.value
}

const fieldsOf = (shape: SchemaDraft.Shape) => {
  if (shape._tag !== "Struct") throw new Error(`not a struct: ${shape._tag}`)
  return Object.fromEntries(shape.fields.map((field) => [field.name, field]))
}

const records = (n: number, make: (i: number) => object) => Array.from({ length: n }, (_, i) => JSON.stringify(make(i)))

describe("SchemaDraft.draft", () => {
  it("a field in every sample is required, one absent from some optional, with how often it was there", () => {
    const fields = fieldsOf(
      draftOf([`{"id":1,"name":"a","fax":"1"}`, `{"id":2,"name":"b"}`, `{"name":"c","id":3}`]).shape
    )
    expect(Object.keys(fields)).toEqual(["id", "name", "fax"])
    expect(fields.id).toMatchObject({ optional: false, present: 3, of: 3 })
    expect(fields.name!.optional).toBe(false)
    expect(fields.fax).toMatchObject({ optional: true, present: 1, of: 3, shape: { _tag: "String" } })
  })

  it("null seen makes NullOr; only null is Null; a repeated key is present once", () => {
    const fields = fieldsOf(draftOf([`{"a":null,"b":null}`, `{"a":"x","b":null,"b":null}`]).shape)
    expect(fields.a!.shape).toEqual({ _tag: "NullOr", shape: { _tag: "String" } })
    expect(fields.b).toMatchObject({ optional: false, present: 2, shape: { _tag: "Null" } })
  })

  it("integers are Int; a fraction anywhere makes Number; 1e2 and -0.0 are integers", () => {
    const fields = fieldsOf(draftOf([`{"n":1,"x":1,"e":1e2}`, `{"n":2,"x":2.5,"e":-0.0}`]).shape)
    expect(fields.n!.shape).toEqual({ _tag: "Int" })
    expect(fields.x!.shape).toEqual({ _tag: "Number" })
    expect(fields.e!.shape).toEqual({ _tag: "Int" })
  })

  it("a small closed set seen many times is a literal; too few samples or too many values are not", () => {
    const many = draftOf(records(40, (i) => ({ paid: i % 2, currency: ["HUF", "EUR", "USD"][i % 3], id: i })))
    expect(fieldsOf(many.shape).paid!.shape).toEqual({ _tag: "Literal", values: [0, 1] })
    expect(fieldsOf(many.shape).currency!.shape).toEqual({ _tag: "Literal", values: ["EUR", "HUF", "USD"] })
    expect(fieldsOf(many.shape).id!.shape).toEqual({ _tag: "Int" })
    // 19 samples: below minLiteralSamples (20)
    const few = draftOf(records(19, (i) => ({ paid: i % 2 })))
    expect(fieldsOf(few.shape).paid!.shape).toEqual({ _tag: "Int" })
    // 9 values: more than maxLiterals (8), however many samples
    const wide = draftOf(records(900, (i) => ({ code: `C${i % 9}` })))
    expect(fieldsOf(wide.shape).code!.shape).toEqual({ _tag: "String" })
    // 6 values in 25 samples: fewer than 5 a value
    const thin = draftOf(records(25, (i) => ({ code: `C${i % 6}` })))
    expect(fieldsOf(thin.shape).code!.shape).toEqual({ _tag: "String" })
    // the thresholds are options
    const loose = draftOf(records(4, (i) => ({ paid: i % 2 })), { minLiteralSamples: 4, minSamplesPerLiteral: 2 })
    expect(fieldsOf(loose.shape).paid!.shape).toEqual({ _tag: "Literal", values: [0, 1] })
    // fractions never make literals
    const rates = draftOf(records(40, (i) => ({ rate: [0.5, 1.5][i % 2] })))
    expect(fieldsOf(rates.shape).rate!.shape).toEqual({ _tag: "Number" })
  })

  it("nested objects are structs with their own required and optional fields; arrays of objects draft their items", () => {
    const fields = fieldsOf(
      draftOf([
        `{"address":{"city":"Pécs","zip":7621},"lines":[{"sku":"A","qty":1},{"sku":"B","qty":2,"note":"x"}],"tags":[]}`,
        `{"address":{"city":"Győr"},"lines":[],"tags":["vip"]}`
      ]).shape
    )
    const address = fieldsOf(fields.address!.shape)
    expect(address.city).toMatchObject({ optional: false, shape: { _tag: "String" } })
    expect(address.zip).toMatchObject({ optional: true, present: 1, of: 2, shape: { _tag: "Int" } })
    const lines = fields.lines!.shape
    expect(lines._tag).toBe("Array")
    const line = fieldsOf((lines as Extract<SchemaDraft.Shape, { _tag: "Array" }>).item)
    expect(line.sku!.optional).toBe(false)
    expect(line.note).toMatchObject({ optional: true, present: 1, of: 2 })
    expect(fields.tags!.shape).toEqual({ _tag: "Array", item: { _tag: "String" } })
    // Arrays seen only empty say nothing of their items
    expect(fieldsOf(draftOf([`{"a":[]}`]).shape).a!.shape).toEqual({ _tag: "Array", item: { _tag: "Unknown" } })
  })

  it("a number beyond a double is read from its text: Number with how many and the first as written, never Int", () => {
    const fields = fieldsOf(
      draftOf([
        `{"limit":12345678901234567890,"ref":9007199254740993,"rate":0.1000000000000000000001,"ok":9007199254740991}`,
        `{"limit":5,"ref":1,"rate":0.5,"ok":1}`
      ]).shape
    )
    expect(fields.limit!.shape).toEqual({
      _tag: "Number",
      beyondDouble: { count: 1, example: "12345678901234567890" }
    })
    expect(fields.ref!.shape).toEqual({ _tag: "Number", beyondDouble: { count: 1, example: "9007199254740993" } })
    expect(fields.rate!.shape).toEqual({
      _tag: "Number",
      beyondDouble: { count: 1, example: "0.1000000000000000000001" }
    })
    expect(fields.ok!.shape).toEqual({ _tag: "Int" })
    expect(SchemaDraft.fitsDouble("1.10")).toBe(true)
    expect(SchemaDraft.fitsDouble("1e2")).toBe(true)
    expect(SchemaDraft.fitsDouble("0.0012300e5")).toBe(true)
    expect(SchemaDraft.fitsDouble("-0.0")).toBe(true)
    expect(SchemaDraft.fitsDouble("1e400")).toBe(false)
    expect(SchemaDraft.fitsDouble("12345678901234567890")).toBe(false)
  })

  it("values of several kinds make a Union (null apart, as NullOr)", () => {
    const fields = fieldsOf(
      draftOf([`{"tax":"12345678-2-42","flag":1}`, `{"tax":12345678242,"flag":true}`, `{"tax":null,"flag":"1"}`]).shape
    )
    expect(fields.tax!.shape).toEqual({
      _tag: "NullOr",
      shape: { _tag: "Union", members: [{ _tag: "Int" }, { _tag: "String" }] }
    })
    expect(fields.flag!.shape).toEqual({
      _tag: "Union",
      members: [{ _tag: "Boolean" }, { _tag: "Int" }, { _tag: "String" }]
    })
  })

  it("the id field: `id` when it differs in every sample, else a field named …_id, else none", () => {
    expect(draftOf([`{"id":1,"n":"a"}`, `{"id":2,"n":"a"}`])).toMatchObject({ idField: "id", idIsInteger: true })
    expect(draftOf([`{"id":1,"code":"a"}`, `{"id":1,"code":"b"}`])).toMatchObject({
      idField: "code",
      idIsInteger: false
    })
    expect(draftOf([`{"n":"a","invoice_id":"A-1"}`, `{"n":"b","invoice_id":"A-2"}`]).idField).toBe("invoice_id")
    expect(draftOf([`{"n":"a"}`, `{"n":"a"}`]).idField).toBeUndefined()
  })

  it("nesting past maxDepth is Unknown, read without recursion; a sample that is not JSON is a failure naming it", () => {
    const deep = `{"a":${"[".repeat(100_000)}${"]".repeat(100_000)}}`
    expect(fieldsOf(draftOf([deep]).shape).a!.shape).toEqual({
      _tag: "Array",
      item: { _tag: "Array", item: expect.anything() }
    })
    const shallow = fieldsOf(draftOf([`{"a":{"b":{"c":1}}}`], { maxDepth: 1 }).shape)
    expect(shallow.a!.shape).toEqual({
      _tag: "Struct",
      fields: [expect.objectContaining({ shape: { _tag: "Unknown" } })]
    })
    const bad = SchemaDraft.draft([`{"id":1}`, `{"id":2,}`])
    expect(bad).toEqual({ ok: false, failure: { sample: 1, position: 8, reason: `expected a string key, found "}"` } })
    expect(SchemaDraft.draft([`{"id":1} x`]).ok).toBe(false)
  })
})

describe("SchemaDraft.drafter: what it holds is bounded, whatever the records' size", () => {
  const wide = (n: number, id: number) =>
    JSON.stringify(Object.fromEntries([...Array.from({ length: n }, (_, k) => [`f${k}`, k]), ["id", id]]))

  it("a struct declares its first maxFields fields and `id`; the others are counted, a few named, left to otherFields", () => {
    const draft = draftOf([wide(10_000, 1), wide(10_000, 2)])
    const shape = draft.shape as Extract<SchemaDraft.Shape, { _tag: "Struct" }>
    expect(shape.fields.map((field) => field.name)).toEqual([
      ...Array.from({ length: 500 }, (_, k) => `f${k}`),
      "id"
    ])
    expect(shape.undeclared).toEqual({
      count: 9_500,
      atLeast: false,
      names: ["f500", "f501", "f502"],
      maxFields: 500,
      maxTotalFields: 2_000
    })
    expect(draft.idField).toBe("id")
    // In all: the first maxTotalFields fields, at every depth, in the order seen
    const nested = draftOf([JSON.stringify({ a: { x: 1, y: 2 }, b: { x: 1, y: 2 }, c: 1 })], { maxTotalFields: 3 })
    const fields = fieldsOf(nested.shape)
    expect(Object.keys(fields)).toEqual(["a"])
    expect(fieldsOf(fields.a!.shape)).toMatchObject({ x: {}, y: {} })
    expect((nested.shape as Extract<SchemaDraft.Shape, { _tag: "Struct" }>).undeclared).toMatchObject({
      count: 2,
      names: ["b", "c"]
    })
    // The undeclared names counted are bounded too (10,000 in a draft): past them, "at least"
    const many = draftOf([wide(10_700, 1)], { maxFields: 100 }).shape as Extract<SchemaDraft.Shape, { _tag: "Struct" }>
    expect(many.undeclared).toMatchObject({ count: 10_000, atLeast: true })
  })

  it("a long string is measured, never kept: not a literal, not an id; a long number's example is cut", () => {
    const long = "x".repeat(1_000_000)
    const draft = draftOf(
      Array.from({ length: 40 }, (_, i) => JSON.stringify({ id: i, blob: long, code: `${long}${i}`, kind: i % 2 }))
    )
    const fields = fieldsOf(draft.shape)
    expect(fields.blob!.shape).toEqual({ _tag: "String" })
    expect(fields.code!.shape).toEqual({ _tag: "String" })
    expect(fields.kind!.shape).toEqual({ _tag: "Literal", values: [0, 1] })
    expect(draftOf([`{"code":"${"a".repeat(101)}1"}`, `{"code":"${"a".repeat(101)}2"}`]).idField).toBeUndefined()
    expect(draft.columns.find((column) => column.field === "blob")!.width).toBe(24)
    const digits = "9".repeat(1_000)
    expect(fieldsOf(draftOf([`{"n":${digits}}`]).shape).n!.shape).toEqual({
      _tag: "Number",
      beyondDouble: { count: 1, example: `${"9".repeat(39)}…` }
    })
    // A name longer than 1,000 characters is not declared
    const name = "k".repeat(1_001)
    const named = draftOf([`{"${name}":1,"id":1}`]).shape as Extract<SchemaDraft.Shape, { _tag: "Struct" }>
    expect(named.fields.map((field) => field.name)).toEqual(["id"])
    expect(named.undeclared).toMatchObject({ count: 1, names: [`${"k".repeat(1_000)}…`] })
  })

  it("the id field among many: the best named of the first sample's fields, compared while they all differ", () => {
    const uuid = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`
    const records = Array.from({ length: 50 }, (_, i) =>
      JSON.stringify({
        ...Object.fromEntries(Array.from({ length: 20 }, (_, k) => [`same${k}`, k])),
        order_id: uuid(i),
        n: i
      }))
    expect(draftOf(records)).toMatchObject({ idField: "order_id", idIsInteger: false, firstId: uuid(0) })
    // A first id as the server wrote it: a number's token, a string's value
    expect(draftOf([`{"id":12345678901234567890}`, `{"id":2}`]).firstId).toBe("12345678901234567890")
    expect(draftOf([`{"id":"caf\\u00e9"}`, `{"id":"b"}`]).firstId).toBe("café")
  })

  it("samples one by one; a failure names the sample and ends the drafting", () => {
    const drafting = SchemaDraft.drafter()
    expect(drafting.add(`{"id":1}`)).toBeUndefined()
    expect(drafting.add(`{"id":2}`)).toBeUndefined()
    expect(drafting.result()).toMatchObject({ samples: 2, idField: "id", firstId: "1" })
    const failure = { sample: 2, position: 8, reason: `expected a string key, found "}"` }
    expect(drafting.add(`{"id":3,}`)).toEqual(failure)
    expect(drafting.add(`{"id":4}`)).toEqual(failure)
    expect(drafting.samples()).toBe(2)
  })
})

// The editions' packages, as `erp api infer --edition` passes them.
const effect3 = { edition: 3, resourcePackage: "@erp-client/streams" } as const
const effect4 = { edition: 4, resourcePackage: "@erp-client/effect4-streams" } as const

describe("SchemaDraft.render", () => {
  it("names: from the endpoint; one a strict module cannot declare as a value and a type refused, saying why", () => {
    expect(SchemaDraft.nameOf("invoice/list")).toBe("Invoice")
    expect(SchemaDraft.nameOf("stock-item/list")).toBe("StockItem")
    expect(SchemaDraft.nameOf("9-lives/list")).toBe("Record9Lives")
    for (const name of ["Invoice", "type", "from", "of", "async", "Object", "intrinsic", "globalThis", "NaN", "$x"]) {
      expect(SchemaDraft.nameProblem(name), name).toBeUndefined()
    }
    const why = (name: string) => SchemaDraft.nameProblem(name)
    expect(why("9a")).toContain("not a TypeScript identifier")
    expect(why("Invoice-2")).toContain("not a TypeScript identifier")
    expect(why("Größe")).toContain("not a TypeScript identifier")
    for (const name of ["class", "await", "yield", "let", "static", "enum", "null", "true", "void", "typeof"]) {
      expect(why(name), name).toBe("a reserved word of JavaScript")
    }
    for (const name of ["eval", "arguments"]) {
      expect(why(name), name).toBe("a name strict mode (every module) does not let a declaration take")
    }
    for (const name of ["undefined", "object", "never", "unknown", "bigint", "symbol", "any", "string"]) {
      expect(why(name), name).toBe("a type of TypeScript's own, which a type alias cannot be named")
    }
    expect(why("as")).toContain("export type as")
    for (const name of ["Schema", "Resource", "otherFields", "resource"]) {
      expect(why(name), name).toBe("a name the module declares or imports itself")
    }
    expect(SchemaDraft.isIdentifier("Invoice")).toBe(true)
    expect(SchemaDraft.isIdentifier("eval")).toBe(false)
  })

  it("nothing hidden is written raw: string literals hold escapes, comments show them", () => {
    // Bidi controls (Trojan Source), zero-width and invisible characters, a BOM, a tag, C1, NBSP, a line separator
    const hidden = "\u202e\u2066\u200b\u200d\u2060\ufeff\u00ad\u180e\u3164\ufe0f\u{e0041}\u009b\u00a0\u2028"
    const texts = Array.from({ length: 40 }, (_, i) =>
      JSON.stringify({
        id: i,
        [`na${hidden}me`]: 1,
        status: i % 2 === 0 ? `paid${hidden}` : "open",
        ...Object.fromEntries(Array.from({ length: 3 }, (_, k) => [`extra${k}${hidden}`, k]))
      }))
    const draft = draftOf(texts, { maxFields: 3 })
    const text = SchemaDraft.render(draft, {
      ...effect3,
      name: "Row",
      endpoint: "row/list",
      params: [`q=${hidden}`],
      noGet: `row/get answered NotFound: Not${hidden} found`
    })
    // Only printable text, spaces and line feeds
    expect(text).not.toMatch(/[^\P{C}\n]|[\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]|[^\S \n]/u)
    const escaped = "\\u202e\\u2066\\u200b\\u200d\\u2060\\ufeff\\u00ad\\u180e\\u3164\\ufe0f\\u{e0041}\\u009b\\u00a0"
    expect(text).toContain(`  "na${escaped}\\u2028me": Schema.Literal(1),`)
    expect(text).toContain(`  status: Schema.Literal("open", "paid${escaped}\\u2028")\n`)
    expect(text).toContain(`    "na${escaped}\\u2028me",\n`)
    // In comments: the escapes shown, as a string literal writes them (a parameter, a field's name), or as they are
    // with the line separator as a space (a server's message: a comment is one line)
    expect(text).toContain(`-p "q=${escaped}\\u2028"`)
    expect(text).toContain(`No \`get\`: row/get answered NotFound: Not${escaped}  found.`)
    expect(text).toContain(`"extra2${escaped}\\u2028") are not declared`)
  })

  it("a module: the schema with otherFields at every level, optional fields and exact numbers noted, a Resource", () => {
    const draft = draftOf([
      `{"id":1,"name":"Kovács Kft.","limit":12345678901234567890,"address":{"city":"Pécs"},"fax":null,"my-key":1}`,
      `{"id":2,"name":"Nagy Bt.","limit":1,"address":{"city":"Győr","zip":"9021"},"my-key":2}`
    ])
    const text = SchemaDraft.render(draft, {
      ...effect3,
      name: "Customer",
      endpoint: "customer/list",
      get: "customer/get"
    })
    expect(text).toContain(`import * as Resource from "@erp-client/streams/Resource"`)
    expect(text).toContain(`import * as Schema from "effect/Schema"`)
    expect(text).toContain(
      [
        "export const Customer = Schema.Struct({",
        "  id: Schema.Int,",
        "  name: Schema.String,",
        "  /**",
        "   * 1 value beyond a double (12345678901234567890): a parsed record holds the nearest double; the exact text is the",
        "   * record's as sent (exact: true, Page.json)",
        "   */",
        "  limit: Schema.Number,",
        "  address: Schema.Struct({",
        "    city: Schema.String,",
        "    /** absent from 1 of 2 */",
        "    zip: Schema.optional(Schema.String)",
        "  }, otherFields),",
        "  /** absent from 1 of 2 */",
        "  fax: Schema.optional(Schema.Null),",
        `  "my-key": Schema.Int`,
        "}, otherFields)"
      ].join("\n")
    )
    expect(text).toContain(`  name: "customers",`)
    expect(text).toContain(`  get: "customer/get",`)
    expect(text).toContain(`  fields: ["id", "name", "limit", "address", "my-key"],`)
    expect(text).toContain(`{ param: "id", kind: "integer", flag: "id", description: "A record's id." }`)
    expect(text).toContain(`{ header: "name", width: 11, field: "name" }`)
    expect(text).not.toContain(`field: "address"`)
  })

  it("edition 4: the same draft in Effect 4's Schema (StructWithRest, Literals, a union of an array), the same Resource", () => {
    const draft = draftOf(Array.from({ length: 40 }, (_, i) =>
      JSON.stringify({
        id: i + 1,
        status: i % 2 === 0 ? "open" : "paid",
        kind: "x",
        flag: i % 2 === 0 ? 1 : true,
        tax: i % 4 === 0 ? null : i % 2 === 1 ? `12-${i}` : i,
        address: i % 2 === 0 ? { city: `c${i}` } : { city: `c${i}`, zip: `90${i}` },
        tags: [{ k: `t${i}` }],
        empty: {}
      })))
    const options = { name: "Row", endpoint: "row/list", get: "row/get" }
    const four = SchemaDraft.render(draft, { ...effect4, ...options })
    const three = SchemaDraft.render(draft, { ...effect3, ...options })
    expect(four).toContain(`import * as Resource from "@erp-client/effect4-streams/Resource"\n`)
    expect(four).toContain("const otherFields = Schema.Record(Schema.String, Schema.Unknown)\n")
    expect(four).toContain(
      [
        "export const Row = Schema.StructWithRest(Schema.Struct({",
        "  id: Schema.Int,",
        `  status: Schema.Literals(["open", "paid"]),`,
        `  kind: Schema.Literal("x"),`,
        "  flag: Schema.Union([Schema.Boolean, Schema.Literal(1)]),",
        "  tax: Schema.NullOr(Schema.Union([Schema.Int, Schema.String])),",
        "  address: Schema.StructWithRest(Schema.Struct({",
        "    city: Schema.String,",
        "    /** absent from 20 of 40 */",
        "    zip: Schema.optional(Schema.String)",
        "  }), [otherFields]),",
        "  tags: Schema.Array(Schema.StructWithRest(Schema.Struct({",
        "    k: Schema.String",
        "  }), [otherFields])),",
        "  empty: Schema.StructWithRest(Schema.Struct({}), [otherFields])",
        "}), [otherFields])"
      ].join("\n")
    )
    expect(three).toContain(
      [
        "export const Row = Schema.Struct({",
        "  id: Schema.Int,",
        `  status: Schema.Literal("open", "paid"),`,
        `  kind: Schema.Literal("x"),`,
        "  flag: Schema.Union(Schema.Boolean, Schema.Literal(1)),",
        "  tax: Schema.NullOr(Schema.Union(Schema.Int, Schema.String)),",
        "  address: Schema.Struct({"
      ].join("\n")
    )
    // The declaration after the schema is the same text in both editions: the editions' Resource.make take the same
    const resource = (text: string) => text.slice(text.indexOf("export type Row"))
    expect(resource(four)).toBe(resource(three).replace("@erp-client/streams", "@erp-client/effect4-streams"))
  })

  it("the header names the edition and the command that drafts the module again; no package but those given", () => {
    const draft = draftOf([`{"id":1}`, `{"id":2}`])
    const header = (text: string) => text.slice(0, text.indexOf(" * A draft says"))
    expect(header(SchemaDraft.render(draft, { ...effect4, name: "Row", endpoint: "row/list" }))).toBe(
      "/**\n" +
        " * Row: the records of row/list, drafted from 2 records for the client's Effect 4 edition: the Schema of `effect` 4 and\n" +
        " * the `Resource` module of @erp-client/effect4-streams. To draft it again, run:\n" +
        " *\n" +
        " *   erp api infer row/list --edition 4\n" +
        " *\n"
    )
    // The name and the sample size when they are not the defaults, after the list's parameters and conditions
    const given = SchemaDraft.render(draft, {
      ...effect3,
      name: "Line",
      endpoint: "row/list",
      params: ["q=a b"],
      where: ["kind=x"],
      sample: 50
    })
    expect(given).toContain(
      ` *   erp api infer row/list --edition 3 -p "q=a b" --where "kind=x" --name Line --sample 50\n`
    )
    expect(given).toContain(
      " * Line: the records of row/list, drafted from 2 records for the client's Effect 3 edition"
    )
    // The Resource module's package is the one given: the module imports it and effect, nothing else
    for (const edition of [3, 4] as const) {
      const text = SchemaDraft.render(draft, {
        edition,
        resourcePackage: "@acme/erp-streams",
        name: "Row",
        endpoint: "r/list"
      })
      expect([...text.matchAll(/^import .* from "(.*)"$/gm)].map((m) => m[1])).toEqual([
        "@acme/erp-streams/Resource",
        "effect/Schema"
      ])
      expect(text).not.toContain("@erp-client")
    }
  })

  it("says what a reader can do with the resource in an application, and nothing of a clone's files", () => {
    const draft = draftOf([`{"id":1}`, `{"id":2}`])
    const withGet = SchemaDraft.render(draft, { ...effect3, name: "Row", endpoint: "row/list", get: "row/get" })
    const comment = (text: string) => text.slice(text.lastIndexOf("/**"), text.indexOf("export const resource"))
    expect(comment(withGet)).toBe(
      "/**\n" +
        " * In your application (`Resource` of @erp-client/streams), `Resource.stream(resource)` streams every record of\n" +
        " * row/list, and `Resource.get(resource, resource.selectors[0]!, id)` looks one up.\n" +
        " */\n"
    )
    // A module may be read where there is no clone of the client's source: it names none of its files.
    expect(withGet).not.toMatch(/packages\/|Cli\.ts|pnpm|clone/)
    const listOnly = comment(SchemaDraft.render(draft, { ...effect3, name: "Row", endpoint: "row/list" }))
    expect(listOnly).toContain(" * row/list.\n")
    expect(listOnly).not.toContain("Resource.get")
    for (const line of withGet.split("\n")) expect(line.length, line).toBeLessThanOrEqual(120)
  })

  it("without a get endpoint, no selectors and a line saying why", () => {
    const draft = draftOf([`{"id":1}`, `{"id":2}`])
    const text = SchemaDraft.render(draft, {
      ...effect3,
      name: "Row",
      endpoint: "row/list",
      noGet: "row/get answered Not found"
    })
    expect(text).toContain(" * No `get`: row/get answered Not found.")
    expect(text).not.toContain("selectors")
    expect(text).not.toContain("get:")
  })

  it("text from outside cannot end a comment or break a line; no unused declaration when no record is an object", () => {
    const draft = draftOf([`{"id":1}`, `{"id":2}`])
    const text = SchemaDraft.render(draft, {
      ...effect3,
      name: "Row",
      endpoint: "row/list",
      params: ["q=*/ evil()\n/*"],
      noGet: "row/get answered ApiError: bad */ x\u2028y"
    })
    expect(text).toContain(`-p "q=*\\/ evil()\\n/*"`)
    expect(text).toContain(" * No `get`: row/get answered ApiError: bad *\\/ x y.")
    expect(text.match(/\*\//g)!.length).toBe(text.match(/\/\*\*/g)!.length)
    const strings = SchemaDraft.render(draftOf([`"a"`, `"b"`]), { ...effect3, name: "Code", endpoint: "code/list" })
    expect(strings).toContain("export const Code = Schema.String")
    expect(strings).not.toContain("otherFields")
    expect(strings).not.toContain("Resource")
    // A value that reads like the struct's closing text is no struct: nothing declared that nothing uses
    const value = draftOf(Array.from({ length: 20 }, () => `"otherFields)"`))
    for (const edition of [effect3, effect4]) {
      const text = SchemaDraft.render(value, { ...edition, name: "Code", endpoint: "code/list" })
      expect(text).toContain(`export const Code = Schema.Literal("otherFields)")`)
      expect(text).not.toContain("const otherFields")
    }
  })

  it("an id field that is not a plain name gets the flag --id", () => {
    const draft = draftOf([`{"Nr.":"A-1"}`, `{"Nr.":"A-2"}`])
    expect(draft.idField).toBe("Nr.")
    const text = SchemaDraft.render(draft, { ...effect3, name: "Row", endpoint: "row/list", get: "row/get" })
    expect(text).toContain(`{ param: "Nr.", kind: "text", flag: "id", description: "A record's Nr.." }`)
  })
})
