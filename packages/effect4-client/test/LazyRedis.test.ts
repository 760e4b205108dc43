import { describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import * as Path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

// `redis` is an optional peer dependency: a program that imports the package's index (which re-exports
// ErpRateLimiterRedis) but keeps its limit in memory never loads it. Told in a fresh process, by the modules it loaded.
const PACKAGE = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")
const TSX = Path.resolve(PACKAGE, "../../node_modules/tsx/dist/esm/index.mjs")

const SCRIPT = `
import { registerHooks } from "node:module"
const loaded = new Set()
registerHooks({
  resolve(specifier, context, next) {
    const result = next(specifier, context)
    if (/\\/node_modules\\/(@redis|redis)\\//.test(result.url)) loaded.add(result.url)
    return result
  }
})
const { ErpClient, ErpRateLimiter, ErpRateLimiterRedis } = await import(process.env.CLIENT_INDEX)
const { Effect, Layer, Redacted } = await import("effect")
const NodeHttpClient = await import("@effect/platform-node/NodeHttpClient")
const result = { afterImport: loaded.size }
const client = ErpClient.layer({ baseUrl: "http://127.0.0.1:1", apiKey: Redacted.make("k"), retries: 0 }).pipe(
  Layer.provide(ErpRateLimiter.layer()),
  Layer.provide(NodeHttpClient.layerUndici)
)
await Effect.runPromise(Effect.scoped(Layer.build(client)))
result.afterMemoryClient = loaded.size
if (process.env.CONNECT === "1") {
  const redis = ErpRateLimiterRedis.layer({ url: "redis://127.0.0.1:1", timeout: "200 millis" })
  await Effect.runPromise(Effect.scoped(Effect.flatMap(Layer.build(redis), (context) => Effect.void)))
  result.afterRedisLimiter = loaded.size
}
process.stdout.write(JSON.stringify(result))
`

const run = (connect: boolean) =>
  JSON.parse(
    execFileSync(process.execPath, ["--import", pathToFileURL(TSX).href, "--input-type=module", "-e", SCRIPT], {
      cwd: PACKAGE,
      env: {
        ...process.env,
        CLIENT_INDEX: pathToFileURL(Path.join(PACKAGE, "src/index.ts")).href,
        CONNECT: connect ? "1" : "0"
      },
      encoding: "utf8",
      timeout: 30_000
    })
  )

describe("redis is loaded only when the Redis limiter is used", () => {
  it("importing the index and running a memory-only client does not load it", () => {
    expect(run(false)).toEqual({ afterImport: 0, afterMemoryClient: 0 })
  })

  it("building the Redis limiter loads it", () => {
    const result = run(true)
    expect(result.afterMemoryClient).toBe(0)
    expect(result.afterRedisLimiter).toBeGreaterThan(0)
  })
})
