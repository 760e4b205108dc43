/**
 * The Effect 4 half of `pnpm bench cost` (scripts/bench/cost.ts runs it in a process of its own on Node >= 22.19, against
 * the same sandbox as the Effect 3 half, in the same run): every partner read with the Effect 4 edition
 * (`Partners.stream`) and with a hand-written Effect 4 pipeline (effect/http's `HttpClient` with the key, the envelope
 * and its partners decoded with `Schema.fromJsonString`, `Stream.mapEffect` at the same concurrency, ending at the first
 * short page), or single lookups by id the two ways (`Partners.get`; `client.get` and the same decoding). Prints one
 * line of JSON: each way's median CPU (this process's user + system while the pages or lookups run, set-up excluded)
 * and wall time over REPS runs, after one warm-up each.
 *
 * `npx tsx bench/cost.ts BASE_URL API_KEY pages|lookups CONCURRENCY COUNT PAGE REPS`
 */
import { NodeHttpClient } from "@effect/platform-node"
import { ErpClient, ErpRateLimiter } from "@erp-client/effect4-client"
import { Envelope, Partner } from "@erp-client/effect4-core"
import { Partners } from "@erp-client/effect4-streams"
import * as Effect from "effect/Effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"

const [baseUrl, apiKey, mode, concurrencyText, countText, pageText, repsText] = process.argv.slice(2)
const concurrency = Number(concurrencyText)
const count = Number(countText)
const PAGE = Number(pageText)
const REPS = Number(repsText)

interface Sample {
  readonly cpuMs: number
  readonly wallMs: number
  readonly count: number
}

const measured = <E, R>(effect: Effect.Effect<number, E, R>) =>
  Effect.gen(function*() {
    const cpu = process.cpuUsage()
    const start = performance.now()
    const read = yield* effect
    const wallMs = performance.now() - start
    const used = process.cpuUsage(cpu)
    return { cpuMs: (used.user + used.system) / 1000, wallMs, count: read } satisfies Sample
  })

// ---- the hand-written Effect 4 pipeline -------------------------------------------------------------------------------

const PageBody = Schema.fromJsonString(Envelope.Envelope(Schema.Array(Partner.Partner)))
const OneBody = Schema.fromJsonString(Envelope.Envelope(Partner.Partner))

const handWrittenClient = Effect.gen(function*() {
  const client = yield* HttpClient.HttpClient
  return client.pipe(
    HttpClient.mapRequest(HttpClientRequest.setHeader("X-API-KEY", apiKey!)),
    HttpClient.filterStatusOk
  )
})

const handWrittenPages = Effect.gen(function*() {
  const client = yield* handWrittenClient
  const fetchPage = (offset: number) =>
    client.get(`${baseUrl}/partner/list`, { urlParams: { list_offset: offset, list_count: PAGE } }).pipe(
      Effect.flatMap((response) => response.text),
      Effect.flatMap(Schema.decodeUnknownEffect(PageBody)),
      Effect.map((envelope) => envelope.data)
    )
  return yield* measured(
    Stream.iterate(0, (offset) => offset + PAGE).pipe(
      Stream.mapEffect(fetchPage, { concurrency }),
      Stream.takeUntil((data) => data.length < PAGE),
      Stream.runFold(() => 0, (n, data) => n + data.length)
    )
  )
})

const ids = () => Array.from({ length: count }, (_, i) => i + 1)

const handWrittenLookups = Effect.gen(function*() {
  const client = yield* handWrittenClient
  const lookup = (id: number) =>
    client.get(`${baseUrl}/partner/get`, { urlParams: { id } }).pipe(
      Effect.flatMap((response) => response.text),
      Effect.flatMap(Schema.decodeUnknownEffect(OneBody)),
      Effect.map((envelope) => envelope.data)
    )
  return yield* measured(Effect.map(Effect.forEach(ids(), lookup, { concurrency }), (found) => found.length))
})

// ---- the Effect 4 edition -----------------------------------------------------------------------------------------------

const ourPages = measured(Partners.stream({ pageSize: PAGE, concurrency }).pipe(Stream.runFold(() => 0, (n) => n + 1)))

const ourLookups = measured(Effect.map(Effect.forEach(ids(), Partners.get, { concurrency }), (found) => found.length))

const ErpLive = ErpClient.layer({ baseUrl: baseUrl!, apiKey: Redacted.make(apiKey!) }).pipe(
  Layer.provide(ErpRateLimiter.layer({ limit: 1_000_000, window: "30 seconds" })),
  Layer.provideMerge(NodeHttpClient.layerUndici)
)

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

const program = Effect.gen(function*() {
  const ways = mode === "pages"
    ? { ours: ourPages, hand: handWrittenPages }
    : { ours: ourLookups, hand: handWrittenLookups }
  const expected = count
  const samples: Record<string, Array<Sample>> = { ours: [], hand: [] }
  for (const way of ["ours", "hand"] as const) yield* ways[way]
  for (let rep = 0; rep < REPS; rep++) {
    for (const way of ["ours", "hand"] as const) {
      const sample = yield* ways[way]
      if (sample.count !== expected) {
        return yield* Effect.die(new Error(`cost (effect 4): ${way} read ${sample.count}, expected ${expected}`))
      }
      samples[way]!.push(sample)
    }
  }
  const result = Object.fromEntries(
    Object.entries(samples).map((
      [way, list]
    ) => [way, { cpuMs: median(list.map((s) => s.cpuMs)), wallMs: median(list.map((s) => s.wallMs)) }])
  )
  process.stdout.write(`${JSON.stringify({ node: process.version, ...result })}\n`)
})

Effect.runPromise(program.pipe(Effect.provide(ErpLive))).catch((error) => {
  process.stderr.write(`${String(error)}\n`)
  process.exitCode = 1
})
