import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import * as Changes from "../src/Changes.js"
import * as SyncTable from "../src/SyncTable.js"

// A list kept in a SQL table: what each column holds, the values a statement binds, and the statements themselves
// (their placeholders against their parameters). Against real databases in packages/streams/test/Sync.test.ts.

const dialects: ReadonlyArray<SyncTable.Dialect> = ["sqlite", "pg"]
const modes: ReadonlyArray<SyncTable.Mode> = ["merge", "history"]

// The placeholders a statement binds: SQLite's `?` each once, PostgreSQL's `$n` numbered from 1 without a gap.
const slots = (statement: SyncTable.Statement, dialect: SyncTable.Dialect): number => {
  if (dialect === "sqlite") return (statement.sql.match(/\?/g) ?? []).length
  const numbers = [...statement.sql.matchAll(/\$(\d+)/g)].map((match) => Number(match[1]))
  const distinct = [...new Set(numbers)].sort((a, b) => a - b)
  expect(distinct).toStrictEqual(Array.from({ length: distinct.length }, (_, i) => i + 1))
  return distinct.length
}

describe("SyncTable.kindOf", () => {
  it("reads a column's kind from the members of a field's type", () => {
    expect(SyncTable.kindOf([{ _tag: "number", integer: true }])).toBe("integer")
    expect(SyncTable.kindOf([{ _tag: "number", integer: false }])).toBe("number")
    expect(SyncTable.kindOf([{ _tag: "number", integer: true }, { _tag: "number", integer: false }])).toBe("number")
    expect(SyncTable.kindOf([{ _tag: "string" }, { _tag: "null" }])).toBe("text")
    expect(SyncTable.kindOf([{ _tag: "boolean" }])).toBe("boolean")
    // Flags in every form the ERP writes them.
    expect(
      SyncTable.kindOf([{ _tag: "literal", value: 0 }, { _tag: "literal", value: 1 }, { _tag: "boolean" }])
    ).toBe("boolean")
    expect(SyncTable.kindOf([{ _tag: "literal", value: "0" }, { _tag: "literal", value: "1" }, { _tag: "boolean" }]))
      .toBe("boolean")
    // Flag literals of one kind alone keep that kind (a column of 0 and 1, or of "0" and "1").
    expect(SyncTable.kindOf([{ _tag: "literal", value: 0 }, { _tag: "literal", value: 1 }])).toBe("integer")
    expect(SyncTable.kindOf([{ _tag: "literal", value: "0" }, { _tag: "literal", value: "1" }])).toBe("text")
    // Literals that are not flags keep their own kind.
    expect(SyncTable.kindOf([{ _tag: "literal", value: 2 }, { _tag: "literal", value: 3 }])).toBe("integer")
    expect(SyncTable.kindOf([{ _tag: "literal", value: "a" }, { _tag: "literal", value: "b" }])).toBe("text")
    expect(SyncTable.kindOf([{ _tag: "literal", value: 1.5 }])).toBe("number")
    // A mix of numbers and strings is text (as written); anything unknown, or nothing, is JSON.
    expect(SyncTable.kindOf([{ _tag: "string" }, { _tag: "number", integer: false }])).toBe("text")
    expect(SyncTable.kindOf([{ _tag: "string" }, { _tag: "other" }])).toBe("json")
    expect(SyncTable.kindOf([{ _tag: "null" }])).toBe("json")
    expect(SyncTable.kindOf([])).toBe("json")
    expect(SyncTable.kindOf([{ _tag: "literal", value: null }, { _tag: "number", integer: true }])).toBe("integer")
  })
})

