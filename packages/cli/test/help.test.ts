import { describe, expect, it } from "@effect/vitest"
import { Cli } from "@erp-client/cli"
import { Environment } from "@erp-client/client"
import * as Kernel from "@erp-client/kernel"
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { distance, nearest } from "../src/internal/didYouMean.js"
import { colorEnabled } from "../src/internal/help.js"
import { quickAnswer } from "../src/internal/quick.js"
import { erp, ROOT } from "./harness.js"

const COMMANDS = [
  ["partners", "list"],
  ["partners", "get"],
  ["partners", "sync"],
  ["sync", "partners"],
  ["api", "get"],
  ["api", "list"],
  ["api", "post"],
  ["mcp"],
  ["sandbox"]
] as const

// The usage line, its wrapping undone.
const usage = (page: string) =>
  page.slice(page.indexOf("\nUSAGE\n") + 7, page.indexOf("\n\n", page.indexOf("\nUSAGE\n") + 7)).replace(/\s+/g, " ")
    .trim()

// The OPTIONS section of a page: each option's line and the description beneath it.
const options = (page: string): Array<{ readonly option: string; readonly description: string }> => {
  const lines = page.slice(page.indexOf("\nOPTIONS\n") + "\nOPTIONS\n".length).split("\n")
  const out: Array<{ option: string; description: string }> = []
  for (const line of lines) {
    if (/^ {2}\S/.test(line)) out.push({ option: line.trim(), description: "" })
    else if (/^ {6}\S/.test(line) && out.length > 0) out[out.length - 1]!.description += line.trim() + " "
    else if (line.trim() !== "") break
  }
  return out
}

