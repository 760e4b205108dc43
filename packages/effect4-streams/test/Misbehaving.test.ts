import { describe, expect, it } from "@effect/vitest"
import { ErpClient, ErpRateLimiter } from "@erp-client/effect4-client"
import { Partner } from "@erp-client/effect4-core"
import { ListEndpoint, type Paginate, Partners } from "@erp-client/effect4-streams"
import { ErpTest, Fault, Sandbox } from "@erp-client/effect4-testing"
import * as Seed from "@erp-client/fake-erp/Seed"
import { Effect, Layer, Redacted, Result, Schema, Stream } from "effect"
import { HttpClient, HttpClientResponse } from "effect/http"

// The streams against the test kit's in-memory ERP, where the contract is silent and the server misbehaves: records
// filtered after the cut, a page size that drops, a clamp, an ignored list_offset, an outage with Retry-After, numbers
// beyond a double, ids repeated by distinct records; and records that do not match the schema. On the TestClock. The
// truth is what the ERP says it serves (`visiblePartners`): every record of it exactly once, or a typed error.

const ids = (records: ReadonlyArray<{ readonly id: unknown }>) => records.map((record) => Number(record.id))

const collect = <A, E, R>(stream: Stream.Stream<A, E, R>) =>
  ErpTest.advancing(Stream.runCollect(stream), { step: "1 second" })

// As the server filters: 1, "1" and true are customers.
const isCustomer = (record: Seed.ServedRecord) =>
  record.is_customer === 1 || record.is_customer === "1" || record.is_customer === true

const visible = Effect.flatMap(Sandbox.Sandbox, (sandbox) => sandbox.visiblePartners)

const served = (where?: (record: Seed.ServedRecord) => boolean) =>
  Effect.map(visible, (records) => ids(records.filter((record) => where === undefined || where(record))))

/** The list requests the ERP saw, as `offset+count`. */
const listed = Effect.map(
  Effect.flatMap(Sandbox.Sandbox, (sandbox) => sandbox.requests),
  (log) =>
    log.filter((entry) => entry.endpoint === "/partner/list").map((entry) => {
      const query = new Map(entry.query)
      return `${query.get("list_offset")}+${query.get("list_count")}`
    })
)

/** The in-memory ERP with `sandbox`'s options and no rate limit, and the client on it. */
const erpWith = (sandbox: Sandbox.InMemoryOptions, rateLimiter?: ErpRateLimiter.Options) =>
  ErpTest.layer({ sandbox: { rateLimit: false, ...sandbox }, ...(rateLimiter === undefined ? {} : { rateLimiter }) })

const modes = [
  { name: "plain", safe: undefined },
  { name: "drift-safe", safe: true as const }
] as const