describe("SyncTable.columnsOf", () => {
  it("keeps each field once (any case), in order, none of the sync's own, none empty or with NUL", () => {
    expect(SyncTable.columnsOf([
      { field: "id", kind: "integer" },
      { field: "_erp_key", kind: "text" },
      { field: "_ERP_record", kind: "json" },
      { field: "ID", kind: "text" },
      { field: "", kind: "text" },
      { field: "a\u0000b", kind: "text" },
      { field: "company_name", kind: "text" },
      { field: "id", kind: "text" }
    ])).toStrictEqual([{ field: "id", kind: "integer" }, { field: "company_name", kind: "text" }])
  })

  it("stops at MAX_FIELD_COLUMNS: the rest stay in the record", () => {
    const many = Array.from({ length: SyncTable.MAX_FIELD_COLUMNS + 20 }, (_, i) => ({
      field: `f${i}`,
      kind: "text" as const
    }))
    const columns = SyncTable.columnsOf(many)
    expect(columns).toHaveLength(SyncTable.MAX_FIELD_COLUMNS)
    expect(columns.at(-1)?.field).toBe(`f${SyncTable.MAX_FIELD_COLUMNS - 1}`)
  })
})

describe("SyncTable.valueOf", () => {
  it("numbers: exact digits in PostgreSQL; SQLite's whole numbers exact to 64 bits, NULL past them", () => {
    // A safe integer.
    expect(SyncTable.valueOf("42", "integer", "sqlite")).toBe(42)
    expect(SyncTable.valueOf("42", "integer", "pg")).toBe("42")
    // Past a double (2^53 + 1), within 64 bits: a bigint in SQLite, the digits in PostgreSQL.
    expect(SyncTable.valueOf("9007199254740993", "integer", "sqlite")).toBe(9007199254740993n)
    expect(SyncTable.valueOf("9007199254740993", "integer", "pg")).toBe("9007199254740993")
    expect(SyncTable.valueOf("-9223372036854775808", "integer", "sqlite")).toBe(-9223372036854775808n)
    expect(SyncTable.valueOf("9223372036854775807", "number", "sqlite")).toBe(9223372036854775807n)
    // Past 64 bits: no exact number in SQLite (NULL, never a rounded one); the digits in PostgreSQL.
    expect(SyncTable.valueOf("9223372036854775808", "integer", "sqlite")).toBeNull()
    expect(SyncTable.valueOf("12345678901234567890", "integer", "sqlite")).toBeNull()
    expect(SyncTable.valueOf("12345678901234567890", "integer", "pg")).toBe("12345678901234567890")
    // Decimals as written in PostgreSQL; a double in SQLite's REAL.
    expect(SyncTable.valueOf("1.10", "number", "pg")).toBe("1.10")
    expect(SyncTable.valueOf("1.10", "number", "sqlite")).toBe(1.1)
    expect(SyncTable.valueOf("1e2", "number", "pg")).toBe("1e2")
    expect(SyncTable.valueOf("-0.0", "number", "pg")).toBe("-0.0")
    // A whole number written with a fraction or exponent fits an integer column; a true fraction does not.
    expect(SyncTable.valueOf("1e2", "integer", "sqlite")).toBe(100)
    expect(SyncTable.valueOf("1e2", "integer", "pg")).toBe("100")
    expect(SyncTable.valueOf("1.5", "integer", "pg")).toBeNull()
    expect(SyncTable.valueOf("1e300", "integer", "sqlite")).toBeNull()
    // A number given as a string is read as its number; a word is NULL.
    expect(SyncTable.valueOf("\"17\"", "integer", "sqlite")).toBe(17)
    expect(SyncTable.valueOf("\" 17 \"", "integer", "pg")).toBe("17")
    expect(SyncTable.valueOf("\"n/a\"", "number", "pg")).toBeNull()
    expect(SyncTable.valueOf("true", "integer", "sqlite")).toBeNull()
    expect(SyncTable.valueOf("{\"a\":1}", "number", "sqlite")).toBeNull()
  })

  it("flags: true/false, 1/0 and their strings; anything else NULL", () => {
    for (
      const [json, flag] of [
        ["true", true],
        ["1", true],
        ["\"1\"", true],
        ["\"true\"", true],
        ["false", false],
        [
          "0",
          false
        ],
        ["\"0\"", false],
        ["\"false\"", false]
      ] as const
    ) {
      expect(SyncTable.valueOf(json, "boolean", "pg")).toBe(flag)
      expect(SyncTable.valueOf(json, "boolean", "sqlite")).toBe(flag ? 1 : 0)
    }
    expect(SyncTable.valueOf("2", "boolean", "pg")).toBeNull()
    expect(SyncTable.valueOf("\"yes\"", "boolean", "sqlite")).toBeNull()
  })

  it("text: a string unquoted, a number or flag as its text, an object as its JSON", () => {
    for (const dialect of dialects) {
      expect(SyncTable.valueOf("\"Kovács \\\"Bt.\\\"\"", "text", dialect)).toBe("Kovács \"Bt.\"")
      expect(SyncTable.valueOf("12345678901234567890", "text", dialect)).toBe("12345678901234567890")
      expect(SyncTable.valueOf("true", "text", dialect)).toBe("true")
      expect(SyncTable.valueOf("{\"a\":[1,2]}", "text", dialect)).toBe("{\"a\":[1,2]}")
    }
  })

  it("json: the text as written; absent and null are NULL in every kind", () => {
    expect(SyncTable.valueOf("{\"n\":1.10}", "json", "pg")).toBe("{\"n\":1.10}")
    expect(SyncTable.valueOf("\"x\"", "json", "sqlite")).toBe("\"x\"")
    for (const dialect of dialects) {
      for (const kind of ["integer", "number", "text", "boolean", "json"] as const) {
        expect(SyncTable.valueOf(undefined, kind, dialect)).toBeNull()
        expect(SyncTable.valueOf("null", kind, dialect)).toBeNull()
      }
    }
  })
})

