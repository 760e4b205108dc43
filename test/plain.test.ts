import { describe, expect, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Url from "node:url"
import ts from "typescript"

// The packages that are plain functions over data import their own modules only, in every source file: no Effect (of
// either major), no other package, no runtime's modules (`node:*`).
// - the kernel: both editions import it;
// - the fake ERP: the sandbox and both editions' test kits import it.

const root = Path.resolve(Path.dirname(Url.fileURLToPath(import.meta.url)), "..")

const sources = (dir: string): Array<string> =>
  Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = Path.join(dir, entry.name)
    return entry.isDirectory() ? sources(path) : entry.name.endsWith(".ts") ? [path] : []
  })

describe("the plain packages' imports", () => {
  for (const pkg of ["kernel", "fake-erp"]) {
    it(`${pkg}: its own modules only`, () => {
      const src = Path.join(root, "packages", pkg, "src")
      const foreign = sources(src).flatMap((file) =>
        ts.preProcessFile(Fs.readFileSync(file, "utf8"), true, true).importedFiles
          .map((imported) => imported.fileName)
          .filter((specifier) => !specifier.startsWith("./") && !specifier.startsWith("../"))
          .map((specifier) => `${Path.relative(src, file)}: ${specifier}`)
      )
      expect(sources(src).length).toBeGreaterThan(5)
      expect(foreign).toStrictEqual([])
    })
  }
})
