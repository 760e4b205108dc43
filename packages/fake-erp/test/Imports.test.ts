import { describe, expect, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Url from "node:url"
import ts from "typescript"

// The fake ERP is plain functions over data that the sandbox and both editions' test kits import: no Effect (of either
// major), no other package, and no runtime's modules (`node:*`), in any of its source files.

const src = Path.resolve(Path.dirname(Url.fileURLToPath(import.meta.url)), "../src")

const sources = (dir: string): Array<string> =>
  Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = Path.join(dir, entry.name)
    return entry.isDirectory() ? sources(path) : entry.name.endsWith(".ts") ? [path] : []
  })

describe("the fake ERP's imports", () => {
  it("are its own modules only", () => {
    const foreign = sources(src).flatMap((file) =>
      ts.preProcessFile(Fs.readFileSync(file, "utf8"), true, true).importedFiles
        .map((imported) => imported.fileName)
        .filter((specifier) => !specifier.startsWith("./") && !specifier.startsWith("../"))
        .map((specifier) => `${Path.relative(src, file)}: ${specifier}`)
    )
    expect(foreign).toStrictEqual([])
  })
})
