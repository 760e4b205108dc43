/**
 * The sandbox as a long-running program: serve, print where and with which key, run until interrupted.
 *
 * @since 0.1.0
 */
import type * as HttpServerError from "@effect/platform/HttpServerError"
import * as ErpRules from "@erp-client/fake-erp/ErpRules"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import type * as Fault from "./Fault.js"
import * as Sandbox from "./Sandbox.js"
import type * as Seed from "./Seed.js"

/**
 * Serves the sandbox, prints its address and key on stdout, and runs until interrupted. What it saw (requests by
 * endpoint and status, refused keys, 429s, faults served, the most requests of one key in any window:
 * `ErpRules.describeStats`) is printed when it stops, on SIGUSR1 while it runs, and answered as JSON at
 * `GET /_sandbox/stats`.
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
    Layer.scopedDiscard(
      Effect.gen(function*() {
        const sandbox = yield* Sandbox.Sandbox
        yield* Console.log(
          [
            `ERP sandbox listening on ${sandbox.baseUrl} (${sandbox.partnerCount} partners, seed ${sandbox.seed}, ${
              sandbox.rateLimit === false
                ? "no rate limit"
                : `${sandbox.rateLimit.limit} requests per ${sandbox.rateLimit.windowMillis / 1000} s`
            })`,
            ...(options.resources === undefined || options.resources.length === 0 ? [] : [
              `Also serving ${
                options.resources.map((resource) => [resource.list, resource.get].filter(Boolean).join(", ")).join(
                  "; "
                )
              }`
            ]),
            `export ERP_BASE_URL=${sandbox.baseUrl}`,
            `export ERP_API_KEY=${sandbox.apiKey}`,
            `What it saw: kill -USR1 ${process.pid}, or GET ${sandbox.baseUrl}/_sandbox/stats. Press Ctrl+C to stop.`
          ].join("\n")
        )
        const report = (when: string) =>
          Effect.flatMap(sandbox.stats, (stats) =>
            Console.log(
              [`sandbox ${when}:`, ...ErpRules.describeStats(stats, sandbox.rateLimit).map((line) => `  ${line}`)]
                .join("\n")
            ))
        // Printed however the program ends (Ctrl-C, SIGTERM, an error), after the server stopped taking requests.
        yield* Effect.addFinalizer(() => report("stopped"))
        const onSignal = () => Effect.runFork(report("so far"))
        yield* Effect.acquireRelease(
          Effect.sync(() => process.on("SIGUSR1", onSignal)),
          () => Effect.sync(() => process.off("SIGUSR1", onSignal))
        )
      })
    ).pipe(Layer.provide(Sandbox.layer(options)))
  )

/**
 * A sandbox started on a loopback port, driven with promises: for tests outside this edition's Effect (an
 * application on Effect 4, a test of plain `fetch` code), which cannot run its `Effect`s themselves. `close` stops it.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Started {
  readonly baseUrl: string
  readonly apiKey: string
  readonly stats: () => Promise<Sandbox.Stats>
  readonly requests: () => Promise<ReadonlyArray<Sandbox.RequestLogEntry>>
  readonly inject: (fault: Fault.Fault, options?: Sandbox.InjectOptions) => Promise<void>
  readonly visiblePartners: () => Promise<ReadonlyArray<Seed.ServedRecord>>
  readonly resetStats: () => Promise<void>
  readonly close: () => Promise<void>
}

/**
 * Starts a sandbox (`Sandbox.layer(options)`, on a port the OS picks unless `options.port` says) and hands it back
 * driven with promises (see `Started`).
 *
 * @example
 * ```ts
 * import { Fault, Serve } from "@erp-client/sandbox"
 *
 * // A real ERP on loopback for a test in any framework: one 503, then the normal answers
 * const sandbox = await Serve.start({ partners: 20 })
 * await sandbox.inject(Fault.Fault.Status({ status: 503 }), { times: 1 })
 * const response = await fetch(`${sandbox.baseUrl}/partner/get?id=3`, { headers: { "X-API-KEY": sandbox.apiKey } })
 * console.log(response.status) // => 503
 * await sandbox.close()
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const start = async (options: Sandbox.Options = {}): Promise<Started> => {
  const runtime = ManagedRuntime.make(Layer.orDie(Sandbox.layer(options)))
  const sandbox = await runtime.runPromise(Sandbox.Sandbox)
  return {
    baseUrl: sandbox.baseUrl,
    apiKey: sandbox.apiKey,
    stats: () => runtime.runPromise(sandbox.stats),
    requests: () => runtime.runPromise(sandbox.requests),
    inject: (fault, injectOptions) => runtime.runPromise(sandbox.inject(fault, injectOptions)),
    visiblePartners: () => runtime.runPromise(sandbox.visiblePartners),
    resetStats: () => runtime.runPromise(sandbox.resetStats),
    close: () => runtime.dispose()
  }
}
