import { afterAll, describe, expect, it } from "@effect/vitest"
import { Sandbox } from "@erp-client/sandbox"
import type { ListEndpoint, Paginate } from "@erp-client/streams"
import { Partners } from "@erp-client/streams"
import { Effect, Logger, Stream } from "effect"
import { audit } from "./audit.js"
import { testLayer } from "./harness.js"

// The same against the sandbox, through the real client: partners inserted and deleted at seeded random positions
// before every list answer. Figures are printed for the note: plain vs. safe, duplicates, skips, requests.
describe("an export while the sandbox's partners change", () => {
  const figures: Record<string, unknown> = {}
  afterAll(() => {
    console.log(`drift: ${JSON.stringify(figures)}`)
  })

  const exportOnce = (
    drift: { readonly inserts: number; readonly deletes: number },
    options: ListEndpoint.ListOptions
  ) =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      const initial = new Set(yield* sandbox.partnerIds)
      const events: Array<Paginate.DriftEvent> = []
      const safe = options.safe === undefined
        ? undefined
        : {
          ...(options.safe === true ? {} : options.safe),
          onDrift: (e: Paginate.DriftEvent) => Effect.sync(() => events.push(e))
        }
      // What an operator would see at the default level: the library logs each recovery at info.
      const logged: Array<string> = []
      const emitted = yield* Partners.stream({ ...options, safe }).pipe(
        Stream.map((partner) => partner.id as number),
        Stream.runCollect,
        Effect.map((ids) => Array.from(ids)),
        Effect.provide(Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => logged.push(String(message)))))
      )
      const stats = yield* sandbox.stats
      const found = audit(emitted, initial, yield* sandbox.partnerIds)
      return {
        ...found,
        emitted: emitted.length,
        requests: stats.byEndpoint["/partner/list"] ?? 0,
        changes: stats.inserted + stats.deleted,
        shifts: events.filter((e) => e._tag === "Shifted").length,
        recoveries: events.filter((e) => e._tag === "Recovered").length,
        recoveriesLogged: logged.filter((line) => line.includes("moved past the overlap")).length
      }
    }).pipe(
      Effect.provide(testLayer({ partners: 3000, rateLimit: false, drift: { ...drift, seed: 11 } }))
    )

  for (
    const [level, drift] of [
      ["none", { inserts: 0, deletes: 0 }],
      ["light", { inserts: 1, deletes: 1 }],
      ["heavy", { inserts: 6, deletes: 6 }],
      ["severe", { inserts: 10, deletes: 25 }]
    ] as const
  ) {
    it.live(
      `${level} change (${drift.inserts} insert, ${drift.deletes} delete per list request)`,
      () =>
        Effect.gen(function*() {
          const plain = yield* exportOnce(drift, { pageSize: 50, concurrency: 1 })
          const safe = yield* exportOnce(drift, { pageSize: 50, concurrency: 1, safe: { overlap: 5 } })
          const safeConcurrent = yield* exportOnce(drift, { pageSize: 50, concurrency: 4, safe: { overlap: 5 } })
          figures[level] = { plain, safe, safeConcurrent }
          // Plain paging loses records when the list moves under it, and repeats some unless deletes dominate
          // (seeded, so this is the same each run).
          if (level === "none") expect(plain).toMatchObject({ duplicates: 0, skipped: 0, emitted: 3000 })
          else expect(plain.skipped).toBeGreaterThan(0)
          if (level === "light" || level === "heavy") expect(plain.duplicates).toBeGreaterThan(0)
          for (const run of [safe, safeConcurrent]) {
            expect(run).toMatchObject({ duplicates: 0, skipped: 0, inOrder: true })
            if (level !== "none") expect(run.shifts).toBeGreaterThan(0)
            expect(run.recoveriesLogged).toBe(run.recoveries)
            // Past the overlap (5) between two requests, paging had to find its way back.
            if (level === "severe") expect(run.recoveries).toBeGreaterThan(0)
          }
          // The overlap's price: pages advance by 45 instead of 50 (about 11% more), plus any recoveries, and the
          // pages that find the end of a list that shrinks under the reader.
          expect(safe.requests).toBeLessThan(plain.requests * 1.5 + 2)
        }),
      60_000
    )
  }
})
