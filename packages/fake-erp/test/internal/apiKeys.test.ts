import { describe, expect, it } from "@effect/vitest"
import * as ApiKeys from "../../src/internal/apiKeys.js"

describe("internal/apiKeys", () => {
  it("checks, revokes and replaces keys; the first one stays what it was at start", () => {
    const keys = ApiKeys.make(["a", "b"])
    expect([keys.isValid("a"), keys.isValid("b"), keys.isValid("A"), keys.isValid("")]).toStrictEqual([
      true,
      true,
      false,
      false
    ])
    keys.revoke("a")
    expect(keys.isValid("a")).toBe(false)
    keys.set(["c"])
    expect([keys.isValid("b"), keys.isValid("c")]).toStrictEqual([false, true])
    expect(keys.first).toBe("a")
    expect(ApiKeys.make([]).first).toBe("")
  })

  it("redacts valid keys and the key the request sent, nothing else", () => {
    const keys = ApiKeys.make(["s3cr3t"])
    expect(keys.redact("s3cr3t", "")).toBe("<redacted>")
    expect(keys.redact("wrong-key", "wrong-key")).toBe("<redacted>")
    expect(keys.redact("", "")).toBe("")
    expect(keys.redact("42", "wrong-key")).toBe("42")
  })
})
