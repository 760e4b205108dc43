/**
 * `pnpm check-cycles`: no import cycle among the source files of the packages (docs/ARCHITECTURE.md, "Packages":
 * internal modules implement, public modules re-export). Reads every `packages/<name>/src/**\/*.ts`, follows its
 * static imports and re-exports (relative ones, and `@erp-client/<package>[/<Module>]` into that package's `src`), and fails with each
 * cycle it finds, one line each: `a.ts -> b.ts -> a.ts`.
 *
 * Type-only imports (`import type`, `export type … from`) are left out: they are erased from the JavaScript, so they
 * cannot make a module run before one it depends on, and a public module's types are what its internal modules
 * implement (as in `@effect/platform`). With `verbatimModuleSyntax`, `import { type A } from "./a.js"` stays an import
 * at run time and is counted. `--types` counts type-only imports too, to show those cycles as well (they do not fail
 * the check). Dynamic `import()` is lazy and left out.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Url from "node:url"
import ts from "typescript"

const root = Path.resolve(Path.dirname(Url.fileURLToPath(import.meta.url)), "..")
const withTypes = process.argv.includes("--types")

interface Edge {
  readonly to: string
  readonly typeOnly: boolean
}

const packagesDir = Path.join(root, "packages")
// "@erp-client/core" -> "<root>/packages/core/src"
const sourceDirs = new Map<string, string>()
for (const dir of Fs.readdirSync(packagesDir)) {
  const manifest = Path.join(packagesDir, dir, "package.json")
  if (!Fs.existsSync(manifest)) continue
  const name: string = JSON.parse(Fs.readFileSync(manifest, "utf8")).name
  sourceDirs.set(name, Path.join(packagesDir, dir, "src"))
}

const sourceFiles = (dir: string): Array<string> =>
  Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = Path.join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [path] : []
  })

// A specifier as the source writes it ("./x.js", "@erp-client/core/Envelope") to the source file it loads, if ours.
const resolve = (from: string, specifier: string): string | undefined => {
  const toSource = (path: string) => {
    const candidates = [path.replace(/\.js$/, ".ts"), `${path}.ts`, Path.join(path, "index.ts")]
    return candidates.find((candidate) => Fs.existsSync(candidate) && Fs.statSync(candidate).isFile())
  }
  if (specifier.startsWith(".")) return toSource(Path.resolve(Path.dirname(from), specifier))
  for (const [name, src] of sourceDirs) {
    if (specifier === name) return toSource(Path.join(src, "index.ts"))
    // The packages export "./*" as "./src/*.ts".
    if (specifier.startsWith(`${name}/`)) return toSource(Path.join(src, specifier.slice(name.length + 1)))
  }
  return undefined
}

const edgesOf = (file: string): Array<Edge> => {
  const source = ts.createSourceFile(file, Fs.readFileSync(file, "utf8"), ts.ScriptTarget.Latest, false)
  const edges: Array<Edge> = []
  for (const statement of source.statements) {
    let specifier: ts.Expression | undefined
    let typeOnly = false
    if (ts.isImportDeclaration(statement)) {
      specifier = statement.moduleSpecifier
      typeOnly = statement.importClause?.isTypeOnly === true
    } else if (ts.isExportDeclaration(statement) && statement.moduleSpecifier !== undefined) {
      specifier = statement.moduleSpecifier
      typeOnly = statement.isTypeOnly
    }
    if (specifier === undefined || !ts.isStringLiteral(specifier)) continue
    const to = resolve(file, specifier.text)
    if (to !== undefined) edges.push({ to, typeOnly })
  }
  return edges
}

const files = [...sourceDirs.values()].filter((dir) => Fs.existsSync(dir)).flatMap(sourceFiles).sort()
const graph = new Map<string, Array<Edge>>(files.map((file) => [file, edgesOf(file)]))

/** The strongly connected components of the graph restricted to `keep` edges (Tarjan), those that hold a cycle. */
const cyclicComponents = (keep: (edge: Edge) => boolean): Array<Array<string>> => {
  let counter = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const onStack = new Set<string>()
  const components: Array<Array<string>> = []
  const visit = (node: string) => {
    index.set(node, counter)
    low.set(node, counter)
    counter++
    stack.push(node)
    onStack.add(node)
    for (const edge of graph.get(node) ?? []) {
      if (!keep(edge)) continue
      if (!index.has(edge.to)) {
        visit(edge.to)
        low.set(node, Math.min(low.get(node)!, low.get(edge.to)!))
      } else if (onStack.has(edge.to)) low.set(node, Math.min(low.get(node)!, index.get(edge.to)!))
    }
    if (low.get(node) === index.get(node)) {
      const component: Array<string> = []
      let member: string
      do {
        member = stack.pop()!
        onStack.delete(member)
        component.push(member)
      } while (member !== node)
      const selfLoop = (graph.get(node) ?? []).some((edge) => keep(edge) && edge.to === node)
      if (component.length > 1 || selfLoop) components.push(component.sort())
    }
  }
  for (const file of files) if (!index.has(file)) visit(file)
  return components
}

/** One cycle through the component's first file: the shortest way back to it (breadth first). */
const cycleIn = (component: Array<string>, keep: (edge: Edge) => boolean): Array<string> => {
  const members = new Set(component)
  const start = component[0]
  const previous = new Map<string, string>()
  const queue = [start]
  while (queue.length > 0) {
    const node = queue.shift()!
    for (const edge of graph.get(node) ?? []) {
      if (!keep(edge) || !members.has(edge.to)) continue
      if (edge.to === start) {
        const path = [node]
        while (path[0] !== start) path.unshift(previous.get(path[0])!)
        return [...path, start]
      }
      if (!previous.has(edge.to)) {
        previous.set(edge.to, node)
        queue.push(edge.to)
      }
    }
  }
  return [start, start]
}

const show = (file: string) => Path.relative(root, file)
const report = (title: string, keep: (edge: Edge) => boolean): number => {
  const components = cyclicComponents(keep)
  for (const component of components) {
    const cycle = cycleIn(component, keep).map(show).join(" -> ")
    const others = component.length > cycle.split(" -> ").length - 1 ? ` (and ${component.length} files in all)` : ""
    console.log(`${title}: ${cycle}${others}`)
  }
  return components.length
}

const valueEdges = [...graph.values()].flat().filter((edge) => !edge.typeOnly).length
const cycles = report("cycle", (edge) => !edge.typeOnly)
if (withTypes) report("cycle counting type-only imports (allowed)", () => true)
console.log(
  `check-cycles: ${files.length} source files in ${sourceDirs.size} packages, ${valueEdges} imports followed ` +
    `(type-only ones left out): ${cycles === 0 ? "no cycle" : `${cycles} cycle${cycles === 1 ? "" : "s"}`}`
)
process.exitCode = cycles === 0 ? 0 : 1
