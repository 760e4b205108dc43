/**
 * A client process for the memory benchmark: streams every partner to a sink that only counts, then prints its peak
 * RSS. Run as a child so the sandbox's memory is not counted.
 */
import { NodeHttpClient } from "@effect/platform-node"
import { ErpClient } from "@erp-client/client"
import { Partners } from "@erp-client/streams"
import { Effect, Layer, Redacted, Stream } from "effect"

const [baseUrl, apiKey, pageSize, concurrency] = process.argv.slice(2)

const client = ErpClient.layer({
  baseUrl: baseUrl!,
  apiKey: Redacted.make(apiKey!),
  rateLimit: 1_000_000
}).pipe(Layer.provide(NodeHttpClient.layerUndici))

const start = performance.now()
Effect.runPromise(
  Partners.stream({ pageSize: Number(pageSize), concurrency: Number(concurrency) }).pipe(
    Stream.runFold(0, (n) => n + 1),
    Effect.provide(client)
  )
).then((records) => {
  const usage = process.resourceUsage()
  process.stdout.write(
    JSON.stringify({ records, peakRssBytes: usage.maxRSS * 1024, millis: performance.now() - start }) + "\n"
  )
  process.exit(0)
}, (error) => {
  process.stderr.write(`memory worker failed: ${String(error)}\n`)
  process.exit(1)
})