describe("erp --help", () => {
  it("names the whole command in the usage line, and describes every option", () => {
    for (const path of COMMANDS) {
      const page = Cli.helpPage([...path, "--help"], { color: false })!
      expect(page, path.join(" ")).toContain(`\nUSAGE\n  erp ${path.join(" ")} [`)
      const listed = options(page)
      expect(listed.length, path.join(" ")).toBeGreaterThan(1)
      for (const { description, option } of listed) {
        expect(description.trim(), `${path.join(" ")} ${option}`).not.toBe("")
      }
      expect(page).not.toMatch(/This setting is optional|A true or false value/)
    }
  })

  it("shows defaults, and repeatable options as optional", () => {
    const page = Cli.helpPage(["partners", "list", "-h"], { color: false })!
    expect(usage(page)).toContain("[--where FIELD=VALUE...]")
    expect(usage(page)).toContain("[--output FILE] [--resume] [--restart]")
    const byName = new Map(options(page).map(({ description, option }) => [option, description]))
    expect(byName.get("--page-size auto|N")).toContain("Default: auto.")
    expect(byName.get("--concurrency N")).toContain("Default: 4.")
    expect(byName.get("--format ndjson | csv | table")).toContain("Default: ndjson.")
    expect(byName.get("--where FIELD=VALUE...")).toContain("Repeatable.")
    const get = Cli.helpPage(["partners", "get", "--help"], { color: false })!
    expect(usage(get)).toBe(
      "erp partners get [--id N...] [--company-name NAME...] [--stdin] [--concurrency N] [--strict] [--redis URL] " +
        "[--verbose]"
    )
  })

  it("lists a group's commands with their whole names; a group named alone shows its page", () => {
    const root = Cli.helpPage(["--help"], { color: false })!
    for (const path of COMMANDS) expect(root).toContain(`\n  erp ${path.join(" ")} `)
    expect(root).toMatch(/Exit codes: 0 success/)
    expect(Cli.helpPage(["api"], { color: false })).toContain("\n  erp api post ")
    expect(Cli.helpPage(["partners", "list"], { color: false })).toBeUndefined()
  })

  it("the root page names every settings variable of the client's table", () => {
    const root = Cli.helpPage(["--help"], { color: false })!.replace(/\s+/g, " ")
    const names = [
      ...Object.values(Environment.client),
      ...Object.values(Environment.limiter),
      ...Object.values(Environment.redis)
    ]
    expect(names.length).toBeGreaterThan(12)
    for (const name of names) expect(root).toContain(`${name}`)
  })

  it("every ERP_ name the sources and docs write is a setting of that table, or one of the build's and tests' own", () => {
    const settings = new Set<string>([
      ...Object.values(Environment.client),
      ...Object.values(Environment.limiter),
      ...Object.values(Environment.redis),
      // `erp mcp --http`'s own (the command line's, not the client's).
      ...Object.values(Kernel.Environment.mcp),
      // `erp sync`'s own.
      ...Object.values(Kernel.Environment.sync)
    ])
    // Not settings: written in by the build, read by tests and benchmarks only, or a family (`ERP_REDIS_*`).
    const own = new Set([
      "ERP_CLI_VERSION",
      "ERP_BUNDLE_HASH",
      "ERP_MCP_BUNDLE_HASH",
      "ERP_PRINT_SPANS",
      "ERP_TEST_EXIT_SPY",
      "ERP_NODE24_DIR",
      "ERP_DOCS_CACHE",
      "ERP_REDIS_",
      "ERP_RATE_"
    ])
    const files = execFileSync("git", ["ls-files", "-z"], { cwd: ROOT, encoding: "utf8" }).split("\0")
      .filter((file) => /\.(ts|md|mjs|js|sh)$|^\.ci\//.test(file) && Fs.existsSync(Path.join(ROOT, file)))
    expect(files.length).toBeGreaterThan(100)
    const stale: Array<string> = []
    for (const file of files) {
      for (const [name] of Fs.readFileSync(Path.join(ROOT, file), "utf8").matchAll(/\bERP_[A-Z0-9_]+/g)) {
        if (!settings.has(name) && !own.has(name)) stale.push(`${file}: ${name}`)
      }
    }
    expect(stale).toEqual([])
  })

  it("every description starts upper case (sentence case), on every page: summaries, descriptions, options", () => {
    const index = Cli.helpIndex()
    const paths: Array<string> = []
    const walk = (node: typeof index.tree, path: string) => {
      paths.push(path)
      for (const child of node.children) walk(child, `${path} ${child.name}`)
    }
    walk(index.tree, index.tree.name)
    const said: Array<{ readonly where: string; readonly text: string }> = []
    for (const [name, { plain }] of Object.entries(index.pages)) {
      const lines = plain.split("\n")
      // A group's summary under its name.
      if (/^ {2}\S/.test(lines[1] ?? "")) said.push({ where: `${name}: summary`, text: lines[1]!.trim() })
      let section = ""
      for (const [i, line] of lines.entries()) {
        if (/^[A-Z]+$/.test(line)) section = line
        else if (line === "") continue
        else if (section === "COMMANDS" && line.startsWith("  erp ")) {
          const row = line.trim()
          const command = paths.filter((path) => row.startsWith(`${path} `)).sort((a, b) => b.length - a.length)[0]!
          said.push({ where: `${name}: ${command}`, text: row.slice(command.length).trim() })
        } else if (section === "DESCRIPTION" && /^ {2}\S/.test(line)) {
          said.push({ where: `${name}: DESCRIPTION`, text: line.trim() })
          section = "DESCRIPTION, said"
        } else if ((section === "OPTIONS" || section === "ARGUMENTS") && /^ {6}\S/.test(line)) {
          const previous = lines[i - 1]!
          if (/^ {2}\S/.test(previous)) said.push({ where: `${name}: ${previous.trim()}`, text: line.trim() })
        }
      }
    }
    expect(said.length).toBeGreaterThan(150)
    expect(said.filter(({ text }) => /^[a-z]/.test(text)).map(({ text, where }) => `${where}: ${text}`)).toEqual([])
  })

  it("has escape codes only when asked for colour, which only a terminal without NO_COLOR gets", () => {
    expect(Cli.helpPage(["partners", "list", "--help"], { color: true })).toContain("\u001b[1m")
    for (const path of COMMANDS) expect(Cli.helpPage([...path, "--help"], { color: false })).not.toContain("\u001b")
    expect(colorEnabled(true, {})).toBe(true)
    expect(colorEnabled(true, { NO_COLOR: "1" })).toBe(false)
    expect(colorEnabled(true, { NO_COLOR: "" })).toBe(true)
    expect(colorEnabled(false, {})).toBe(false)
    expect(colorEnabled(undefined, {})).toBe(false)
  })

  it("into a pipe: plain text on stdout, exit 0 (the real command)", async () => {
    const run = await erp(["partners", "list", "--help"])
    expect(run.code).toBe(0)
    expect(run.stderr).toBe("")
    expect(run.stdout).not.toContain("\u001b")
    expect(run.stdout).toBe(Cli.helpPage(["partners", "list", "--help"], { color: false }))
  })
})

describe("erp --help and --version, answered before the command is loaded", () => {
  const index = Cli.helpIndex()
  const ASKED = [
    [],
    ["--help"],
    ["-h"],
    ["partners"],
    ["api"],
    ["partners", "--help"],
    ["partners", "list", "--help"],
    ["partners", "list", "--output", "x.ndjson", "--help"],
    ["partners", "get", "--id", "5", "-h"],
    ["api", "post", "partner/create", "--help"],
    ["sandbox", "--help"],
    ["mcp", "--help"],
    ["nosuch", "--help"],
    ["--verbose", "--help"]
  ]
  const NOT_ASKED = [
    ["partners", "list"],
    ["partners", "get", "--id", "5"],
    ["sandbox"],
    ["mcp"],
    ["api", "get", "partner/get"],
    ["--version", "--verbose"],
    ["nosuch"]
  ]

  it("every page is the one the command renders, plain and in colour, and nothing else is answered", () => {
    for (const color of [false, true]) {
      for (const args of ASKED) {
        const page = quickAnswer(args, { version: "1.2.3", help: index, color })
        expect(page, args.join(" ")).toBeDefined()
        expect(page, args.join(" ")).toBe(Cli.helpPage(args, { color }))
      }
      for (const args of NOT_ASKED) {
        expect(quickAnswer(args, { version: "1.2.3", help: index, color }), args.join(" ")).toBe(
          Cli.helpPage(args, { color })
        )
      }
    }
    expect(quickAnswer(["--version"], { version: "1.2.3", help: index, color: false })).toBe("1.2.3\n")
    // A build without the pages: the command answers.
    expect(quickAnswer(["--help"], { version: "1.2.3", help: undefined, color: false })).toBeUndefined()
  })

  it("the compiled command: the same pages, and its package's version on one line", async () => {
    for (const args of [["--help"], ["api"], ["partners", "get", "--id", "5", "--help"]]) {
      const run = await erp(args, { via: "node" })
      expect(run.code, args.join(" ")).toBe(0)
      expect(run.stderr).toBe("")
      expect(run.stdout, args.join(" ")).toBe(Cli.helpPage(args, { color: false }))
    }
    const version = await erp(["--version"], { via: "node" })
    expect(version.code).toBe(0)
    expect(version.stdout).toBe(
      `${JSON.parse(Fs.readFileSync(Path.join(ROOT, "packages/cli/package.json"), "utf8")).version}\n`
    )
  })
})

describe("did you mean", () => {
  it("counts edits, a swap of neighbours as one, case aside", () => {
    expect(distance("format", "format")).toBe(0)
    expect(distance("formt", "format")).toBe(1)
    expect(distance("fromat", "format")).toBe(1)
    expect(distance("FORMT", "format")).toBe(1)
    expect(distance("partner", "partners")).toBe(1)
    expect(distance("", "abc")).toBe(3)
    expect(distance("ca", "abc")).toBe(3)
  })

  it("names the nearest when near enough: one edit up to 5 characters, two beyond, none for 1 or 2", () => {
    const flags = ["--format", "--output", "--customers", "--concurrency", "--page-size", "-p", "--param", "--help"]
    expect(nearest("--formt", flags)).toEqual(["--format"])
    expect(nearest("--formt=csv", flags)).toEqual(["--format"])
    expect(nearest("--concurency", flags)).toEqual(["--concurrency"])
    expect(nearest("--page-szie", flags)).toEqual(["--page-size"])
    expect(nearest("--p", flags)).toEqual(["-p"])
    expect(nearest("--hepl", flags)).toEqual(["--help"])
    expect(nearest("--fmt", flags)).toEqual([])
    expect(nearest("--xyz", flags)).toEqual([])
    expect(nearest("-q", flags)).toEqual([])
    expect(nearest("lst", ["list", "get", "changes"])).toEqual(["list"])
    expect(nearest("partner", ["partners", "api", "mcp", "sandbox"])).toEqual(["partners"])
    expect(nearest("ap", ["partners", "api", "mcp", "sandbox"])).toEqual([])
    // Equally near: both, in the order given.
    expect(nearest("gat", ["get", "put", "got"])).toEqual(["get", "got"])
  })
})