describe("records filtered after the cut (short pages in the middle of the list)", () => {
  for (const mode of modes) {
    it.effect(`${mode.name}: every served partner exactly once, at concurrency 1 and 4, with and without a filter`, () => {
      return Effect.gen(function*() {
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
      }).pipe(Effect.provide(erpWith({ partners: 1_000, hidden: { rate: 0.03, seed: 7 } })))
    })
  }

  for (const mode of modes) {
    it.effect(`${mode.name}: stopped after any page and resumed from its next, saved as JSON: every record once`, () => {
      return Effect.gen(function*() {
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
        Effect.provide(
          erpWith({ partners: 120, hidden: { rate: 0.06, seed: 11 } }, { limit: 10_000, window: "1 second" })
        )
      )
    })
  }

  it.effect("the short pages cost about one request each beyond the list's pages", () => {
    return Effect.gen(function*() {
      yield* collect(Partners.stream({ pageSize: 100, concurrency: 1 }))
      const requests = (yield* listed).length
      expect(requests).toBeGreaterThanOrEqual(11)
      expect(requests).toBeLessThanOrEqual(22)
    }).pipe(Effect.provide(erpWith({ partners: 1_000, hidden: { rate: 0.03, seed: 7 } })))
  })
})

describe("a server whose page size changes or is clamped", () => {
  for (const mode of modes) {
    it.effect(`${mode.name}: the page size drops from 100 to 50 at the third request: every partner once`, () => {
      return Effect.gen(function*() {
        const got = yield* collect(Partners.stream({ pageSize: 100, concurrency: 4, safe: mode.safe }))
        expect(ids(got)).toEqual(yield* served())
      }).pipe(Effect.provide(erpWith({ partners: 777, maxListCountSchedule: [{ fromRequest: 3, max: 50 }] })))
    })

    it.effect(`${mode.name}: a server that serves at most 30 a page: every partner once, customers too`, () => {
      return Effect.gen(function*() {
        expect(ids(yield* collect(Partners.stream({ concurrency: 4, safe: mode.safe })))).toEqual(yield* served())
        const customers = yield* collect(Partners.stream({ safe: mode.safe, where: { is_customer: 1 } }))
        expect(ids(customers)).toEqual(yield* served(isCustomer))
        // The page size was learned: after the first two pages, 30 were asked.
        expect((yield* listed).slice(2, 5).every((asked) => asked.endsWith("+30"))).toBe(true)
      }).pipe(Effect.provide(erpWith({ partners: 400, maxListCount: 30 })))
    })
  }
})

describe("a server that ignores list_offset", () => {
  for (const mode of modes) {
    it.effect(`${mode.name}: fails with PagingLoop naming the offset, having emitted nothing twice, in few requests`, () => {
      return Effect.gen(function*() {
        const emitted: Array<number> = []
        const result = yield* ErpTest.advancing(
          Stream.runForEach(
            Partners.stream({ pageSize: 50, concurrency: 4, safe: mode.safe }),
            (partner) => Effect.sync(() => emitted.push(partner.id))
          ).pipe(Effect.result)
        )
        expect(Result.isFailure(result) && result.failure._tag).toBe("PagingLoop")
        const error = Result.isFailure(result) && result.failure._tag === "PagingLoop" ? result.failure : undefined
        expect(error?.message).toContain(`partner/list: paging stopped at offset ${error?.offset}: `)
        expect(error?.offset).toBeGreaterThan(0)
        expect((yield* listed).map((asked) => Number(asked.split("+")[0]))).toContain(error?.offset)
        expect(new Set(emitted).size).toBe(emitted.length)
        expect(emitted).toEqual((yield* served()).slice(0, emitted.length))
        expect(emitted.length).toBeLessThanOrEqual(50)
        expect((yield* listed).length).toBeLessThanOrEqual(12)
      }).pipe(Effect.provide(erpWith({ partners: 500, ignoreOffset: true })))
    })
  }
})

describe("an outage", () => {
  for (const mode of modes) {
    it.effect(`${mode.name}: a 20 s outage of HTML 503s with Retry-After: 5 is ridden out, the page asked again at its offset`, () => {
      return Effect.gen(function*() {
        yield* (yield* Sandbox.Sandbox).inject(Fault.Fault.Outage({ duration: "20 seconds", retryAfter: "5" }), {
          endpoint: "/partner/list",
          after: 3
        })
        const got = yield* collect(Partners.stream({ pageSize: 100, concurrency: 1, safe: mode.safe }))
        expect(ids(got)).toEqual(yield* served())
        const log = (yield* (yield* Sandbox.Sandbox).requests).filter((entry) => entry.endpoint === "/partner/list")
        const outage = log.filter((entry) => entry.status === 503)
        expect(outage).toHaveLength(4)
        const offsets = new Set(outage.map((entry) => new Map(entry.query).get("list_offset")))
        expect(offsets.size).toBe(1)
        for (let i = 1; i < outage.length; i++) expect(outage[i]!.timeMillis - outage[i - 1]!.timeMillis).toBe(5_000)
        expect(log.filter((entry) => entry.status !== 200 && entry.status !== 503)).toEqual([])
      }).pipe(Effect.provide(erpWith({ partners: 600 })))
    })
  }
})

describe("records as the server wrote them", () => {
  it.effect("numbers beyond a double and decimals as written: each record's text is the ERP's, exactly", () => {
    return Effect.gen(function*() {
      const pages = yield* collect(
        ListEndpoint.pages(Partners.LIST, Partner.Partner, { pageSize: 50, concurrency: 2, exact: true })
      )
      const texts = pages.flatMap((page) => page.json ?? [])
      expect(texts).toEqual((yield* visible).map((record) => Seed.recordJson(record)))
      expect(texts.some((text) => text.includes("12345678901234567890"))).toBe(true)
      expect(texts.some((text) => text.includes(`"balance":1.10`))).toBe(true)
    }).pipe(Effect.provide(erpWith({
      partners: 300,
      oddRecords: { rate: 0.3, kinds: ["number-beyond-double", "decimal-as-written", "extra-object"] }
    })))
  })

  it.effect("fields the schema does not own are kept, in the order sent; strays from the contract are streamed", () => {
    return Effect.gen(function*() {
      const partners = yield* collect(Partners.stream({ concurrency: 4 }))
      const sent = yield* visible
      expect(partners).toEqual(sent)
      // Key order as sent, the extra nested fields too.
      expect(partners.map((p) => Object.keys(p).join())).toEqual(sent.map((p) => Object.keys(p).join()))
      expect(partners.some((p) => "custom_fields" in p)).toBe(true)
      const strays = partners.filter((p) => !Schema.is(Partner.StrictPartner)(p))
      expect(strays.length).toBeGreaterThan(20)
    }).pipe(Effect.provide(erpWith({ partners: 320, maxListCount: 30, oddRecords: { rate: 0.2 } })))
  })

  it.effect("drift-safe paging reports each distinct record it drops for an id already written, and keeps the rest", () => {
    return Effect.gen(function*() {
      const all = yield* visible
      for (const pageSize of [50, 100, "auto"] as const) {
        const dropped: Array<Paginate.DriftEvent> = []
        const got = yield* collect(Partners.stream({
          pageSize,
          safe: { onDrift: (event) => Effect.sync(() => void (event._tag === "Dropped" && dropped.push(event))) }
        }))
        const distinct = new Set(all.map((record) => Number(record.id)))
        expect(new Set(ids(got))).toEqual(distinct)
        expect(got.length).toBe(distinct.size)
        expect(dropped.length, `page size ${pageSize}`).toBe(all.length - got.length)
        expect(dropped.length).toBeGreaterThan(0)
      }
    }).pipe(Effect.provide(erpWith({ partners: 300, oddRecords: { rate: 0.1, kinds: ["duplicate-id"] } })))
  })
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
      expect(partners.map((p) => p.id)).toEqual([1, 2, 3, 4, 6, 7])
      expect(invalid).toMatchObject([{ offset: 4, raw: { id: 5, company_name: 42 }, error: { _tag: "DecodeError" } }])
    }).pipe(Effect.provide(client)))

  it.effect("any list endpoint pages with the user's own schema", () =>
    Effect.gen(function*() {
      const Row = Schema.Struct({ id: Schema.Number, extra: Schema.Number })
      const rows = yield* Stream.runCollect(ListEndpoint.stream("product/list", Row, { pageSize: 2, concurrency: 3 }))
      expect(rows.map((r) => r.id)).toEqual([1, 2, 3, 4, 5, 6, 7])
    }).pipe(Effect.provide(client)))
})