describe("SyncTable.rowOf", () => {
  const columns: ReadonlyArray<SyncTable.Column> = [
    { field: "id", kind: "integer" },
    { field: "company_name", kind: "text" },
    { field: "credit_limit", kind: "number" },
    { field: "tax_number", kind: "text" }
  ]

  it("a record's key, its columns' values, its exact text and the digest of that text", () => {
    const json = "{\"id\":7,\"company_name\":\"Kovács Kft.\",\"credit_limit\":1.10}"
    const row = SyncTable.rowOf(7, json, columns, "pg")
    expect(row).toStrictEqual({
      key: "7",
      values: ["7", "Kovács Kft.", "1.10", null],
      json,
      digest: Changes.digestHex(json)
    })
    expect(SyncTable.rowOf("A-9", "{\"id\":\"A-9\"}", [], "sqlite").key).toBe("\"A-9\"")
  })

  it("a repeated key: the last one wins, as JSON.parse reads it", () => {
    const json =
      "{\"id\":7,\"company_name\":\"first\",\"company_name\":\"last\",\"credit_limit\":null,\"credit_limit\":5}"
    expect(SyncTable.rowOf(7, json, columns, "sqlite").values).toStrictEqual([
      7,
      (JSON.parse(json) as { company_name: string }).company_name,
      5,
      null
    ])
  })

  it("an id beyond a double keeps the digits the server wrote, as key and as column", () => {
    const json = "{\"id\":12345678901234567890,\"company_name\":\"Big\"}"
    const id = Changes.idOf(JSON.parse(json), "id", () => json)!
    const row = SyncTable.rowOf(id, json, columns, "pg")
    expect(row.key).toBe("12345678901234567890")
    expect(row.values[0]).toBe("12345678901234567890")
    // SQLite keeps it in the key and the record: not in a column of integers past 64 bits.
    expect(SyncTable.rowOf(id, json, columns, "sqlite").values[0]).toBeNull()
  })

  it("a text that is not an object: every column NULL, the text kept", () => {
    const row = SyncTable.rowOf(1, "[1,2]", columns, "sqlite")
    expect(row.values).toStrictEqual([null, null, null, null])
    expect(row.json).toBe("[1,2]")
  })
})

