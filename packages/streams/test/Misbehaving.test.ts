import { describe, expect, it } from "@effect/vitest"
import { ErpClient, ErpRateLimiter } from "@erp-client/client"
import { Partner } from "@erp-client/core"
import type { Paginate } from "@erp-client/streams"
import { ListEndpoint, Partners } from "@erp-client/streams"
import { ErpTest } from "@erp-client/testing"
import { Effect, Layer, Redacted, Schema, Stream } from "effect"
import { Fault, HttpClient, HttpClientResponse, Sandbox, Seed } from "./kit.js"

// The library against the sandbox's own core, where the contract is silent and the server misbehaves: records
// filtered after the cut, a page size that drops, a clamp, an ignored list_offset, outages with Retry-After, cut
// bodies, numbers beyond a double, ids repeated by distinct records, a reset in the past. In memory, on the TestClock
// (ErpTest.advancing moves it), so outages of tens of seconds cost milliseconds. The truth is what the sandbox says it
// serves (`visiblePartners`): every record of it exactly once, or a typed error. And records that do not match the
// schema. One suite, run against both editions (TEST_PAIRS in scripts/editions.ts); MisbehavingSandbox.test.ts cuts
// bodies on the Effect 3 edition's socket sandbox.

const noLimit = { rateLimit: false } as const
const ids = (records: ReadonlyArray<{ readonly id: unknown }>) => records.map((record) => Number(record.id))

const collect = <A, E, R>(stream: Stream.Stream<A, E, R>) =>
  Effect.map(ErpTest.advancing(Stream.runCollect(stream), { step: "1 second" }), (records) => Array.from(records))

const served = (where?: (record: Seed.ServedRecord) => boolean) =>
  Effect.map(
    Effect.flatMap(Sandbox.Sandbox, (sandbox) => sandbox.visiblePartners),
    (records) => ids(records.filter((record) => where === undefined || where(record)))
  )

// As the server filters: 1, "1" and true are customers.
const isCustomer = (record: Seed.ServedRecord) =>
  record.is_customer === 1 || record.is_customer === "1" || record.is_customer === true

const listRequests = Effect.map(
  Effect.flatMap(Sandbox.Sandbox, (sandbox) => sandbox.requests),
  (log) => log.filter((entry) => entry.endpoint === "/partner/list")
)

// The offset of a list request, as the sandbox logged it.
const offsetOf = (entry: Sandbox.RequestLogEntry) =>
  Number(entry.query.find(([name]) => name === "list_offset")?.[1] ?? 0)

const modes = [
  { name: "plain", safe: undefined },
  { name: "drift-safe", safe: true as const }
] as const

describe("records filtered after the cut (short pages in the middle of the list)", () => {
  const layer = ErpTest.layer({ sandbox: { partners: 1_000, hidden: { rate: 0.03, seed: 7 }, ...noLimit } })

  for (const mode of modes) {
    it.effect(`${mode.name}: every served partner exactly once, at concurrency 1 and 4, with and without a filter`, () =>
      Effect.gen(function*() {
        const all = yield* served()
        expect(all.length).toBeLessThan(1_000)
        for (const concurrency of [1, 4]) {
          const got = yield* collect(Partners.stream({ pageSize: 100, concurrency, safe: mode.safe }))
          expect(ids(got)).toEqual(all)
        }
        const customers = yield* collect(
          Partners.stream({ pageSize: 100, concurrency: 4, safe: mode.safe, where: { is_customer: 1 } })
        )
        expect(ids(customers)).toEqual(yield* served(isCustomer))
      }).pipe(Effect.provide(layer)))
  }

  for (const mode of modes) {
    it.effect(`${mode.name}: stopped after any page and resumed from its next, saved as JSON: every record once`, () =>
      Effect.gen(function*() {
        const all = yield* served()
        const options = { pageSize: 20, concurrency: 2, safe: mode.safe }
        const whole = yield* collect(Partners.pages(options))
        expect(whole.flatMap((page) => ids(page.records))).toEqual(all)
        for (let stopAfter = 1; stopAfter < whole.length; stopAfter++) {
          const first = yield* collect(Stream.take(Partners.pages(options), stopAfter))
          // What a file export keeps: the last page's next, through JSON, and (drift-safe) the ids written.
          const next: Paginate.ResumePoint = JSON.parse(JSON.stringify(first.at(-1)!.next))
          const before = first.flatMap((page) => ids(page.records))
          const rest = yield* collect(
            Partners.stream({
              ...options,
              resume: next,
              safe: mode.safe === undefined ? undefined : { resumeAfter: before }
            })
          )
          expect([...before, ...ids(rest)], `stopped after ${stopAfter} pages`).toEqual(all)
        }
      }).pipe(
        Effect.provide(ErpTest.layer({
          sandbox: { partners: 120, hidden: { rate: 0.06, seed: 11 }, ...noLimit },
          rateLimiter: { limit: 10_000, window: "1 second" }
        }))
      ))
  }

  it.effect("the short pages cost about one request each beyond the list's pages", () =>
    Effect.gen(function*() {
      const all = yield* served()
      yield* collect(Partners.stream({ pageSize: 100, concurrency: 1 }))
      const requests = (yield* listRequests).length
      // 10 pages of positions, most of them short by a hidden record: each short page is settled by the next.
      expect(all.length).toBeLessThan(1_000)
      expect(requests).toBeGreaterThanOrEqual(11)
      expect(requests).toBeLessThanOrEqual(22)
    }).pipe(Effect.provide(layer)))
})

