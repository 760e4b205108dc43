import * as NodeContext from "@effect/platform-node/NodeContext"
import { afterEach, describe, expect, it, vi } from "@effect/vitest"
import { Cli, CliTest } from "@erp-client/cli"
import { Sandbox } from "@erp-client/sandbox"
import * as Resource from "@erp-client/streams/Resource"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Products from "./fixtures/Products.js"
import { ROOT } from "./harness.js"

// docs/ARCHITECTURE.md, "Adding an endpoint, end to end", walked as a newcomer does: the declaration the page shows
// (this directory's fixtures/Products.ts, held equal to the page's snippet), one line in `Cli.resources`, `erp sandbox`
// serving it, and its commands run in this process.

const doc = Fs.readFileSync(Path.join(ROOT, "docs/ARCHITECTURE.md"), "utf8")
const FIXTURE = "packages/cli/test/fixtures/Products.ts"

/** The ```ts block right after the marker `<!-- walk: NAME -->` in the page. */
const snippet = (name: string): string => {
  const marker = `<!-- walk: ${name} -->`
  const at = doc.indexOf(marker)
  expect(at, marker).toBeGreaterThan(0)
  const match = /^\s*```ts\n([\s\S]*?)\n```/.exec(doc.slice(at + marker.length))
  expect(match, `a ts block after ${marker}`).not.toBeNull()
  return match![1]!
}

// The command line with the one line added: what `Cli.resources` holds once `Products.resource` is in it (as it
// may be already, when a reader walked the page in this repository).
const resources = [...Cli.resources.filter((resource) => resource.name !== "products"), Products.resource]

afterEach(() => {
  vi.restoreAllMocks()
})