describe("Changes.idJson / idFromJson (the key of a row)", () => {
  // The ids a list gives (`Changes.idOf`): numbers within a double's exact integers (or fractions), the digits of one
  // beyond them, and strings. No id a server sends starts with U+0000 (the mark of the digits' key).
  const bigDigits = fc.bigInt({ min: 2n ** 53n + 1n, max: 10n ** 30n }).chain((n) =>
    fc.constantFrom(n, -n).map((v) => v.toString())
  )
  const id: fc.Arbitrary<Changes.Id> = fc.oneof(
    fc.integer(),
    fc.integer({ min: -Number.MAX_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }),
    fc.double({ noNaN: true, noDefaultInfinity: true, min: -Number.MAX_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER })
      .filter((n) => !Object.is(n, -0)),
    bigDigits.map((digits) => Changes.idOf({ id: Number(digits) }, "id", () => `{"id":${digits}}`)!),
    fc.string().filter((s) => !s.startsWith("\u0000")),
    fc.stringMatching(/^-?\d{1,40}$/)
  )

  it("property: an id read back from its key is the id; a key is written back as it was", () => {
    fc.assert(
      fc.property(id, (id) => {
        const key = Changes.idJson(id)
        const back = Changes.idFromJson(key)
        expect(back).toStrictEqual(id)
        expect(Changes.idJson(back!)).toBe(key)
      }),
      { numRuns: 2000 }
    )
  })

  it("numbers beyond a double stay apart, and apart from the string of their digits", () => {
    const a = Changes.idFromJson("12345678901234567890")!
    const b = Changes.idFromJson("12345678901234567891")!
    expect(a).not.toBe(b)
    expect(Number(Changes.idValue(a))).toBe(Number(Changes.idValue(b)))
    expect(a).not.toBe(Changes.idFromJson("\"12345678901234567890\""))
    expect(Changes.idJson(a)).toBe("12345678901234567890")
    // What the key is not: a word, a bare string, an infinite number.
    expect(Changes.idFromJson("x")).toBeUndefined()
    expect(Changes.idFromJson("\"unterminated")).toBeUndefined()
    expect(Changes.idFromJson("1e400")).toBeUndefined()
    expect(Changes.idFromJson("")).toBeUndefined()
  })
})

describe("Changes.digestHex / addHex (the digest of a row)", () => {
  it("property: a digest written and read back tells the same text from any other", () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (a, b) => {
        const table = Changes.makeTable()
        const hex = Changes.digestHex(a)
        expect(hex).toMatch(/^[0-9a-f]{16}$/)
        expect(Changes.addHex(table, 1, hex)).toBe(true)
        expect(table.differs(1, a)).toBe(false)
        if (a !== b) expect(table.differs(1, b)).toBe(true)
      }),
      { numRuns: 500 }
    )
  })

  it("a digest that is not 16 hexadecimal digits adds nothing", () => {
    const table = Changes.makeTable()
    for (const hex of ["", "zz", "0123456789ABCDEF", "0123456789abcde", "0123456789abcdef0"]) {
      expect(Changes.addHex(table, 2, hex)).toBe(false)
    }
    expect(table.has(2)).toBe(false)
    expect(table.size).toBe(0)
  })
})

