import * as effectEslint from "@effect/eslint-plugin"
import js from "@eslint/js"
import * as Fs from "node:fs"
import tseslint from "typescript-eslint"

// The Effect 4 edition's copies of the shared source (scripts/editions.ts, listed in each package's .gitignore): the
// file each copy is made from is the one linted.
const copies = Fs.readdirSync("packages").filter((dir) => dir.startsWith("effect4-")).flatMap((dir) => {
  const gitignore = `packages/${dir}/.gitignore`
  return Fs.existsSync(gitignore)
    ? Fs.readFileSync(gitignore, "utf8").split("\n").filter((line) => line.startsWith("/src/")).map((line) =>
      `packages/${dir}${line}`
    )
    : []
})

export default tseslint.config(
  { ignores: ["**/dist/**", "**/build/**", "**/node_modules/**", "bench/results/**", "**/*.d.ts", ...copies] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  ...effectEslint.configs.dprint,
  {
    rules: {
      "no-fallthrough": "off",
      "no-irregular-whitespace": "off",
      "object-shorthand": "error",
      "prefer-destructuring": "off",
      "no-unused-vars": "off",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-namespace": "off",
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/array-type": ["error", { default: "generic", readonly: "generic" }],
      "@effect/no-import-from-barrel-package": ["error", {
        packageNames: ["effect", "@effect/platform", "@effect/experimental"]
      }],
      "@effect/dprint": [
        "error",
        {
          config: {
            indentWidth: 2,
            lineWidth: 120,
            semiColons: "asi",
            quoteStyle: "alwaysDouble",
            trailingCommas: "never",
            operatorPosition: "maintain",
            "arrowFunction.useParentheses": "force"
          }
        }
      ]
    }
  },
  {
    // Tests, scripts and the examples (written as an application writes them) may import barrels; library source
    // imports modules (docs/ARCHITECTURE.md, "Which file holds what").
    files: ["**/test/**/*.ts", "scripts/**/*.ts", "examples/**/*.ts", "vitest.config.ts"],
    rules: { "@effect/no-import-from-barrel-package": "off" }
  }
)
