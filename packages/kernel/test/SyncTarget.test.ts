import { describe, expect, it } from "@effect/vitest"
import * as SyncTarget from "../src/SyncTarget.js"

// `erp sync --to URL`: the two forms read, anything else refused, and the password never in what is printed.

describe("SyncTarget", () => {
  it("reads sqlite:PATH and postgres:// / postgresql:// URLs; refuses other schemes and an empty path", () => {
    expect(SyncTarget.parse("sqlite:./erp.sqlite")).toEqual({ _tag: "sqlite", filename: "./erp.sqlite" })
    expect(SyncTarget.parse("sqlite:///tmp/erp.sqlite")).toEqual({ _tag: "sqlite", filename: "/tmp/erp.sqlite" })
    expect(SyncTarget.parse(SyncTarget.DEFAULT_URL)).toEqual({ _tag: "sqlite", filename: "./erp.sqlite" })
    expect(SyncTarget.parse("postgres://u:p@h:5432/db")).toEqual({ _tag: "pg", url: "postgres://u:p@h:5432/db" })
    expect(SyncTarget.parse("POSTGRESQL://h/db")?._tag).toBe("pg")
    for (const bad of ["mysql://u:p@h/db", "sqlite:", "postgres://", "erp.sqlite", "", "http://h/db"]) {
      expect(SyncTarget.parse(bad)).toBeUndefined()
    }
  })

  it("replaces the password wherever a URL holds one, and leaves a URL without one as it is", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["postgres://user:pw@host:5432/db", "postgres://user:***@host:5432/db"],
      ["postgresql://user:p@ss:w/rd@host/db?sslmode=require", "postgresql://user:***@host/db?sslmode=require"],
      ["postgres://user:%40secret@host/db", "postgres://user:***@host/db"],
      ["postgres://user@host/db", "postgres://user@host/db"],
      ["postgres://host/db?user=u&password=secret&x=1", "postgres://host/db?user=u&password=***&x=1"],
      ["mysql://root:hunter2@h/db", "mysql://root:***@h/db"],
      ["sqlite:./erp.sqlite", "sqlite:./erp.sqlite"]
    ]
    for (const [url, shown] of cases) expect(SyncTarget.redact(url)).toBe(shown)
    for (const secret of ["pw", "p@ss:w/rd", "%40secret", "secret", "hunter2"]) {
      for (const [url] of cases) {
        if (url.includes(secret)) expect(SyncTarget.redact(url)).not.toContain(secret)
      }
    }
    expect(SyncTarget.describe({ _tag: "pg", url: "postgres://a:b@h/db" })).toBe("postgres://a:***@h/db")
    expect(SyncTarget.describe({ _tag: "sqlite", filename: "x.sqlite" })).toBe("sqlite:x.sqlite")
  })
})
