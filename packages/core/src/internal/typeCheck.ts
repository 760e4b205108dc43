// Effect 3 only: a compiled `Schema.is` for Effect 3's schemas (Effect 4 compiles its own).
/**
 * A compiled type check for the schemas that only check their input, equal to `Schema.is` (a property test holds the
 * two side by side: packages/core/test/Decoder.test.ts).
 *
 * Why by hand: `Schema.is` interprets the schema's AST for every value, through ParseResult's general machinery (an
 * `Either` per node, options merged per call, every key of a record walked for its index signature). Records of a
 * list are checked one by one, a hundred a page, and that interpretation was the largest share of the client's CPU
 * per record. The subset compiled here (keywords, literals, unions, refinements, structs whose index signatures
 * accept anything) covers the partner schemas; anything else is left to `Schema.is`.
 */
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import type * as SchemaAST from "effect/SchemaAST"

type Check = (u: unknown) => boolean

// The options `Schema.is` checks with; refinements receive them.
const OPTIONS: SchemaAST.ParseOptions = { exact: true }

/** The check of `ast` (the type side of a check-only schema), or `undefined` when it is outside the subset. */
export const compile = (ast: SchemaAST.AST): Check | undefined => {
  switch (ast._tag) {
    case "StringKeyword":
      return (u) => typeof u === "string"
    case "NumberKeyword":
      return (u) => typeof u === "number"
    case "BooleanKeyword":
      return (u) => typeof u === "boolean"
    case "UndefinedKeyword":
    case "VoidKeyword":
      return (u) => u === undefined
    case "UnknownKeyword":
    case "AnyKeyword":
      return () => true
    case "Literal": {
      const literal = ast.literal
      return (u) => u === literal
    }
    case "Union": {
      const members = ast.types.map(compile)
      if (members.some((member) => member === undefined)) return undefined
      const checks = members as ReadonlyArray<Check>
      return (u) => {
        for (let i = 0; i < checks.length; i++) if (checks[i](u)) return true
        return false
      }
    }
    case "Refinement": {
      const from = compile(ast.from)
      if (from === undefined) return undefined
      return (u) => from(u) && Option.isNone(ast.filter(u, OPTIONS, ast))
    }
    case "TypeLiteral": {
      // Index signatures that accept any value impose nothing (extra keys are ignored, as `Schema.is` does).
      if (!ast.indexSignatures.every((index) => index.type._tag === "UnknownKeyword")) return undefined
      const properties: Array<{ readonly name: string; readonly optional: boolean; readonly check: Check }> = []
      for (const property of ast.propertySignatures) {
        const check = compile(property.type)
        if (check === undefined || typeof property.name !== "string") return undefined
        properties.push({ name: property.name, optional: property.isOptional, check })
      }
      return (u) => {
        if (!Predicate.isRecord(u)) return false
        for (let i = 0; i < properties.length; i++) {
          const { check, name, optional } = properties[i]
          if (!Object.prototype.hasOwnProperty.call(u, name)) {
            // `Schema.is` checks exactly: a required key must be there, even when its type admits `undefined`.
            if (optional) continue
            return false
          }
          if (!check(u[name])) return false
        }
        return true
      }
    }
    default:
      return undefined
  }
}
