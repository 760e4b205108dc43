import { NodeHttpClient } from "@effect/platform-node"
import { ErpClient, ErpRateLimiter } from "@erp-client/effect4-client"
import type { ErpConfig } from "@erp-client/effect4-client"
import { Serve } from "@erp-client/sandbox"
import type { Sandbox } from "@erp-client/sandbox"
import { Effect, Layer, Redacted } from "effect"

// The Effect 3 edition's sandbox on a loopback port, driven with promises, and this edition's client on it through
// undici: what a user runs.

/** A sandbox started for the scope of the test, closed with it. */
export const sandbox = (options: Sandbox.Options) =>
  Effect.acquireRelease(
    Effect.promise(() => Serve.start(options)),
    (started) => Effect.promise(() => started.close())
  )

/** The client on `started`: no limit of its own unless asked, quick retries. */
export const clientOn = (
  started: Serve.Started,
  options: Partial<ErpConfig.Options> & { readonly limiter?: ErpRateLimiter.Options } = {}
) => {
  const { limiter, ...settings } = options
  return ErpClient.layer({
    baseUrl: started.baseUrl,
    apiKey: Redacted.make(started.apiKey),
    retryBaseDelay: "20 millis",
    ...settings
  }).pipe(
    Layer.provide(ErpRateLimiter.layer(limiter ?? { limit: 1_000_000, window: "1 second" })),
    Layer.provide(NodeHttpClient.layerUndici)
  )
}

/** The list requests the sandbox saw, in the order they arrived, as `offset+count`. */
export const listed = (started: Serve.Started) =>
  Effect.map(
    Effect.promise(() => started.requests()),
    (log) =>
      log.filter((entry) => entry.endpoint === "/partner/list").map((entry) => {
        const query = new Map(entry.query)
        return `${query.get("list_offset")}+${query.get("list_count")}`
      })
  )
