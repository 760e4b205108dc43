import { describe, expect, it } from "@effect/vitest"
import { Fault, Sandbox } from "@erp-client/sandbox"
import { Partners } from "@erp-client/streams"
import { Effect, Stream } from "effect"
import { testLayer } from "./harness.js"

// Bodies cut mid-stream on the Effect 3 edition's sandbox, on a real socket (Misbehaving.test.ts runs the rest, on
// both editions' in-memory ERP).

const noLimit = { rateLimit: false } as const
const ids = (records: ReadonlyArray<{ readonly id: unknown }>) => records.map((record) => Number(record.id))
const served = () => Effect.map(Effect.flatMap(Sandbox.Sandbox, (sandbox) => sandbox.visiblePartners), ids)

const modes = [
  { name: "plain", safe: undefined },
  { name: "drift-safe", safe: true as const }
] as const

describe("outages and broken bodies, on a socket", () => {
  for (const mode of modes) {
    it.live(`${mode.name}, on a real socket: bodies cut mid-stream on a filtering server are retried, each record once`, () =>
      Effect.gen(function*() {
        const sandbox = yield* Sandbox.Sandbox
        const list = { endpoint: "/partner/list" }
        // The connection closed after part of the body was sent, twice in a row, then a page that is not JSON.
        yield* sandbox.inject(Fault.Fault.DropMidBody({ fraction: 0.5 }), { ...list, times: 2, after: 1 })
        yield* sandbox.inject(Fault.Fault.MalformedJson(), { ...list, after: 3 })
        const got = yield* Stream.runCollect(Partners.stream({ pageSize: 50, concurrency: 2, safe: mode.safe }))
        expect(ids(Array.from(got))).toEqual(yield* served())
        const faults = (yield* sandbox.requests).flatMap((entry) => entry.fault === undefined ? [] : [entry.fault])
        expect(faults.sort()).toEqual(["DropMidBody", "DropMidBody", "MalformedJson"])
      }).pipe(Effect.provide(testLayer({ partners: 300, hidden: { rate: 0.05, seed: 5 }, ...noLimit }))))
  }
})
