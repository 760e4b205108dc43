/**
 * `pnpm check-examples`: every public function of the packages carries an `@example` in its JSDoc (issue 20: a
 * reference a user can read). docgen's own `enforceExamples` asks one of every export (interfaces, types, tags, schema
 * constants too) and stops at a module's first kind of miss, so this check names what a reader calls: in each public
 * module (`packages/<name>/src/*.ts`, not `internal/`, not `index.ts` or `bin.ts`), every exported
 * `function`, and every exported `const` whose value is written as a function (`(…) => …`, `function …`), built by
 * `dual(…)` / `Effect.fn(…)`, or declared with a function type (`const f: (a: A) => B = other.f`). docgen itself
 * type-checks and runs the examples (`pnpm run docs`).
 *
 * Prints one line per miss, `packages/streams/src/Partners.ts: get`, and fails when there is one; `--list` prints
 * every function it counts, with or without an example.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Url from "node:url"
import ts from "typescript"

const root = Path.resolve(Path.dirname(Url.fileURLToPath(import.meta.url)), "..")
const list = process.argv.includes("--list")
const packagesDir = Path.join(root, "packages")

const publicModules = Fs.readdirSync(packagesDir).flatMap((dir) => {
  const src = Path.join(packagesDir, dir, "src")
  if (!Fs.existsSync(src)) return []
  return Fs.readdirSync(src)
    .filter((name) => name.endsWith(".ts") && !name.endsWith(".d.ts") && name !== "index.ts" && name !== "bin.ts")
    .map((name) => Path.join(src, name))
})

const isExported = (node: ts.Node): boolean =>
  ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword)

// `dual(…)`, `Function.dual(…)`, `Effect.fn(…)` and `Effect.fn("name")(…)` build functions.
const isFunctionBuilder = (expression: ts.Expression): boolean => {
  if (!ts.isCallExpression(expression)) return false
  const callee = ts.isCallExpression(expression.expression) ? expression.expression.expression : expression.expression
  const text = callee.getText()
  return text === "dual" || text.endsWith(".dual") || text === "Effect.fn" || text === "Effect.fnUntraced"
}

const isFunctionValue = (initializer: ts.Expression | undefined): boolean => {
  if (initializer === undefined) return false
  let expression = initializer
  while (ts.isParenthesizedExpression(expression) || ts.isAsExpression(expression)) expression = expression.expression
  return ts.isArrowFunction(expression) || ts.isFunctionExpression(expression) || isFunctionBuilder(expression)
}

const hasExample = (node: ts.Node): boolean => ts.getJSDocTags(node).some((tag) => tag.tagName.text === "example")

let counted = 0
const missing: Array<string> = []
for (const file of publicModules) {
  const source = ts.createSourceFile(file, Fs.readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true)
  const relative = Path.relative(root, file)
  for (const statement of source.statements) {
    if (!isExported(statement)) continue
    const found: Array<{ readonly name: string; readonly documented: ts.Node }> = []
    if (ts.isFunctionDeclaration(statement) && statement.name !== undefined) {
      found.push({ name: statement.name.text, documented: statement })
    } else if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) {
        const typedAsFunction = declaration.type !== undefined && ts.isFunctionTypeNode(declaration.type)
        if (ts.isIdentifier(declaration.name) && (typedAsFunction || isFunctionValue(declaration.initializer))) {
          // JSDoc sits on the variable statement; getJSDocTags reads it through the declaration.
          found.push({ name: declaration.name.text, documented: declaration })
        }
      }
    }
    for (const { documented, name } of found) {
      counted++
      const ok = hasExample(documented)
      if (list) console.log(`${ok ? "example " : "MISSING "} ${relative}: ${name}`)
      if (!ok) missing.push(`${relative}: ${name}`)
    }
  }
}

if (!list) { for (const line of missing) console.log(line) }
console.log(`${counted} public functions, ${counted - missing.length} with an @example, ${missing.length} without`)
process.exit(missing.length === 0 ? 0 : 1)