describe("a server whose page size changes or is clamped", () => {
  for (const mode of modes) {
    it.effect(`${mode.name}: the page size drops from 100 to 50 at the third request: every partner once`, () =>
      Effect.gen(function*() {
        const got = yield* collect(Partners.stream({ pageSize: 100, concurrency: 4, safe: mode.safe }))
        expect(ids(got)).toEqual(yield* served())
      }).pipe(Effect.provide(ErpTest.layer({
        sandbox: { partners: 777, maxListCountSchedule: [{ fromRequest: 3, max: 50 }], ...noLimit }
      }))))

    it.effect(`${mode.name}: a server that serves at most 30 a page: every partner once, customers too`, () =>
      Effect.gen(function*() {
        expect(ids(yield* collect(Partners.stream({ concurrency: 4, safe: mode.safe })))).toEqual(yield* served())
        const customers = yield* collect(Partners.stream({ safe: mode.safe, where: { is_customer: 1 } }))
        expect(ids(customers)).toEqual(yield* served(isCustomer))
      }).pipe(Effect.provide(ErpTest.layer({ sandbox: { partners: 400, maxListCount: 30, ...noLimit } }))))
  }
})

describe("a server that ignores list_offset", () => {
  for (const mode of modes) {
    it.effect(`${mode.name}: fails with PagingLoop naming the offset, having emitted nothing twice, in few requests`, () =>
      Effect.gen(function*() {
        const emitted: Array<number> = []
        const result = yield* ErpTest.advancing(
          Stream.runForEach(
            Partners.stream({ pageSize: 50, concurrency: 4, safe: mode.safe }),
            (partner) => Effect.sync(() => emitted.push(partner.id))
          ).pipe(
            Effect.match({ onFailure: (error) => error, onSuccess: () => undefined })
          )
        )
        expect(result?._tag).toBe("PagingLoop")
        const error = result?._tag === "PagingLoop" ? result : undefined
        const log = yield* listRequests
        // The offset named is one the client asked for past the first page, and answered with the first page again.
        expect(error?.message).toContain(`partner/list: paging stopped at offset ${error?.offset}: `)
        expect(error?.offset).toBeGreaterThan(0)
        expect(log.map(offsetOf)).toContain(error?.offset)
        // Nothing twice: what was emitted is the first page's records, the only ones the server serves.
        expect(new Set(emitted).size).toBe(emitted.length)
        expect(emitted).toEqual((yield* served()).slice(0, emitted.length))
        expect(emitted.length).toBeLessThanOrEqual(50)
        expect(log.length).toBeLessThanOrEqual(12)
      }).pipe(Effect.provide(ErpTest.layer({ sandbox: { partners: 500, ignoreOffset: true, ...noLimit } }))))
  }
})

