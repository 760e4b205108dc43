/**
 * Builds the `erp` command into `packages/cli/dist/`: the executable `bin.js` (ESM: the quick answers and the loader)
 * and the command `erp.cjs` (`src/internal/entry.ts` and everything it imports: our packages from source, Effect,
 * @effect/cli, ws… bundled by esbuild). One bundle loads in a fraction of the time a tree of hundreds of modules
 * takes, and carries one copy of each Effect package whatever the application beside it installed. ioredis is not
 * bundled: a dependency of the package, loaded only with `--redis`. `erp mcp` runs from a bundle of its own,
 * `mcp.cjs` (`src/internal/mcpEntry.ts`: the same command with the MCP server and its transports), so that
 * no other command reads or compiles them.
 *
 * Run by `pnpm install` (the root `prepare`), `pnpm build`, and before the tests (vitest's global set-up). Also
 * writes `packages/cli/build/bundle.json` (which output holds which source, for the tests and `scripts/erp.js`) and
 * `packages/cli/dist/THIRD-PARTY-LICENSES.md` (the licences of the bundled packages).
 */
import * as esbuild from "esbuild"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import * as Vm from "node:vm"

const ROOT = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")
const CLI = Path.join(ROOT, "packages/cli")
export const DIST = Path.join(CLI, "dist")
export const BIN = Path.join(DIST, "bin.js")
/** The command itself, loaded by the executable when it must run. */
export const ENTRY = Path.join(DIST, "erp.cjs")
/** Its source map (not shipped). */
export const ENTRY_MAP = Path.join(CLI, "build/erp.cjs.map")
/** The command with the MCP server, loaded by the executable for `erp mcp` only. */
export const MCP_ENTRY = Path.join(DIST, "mcp.cjs")
export const MCP_ENTRY_MAP = Path.join(CLI, "build/mcp.cjs.map")
export const BUNDLE_INFO = Path.join(CLI, "build/bundle.json")

// The function Node wraps a CommonJS module in (`Module.wrap`), written around the command's code: the executable
// compiles the file as it is (packages/cli/src/internal/codeCache.ts).
const WRAPPER = { start: "(function (exports, require, module, __filename, __dirname) { ", end: "\n});" }

/** What `build/bundle.json` holds: for each output file (relative to the root), the sources it holds. */
export interface BundleInfo {
  readonly outputs: Record<string, ReadonlyArray<string>>
  /** Our own sources (not under node_modules), relative to the root: `scripts/erp.js` rebuilds when one is newer. */
  readonly sources: ReadonlyArray<string>
}

// Where a bundled file's package lives: the directory after its last `node_modules/`.
const packageDir = (file: string): string | undefined => {
  const at = file.lastIndexOf("node_modules/")
  if (at < 0) return undefined
  const rest = file.slice(at + "node_modules/".length).split("/")
  return file.slice(0, at + "node_modules/".length) + rest.slice(0, rest[0]!.startsWith("@") ? 2 : 1).join("/")
}

const licences = (inputs: ReadonlyArray<string>): string => {
  const dirs = [...new Set(inputs.map(packageDir).filter((dir) => dir !== undefined))]
  const entries = dirs.map((dir) => {
    const pkg = JSON.parse(Fs.readFileSync(Path.join(ROOT, dir, "package.json"), "utf8"))
    const file = Fs.readdirSync(Path.join(ROOT, dir)).find((name) => /^(licen[cs]e|copying)/i.test(name))
    const text = file === undefined ? "" : Fs.readFileSync(Path.join(ROOT, dir, file), "utf8").trim()
    return { title: `${pkg.name}@${pkg.version}`, license: String(pkg.license ?? "see the package"), text }
  }).sort((a, b) => a.title.localeCompare(b.title))
  return [
    "# Third-party licences",
    "",
    "`dist/` bundles these packages (and the @erp-client packages, MIT, see LICENSE).",
    "",
    ...entries.flatMap((
      e
    ) => [`## ${e.title} (${e.license})`, "", ...(e.text === "" ? [] : ["```", e.text, "```"]), ""])
  ].join("\n")
}

