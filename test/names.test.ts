import { describe, expect, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Url from "node:url"
import ts from "typescript"

// The two editions publish the same names: every public module (`src/*.ts`, `internal/` aside) of core, client,
// streams, otel and testing exports, in the Effect 4 edition (`packages/effect4-*`), the names its Effect 3 twin
// exports, each a value in both or a type in both. Read from the sources by the TypeScript parser, so the check needs
// no build. A name that really exists in one edition only is allowed below, with its reason.

const root = Path.resolve(Path.dirname(Url.fileURLToPath(import.meta.url)), "..")

/** A name a module exports, and whether it is a value (a `const`, a class, a namespace) or a type only. */
type Kind = "value" | "type"

const isExported = (node: ts.Node): boolean =>
  ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword)

/**
 * The names the module at `path` exports, by kind. `read` gives a module's text (`undefined`: no such module); an
 * `export * from "./x.js"` adds the names of `./x.ts`, read the same way.
 */
const exportsOf = (path: string, read: (path: string) => string | undefined): ReadonlyMap<string, Kind> => {
  const text = read(path)
  if (text === undefined) throw new Error(`${path}: no such module`)
  const names = new Map<string, Kind>()
  // A name declared as a value and as a type (a class, a `const` beside its `type`) is a value.
  const add = (name: string, kind: Kind) => names.set(name, names.get(name) === "value" ? "value" : kind)
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true)
  for (const statement of source.statements) {
    if (ts.isExportDeclaration(statement)) {
      const kind: Kind = statement.isTypeOnly ? "type" : "value"
      const clause = statement.exportClause
      if (clause === undefined) {
        const specifier = (statement.moduleSpecifier as ts.StringLiteral).text
        const target = Path.join(Path.dirname(path), specifier.replace(/\.js$/, ".ts"))
        for (const [name, inner] of exportsOf(target, read)) add(name, statement.isTypeOnly ? "type" : inner)
      } else if (ts.isNamespaceExport(clause)) {
        add(clause.name.text, kind)
      } else {
        for (const element of clause.elements) add(element.name.text, element.isTypeOnly ? "type" : kind)
      }
    } else if (ts.isExportAssignment(statement)) {
      add("default", "value")
    } else if (isExported(statement)) {
      if (ts.isVariableStatement(statement)) {
        for (const declaration of statement.declarationList.declarations) add(declaration.name.getText(source), "value")
      } else if (ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement)) {
        add(statement.name.text, "type")
      } else if (
        ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement) || ts.isEnumDeclaration(statement) ||
        ts.isModuleDeclaration(statement)
      ) {
        add(statement.name?.text ?? "default", "value")
      }
    }
  }
  return names
}

/** Where two modules' exports differ: each name one has and the other has not, or has as the other kind. */
const differences = (
  effect3: ReadonlyMap<string, Kind>,
  effect4: ReadonlyMap<string, Kind>
): ReadonlyArray<string> => {
  const said: Array<string> = []
  for (const [name, kind] of effect3) {
    const other = effect4.get(name)
    if (other === undefined) said.push(`${name}: Effect 3 only`)
    else if (other !== kind) said.push(`${name}: a ${kind} in Effect 3, a ${other} in Effect 4`)
  }
  for (const name of effect4.keys()) if (!effect3.has(name)) said.push(`${name}: Effect 4 only`)
  return said.sort()
}

const readFile = (path: string): string | undefined => Fs.existsSync(path) ? Fs.readFileSync(path, "utf8") : undefined

const PACKAGES = ["core", "client", "streams", "otel", "testing"] as const

/**
 * Public modules of the Effect 4 edition whose Effect 3 twin lives in another package: the Effect 3 edition's
 * in-memory ERP, `Sandbox` and `Fault`, is its own package, `@erp-client/sandbox` (with `Serve`, `RateLimit` and
 * `Seed` besides); the Effect 4 edition's is part of its test kit (scripts/editions.ts copies it there, `SOURCES`).
 */