describe("outages and broken bodies", () => {
  for (const mode of modes) {
    it.effect(`${mode.name}: a 20 s outage of HTML 503s with Retry-After: 5 is ridden out in 4 waits of 5 s`, () =>
      Effect.gen(function*() {
        const sandbox = yield* Sandbox.Sandbox
        yield* sandbox.inject(
          Fault.Fault.Outage({ duration: "20 seconds", retryAfter: "5" }),
          { endpoint: "/partner/list", after: 3 }
        )
        const got = yield* collect(Partners.stream({ pageSize: 100, concurrency: 1, safe: mode.safe }))
        expect(ids(got)).toEqual(yield* served())
        const log = yield* listRequests
        const outage = log.filter((entry) => entry.status === 503)
        // One call met the outage: its attempts are the 503s, every one Retry-After apart (the backoff alone would
        // have tried again within a second), then the one that was answered once the 20 s were over.
        expect(outage.map((entry) => entry.fault)).toEqual(["Outage", "Outage", "Outage", "Outage"])
        expect(new Set(outage.map(offsetOf)).size).toBe(1)
        for (let i = 1; i < outage.length; i++) {
          expect(outage[i]!.timeMillis - outage[i - 1]!.timeMillis).toBe(5_000)
        }
        const answered = log.find((entry) => entry.timeMillis > outage[3]!.timeMillis)!
        expect([answered.status, offsetOf(answered), answered.timeMillis - outage[0]!.timeMillis])
          .toEqual([200, offsetOf(outage[0]!), 20_000])
        // Nothing else was sent twice: every other request was answered at its first attempt.
        expect(log.filter((entry) => entry.status !== 200 && entry.status !== 503)).toEqual([])
      }).pipe(Effect.provide(ErpTest.layer({ sandbox: { partners: 600, ...noLimit } }))))

    it.effect(`${mode.name}: an outage longer than the retry budget fails, saying the attempts the server saw`, () =>
      Effect.gen(function*() {
        const sandbox = yield* Sandbox.Sandbox
        yield* sandbox.inject(Fault.Fault.Outage({ duration: "5 minutes", retryAfter: "5" }), { after: 2 })
        const emitted: Array<number> = []
        const result = yield* ErpTest.advancing(
          Stream.runForEach(
            Partners.stream({ pageSize: 100, concurrency: 1, safe: mode.safe }),
            (partner) => Effect.sync(() => emitted.push(partner.id))
          ).pipe(
            Effect.match({ onFailure: (error) => error, onSuccess: () => undefined })
          ),
          { step: "1 second" }
        )
        expect(result?._tag).toBe("HttpStatusError")
        const error = result?._tag === "HttpStatusError" ? result : undefined
        const log = yield* listRequests
        const outage = log.filter((entry) => entry.status === 503)
        // Tried at 0, 5, 10, 15 and 20 s of the 20 s budget; the next wait would end past it.
        expect(outage).toHaveLength(5)
        expect(error?.attempts).toBe(outage.length)
        expect(error?.message).toMatch(/503/)
        expect(error?.message).toContain(`(5 attempts over 20.0 s)`)
        // What the two pages answered before the outage held was emitted, in order, once (drift-safe pages overlap).
        const answered = log.filter((entry) => entry.status === 200)
        expect(answered).toHaveLength(2)
        const reached = Math.max(...answered.map((entry) => offsetOf(entry) + entry.records!))
        expect(emitted).toEqual((yield* served()).slice(0, reached))
      }).pipe(
        Effect.provide(
          ErpTest.layer({ sandbox: { partners: 600, ...noLimit }, client: { retryBudget: "20 seconds" } })
        )
      ))
  }

  it.effect("bodies cut short or not JSON are retried: every partner once", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      const list = { endpoint: "/partner/list" }
      yield* sandbox.inject(Fault.Fault.MalformedJson(), { ...list, times: 2, after: 1 })
      yield* sandbox.inject(Fault.Fault.DropMidBody({ fraction: 0.3 }), { ...list, times: 2, after: 3 })
      const got = yield* collect(Partners.stream({ pageSize: 100, concurrency: 2 }))
      expect(ids(got)).toEqual(yield* served())
      expect((yield* sandbox.stats).faultsServed).toBe(4)
    }).pipe(Effect.provide(ErpTest.layer({ sandbox: { partners: 500, ...noLimit } }))))
})

