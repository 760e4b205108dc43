import { NodeHttpClient } from "@effect/platform-node"
import { ErpClient, ErpRateLimiter } from "@erp-client/client"
import type { ErpConfig } from "@erp-client/client"
import { Sandbox } from "@erp-client/sandbox"
import { Effect, Layer, Redacted } from "effect"

/** A key that must never show up in any output. */
export const SECRET_KEY = "sk-live-DO-NOT-LEAK-7f3a9c2e51"

/**
 * A real sandbox on a loopback port (OS-picked) and a client pointed at it through undici: what a user runs.
 */
export const testLayer = (
  sandbox: Sandbox.Options = {},
  client: Partial<ErpConfig.Options> & { readonly limiter?: ErpRateLimiter.Options } = {},
  /** Built after the sandbox, released after the client and before the sandbox: a probe of what the client left. */
  between: Layer.Layer<never> = Layer.empty
) =>
  Layer.unwrapEffect(
    Effect.map(Sandbox.Sandbox, (s) => {
      const { limiter, ...options } = client
      return ErpClient.layer({
        baseUrl: s.baseUrl,
        apiKey: Redacted.make(s.apiKey),
        retryBaseDelay: "20 millis",
        ...options
      }).pipe(Layer.provide(ErpRateLimiter.layer(limiter)), Layer.provide(NodeHttpClient.layerUndici))
    })
  ).pipe(Layer.provideMerge(Layer.provideMerge(between, Sandbox.layer({ apiKeys: [SECRET_KEY], ...sandbox }))))

/** Every partner the sandbox holds, in offset order, as it serves them. */
export const seeded = (sandbox: Sandbox.Service, where?: (p: Record<string, unknown>) => boolean) => {
  const out: Array<Record<string, unknown>> = []
  for (let i = 0; i < sandbox.partnerCount; i++) {
    const p = sandbox.partnerAt(i) as unknown as Record<string, unknown>
    if (where === undefined || where(p)) out.push(p)
  }
  return out
}
