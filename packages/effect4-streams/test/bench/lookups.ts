/**
 * CPU per lookup through the place lookups meet (not a test: run it, `npx tsx test/bench/lookups.ts [N]` on Node 24):
 * Effect 4's `Cache` as `src/internal/lookups.ts` uses it, the Effect 3 edition's hand-written map ported to Effect 4,
 * `Effect.request` with a resolver of one request each, and the request alone. N lookups of distinct values (default
 * 100,000), 64 side by side as `getMany` runs them, each "request" answered after one turn of the scheduler, as an I/O
 * would be; five rounds, the first left out, the median printed. The figures are quoted in `src/internal/lookups.ts`.
 */
import type { ErpClient } from "@erp-client/effect4-client"
import { Deferred, Effect, Exit, Fiber, Request, RequestResolver, Schema } from "effect"
import * as Lookups from "../../src/internal/lookups.js"

const N = Number(process.argv[2] ?? 100_000)
const ROUNDS = 5

const request = (value: string) => Effect.as(Effect.yieldNow, value)

// A client whose `get` is the request above.
const client = {
  get: (_endpoint: string, _schema: unknown, options: { readonly params: ReadonlyArray<readonly [string, string]> }) =>
    request(options.params[0]![1])
} as unknown as ErpClient.Service

// The Effect 3 edition's map of answers on their way (packages/streams/src/internal/lookups.ts), ported.
interface Entry {
  readonly answer: Deferred.Deferred<string>
  waiting: number
  request: Fiber.Fiber<unknown> | undefined
  done: boolean
}
const entries = new Map<string, Entry>()
const wait = (
  key: string,
  entry: Entry,
  restore: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
) =>
  Effect.suspend(() => {
    entry.waiting += 1
    return restore(Deferred.await(entry.answer)).pipe(Effect.onExit((exit) => {
      entry.waiting -= 1
      if (!Exit.hasInterrupts(exit) || entry.waiting > 0 || entry.done) return Effect.void
      entries.delete(key)
      return entry.request === undefined ? Effect.void : Fiber.interrupt(entry.request)
    }))
  })
const handWritten = (key: string) =>
  Effect.suspend(() => {
    const found = entries.get(key)
    if (found !== undefined) return Effect.uninterruptibleMask((restore) => wait(key, found, restore))
    const entry: Entry = { answer: Deferred.makeUnsafe(), waiting: 0, request: undefined, done: false }
    entries.set(key, entry)
    const send = Effect.interruptible(request(key)).pipe(
      Effect.exit,
      Effect.flatMap((exit) => {
        entry.done = true
        entries.delete(key)
        return Deferred.done(entry.answer, exit)
      })
    )
    return Effect.uninterruptibleMask((restore) =>
      Effect.andThen(
        Effect.map(Effect.forkDetach(send), (fiber) => {
          entry.request = fiber
        }),
        wait(key, entry, restore)
      )
    )
  })

class Get extends Request.Class<{ readonly key: string }, string> {}
const resolver = RequestResolver.fromEffect<Get>((entry) => request(entry.request.key))

const variants: ReadonlyArray<readonly [string, (i: number) => Effect.Effect<unknown, unknown>]> = [
  ["the request alone", (i) => request(`v${i}`)],
  [
    "Effect 4's Cache (src/internal/lookups.ts)",
    (i) =>
      Lookups.run(
        Lookups.make({
          client,
          endpoint: "partner/get",
          schema: Schema.Unknown,
          param: "id",
          value: i,
          selector: `id=${i}`
        })
      )
  ],
  ["the Effect 3 edition's map, ported", (i) => handWritten(`v${i}`)],
  ["Effect.request, a resolver of one request each", (i) => Effect.request(new Get({ key: `v${i}` }), resolver)]
]

const measure = (lookup: (i: number) => Effect.Effect<unknown, unknown>) =>
  Effect.gen(function*() {
    const cpu = process.cpuUsage()
    yield* Effect.forEach(Array.from({ length: N }, (_, i) => i), lookup, { concurrency: 64, discard: true })
    const used = process.cpuUsage(cpu)
    return (used.user + used.system) / N
  })

const main = Effect.gen(function*() {
  const results = new Map<string, Array<number>>()
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, lookup] of variants) {
      const micros = yield* measure(lookup)
      if (round > 0) results.set(name, [...results.get(name) ?? [], micros])
    }
  }
  for (const [name, values] of results) {
    const sorted = [...values].sort((a, b) => a - b)
    console.log(
      `${name}: ${sorted[Math.floor(sorted.length / 2)]!.toFixed(1)} us CPU per lookup (${
        values.map((v) => v.toFixed(1)).join(", ")
      })`
    )
  }
})

Effect.runPromise(main)