describe("records as the server wrote them", () => {
  it.effect("numbers beyond a double and decimals as written: each record's text is the sandbox's, exactly", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      const pages = yield* collect(
        ListEndpoint.pages(Partners.LIST, Partner.Partner, { pageSize: 50, concurrency: 2, exact: true })
      )
      const texts = pages.flatMap((page) => page.json ?? [])
      const expected = (yield* sandbox.visiblePartners).map((record) => Seed.recordJson(record))
      expect(texts).toEqual(expected)
      expect(texts.some((text) => text.includes("12345678901234567890"))).toBe(true)
      expect(texts.some((text) => text.includes("1.10"))).toBe(true)
    }).pipe(Effect.provide(ErpTest.layer({
      sandbox: {
        partners: 300,
        oddRecords: { rate: 0.3, kinds: ["number-beyond-double", "decimal-as-written"] },
        ...noLimit
      }
    }))))

  it.effect("fields the schema does not own are kept, in the order sent; strays from the contract are streamed", () => {
    return Effect.gen(function*() {
      const partners = yield* collect(Partners.stream({ concurrency: 4 }))
      const sent = yield* Effect.flatMap(Sandbox.Sandbox, (sandbox) => sandbox.visiblePartners)
      expect(partners).toEqual(sent)
      // Key order as sent, the extra nested fields too.
      expect(partners.map((p) => Object.keys(p).join())).toEqual(sent.map((p) => Object.keys(p).join()))
      expect(partners.some((p) => "custom_fields" in p)).toBe(true)
      const strays = partners.filter((p) => !Schema.is(Partner.StrictPartner)(p))
      expect(strays.length).toBeGreaterThan(20)
    }).pipe(
      Effect.provide(
        ErpTest.layer({ sandbox: { partners: 320, maxListCount: 30, oddRecords: { rate: 0.2 }, ...noLimit } })
      )
    )
  })

  it.effect("drift-safe paging reports each distinct record it drops for an id already written, and keeps the rest", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      const all = yield* sandbox.visiblePartners
      for (const pageSize of [50, 100, "auto"] as const) {
        const dropped: Array<Paginate.DriftEvent> = []
        const got = yield* collect(
          Partners.stream({
            pageSize,
            safe: { onDrift: (event) => Effect.sync(() => void (event._tag === "Dropped" && dropped.push(event))) }
          })
        )
        const distinctIds = new Set(all.map((record) => Number(record.id)))
        expect(new Set(ids(got))).toEqual(distinctIds)
        expect(got.length).toBe(distinctIds.size)
        // Every record not written was reported, once: one read again in the overlap of the next page is not a
        // second record.
        expect(dropped.length, `page size ${pageSize}`).toBe(all.length - got.length)
        expect(dropped.length).toBeGreaterThan(0)
      }
    }).pipe(Effect.provide(ErpTest.layer({
      sandbox: { partners: 300, oddRecords: { rate: 0.1, kinds: ["duplicate-id"] }, ...noLimit }
    }))))
})

