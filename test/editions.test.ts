import { describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { check, copyOf, FOLDED, generate, PAIRS } from "../scripts/editions.js"

// The Effect 4 edition's copies of the shared source (scripts/editions.ts) are what the Effect 3 source makes them:
// none missing, stale, edited by hand or committed, every file that is not shared marked so in its first line.

/** Runs `f` on a tree of its own: `packages/streams/src` and `packages/effect4-streams/src` holding these files. */
const inTree = (
  effect3: Readonly<Record<string, string>>,
  effect4: Readonly<Record<string, string>>,
  f: (root: string) => void
): void => {
  const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "editions-"))
  try {
    for (const [dir, files] of [["streams", effect3], ["effect4-streams", effect4]] as const) {
      for (const [name, text] of Object.entries(files)) {
        const file = Path.join(root, "packages", dir, "src", name)
        Fs.mkdirSync(Path.dirname(file), { recursive: true })
        Fs.writeFileSync(file, text)
      }
    }
    f(root)
  } finally {
    Fs.rmSync(root, { recursive: true, force: true })
  }
}

describe("scripts/editions.ts", () => {
  it("every copy of the shared source is as the source makes it (run `tsx scripts/editions.ts` after an edit)", () => {
    expect(PAIRS.streams).toBe("all")
    expect(check()).toEqual([])
  })

  it("a copy missing, edited by hand or stale is found, and written again from its source", () =>
    inTree({ "Shared.ts": "/** A module. */\nexport const x = 1\n" }, {}, (root) => {
      expect(check(root)).toEqual([
        "packages/effect4-streams/src/Shared.ts is missing: run `tsx scripts/editions.ts`",
        "packages/effect4-streams/.gitignore does not list the copies"
      ])
      generate(root)
      expect(check(root)).toEqual([])
      const copy = Path.join(root, "packages/effect4-streams/src/Shared.ts")
      expect(Fs.statSync(copy).mode & 0o222).toBe(0)
      expect(Fs.readFileSync(Path.join(root, "packages/effect4-streams/.gitignore"), "utf8")).toContain(
        "/src/Shared.ts\n"
      )
      Fs.chmodSync(copy, 0o644)
      Fs.appendFileSync(copy, "export const edited = 1\n")
      expect(check(root)).toEqual([
        "packages/effect4-streams/src/Shared.ts differs from its source (stale, or edited by hand): edit the file its " +
        "banner names"
      ])
      generate(root)
      expect(check(root)).toEqual([])
      // An edit of the source makes the copy stale until the copies are written again.
      Fs.appendFileSync(Path.join(root, "packages/streams/src/Shared.ts"), "export const y = 2\n")
      expect(check(root)).toHaveLength(1)
      generate(root)
      expect(Fs.readFileSync(copy, "utf8")).toContain("export const y = 2\n")
    }))

  it("a copy committed to git is found", () =>
    inTree({ "Shared.ts": "/** A module. */\nexport const x = 1\n" }, {}, (root) => {
      generate(root)
      execFileSync("git", ["init", "--quiet"], { cwd: root })
      execFileSync("git", ["add", "--force", "packages/effect4-streams/src/Shared.ts"], { cwd: root })
      expect(check(root)).toEqual([
        "packages/effect4-streams/src/Shared.ts is tracked by git: copies are not committed (git rm --cached " +
        "packages/effect4-streams/src/Shared.ts)"
      ])
    }))

  it("a file that is not shared says why in its first line, and its twin agrees", () =>
    inTree(
      {
        "Both.ts": "// Per edition: a reason.\n/** A. */\nexport const a = 3\n",
        "Three.ts": "// Effect 3 only: a reason.\n/** B. */\nexport const b = 3\n",
        "Lonely.ts": "// Per edition: a reason.\n/** C. */\nexport const c = 3\n",
        "internal/Marked.ts": "// Effect 3 only: a reason.\nexport const d = 3\n"
      },
      {
        "Both.ts": "/** A, unmarked. */\nexport const a = 4\n",
        "internal/Marked.ts": "// Effect 4 only: a reason.\nexport const d = 4\n",
        "Four.ts": "/** E, unmarked. */\nexport const e = 4\n",
        "Own.ts": "// Effect 4 only: a reason.\n/** F. */\nexport const f = 4\n"
      },
      (root) => {
        expect(check(root)).toEqual([
          "packages/streams/src/Both.ts is per edition, but packages/effect4-streams/src/Both.ts's first line does not " +
          "say \"// Per edition: …\"",
          "packages/streams/src/Lonely.ts is per edition, but packages/effect4-streams/src/Lonely.ts does not exist",
          "packages/streams/src/internal/Marked.ts is Effect 3 only, but packages/effect4-streams/src/internal/Marked.ts " +
          "exists",
          "packages/effect4-streams/src/Both.ts: its first line must say \"// Per edition: …\"",
          "packages/effect4-streams/src/Four.ts has no Effect 3 twin: its first line must say \"// Effect 4 only: …\"",
          "packages/effect4-streams/src/internal/Marked.ts: its first line must say \"// Per edition: …\"",
          "packages/effect4-streams/.gitignore does not list the copies"
        ])
        expect(() => generate(root)).toThrow(/is per edition/)
      }
    ))

  it("a copy names its source after the module's JSDoc, reads the Effect 4 packages, and renames in examples only", () => {
    const source = [
      "/**",
      " * A module.",
      " *",
      " * @since 0.1.0",
      " */",
      "import { ErpClient } from \"@erp-client/client/ErpClient\"",
      "import * as Pager from \"@erp-client/kernel/Pager\"",
      "import * as Either from \"effect/Either\"",
      "",
      "/**",
      " * @example",
      " * ```ts",
      " * import { Partners } from \"@erp-client/streams\"",
      " * import { Either } from \"effect\"",
      " * const ok = (result: Either.Either<number, string>) => Either.isRight(result) ? result.right : result.left",
      " * ```",
      " */",
      "export const isRight = Either.isRight",
      ""
    ].join("\n")
    const copy = copyOf(source, "packages/client/src/Some.ts").split("\n")
    expect(copy.slice(0, 6)).toEqual([
      "/**",
      " * A module.",
      " *",
      " * @since 0.1.0",
      " */",
      "// Generated from packages/client/src/Some.ts by scripts/editions.ts: edit that file."
    ])
    expect(copy).toContain("import { ErpClient } from \"@erp-client/effect4-client/ErpClient\"")
    expect(copy).toContain("import * as Pager from \"@erp-client/kernel/Pager\"")
    // Outside examples, nothing is renamed: source code imports the adapter instead.
    expect(copy).toContain("import * as Either from \"effect/Either\"")
    expect(copy).toContain("export const isRight = Either.isRight")
    expect(copy).toContain(" * import { Partners } from \"@erp-client/effect4-streams\"")
    expect(copy).toContain(" * import { Result } from \"effect\"")
    expect(copy).toContain(
      " * const ok = (result: Result.Result<number, string>) => Result.isSuccess(result) ? result.success : result.failure"
    )
  })

  it("a copy placed in the package another folds into reads that package's imports as its own modules", () => {
    expect(FOLDED.sandbox).toBe("testing")
    const source = [
      "/** A module. */",
      "import * as Sandbox from \"@erp-client/sandbox/Sandbox\"",
      "import type * as Core from \"@erp-client/sandbox/internal/core\"",
      "",
      "/**",
      " * @example",
      " * ```ts",
      " * import { Sandbox } from \"@erp-client/sandbox\"",
      " * ```",
      " */",
      "export class Tag extends Sandbox.Service(\"@erp-client/sandbox/Tag\") {}",
      ""
    ].join("\n")
    const copy = copyOf(source, "packages/testing/src/internal/watch.ts", {
      pkg: "testing",
      relative: "internal/watch.ts"
    }).split("\n")
    expect(copy).toContain("import * as Sandbox from \"../Sandbox.js\"")
    expect(copy).toContain("import type * as Core from \"./core.js\"")
    expect(copy).toContain(" * import { Sandbox } from \"@erp-client/effect4-testing\"")
    expect(copy).toContain("export class Tag extends Sandbox.Service(\"@erp-client/effect4-testing/Tag\") {}")
    // Placed elsewhere, the folded package is left as it is.
    expect(copyOf(source, "packages/client/src/Some.ts")).toContain("from \"@erp-client/sandbox/Sandbox\"")
  })
})
