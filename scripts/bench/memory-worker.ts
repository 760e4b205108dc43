/**
 * A client process for the memory benchmark: streams every partner to a sink that only counts, then prints its peak
 * RSS. Run as a child so the sandbox's memory is not counted. It imports modules, not barrels, as an application
 * would: a barrel loads every module of a package.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as ErpClient from "@erp-client/client/ErpClient"
import * as ErpRateLimiter from "@erp-client/client/ErpRateLimiter"
import * as Partners from "@erp-client/streams/Partners"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"

const [baseUrl, apiKey, pageSize, concurrency] = process.argv.slice(2)

const client = ErpClient.layer({ baseUrl: baseUrl!, apiKey: Redacted.make(apiKey!) }).pipe(
  Layer.provide(ErpRateLimiter.layer({ limit: 1_000_000 })),
  Layer.provide(NodeHttpClient.layerUndici)
)

const start = performance.now()
Effect.runPromise(
  Partners.stream({ pageSize: Number(pageSize), concurrency: Number(concurrency) }).pipe(
    Stream.runFold(0, (n) => n + 1),
    Effect.provide(client)
  )
).then((records) => {
  const usage = process.resourceUsage()
  // With --expose-gc: what is still live once the garbage is collected, to tell retention from lazy collection.
  const gc = (globalThis as { gc?: () => void }).gc
  gc?.()
  process.stdout.write(
    JSON.stringify({
      records,
      peakRssBytes: usage.maxRSS * 1024,
      heapUsedAfterGcBytes: gc === undefined ? undefined : process.memoryUsage().heapUsed,
      millis: performance.now() - start
    }) + "\n"
  )
  process.exit(0)
}, (error) => {
  process.stderr.write(`memory worker failed: ${String(error)}\n`)
  process.exit(1)
})