describe("a reset the server sends in the past or absurdly far ahead (clock skew)", () => {
  for (const skew of ["-1 hour", "1 hour"] as const) {
    for (const mode of modes) {
      it.effect(`${mode.name}, skew ${skew}: treated as unknown: the client backs off by the window, never hammers`, () =>
        Effect.gen(function*() {
          const sandbox = yield* Sandbox.Sandbox
          const got = yield* collect(Partners.stream({ pageSize: 100, concurrency: 4, safe: mode.safe }))
          expect(ids(got)).toEqual(yield* served())
          // 21 pages or more at 10 per 10 s, the client told 100: the client keeps the server's 10 from
          // X-RateLimit-Limit at its first answer, so no 429 at all; at most the 4 calls in flight would meet one
          // each a window (3 windows), not a storm of them (a pause of a share of the window each: hundreds), nor a
          // wait of an hour. The reset itself, read as unknown after a 429, is below.
          const stats = yield* sandbox.stats
          expect(stats.tooManyRequests).toBeLessThanOrEqual(12)
          const log = yield* listRequests
          expect(log.at(-1)!.timeMillis - log[0]!.timeMillis).toBeLessThan(120_000)
        }).pipe(Effect.provide(ErpTest.layer({
          sandbox: {
            partners: 2_050,
            rateLimit: { limit: 10, window: "10 seconds", resetUnit: "seconds", resetSkew: skew }
          },
          rateLimiter: { limit: 100, window: "10 seconds" }
        }))))

      it.effect(`${mode.name}, skew ${skew}: 429s whose reset cannot be used are waited out by a window each`, () =>
        Effect.gen(function*() {
          const sandbox = yield* Sandbox.Sandbox
          // Another client on the key spends the budget: 429s that say the limit is ours, with a skewed reset.
          yield* sandbox.inject(Fault.Fault.TooManyRequests({ resetAfter: "5 seconds" }), {
            times: 6,
            endpoint: "/partner/list"
          })
          const got = yield* collect(Partners.stream({ pageSize: 100, concurrency: 4, safe: mode.safe }))
          expect(ids(got)).toEqual(yield* served())
          const log = yield* listRequests
          const refused = log.filter((entry) => entry.status === 429)
          expect(refused).toHaveLength(6)
          // Each 429 pauses the endpoint for a window (jittered, at least half of it), not a share of it, nor an hour.
          const first = refused[0]!.timeMillis
          const after = log.filter((entry) => entry.timeMillis > first && entry.status !== 429)
          expect(after[0]!.timeMillis - first).toBeGreaterThanOrEqual(5_000)
          expect(log.at(-1)!.timeMillis - log[0]!.timeMillis).toBeLessThan(120_000)
        }).pipe(Effect.provide(ErpTest.layer({
          sandbox: {
            partners: 2_050,
            rateLimit: { limit: 100, window: "10 seconds", resetUnit: "seconds", resetSkew: skew }
          },
          rateLimiter: { limit: 100, window: "10 seconds" }
        }))))
    }
  }
})

describe("records that do not match the schema", () => {
  const good = (id: number): Record<string, unknown> => ({
    id,
    company_name: `P${id}`,
    tax_number: "1-2",
    is_customer: 1,
    extra: id
  })
  const pageBody = (offset: number, count: number) => {
    const data = Array.from({ length: Math.max(0, Math.min(count, 7 - offset)) }, (_, i) => good(offset + i + 1))
    if (offset === 3) data[1] = { ...good(5), company_name: 42 }
    return JSON.stringify({ result: { code: 1, message: null }, data })
  }
  // An ERP whose record at offset 4 (id 5) has a company name that is a number: no server means that.
  const client = ErpClient.layer({ baseUrl: "https://erp.example.com/", apiKey: Redacted.make("k") }).pipe(
    Layer.provide(ErpRateLimiter.layer()),
    Layer.provide(Layer.succeed(
      HttpClient.HttpClient,
      HttpClient.make((request, url) => {
        const offset = Number(url.searchParams.get("list_offset"))
        const count = Number(url.searchParams.get("list_count"))
        return Effect.succeed(HttpClientResponse.fromWeb(request, new Response(pageBody(offset, count))))
      })
    ))
  )

  it.effect("by default the stream fails with a DecodeError that names the record", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Stream.runDrain(Partners.stream({ pageSize: 3 })))
      expect(error).toMatchObject({ _tag: "DecodeError", path: "data[1].company_name", offset: 4, recordId: 5 })
    }).pipe(Effect.provide(client)))

  it.effect("onInvalidRecord reports the record whole and the sync goes on", () =>
    Effect.gen(function*() {
      const invalid: Array<unknown> = []
      const partners = yield* Stream.runCollect(
        Partners.stream({ pageSize: 3, onInvalidRecord: (r) => Effect.sync(() => invalid.push(r)) })
      )
      expect(Array.from(partners, (p) => p.id)).toEqual([1, 2, 3, 4, 6, 7])
      expect(invalid).toMatchObject([{ offset: 4, raw: { id: 5, company_name: 42 }, error: { _tag: "DecodeError" } }])
    }).pipe(Effect.provide(client)))

  it.effect("any list endpoint pages with the user's own schema", () =>
    Effect.gen(function*() {
      const Row = Schema.Struct({ id: Schema.Number, extra: Schema.Number })
      const rows = yield* Stream.runCollect(ListEndpoint.stream("product/list", Row, { pageSize: 2, concurrency: 3 }))
      expect(Array.from(rows, (r) => r.id)).toEqual([1, 2, 3, 4, 5, 6, 7])
    }).pipe(Effect.provide(client)))
})
