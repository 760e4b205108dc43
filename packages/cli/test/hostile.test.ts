import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Fault } from "@erp-client/sandbox"
import * as Effect from "effect/Effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as CliTest from "../src/CliTest.js"
import { erp, parseCsv, type Run, SECRET, startSandbox } from "./harness.js"

// Nothing from the server reaches the terminal raw (docs/cli.md): names that carry escape sequences (a window
// title, a clear screen, colours), C0 and C1 controls, DEL, bidi overrides and isolates, newlines, CR and tabs are
// written visibly escaped by --format table, each record on one line, the columns as wide as the escaped text; every
// line on stderr (a not found name, a server's message, --verbose) likewise. When stdout is a terminal, NDJSON and
// JSON write them as JSON's \u escapes (the same JSON) and CSV cells as the table does; to a file or a pipe, NDJSON
// and CSV keep the text exact.

type Started = Awaited<ReturnType<typeof startSandbox>>

// Each name as the server sends it, and as a table shows it.
const NAMES: ReadonlyArray<readonly [string, string]> = [
  ["Title\u001b]0;pwned\u0007 Kft.", "Title\\x1b]0;pwned\\x07 Kft."],
  ["Clear\u001b[2J\u001b[H GmbH", "Clear\\x1b[2J\\x1b[H GmbH"],
  ["\u001b[31mRed\u001b[0m Ltd", "\\x1b[31mRed\\x1b[0m Ltd"],
  ["C1 \u009b31m, DEL \u007f, NUL \u0000", "C1 \\x9b31m, DEL \\x7f, NUL \\x00"],
  ["Bidi \u202eevil\u202c \u2066iso\u2069", "Bidi \\u202eevil\\u202c \\u2066iso\\u2069"],
  ["Marks \u200e\u200f\u061c end", "Marks \\u200e\\u200f\\u061c end"],
  ["Two\nlines\rCR\ttab", "Two\\nlines\\rCR\\ttab"],
  ["Long \u001b[2J".padEnd(60, "x"), "Long \\x1b[2J".padEnd(60 + 3, "x")],
  ["Kovács & Társa Kft.", "Kovács & Társa Kft."]
]

// Any character a terminal acts on, but the newline that ends a line.
// eslint-disable-next-line no-control-regex
const UNSEEN = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/

const partners = NAMES.map(([name], i) => ({
  id: i + 1,
  company_name: name,
  tax_number: "12345678-2-42",
  is_customer: 1
}))

let hostile: Started
let repeated: Started
let flags: Started
const runs: Array<Run> = []
const record = (run: Run) => {
  runs.push(run)
  return run
}

// The customer flag as servers send it, and as the table shows it: yes and no only for the contract's 1 and 0.
const FLAGS: ReadonlyArray<readonly [unknown, string]> = [
  [1, "yes"],
  [0, "no"],
  [null, "null"],
  [2, "2"],
  ["yes", "\"yes\""],
  [true, "true"],
  ["1", "\"1\""],
  [undefined, ""],
  ["\u001b[2J\u202e", "\"\\u001b[2J\\u202e\""]
]

beforeAll(async () => {
  hostile = await startSandbox({ partners })
  flags = await startSandbox({
    partners: FLAGS.map(([flag], i) => ({
      id: i + 1,
      company_name: `Flag ${i + 1}`,
      tax_number: "12345678-2-42",
      ...(flag === undefined ? {} : { is_customer: flag })
    }))
  })
  // Distinct records that share a hostile company name: --safe by that field writes the first of each.
  repeated = await startSandbox({
    partners: [
      { id: 1, company_name: "Dup \u202eA\u001b[2J", note: "first" },
      { id: 2, company_name: "Dup \u202eA\u001b[2J", note: "second" },
      { id: 3, company_name: "Plain", note: "first" },
      { id: 4, company_name: "Plain", note: "second" }
    ]
  })
})

afterAll(async () => {
  await hostile?.close()
  await repeated?.close()
  await flags?.close()
  for (const run of runs) {
    expect(run.stdout + run.stderr).not.toContain(SECRET)
    // Whatever else a run wrote, its stderr is plain lines.
    expect(run.stderr).not.toMatch(UNSEEN)
  }
})

const lines = (text: string) => text === "" ? [] : text.trimEnd().split("\n")

// A cell as the table writes it: cut to `width` with an ellipsis, or padded.
const cell = (text: string, width: number) => text.length > width ? `${text.slice(0, width - 1)}…` : text.padEnd(width)

