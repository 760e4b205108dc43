import { describe, expect, it } from "@effect/vitest"
import { ErpError } from "@erp-client/core"
import { Schema, SchemaAST } from "effect"
import * as Fs from "node:fs"

// The reference shows an error class by its JSDoc, not by its schema's fields: each class's doc lists its fields
// ("**Fields**"), and this holds the list to the schema, name by name, in order, optional or not.
const source = Fs.readFileSync(new URL("../src/ErpError.ts", import.meta.url), "utf8")

const documentedFields = (name: string): Array<string> => {
  const at = source.indexOf(`export class ${name} extends`)
  const doc = source.slice(source.lastIndexOf("/**", at), at)
  return [...doc.matchAll(/^ \* - `(\w+)` \(([^)]*)\)/gm)].map(([, field, type]) =>
    `${field}${type.includes("optional") ? "?" : ""}`
  )
}

const schemaFields = (fields: Schema.Struct.Fields): Array<string> =>
  (SchemaAST.typeAST(Schema.Struct(fields).ast) as SchemaAST.TypeLiteral).propertySignatures
    .filter((property) => property.name !== "_tag")
    .map((property) => `${String(property.name)}${property.isOptional ? "?" : ""}`)

const classes = Object.entries(ErpError as Record<string, unknown>).filter(
  (entry): entry is [string, { readonly fields: Schema.Struct.Fields }] =>
    typeof entry[1] === "function" && "fields" in entry[1]
)

describe("ErpError's reference", () => {
  it("covers every error class", () => {
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
})
