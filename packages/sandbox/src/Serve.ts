/**
 * The sandbox as a long-running program: serve, print where and with which key, run until interrupted.
 *
 * @since 0.1.0
 */
import type * as HttpServerError from "@effect/platform/HttpServerError"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Sandbox from "./Sandbox.js"

/**
 * Serves the sandbox, prints its address and key on stdout, and runs until interrupted.
 *
 * @example
 * ```ts
 * import { Serve } from "@erp-client/sandbox"
 *
 * // A sandbox for a demo on port 8080 with 5,000 partners; run it with `NodeRuntime.runMain(demo)`
 * const demo = Serve.serve({ port: 8080, partners: 5000 })
 * ```
 *
 * @since 0.1.0
 * @category Programs
 */
export const serve = (options: Sandbox.Options): Effect.Effect<never, HttpServerError.ServeError> =>
  Layer.launch(
    Layer.effectDiscard(
      Effect.flatMap(Sandbox.Sandbox, (sandbox) =>
        Console.log(
          [
            `ERP sandbox listening on ${sandbox.baseUrl} (${sandbox.partnerCount} partners, seed ${sandbox.seed}, ${
              sandbox.rateLimit === false
                ? "no rate limit"
                : `${sandbox.rateLimit.limit} requests per ${sandbox.rateLimit.windowMillis / 1000} s`
            })`,
            `export ERP_BASE_URL=${sandbox.baseUrl}`,
            `export ERP_API_KEY=${sandbox.apiKey}`,
            "Press Ctrl+C to stop."
          ].join("\n")
        ))
    ).pipe(Layer.provide(Sandbox.layer(options)))
  )