describe("--format table", () => {
  it("partners: every name escaped, one line a record, the declared widths counting the escaped text", async () => {
    const run = record(await erp(["partners", "list", "--format", "table"], { env: hostile.env, via: "node" }))
    expect([run.code, run.stderr]).toEqual([0, ""])
    expect(run.stdout).not.toMatch(UNSEEN)
    const row = (cells: ReadonlyArray<string>) =>
      [cell(cells[0]!, 10), cell(cells[1]!, 48), cell(cells[2]!, 16), cell(cells[3]!, 8)].join("  ").trimEnd()
    expect(lines(run.stdout)).toEqual([
      row(["id", "company_name", "tax_number", "customer"]),
      [10, 48, 16, 8].map((w) => "-".repeat(w)).join("  "),
      ...NAMES.map(([, shown], i) => row([String(i + 1), shown, "12345678-2-42", "yes"]))
    ])
  })

  it("erp api list: columns as wide as the widest escaped value (at most 40)", async () => {
    const run = record(
      await erp(["api", "list", "partner/list", "--format", "table"], { env: hostile.env, via: "node" })
    )
    expect([run.code, run.stderr]).toEqual([0, ""])
    expect(run.stdout).not.toMatch(UNSEEN)
    const width = Math.min(40, Math.max(...NAMES.map(([, shown]) => shown.length)))
    const row = (cells: ReadonlyArray<string>) =>
      [cell(cells[0]!, 8), cell(cells[1]!, width), cell(cells[2]!, 13), cell(cells[3]!, 11)].join("  ").trimEnd()
    expect(lines(run.stdout)).toEqual([
      row(["id", "company_name", "tax_number", "is_customer"]),
      [8, width, 13, 11].map((w) => "-".repeat(w)).join("  "),
      ...NAMES.map(([, shown], i) => row([String(i + 1), shown, "12345678-2-42", "1"]))
    ])
  })
})

describe("the customer flag in a table", () => {
  it("yes and no for 1 and 0 only; null, 2, \"yes\", true, \"1\" shown as sent, escaped; nothing when absent", async () => {
    const run = record(await erp(["partners", "list", "--format", "table"], { env: flags.env, via: "node" }))
    expect(run.code).toBe(0)
    // null, 2, "yes" and the escapes are not a flag the client reads; true and "1" are
    expect(run.stderr).toMatch(/^erp: 4 of the 9 records written do not match the contract /)
    expect(run.stdout).not.toMatch(UNSEEN)
    expect(lines(run.stdout).slice(2).map((line) => line.slice(10 + 2 + 48 + 2 + 16 + 2))).toEqual(
      FLAGS.map(([, shown]) => cell(shown, 8).trimEnd())
    )
  })
})

// A command run in this process with stdout a terminal (`isTTY`, as Node sets it for one), against `started`.
const onTerminal = (args: ReadonlyArray<string>, started: Started) =>
  Effect.runPromise(
    Effect.acquireUseRelease(
      Effect.sync(() => {
        const before = Object.getOwnPropertyDescriptor(process.stdout, "isTTY")
        Object.defineProperty(process.stdout, "isTTY", { value: true, configurable: true, writable: true })
        return before
      }),
      () => CliTest.run(args, { erp: { baseUrl: started.sandbox.baseUrl, apiKey: SECRET } }),
      (before) =>
        Effect.sync(() => {
          if (before === undefined) Reflect.deleteProperty(process.stdout, "isTTY")
          else Object.defineProperty(process.stdout, "isTTY", before)
        })
    )
  ).then((result) => record({ ...result, signal: null, pid: process.pid }))

