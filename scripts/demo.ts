/**
 * The demo: starts the sandbox in this process, streams every customer through the library with concurrency, and
 * prints a short summary. Run with `pnpm demo`.
 */
import { NodeHttpClient, NodeRuntime } from "@effect/platform-node"
import { ErpClient, ErpRateLimiter } from "@erp-client/client"
import { Sandbox } from "@erp-client/sandbox"
import { Partners } from "@erp-client/streams"
import { Clock, Console, Effect, Layer, Metric, Redacted, Stream } from "effect"

// The sandbox's window is scaled down from 100 per 30 s so the limiter visibly works within a few seconds.
const LIMIT = 20
const WINDOW = "1 second"
const PARTNERS = 5_000
const PAGE_SIZE = 50
const CONCURRENCY = 8

const program = Effect.gen(function*() {
  const sandbox = yield* Sandbox.Sandbox
  yield* Console.log(`sandbox: ${sandbox.baseUrl} with ${sandbox.partnerCount} partners, limit ${LIMIT} per ${WINDOW}`)
  const start = yield* Clock.currentTimeMillis
  let records = 0
  let pages = 0
  let first: unknown = undefined
  yield* Partners.pages({ where: { is_customer: 1 }, pageSize: PAGE_SIZE, concurrency: CONCURRENCY }).pipe(
    Stream.runForEach((page) =>
      Effect.sync(() => {
        pages++
        records += page.records.length
        first ??= page.records[0]
      })
    )
  )
  const elapsed = (yield* Clock.currentTimeMillis) - start
  const waits = yield* Metric.value(ErpRateLimiter.waits)
  const spaced = yield* Metric.value(ErpRateLimiter.spacingWaitMillis)
  const paused = yield* Metric.value(ErpRateLimiter.pauseWaitMillis)
  const tooMany = yield* Metric.value(ErpClient.tooManyRequests)
  const stats = yield* sandbox.stats
  yield* Console.log(`first customer: ${JSON.stringify(first)}`)
  yield* Console.log(
    [
      `customers: ${records} in ${pages} pages of ${PAGE_SIZE}, concurrency ${CONCURRENCY}`,
      `time: ${(elapsed / 1000).toFixed(2)} s (${Math.round(records / (elapsed / 1000))} records/s)`,
      `rate-limit waits: ${waits.count} requests waited, ${
        Math.round(Number(spaced.count))
      } ms for the client's limit, ${Math.round(Number(paused.count))} ms for server pauses`,
      `server: ${
        stats.byEndpoint["/partner/list"] ?? 0
      } list requests, ${stats.tooManyRequests} answered 429 (client saw ${tooMany.count}), at most ${
        stats.maxObservedInWindow["/partner/list"] ?? 0
      } in any ${WINDOW} window`
    ].join("\n")
  )
})

const SandboxLive = Sandbox.layer({
  partners: PARTNERS,
  rateLimit: { limit: LIMIT, window: WINDOW, resetUnit: "epoch-millis" },
  latency: { base: "15 millis", jitter: "10 millis" }
})

const ClientLive = Layer.unwrapEffect(
  Effect.map(Sandbox.Sandbox, (sandbox) =>
    ErpClient.layer({
      baseUrl: sandbox.baseUrl,
      apiKey: Redacted.make(sandbox.apiKey),
      rateLimit: LIMIT,
      rateWindow: WINDOW
    }))
).pipe(Layer.provide(NodeHttpClient.layerUndici))

program.pipe(
  Effect.provide(ClientLive.pipe(Layer.provideMerge(SandboxLive))),
  NodeRuntime.runMain
)