describe("SyncTable statements", () => {
  const columns: ReadonlyArray<SyncTable.Column> = [
    { field: "id", kind: "integer" },
    { field: "company_name", kind: "text" },
    { field: "credit_limit", kind: "number" },
    { field: "is_customer", kind: "boolean" },
    { field: "address", kind: "json" }
  ]
  const at = "2026-11-29T05:00:00.000Z"
  const shapes = dialects.flatMap((dialect) =>
    modes.map((mode): SyncTable.Shape => ({ table: "partners", dialect, mode, columns }))
  )
  const rows = (dialect: SyncTable.Dialect, count: number) =>
    Array.from({ length: count }, (_, i) =>
      SyncTable.rowOf(
        i + 1,
        `{"id":${i + 1},"company_name":"P ${i}","credit_limit":1.10,"is_customer":1,"address":{"city":"Győr"}}`,
        columns,
        dialect
      ))

  it("every statement binds as many values as it has placeholders, in both dialects and modes", () => {
    for (const shape of shapes) {
      const { dialect, mode } = shape
      const statements: Array<SyncTable.Statement> = [
        SyncTable.writeStatement(shape, rows(dialect, 1), at),
        SyncTable.writeStatement(shape, rows(dialect, 37), at),
        SyncTable.endStatement(shape, ["1"], at),
        SyncTable.endStatement(shape, ["1", "\"A-9\"", "12345678901234567890"], at),
        SyncTable.stateStatement(shape, "", 10_000),
        SyncTable.recordsStatement(shape, "7", 500),
        SyncTable.fillStatement(shape, columns.slice(2), [{ key: "7", validFrom: at, values: [1.1, true, "{}"] }]),
        SyncTable.fillStatement(shape, columns.slice(0, 1), [
          { key: "7", validFrom: mode === "history" ? at : undefined, values: [7] },
          { key: "8", validFrom: at, values: [8] }
        ]),
        SyncTable.claimStatement("partners", mode, "{}", dialect),
        SyncTable.readStatement("partners", dialect),
        SyncTable.finishStatement("partners", "{}", at, { added: 1, changed: 2, removed: 3, unchanged: 4 }, dialect),
        SyncTable.columnsStatement("partners", dialect)
      ]
      for (const statement of statements) {
        expect(slots(statement, dialect), `${dialect} ${mode}: ${statement.sql}`).toBe(statement.params.length)
      }
    }
  })

  it("a write of the most rows a statement holds stays under both databases' limits of bound values", () => {
    for (const count of [0, 5, 40, 500]) {
      const wide = SyncTable.columnsOf(
        Array.from({ length: count }, (_, i) => ({ field: `f${i}`, kind: "text" as const }))
      )
      const per = SyncTable.rowsPerStatement(wide.length)
      for (const dialect of dialects) {
        const shape: SyncTable.Shape = { table: "t", dialect, mode: "merge", columns: wide }
        const many = Array.from({ length: per }, (_, i) => SyncTable.rowOf(i, `{"id":${i}}`, wide, dialect))
        const statement = SyncTable.writeStatement(shape, many, at)
        expect(statement.params.length).toBeLessThanOrEqual(dialect === "pg" ? 65_535 : 32_766)
        expect(slots(statement, dialect)).toBe(statement.params.length)
      }
    }
  })

  it("merge writes update a key's row but keep when it was first seen; history writes only insert", () => {
    const merge = SyncTable.writeStatement(shapes[0]!, rows("sqlite", 1), at).sql
    expect(merge).toContain("ON CONFLICT (\"_erp_key\") DO UPDATE SET")
    expect(merge).not.toContain("\"_erp_first_seen\" = excluded")
    expect(merge).toContain("\"_erp_last_changed\" = excluded.\"_erp_last_changed\"")
    expect(SyncTable.writeStatement(shapes[1]!, rows("sqlite", 1), at).sql).not.toContain("ON CONFLICT")
    expect(SyncTable.endStatement(shapes[1]!, ["1"], at).sql).toContain("\"_erp_valid_to\" IS NULL")
  })

  it("property: a history table's index of current rows has a name PostgreSQL keeps whole (63 bytes) and no table has", () => {
    // PostgreSQL cuts a longer name: for a table of 63 characters, to the table's own name, and IF NOT EXISTS then
    // skips the index (the relation exists), leaving the table without it.
    const name = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,62}$/).filter(SyncTable.isTableName)
    fc.assert(
      fc.property(name, (table) => {
        const [, , index] = SyncTable.createStatements({ table, dialect: "pg", mode: "history", columns: [] })
        const indexName = /^CREATE UNIQUE INDEX IF NOT EXISTS "((?:[^"]|"")+)" ON /.exec(index!)?.[1]
        expect(indexName).toBeDefined()
        expect(indexName!.length).toBeLessThanOrEqual(63)
        expect(indexName!.toLowerCase()).not.toBe(table.toLowerCase())
      }),
      { numRuns: 500, examples: [["h".repeat(63)], ["partners"]] }
    )
  })

  it("the tables are made with their own columns, and a history table with one current row per key", () => {
    for (const shape of shapes) {
      const statements = SyncTable.createStatements(shape)
      expect(statements[0]).toContain("CREATE TABLE IF NOT EXISTS \"erp_sync_state\"")
      for (const [name] of SyncTable.ownColumns(shape.dialect, shape.mode)) expect(statements[1]).toContain(`"${name}"`)
      expect(statements).toHaveLength(shape.mode === "history" ? 3 : 2)
      if (shape.mode === "history") {
        expect(statements[2]).toMatch(/^CREATE UNIQUE INDEX .* WHERE "_erp_valid_to" IS NULL$/)
      }
    }
    expect(SyncTable.addColumnStatement("p", { field: "x\"y", kind: "integer" }, "sqlite")).toBe(
      "ALTER TABLE \"p\" ADD COLUMN \"x\"\"y\" INTEGER"
    )
  })
})