describe("adding an endpoint, as docs/ARCHITECTURE.md walks it", () => {
  it("the page's declaration is this fixture, word for word; its one line is the line Cli.ts has for partners", () => {
    expect(snippet("declaration")).toBe(Fs.readFileSync(Path.join(ROOT, FIXTURE), "utf8").trimEnd())
    // The line the page has the reader change is Cli.ts's, whatever it holds by now.
    const declaration = "export const resources: ReadonlyArray<Resource.Any> = [Partners.resource"
    expect(Fs.readFileSync(Path.join(ROOT, "packages/cli/src/Cli.ts"), "utf8")).toContain(declaration)
    expect(snippet("one line")).toBe(`${declaration}, Products.resource]`)
  })

  it("the declaration's defaults: its fields from the schema, --id from its id field, no filters, no strict", () => {
    expect(Products.resource.fields).toStrictEqual(["id", "sku", "name", "price"])
    expect(Products.resource.selectors.map((selector) => [selector.flag, selector.description])).toStrictEqual([
      ["id", "A product's id."]
    ])
    expect(Products.resource.filters).toStrictEqual([])
    expect(Products.resource.strict).toBeUndefined()
  })

  it.live("erp sandbox serves the declared products; erp products list and get run against it in-process", () =>
    Effect.gen(function*() {
      // `erp sandbox --port 0` of the command line with products declared, its lines read as a user reads them.
      let said = ""
      const listening = yield* Deferred.make<void>()
      vi.spyOn(console, "log").mockImplementation((...args: Array<unknown>) => {
        said += `${args.join(" ")}\n`
        if (said.includes("ERP_API_KEY=")) Deferred.unsafeDone(listening, Effect.void)
      })
      const sandbox = yield* Effect.fork(
        Cli.main(["node", "erp", "sandbox", "--port", "0", "--partners", "5"], { resources }).pipe(
          Effect.provide(NodeContext.layer)
        )
      )
      yield* Deferred.await(listening).pipe(Effect.timeout("20 seconds"))
      expect(said).toContain("Also serving product/list, product/get")
      const erp = {
        baseUrl: /ERP_BASE_URL=(\S+)/.exec(said)![1]!,
        apiKey: /ERP_API_KEY=(\S+)/.exec(said)![1]!
      }
      const sample = Products.resource.sample!

      const list = yield* CliTest.run(["products", "list", "--page-size", "30"], { resources, erp })
      expect(list.stderr).toBe("")
      expect(list.code).toBe(0)
      const listed = list.stdout.trim().split("\n").map((line) => JSON.parse(line))
      expect(listed).toHaveLength(100)
      expect(listed).toStrictEqual(Array.from({ length: 100 }, (_, index) => sample(index)))

      const get = yield* CliTest.run(["products", "get", "--id", "42"], { resources, erp })
      expect(get).toStrictEqual({ code: 0, stdout: `${JSON.stringify(sample(41))}\n`, stderr: "" })

      const missing = yield* CliTest.run(["products", "get", "--id", "101"], { resources, erp })
      expect(missing.code).toBe(4)
      expect(missing.stderr).toContain("product/get: not found (id=101)")

      const table = yield* CliTest.run(["products", "list", "--format", "table", "--where", "id=3"], {
        resources,
        erp
      })
      expect(table.stdout.split("\n").slice(0, 3)).toStrictEqual([
        "id      sku       name          price",
        "------  --------  ------------  --------",
        "3       P-1002    Product 3     5.5"
      ])
      yield* Fiber.interrupt(sandbox)
    }))

  it.effect("CliTest.run against the in-memory sandbox, serving the declaration as erp sandbox does", () =>
    Effect.gen(function*() {
      const { httpClient, sandbox } = yield* Sandbox.makeHttpClient({ resources: CliTest.served(resources) })
      const got = yield* CliTest.run(["products", "get", "--id", "7", "--id", "3"], {
        resources,
        erp: sandbox,
        httpClient
      })
      expect(got.code).toBe(0)
      expect(got.stdout.trim().split("\n").map((line) => JSON.parse(line))).toStrictEqual(
        [7, 3].map((id) => Products.resource.sample!(id - 1))
      )
      expect((yield* sandbox.stats).byEndpoint).toStrictEqual({ "/product/get": 2 })
      // Partners are the sandbox's own: served as ever, the shipped command line's commands untouched.
      const partner = yield* CliTest.run(["partners", "get", "--id", "2"], { erp: sandbox, httpClient })
      expect(JSON.parse(partner.stdout).id).toBe(2)
    }).pipe(Effect.scoped))

  it("help: products in erp --help; no --strict for products, which have no strict schema; partners keep it", async () => {
    const root = await Effect.runPromise(CliTest.run(["--help"], { resources }))
    expect(root.stdout).toContain("products")
    expect(root.stdout).toContain("Export and look up products")
    for (const command of ["list", "get"]) {
      const page = await Effect.runPromise(CliTest.run(["products", command, "--help"], { resources }))
      expect(page.code).toBe(0)
      expect(page.stdout).toContain(`erp products ${command}`)
      expect(page.stdout).not.toContain("--strict")
    }
    const get = await Effect.runPromise(CliTest.run(["products", "get", "--help"], { resources }))
    expect(get.stdout).toContain("--id N")
    expect(get.stdout).toContain("A product's id.")
    expect(Cli.helpPage(["partners", "get", "--help"], { color: false })).toContain("--strict")
    // A declaration's texts in lower case are shown in sentence case, as every description is.
    const lower = [
      Resource.make({
        ...Products.resource,
        description: "export and look up products",
        selectors: [{ ...Products.resource.selectors[0]!, description: "a product's id." }]
      })
    ]
    const lowerRoot = await Effect.runPromise(CliTest.run(["--help"], { resources: lower }))
    expect(lowerRoot.stdout).toMatch(/\n {2}erp products +Export and look up products\n/)
    const lowerGet = await Effect.runPromise(CliTest.run(["products", "get", "--help"], { resources: lower }))
    expect(lowerGet.stdout).toContain("\n  --id N...\n      A product's id. Repeatable.\n")
    // A flag the command does not have is a usage error (2), not a crash.
    const strict = await Effect.runPromise(CliTest.run(["products", "list", "--strict"], { resources }))
    expect(strict.code).toBe(2)
  })
})