export const buildCli = async (): Promise<BundleInfo> => {
  Fs.rmSync(DIST, { recursive: true, force: true })
  const version = JSON.parse(Fs.readFileSync(Path.join(CLI, "package.json"), "utf8")).version
  const common = {
    absWorkingDir: ROOT,
    bundle: true,
    platform: "node",
    target: "node20",
    minify: true,
    // `erp --version` says the version of the package it ships in.
    // No keepNames: it wraps every function and class of the bundle in a call that sets its name at load, about a fifth
    // of `erp partners get`'s start on Node 24 (`pnpm bench startup`). Failures are said by their tags and messages,
    // which minifying leaves as they are.
    legalComments: "none",
    metafile: true,
    logLevel: "warning"
  } as const
  // The command: one CommonJS file, which the executable runs with a V8 code cache made after a run
  // (packages/cli/src/internal/codeCache.ts says why CommonJS). What only some commands use (the sandbox server, the
  // Redis limiter, telemetry) is in it, evaluated only when imported: esbuild wraps a module reached by `import()` in
  // a function of its own, so it costs nothing until then. The MCP server is not: it is a bundle of its own, below.
  const commandBundle = async (entryPoint: string, outfile: string, map: string) => {
    const result = await esbuild.build({
      ...common,
      entryPoints: [Path.join(CLI, entryPoint)],
      outfile,
      format: "cjs",
      define: { ERP_CLI_VERSION: JSON.stringify(version) },
      // Loaded only by `--redis`; installed beside the command as its dependency. Its `import()` becomes a `require`
      // (ioredis is CommonJS): a script run through `vm` could `import()` only with an experimental loader option.
      // pg-native: pg's optional native binding, required only when asked for (never here).
      external: ["ioredis", "pg-native"],
      supported: { "dynamic-import": false },
      // For the tests only (packages/cli/test/lazy.test.ts maps V8's coverage of the bundle back to our sources):
      // moved out of `dist/` below, so it is not shipped.
      sourcemap: "external",
      sourcesContent: false,
      // The function a CommonJS module runs in, written into the file (internal/codeCache.ts says why).
      banner: { js: WRAPPER.start },
      footer: { js: WRAPPER.end }
    })
    Fs.mkdirSync(Path.dirname(map), { recursive: true })
    Fs.renameSync(`${outfile}.map`, map)
    return result
  }
  // `erp mcp`: the same command with the MCP server and its transports, a second bundle that only `erp mcp`
  // loads: the other commands' bundle, and their start, stay as they were (`pnpm bench startup`).
  const [command, mcp] = await Promise.all([
    commandBundle("src/internal/entry.ts", ENTRY, ENTRY_MAP),
    commandBundle("src/internal/mcpEntry.ts", MCP_ENTRY, MCP_ENTRY_MAP)
  ])
  // The executable: the quick answers (`--version`, `--help`) and the loader, none of the command.
  const hashOf = (file: string) => Crypto.createHash("sha256").update(Fs.readFileSync(file)).digest("hex").slice(0, 16)
  const executable = await esbuild.build({
    ...common,
    entryPoints: [Path.join(CLI, "src/bin.ts")],
    outfile: BIN,
    format: "esm",
    define: {
      ERP_CLI_VERSION: JSON.stringify(version),
      ERP_BUNDLE_HASH: JSON.stringify(hashOf(ENTRY)),
      ERP_MCP_BUNDLE_HASH: JSON.stringify(hashOf(MCP_ENTRY))
    }
  })
  const outputs: Record<string, Array<string>> = {}
  for (const result of [executable, command, mcp]) {
    for (const [file, output] of Object.entries(result.metafile.outputs)) {
      if (!file.endsWith(".map")) outputs[Path.relative(ROOT, Path.resolve(ROOT, file))] = Object.keys(output.inputs)
    }
  }
  const inputs = [
    ...new Set([executable, command, mcp].flatMap((result) => Object.keys(result.metafile.inputs)))
  ]
  const info: BundleInfo = { outputs, sources: inputs.filter((file) => !file.includes("node_modules/")) }
  Fs.mkdirSync(Path.dirname(BUNDLE_INFO), { recursive: true })
  Fs.writeFileSync(BUNDLE_INFO, JSON.stringify(info, null, 2) + "\n")
  Fs.writeFileSync(Path.join(DIST, "THIRD-PARTY-LICENSES.md"), licences(inputs))
  // The `--help` pages, rendered by the command just built (its bundle, as the executable loads it), for the executable
  // to answer `--help` without loading the command (packages/cli/src/internal/quick.ts).
  const module = { exports: {} as { helpIndex: () => unknown } }
  Vm.runInThisContext(Fs.readFileSync(ENTRY, "utf8"), { filename: ENTRY })(
    module.exports,
    createRequire(ENTRY),
    module,
    ENTRY,
    DIST
  )
  const { helpIndex } = module.exports
  Fs.writeFileSync(Path.join(DIST, "help.json"), JSON.stringify(helpIndex()))
  return info
}

/** vitest's global set-up: the CLI tests run the compiled command, so it is built from the sources under test. */
export const setup = async (): Promise<void> => {
  await buildCli()
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(Path.resolve(process.argv[1])).href) {
  const started = performance.now()
  const info = await buildCli()
  process.stderr.write(
    `built ${Path.relative(ROOT, BIN)} (${Object.keys(info.outputs).length} files) in ${
      Math.round(performance.now() - started)
    } ms\n`
  )
}