const ELSEWHERE: Readonly<Record<string, string>> = {
  "testing/Sandbox.ts": "packages/sandbox/src/Sandbox.ts",
  "testing/Fault.ts": "packages/sandbox/src/Fault.ts"
}

/** Names in one edition only, by module, each with why; kept as small as the reasons allow. */
const ALLOWED: ReadonlyArray<{ readonly module: string; readonly difference: string; readonly reason: string }> = []

const publicModules = (dir: string): ReadonlyArray<string> =>
  Fs.readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts"))
    .map((entry) => entry.name)
    .sort()

/** Every difference between the editions' public modules, as `package/Module.ts: name: …`. */
const editionDifferences = (): ReadonlyArray<string> =>
  PACKAGES.flatMap((pkg) => {
    const effect3 = Path.join(root, "packages", pkg, "src")
    const effect4 = Path.join(root, "packages", `effect4-${pkg}`, "src")
    const modules = [...new Set([...publicModules(effect3), ...publicModules(effect4)])].sort()
    return modules.flatMap((module) => {
      const key = `${pkg}/${module}`
      const twin = ELSEWHERE[key] === undefined ? Path.join(effect3, module) : Path.join(root, ELSEWHERE[key])
      const mine = Path.join(effect4, module)
      if (readFile(twin) === undefined) return [`${key}: a module of Effect 4 only`]
      if (readFile(mine) === undefined) return [`${key}: a module of Effect 3 only`]
      return differences(exportsOf(twin, readFile), exportsOf(mine, readFile)).map((said) => `${key}: ${said}`)
    })
  })

describe("the editions' names", () => {
  it("are read from a module's source: declarations of every kind, `export { … }`, `export * as`, `export * from`", () => {
    const files: Record<string, string> = {
      "/p/Mod.ts": [
        "export const a = 1, b = 2",
        "export function f() {}",
        "export class C {}",
        "export interface I {}",
        "export type T = string",
        "export const V = 1",
        "export type V = number",
        "export * as N from \"./n.js\"",
        "export { x as y, type Z } from \"./n.js\"",
        "export * from \"./more.js\"",
        "const hidden = 1"
      ].join("\n"),
      "/p/more.ts": "export const more = hidden\nexport type MoreType = 1\nconst hidden = 1",
      "/p/n.ts": "export const x = 1\nexport type Z = 1"
    }
    expect(Object.fromEntries(exportsOf("/p/Mod.ts", (path) => files[path]))).toEqual({
      a: "value",
      b: "value",
      f: "value",
      C: "value",
      I: "type",
      T: "type",
      V: "value",
      N: "value",
      y: "value",
      Z: "type",
      more: "value",
      MoreType: "type"
    })
  })

  it("differ when one edition lacks a name or has it as the other kind: the check can fail", () => {
    const files: Record<string, string> = {
      "/3/ErpConfig.ts": "export const defaults = {}\nexport const resolve = () => 1\nexport interface Options {}",
      "/4/ErpConfig.ts": "export const resolve = () => 1\nexport const Options = {}\nexport const extra = 1"
    }
    const read = (path: string) => files[path]
    expect(differences(exportsOf("/3/ErpConfig.ts", read), exportsOf("/4/ErpConfig.ts", read))).toEqual([
      "Options: a type in Effect 3, a value in Effect 4",
      "defaults: Effect 3 only",
      "extra: Effect 4 only"
    ])
    expect(differences(exportsOf("/3/ErpConfig.ts", read), exportsOf("/3/ErpConfig.ts", read))).toEqual([])
  })

  it("are the same in every public module of core, client, streams, otel and testing, but for the allowed", () => {
    const found = editionDifferences()
    const allowed = new Set(ALLOWED.map((entry) => `${entry.module}: ${entry.difference}`))
    expect(found.filter((difference) => !allowed.has(difference))).toEqual([])
    // An allowance whose difference is gone goes too.
    expect([...allowed].filter((difference) => !found.includes(difference))).toEqual([])
  })
})