describe("SyncTable names", () => {
  it("defaultTable: a name of a resource or endpoint, always a table name", () => {
    expect(SyncTable.defaultTable("partners")).toBe("partners")
    expect(SyncTable.defaultTable("invoice/list")).toBe("invoice_list")
    expect(SyncTable.defaultTable("/Product/List/")).toBe("product_list")
    expect(SyncTable.defaultTable("2fa/list")).toBe("t_2fa_list")
    expect(SyncTable.defaultTable("")).toBe("erp_records")
    expect(SyncTable.defaultTable("///")).toBe("erp_records")
    fc.assert(
      fc.property(fc.string(), (name) => {
        expect(SyncTable.isTableName(SyncTable.defaultTable(name))).toBe(true)
      }),
      { numRuns: 1000 }
    )
  })

  it("isTableName: a letter or _, then letters, digits or _, at most 63, not the state table's", () => {
    expect(SyncTable.isTableName("partners")).toBe(true)
    expect(SyncTable.isTableName("_p1")).toBe(true)
    expect(SyncTable.isTableName("a".repeat(63))).toBe(true)
    expect(SyncTable.isTableName("a".repeat(64))).toBe(false)
    expect(SyncTable.isTableName("1p")).toBe(false)
    expect(SyncTable.isTableName("erp sync")).toBe(false)
    expect(SyncTable.isTableName("p\"; DROP TABLE x; --")).toBe(false)
    expect(SyncTable.isTableName("")).toBe(false)
    expect(SyncTable.isTableName("Erp_Sync_State")).toBe(false)
  })
})

describe("SyncTable decisions", () => {
  it("runTime: now, or just after the last run when the clock says otherwise; so each run is later than the last", () => {
    const now = Date.parse("2026-11-29T05:00:00.000Z")
    expect(SyncTable.runTime(now, undefined)).toBe("2026-11-29T05:00:00.000Z")
    expect(SyncTable.runTime(now, "2026-11-29T04:00:00.000Z")).toBe("2026-11-29T05:00:00.000Z")
    expect(SyncTable.runTime(now, "2026-11-29T05:00:00.000Z")).toBe("2026-11-29T05:00:00.001Z")
    expect(SyncTable.runTime(now, "2026-11-29T06:00:00.000Z")).toBe("2026-11-29T06:00:00.001Z")
    expect(SyncTable.runTime(now, "not a time")).toBe("2026-11-29T05:00:00.000Z")
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 4_000_000_000_000 }), { minLength: 1, maxLength: 30 }),
        (clock) => {
          let last: string | undefined
          for (const now of clock) {
            const next = SyncTable.runTime(now, last)
            if (last !== undefined) expect(Date.parse(next)).toBeGreaterThan(Date.parse(last))
            last = next
          }
        }
      )
    )
  })

  it("differences: the mode and the list, each in a phrase; none for the same", () => {
    const source = (where?: Record<string, string | number>) =>
      JSON.stringify(
        Changes.sourceOf({ baseUrl: "http://127.0.0.1:8080/", endpoint: "partner/list", idField: "id", where })
      )
    const stored = { mode: "merge" as const, source: source(), runs: 3, lastRunAt: undefined }
    expect(SyncTable.differences(stored, "merge", source())).toStrictEqual([])
    expect(SyncTable.differences(stored, "history", source())).toStrictEqual([
      "the mode: merge in the table, history now"
    ])
    const other = SyncTable.differences(stored, "merge", source({ is_customer: 1 }))
    expect(other).toHaveLength(1)
    expect(other[0]).toContain("in the table,")
    expect(other[0]).toContain("list_condition[is_customer]=1")
    expect(SyncTable.differences({ ...stored, source: "not json" }, "history", source())).toStrictEqual([
      "the mode: merge in the table, history now",
      "the list it was made for cannot be read"
    ])
    expect(SyncTable.differences({ ...stored, source: "{}" }, "merge", source())).toStrictEqual([
      "the list it was made for cannot be read"
    ])
  })
})
