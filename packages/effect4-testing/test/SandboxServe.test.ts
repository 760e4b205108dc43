import { describe, expect, it } from "@effect/vitest"
import { ErpClient, ErpRateLimiter } from "@erp-client/effect4-client"
import { Partner } from "@erp-client/effect4-core"
import { Effect, Layer, Redacted } from "effect"
import { FetchHttpClient } from "effect/http"
import { Fault, Sandbox } from "../src/index.js"

// The Effect 4 kit serves its ERP on a loopback socket too (`Sandbox.layer`), as the Effect 3 sandbox does: an Effect 4
// application's own HttpClient, on the live clock, pages through it.

/** The Effect 4 `ErpClient` on `sandbox`, over fetch. */
const clientOn = (sandbox: Sandbox.Service) =>
  ErpClient.layer({ baseUrl: sandbox.baseUrl, apiKey: Redacted.make(sandbox.apiKey), retries: 2 }).pipe(
    Layer.provide(ErpRateLimiter.layer()),
    Layer.provide(FetchHttpClient.layer)
  )

describe("Sandbox.layer: the ERP on a loopback port", () => {
  it.live("listens on 127.0.0.1, on a port the OS picks, and an Effect 4 ErpClient pages partners through it", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      expect(sandbox.port).toBeGreaterThan(0)
      expect(sandbox.baseUrl).toBe(`http://127.0.0.1:${sandbox.port}`)
      const pages = yield* Effect.flatMap(ErpClient.ErpClient, (erp) =>
        Effect.forEach(
          [0, 100, 200],
          (offset) => erp.list("partner/list", Partner.Partner, { offset, count: 100 })
        )).pipe(Effect.provide(clientOn(sandbox)))
      const ids = pages.flatMap((page) => page.records.map((partner) => partner.id))
      expect(ids).toStrictEqual(Array.from({ length: 250 }, (_, i) => i + 1))
      expect((yield* sandbox.requests).map((entry) => [entry.endpoint, entry.status])).toStrictEqual([
        ["/partner/list", 200],
        ["/partner/list", 200],
        ["/partner/list", 200]
      ])
    }).pipe(Effect.provide(Sandbox.layer({ partners: 250, rateLimit: false, maxListCount: 100 }))))

  it.live("a connection cut before the response is retried by the client, as on any socket", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      yield* sandbox.inject(Fault.Fault.DropBeforeResponse())
      const partner = yield* Effect.flatMap(
        ErpClient.ErpClient,
        (erp) => erp.get("partner/get", Partner.Partner, { params: [["id", "7"]], selector: "id=7" })
      ).pipe(
        Effect.provide(clientOn(sandbox))
      )
      expect(partner.id).toBe(7)
      expect((yield* sandbox.requests).map((entry) => entry.fault ?? entry.status)).toStrictEqual([
        "DropBeforeResponse",
        200
      ])
      expect((yield* sandbox.stats).inFlight).toBe(0)
    }).pipe(Effect.provide(Sandbox.layer({ partners: 10, rateLimit: false }))))
})
