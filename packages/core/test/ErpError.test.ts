import { describe, expect, it } from "@effect/vitest"
import { ErpError } from "@erp-client/core"
import type { Schema } from "effect"
import { Effect } from "effect"
import * as Fs from "node:fs"
import { structFields } from "./kit.js"

// The reference shows an error class by its JSDoc, not by its schema's fields: each class's doc lists its fields
// ("**Fields**"), and this holds the list to the schema, name by name, in order, optional or not; and the messages are
// the kernel's (@erp-client/kernel/ErrorText). One suite, run against both editions (TEST_PAIRS in
// scripts/editions.ts).
const source = Fs.readFileSync(new URL("../src/ErpError.ts", import.meta.url), "utf8")

const documentedFields = (name: string): Array<string> => {
  const at = source.search(new RegExp(`export class ${name}\\s+extends`))
  const doc = source.slice(source.lastIndexOf("/**", at), at)
  return [...doc.matchAll(/^ \* - `(\w+)` \(([^)]*)\)/gm)].map(([, field, type]) =>
    `${field}${type!.includes("optional") ? "?" : ""}`
  )
}

const schemaFields = (fields: Schema.Struct.Fields): Array<string> =>
  structFields(fields).filter((field) => field.name !== "_tag").map((field) =>
    `${field.name}${field.optional ? "?" : ""}`
  )

const classes = Object.entries(ErpError as Record<string, unknown>).filter(
  (entry): entry is [string, { readonly fields: Schema.Struct.Fields }] =>
    typeof entry[1] === "function" && "fields" in entry[1]
)

describe("ErpError", () => {
  it("has every error class", () => {
    expect(classes.map(([name]) => name).sort()).toEqual([
      "ApiError",
      "ConditionIgnored",
      "DecodeError",
      "HttpStatusError",
      "InvalidRequest",
      "NotFound",
      "PagingDrift",
      "PagingLoop",
      "RateLimited",
      "RateLimiterUnavailable",
      "ResponseTooLarge",
      "TimeoutError",
      "TransportError",
      "Unauthorized"
    ])
  })

  for (const [name, errorClass] of classes) {
    it(`${name}: its doc lists the fields of its schema`, () => {
      expect(documentedFields(name)).toEqual(schemaFields(errorClass.fields))
    })
  }

  it("says the kernel's messages", () => {
    expect(
      new ErpError.HttpStatusError({
        endpoint: "thing/get",
        method: "GET",
        status: 503,
        retryAfter: "5",
        neededMillis: 5_000,
        budgetMillis: 16_000,
        attempts: 4,
        elapsedMillis: 15_000
      }).message
    ).toBe(
      "GET thing/get: unexpected HTTP status 503 (Retry-After: 5); the server asked to wait 5 s, which would end " +
        "past the retry budget of 16 s: not waited for (4 attempts over 15.0 s)"
    )
    expect(new ErpError.RateLimited({ endpoint: "p/get", waitedMillis: 0, maxWaitMillis: 1_000, attempts: 0 }).message)
      .toBe("p/get: rate limited: the call may wait 1000 ms for the limit; nothing was sent")
    expect(new ErpError.Unauthorized({ endpoint: "p/get", status: 403 }).message).toBe(
      "p/get: the API key was refused (HTTP 403)"
    )
  })

  it.effect("is a yieldable, catchable tagged error", () =>
    Effect.gen(function*() {
      const caught = yield* Effect.fail(new ErpError.NotFound({ endpoint: "partner/get", selector: "id=1" })).pipe(
        Effect.catchTag("NotFound", (error) => Effect.succeed(error.selector))
      )
      expect(caught).toBe("id=1")
    }))
})
