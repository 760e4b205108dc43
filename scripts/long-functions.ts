/**
 * `tsx scripts/long-functions.ts [--max N] FILE...`: the functions longer than N lines (80 by default) in the files
 * given, one line each: `file:first-last lines name`. A reading aid (issue 32: "no function over about 80 lines in the
 * client, the limiter and the pager"), not a check: it always exits 0. Counts function declarations, methods, arrow
 * functions and function expressions (a generator given to `Effect.gen` is one), named by their declaration or the
 * call they are given to.
 */
import * as Fs from "node:fs"
import ts from "typescript"

const args = process.argv.slice(2)
const maxAt = args.indexOf("--max")
const max = maxAt >= 0 ? Number(args[maxAt + 1]) : 80
const files = maxAt >= 0 ? args.filter((_, i) => i !== maxAt && i !== maxAt + 1) : args

const isFunction = (node: ts.Node): node is ts.FunctionLikeDeclaration =>
  ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isArrowFunction(node) ||
  ts.isFunctionExpression(node)

// Its own name, else the variable or property it is assigned to, else the call it is given to.
const nameOf = (node: ts.FunctionLikeDeclaration): string => {
  if (node.name !== undefined) return node.name.getText()
  for (let parent: ts.Node | undefined = node.parent; parent !== undefined; parent = parent.parent) {
    if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) return parent.name.getText()
    if (ts.isCallExpression(parent)) return `(in ${parent.expression.getText()})`
    if (ts.isSourceFile(parent)) break
  }
  return "<anonymous>"
}

for (const file of files) {
  const source = ts.createSourceFile(file, Fs.readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true)
  const visit = (node: ts.Node): void => {
    if (isFunction(node)) {
      const first = source.getLineAndCharacterOfPosition(node.getStart()).line + 1
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line + 1
      if (last - first + 1 > max) console.log(`${file}:${first}-${last} ${last - first + 1} lines ${nameOf(node)}`)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
}
