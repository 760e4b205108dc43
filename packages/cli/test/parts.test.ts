import { describe, expect, it } from "@effect/vitest"
import { Output } from "@erp-client/cli"
import { ErpConfig, ErpRateLimiter } from "@erp-client/client"
import { Seed } from "@erp-client/sandbox"
import * as Partners from "@erp-client/streams/Partners"
import type { ConfigError } from "effect"
import { Config, ConfigProvider, Duration, Effect, Either, Redacted } from "effect"
import { inputOrder, parseLine } from "../src/internal/resourceGet.js"
import { oddKindNames } from "../src/internal/sandbox.js"
import { describeConfigError } from "../src/internal/settings.js"

describe("CSV cells", () => {
  it("are exact by default and guarded with a leading ' for spreadsheets, plain numbers excepted", () => {
    const cases: ReadonlyArray<readonly [unknown, string, string]> = [
      ["+36 1 234 5678", "+36 1 234 5678", "'+36 1 234 5678"],
      ["=HYPERLINK(\"x\")", "\"=HYPERLINK(\"\"x\"\")\"", "\"'=HYPERLINK(\"\"x\"\")\""],
      ["@SUM(A1)", "@SUM(A1)", "'@SUM(A1)"],
      ["-2+3", "-2+3", "'-2+3"],
      ["\tx", "\"\tx\"", "'\tx"],
      ["\rx", "\"\rx\"", "\"'\rx\""],
      ["-12.5", "-12.5", "-12.5"],
      [-12.5, "-12.5", "-12.5"],
      ["+36", "+36", "+36"],
      ["plain", "plain", "plain"],
      [null, "", ""]
    ]
    for (const [value, exact, guarded] of cases) {
      expect(Output.csvCell(value), String(value)).toBe(exact)
      expect(Output.csvCell(value, { spreadsheet: true }), String(value)).toBe(guarded)
    }
  })

  it("counts the formula-like cells an exact export wrote, for the note", () => {
    const exact = Output.encoder("csv")
    exact.page([{ id: 1, phone: "+36 1" }, { id: 2, phone: "06 1" }])
    expect(exact.formulaCells()).toBe(1)
    const safe = Output.encoder("csv", { spreadsheet: true })
    safe.page([{ id: 1, phone: "+36 1" }])
    expect(safe.formulaCells()).toBe(0)
  })
})

describe("the table of any records", () => {
  it("takes the first page's first six fields, and keeps its layout across a resume", () => {
    const encoder = Output.encoder("table", { table: "fields" })
    const records = [{ a: 1, b: "x", c: null, d: { e: 1 }, f: true, g: 2, h: 3 }]
    const text = encoder.page(records)
    expect(text.split("\n")[0]!.split(/\s{2,}/)).toEqual(["a", "b", "c", "d", "f", "g"])
    const layout = encoder.layout()!
    const resumed = Output.encoder("table", { table: "fields", resumed: layout })
    expect(resumed.page(records)).toBe(text.split("\n").slice(2).join("\n"))
  })
})

describe("settings", () => {
  const read = (env: Record<string, string>, config: Config.Config<unknown>) =>
    Effect.runSync(
      Effect.either(Effect.withConfigProvider(config, ConfigProvider.fromMap(new Map(Object.entries(env)))))
    )

  it("a settings error is one line naming the variable", () => {
    const missing = read({}, Config.all([Config.string("ERP_BASE_URL"), Config.redacted("ERP_API_KEY")]))
    expect(Either.isLeft(missing) && describeConfigError(missing.left as ConfigError.ConfigError)).toBe(
      "ERP_BASE_URL and ERP_API_KEY are not set: export ERP_BASE_URL=https://<your ERP's API address> " +
        "ERP_API_KEY=<your API key>"
    )
    // A check after reading names the option; the line names its variable.
    const badWindow = ErpRateLimiter.resolve({ window: 0 })
    expect(Either.isLeft(badWindow) && describeConfigError(badWindow.left)).toBe(
      "ERP_RATE_WINDOW must be a positive duration: seconds (30) or with a unit (\"500 millis\", \"2 minutes\")"
    )
    const badRetries = ErpConfig.resolve({
      baseUrl: "https://erp.example.com",
      apiKey: Redacted.make("k"),
      retries: -1
    }, {
      window: Duration.seconds(30)
    })
    expect(Either.isLeft(badRetries) && describeConfigError(badRetries.left)).toBe(
      "ERP_RETRIES: must be an integer >= 0"
    )
  })
})

describe("partners get's lookups", () => {
  const selectors = Partners.resource.selectors
  const id = (value: number) => ({ selector: Partners.byId, value })
  const name = (value: string) => ({ selector: Partners.byCompanyName, value })

  it("keep the order --id and --company-name were given in", () => {
    const argv = ["partners", "get", "--company-name", "--id", "--id", "3", "--verbose", "--id", "5"]
    expect(inputOrder(argv, selectors, [[3, 5], ["--id"]])).toEqual([name("--id"), id(3), id(5)])
    // When the arguments cannot account for the values, they come selector by selector: ids first.
    expect(inputOrder(["--ID"], selectors, [[3, 5], ["x"]])).toEqual([id(3), id(5), name("x")])
  })

  it("read --stdin lines: digits are an id, name: a company name, blank lines nothing", () => {
    expect(parseLine(selectors, "42", 1)).toEqual(Either.right(id(42)))
    expect(parseLine(selectors, " 42 ", 1)).toEqual(Either.right(id(42)))
    expect(parseLine(selectors, "name:42", 1)).toEqual(Either.right(name("42")))
    expect(parseLine(selectors, "A+B=C Kft. 7", 1)).toEqual(Either.right(name("A+B=C Kft. 7")))
    expect(parseLine(selectors, "  ", 1)).toEqual(Either.right(undefined))
    const tooLarge = parseLine(selectors, "99999999999999999999", 3)
    expect(Either.isLeft(tooLarge) && tooLarge.left.reason).toBe(
      "stdin line 3: 99999999999999999999 is too large for an id"
    )
  })
})

describe("erp sandbox's --odd-kind", () => {
  it("offers exactly the sandbox's ways of straying", () => {
    expect([...oddKindNames]).toEqual([...Seed.oddKinds])
  })
})