// What a person reading JSON on a terminal gets: JSON's own escape for each character a terminal would act on.
const jsonEscaped = (text: string) =>
  text.replace(
    // eslint-disable-next-line no-control-regex
    /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`
  )

describe("on a terminal", () => {
  it("NDJSON: each line the same JSON, with JSON's \\u escapes for what a terminal acts on", async () => {
    for (const args of [["partners", "list"], ["api", "list", "partner/list"]]) {
      const run = await onTerminal(args, hostile)
      expect([run.code, run.stderr]).toEqual([0, ""])
      expect(run.stdout).not.toMatch(UNSEEN)
      expect(lines(run.stdout).map((line) => JSON.parse(line))).toEqual(partners)
      expect(lines(run.stdout)).toEqual(partners.map((partner) => jsonEscaped(JSON.stringify(partner))))
    }
  })

  it("CSV: each cell escaped as the table shows it, still one CSV cell", async () => {
    for (const args of [["partners", "list", "--format", "csv"], ["api", "list", "partner/list", "--format", "csv"]]) {
      const run = await onTerminal(args, hostile)
      expect([run.code, run.stderr]).toEqual([0, ""])
      // Only the rows' own CR LF ends remain
      expect(run.stdout.replace(/\r\n/g, "")).not.toMatch(UNSEEN)
      const [header, ...rows] = parseCsv(run.stdout)
      expect(rows.map((row) => row[header!.indexOf("company_name")])).toEqual(NAMES.map(([, shown]) => shown))
    }
  })

  it("get, api get and changes: the same JSON, escaped", async () => {
    const id = NAMES.findIndex(([name]) => name.startsWith("Bidi")) + 1
    for (const args of [["partners", "get", "--id", String(id)], ["api", "get", "partner/get", "-p", `id=${id}`]]) {
      const run = await onTerminal(args, hostile)
      expect([run.code, run.stderr]).toEqual([0, ""])
      expect(run.stdout).toBe(`${jsonEscaped(JSON.stringify(partners[id - 1]))}\n`)
    }
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "erp-terminal-"))
    try {
      const changes = await onTerminal(["partners", "changes", "--since", Path.join(dir, "partners.state")], hostile)
      expect(changes.code).toBe(0)
      expect(changes.stdout).not.toMatch(UNSEEN)
      expect(lines(changes.stdout).map((line) => JSON.parse(line).record)).toEqual(partners)
      const csv = await onTerminal(
        ["partners", "changes", "--since", Path.join(dir, "csv.state"), "--format", "csv"],
        hostile
      )
      expect(csv.code).toBe(0)
      expect(csv.stdout.replace(/\r\n/g, "")).not.toMatch(UNSEEN)
      const [header, ...rows] = parseCsv(csv.stdout)
      expect(rows.map((row) => row[header!.indexOf("company_name")])).toEqual(NAMES.map(([, shown]) => shown))
    } finally {
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it("a file gets the exact text, byte for byte, whatever stdout is", async () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "erp-terminal-"))
    try {
      const piped = await erp(["partners", "list", "--format", "csv"], { env: hostile.env, via: "node" }).then(record)
      for (const format of ["ndjson", "csv"]) {
        const file = Path.join(dir, `partners.${format}`)
        const run = await onTerminal(["partners", "list", "--format", format, "--output", file], hostile)
        expect([run.code, run.stdout]).toEqual([0, ""])
        const written = Fs.readFileSync(file, "utf8")
        expect(written).toBe(
          format === "csv" ? piped.stdout : partners.map((partner) => `${JSON.stringify(partner)}\n`).join("")
        )
      }
    } finally {
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe("NDJSON and CSV to a pipe", () => {
  it("keep every name exactly as sent", async () => {
    const [ndjson, csv] = await Promise.all([
      erp(["partners", "list"], { env: hostile.env, via: "node" }).then(record),
      erp(["partners", "list", "--format", "csv"], { env: hostile.env, via: "node" }).then(record)
    ])
    expect([ndjson.code, csv.code]).toEqual([0, 0])
    expect(lines(ndjson.stdout)).toEqual(partners.map((partner) => JSON.stringify(partner)))
    // The raw characters are there: JSON escapes only C0, so C1, DEL and the bidi controls are sent as they are.
    expect(ndjson.stdout).toContain("\u202eevil")
    const [header, ...rows] = parseCsv(csv.stdout)
    const at = header!.indexOf("company_name")
    expect(rows.map((row) => row[at])).toEqual(NAMES.map(([name]) => name))
  })
})

describe("stderr", () => {
  it("a name not found is said escaped, on one line", async () => {
    const name = "Nobody\u001b]0;pwned\u0007 \u202eevil\u009b\nnext"
    const run = record(await erp(["partners", "get", "--company-name", name], { env: hostile.env, via: "node" }))
    expect(run.code).toBe(4)
    // JSON quotes the name (C0 as \u001b), and what JSON leaves raw is escaped too.
    expect(run.stderr).toBe(
      "erp: partner/get: not found (company_name=\"Nobody\\u001b]0;pwned\\u0007 \\u202eevil\\x9b\\nnext\")\n"
    )
  })

  it("a server's message is said escaped, on one line", async () => {
    await hostile.run(
      hostile.sandbox.inject(
        Fault.Fault.UnknownCode({ code: 0, message: "Internal\u001b[2J error \u202e\u009b\r\nsecond line" }),
        { endpoint: "/partner/get", times: 1 }
      )
    )
    const run = record(await erp(["partners", "get", "--id", "1"], { env: hostile.env, via: "node" }))
    expect(run.code).toBe(1)
    expect(run.stderr).toBe(
      "erp: partner/get id=1: the server reported an error (code 0): Internal\\x1b[2J error \\u202e\\x9b\\r\\nsecond " +
        "line\n"
    )
  })

  it("--safe names the ids it did not write, escaped; --verbose's lines are escaped too", async () => {
    const args = ["api", "list", "partner/list", "--safe", "--id-field", "company_name"]
    const [quiet, verbose] = await Promise.all([
      erp(args, { env: repeated.env, via: "node" }).then(record),
      erp([...args, "--verbose"], { env: repeated.env, via: "node" }).then(record)
    ])
    for (const run of [quiet, verbose]) {
      expect(run.code).toBe(0)
      expect(lines(run.stdout).map((line) => JSON.parse(line).id)).toEqual([1, 3])
    }
    expect(quiet.stderr).toBe(
      "erp: 2 records were not written (ids \"Dup \\u202eA\\u001b[2J\", \"Plain\"): each has the id of a record " +
        "already written, with other content (updated during the export, or a distinct record that repeats an id; " +
        "--safe tells records apart by id; --verbose names each with its offset)\n"
    )
    // The library's log lines (logfmt JSON-quotes a value with a space, which leaves U+202E raw) are escaped too.
    const logged = lines(verbose.stderr).filter((line) =>
      line.startsWith("timestamp=") && line.includes("already written")
    )
    expect(logged).toHaveLength(2)
    expect(logged.join("\n")).not.toMatch(UNSEEN)
    expect(logged.some((line) => line.includes("\\u202eA"))).toBe(true)
  })
})
