/**
 * `erp sandbox`: the built-in ERP server, for trying the command line and the client without an account. Its flags,
 * by concern, are in `sandbox/`: where it listens and which keys it takes (`listen.ts`), its records (`records.ts`),
 * its rate limit (`rateLimit.ts`), its pages (`pages.ts`), what goes wrong (`faults.ts`) and what it answers where the
 * contract is silent (`answers.ts`); `check.ts` checks them and `options.ts` makes them the server's options.
 */
import * as Command from "@effect/cli/Command"
import * as Effect from "effect/Effect"
import { Declared } from "./common.js"
import { check } from "./sandbox/check.js"
import { flags } from "./sandbox/flags.js"
import { listenFailure, SandboxListenError } from "./sandbox/listen.js"
import { sandboxOptions } from "./sandbox/options.js"
import { sandboxResources } from "./sandboxResources.js"

export { SandboxListenError } from "./sandbox/listen.js"
export { oddKindNames } from "./sandbox/records.js"

export const sandbox = Command.make(
  "sandbox",
  flags,
  (parsed) =>
    Effect.gen(function*() {
      const checked = yield* check(parsed)
      // The sandbox is loaded only when `erp sandbox` runs, so the commands that talk to the ERP never load the server.
      const [Fault, Serve, SandboxModule, Seed] = yield* Effect.promise(() =>
        Promise.all([
          import("@erp-client/sandbox/Fault"),
          import("@erp-client/sandbox/Serve"),
          import("@erp-client/sandbox/Sandbox"),
          import("@erp-client/fake-erp/Seed")
        ])
      )
      // The command line's declared resources the sandbox has no records of its own for, from their samples.
      const resources = sandboxResources(yield* Declared, SandboxModule.endpoints)
      const options = sandboxOptions(Fault, Seed, parsed, checked)
      const served = [...(options.resources ?? []), ...resources]
      return yield* Serve.serve(served.length > 0 ? { ...options, resources: served } : options).pipe(
        Effect.catchTag("ServeError", (error) =>
          new SandboxListenError({
            host: parsed.listen.host,
            port: parsed.listen.port,
            code: listenFailure(error.cause)
          }))
      )
    })
).pipe(Command.withDescription(
  "Run the built-in ERP sandbox server: seeded partners, the contract's envelope, auth and rate limit, faults on " +
    "demand, and where the contract is silent, the ways real servers differ (odd records, hidden records, clamped " +
    "or changing pages, outages, skewed resets). It prints its base URL and key."
))
