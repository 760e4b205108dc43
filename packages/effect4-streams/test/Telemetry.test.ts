import { describe, expect, it } from "@effect/vitest"
import { ErpClient, ErpRateLimiter } from "@erp-client/effect4-client"
import { ListEndpoint, type Paginate, Partners } from "@erp-client/effect4-streams"
import { ErpTest } from "@erp-client/effect4-testing"
import * as PagingText from "@erp-client/kernel/PagingText"
import {
  Deferred,
  Effect,
  Exit,
  Fiber,
  Layer,
  Logger,
  Metric,
  Redacted,
  References,
  Schema,
  Stream,
  Tracer
} from "effect"
import { HttpClient, HttpClientResponse } from "effect/http"

// Pages fetched ahead and no longer wanted are the client's cancellation, not an error: their spans end without an
// error, saying why (`erp.cancel_reason`, the kernel's reason); an export interrupted from outside (Ctrl-C) still ends
// its spans in error. The list server below answers each page when the test's plan says, so which pages are in flight
// when the list ends is decided, not raced.

/** A tracer that keeps every span (Effect 4's own `NativeSpan`: its attributes and how it ended). */
const recorder = () => {
  const spans: Array<Tracer.NativeSpan> = []
  const tracer = Tracer.make({
    span(options) {
      const span = new Tracer.NativeSpan(options)
      spans.push(span)
      return span
    }
  })
  return { spans, tracer }
}

const exitOf = (span: Tracer.NativeSpan) => span.status._tag === "Ended" ? span.status.exit : undefined
const ok = (span: Tracer.NativeSpan) => {
  const exit = exitOf(span)
  return exit !== undefined && Exit.isSuccess(exit)
}

/** What the list server does with a request for a page at an offset. */
interface Plan {
  /** Never answers (the first request at this offset only). */
  readonly hang?: boolean
  /** Answers once this many requests past this offset have arrived. */
  readonly after?: number
  /** Serves only this many records. */
  readonly serve?: number
  /** Answers with the ERP's error envelope (`result.code = 0`) and this message. */
  readonly refuse?: string
}

/** A list endpoint of `total` records `{ id }` over a fake HttpClient, each page answered by `plan`. */
const listServer = (total: number, plan: (offset: number) => Plan) => {
  const arrived: Array<number> = []
  const hung = new Set<number>()
  const waiting: Array<{ readonly past: number; readonly count: number; readonly done: Deferred.Deferred<void> }> = []
  const check = () => {
    for (const wait of waiting) {
      if (arrived.filter((o) => o > wait.past).length >= wait.count) Deferred.doneUnsafe(wait.done, Exit.void)
    }
  }
  /** Settles once `count` requests past `offset` have arrived. */
  const arrivedPast = (offset: number, count: number) =>
    Effect.suspend(() => {
      const done = Deferred.makeUnsafe<void>()
      waiting.push({ past: offset, count, done })
      check()
      return Deferred.await(done)
    })
  const http = HttpClient.make((request, url) =>
    Effect.suspend(() => {
      const offset = Number(url.searchParams.get("list_offset"))
      const count = Number(url.searchParams.get("list_count"))
      const what = plan(offset)
      arrived.push(offset)
      check()
      if (what.hang === true && !hung.has(offset)) {
        hung.add(offset)
        return Effect.never
      }
      const served = Math.max(0, Math.min(what.serve ?? count, total - offset))
      const body = what.refuse !== undefined
        ? { result: { code: 0, message: what.refuse }, data: null }
        : { result: { code: 1, message: null }, data: Array.from({ length: served }, (_, i) => ({ id: offset + i })) }
      const answer = Effect.succeed(HttpClientResponse.fromWeb(request, new Response(JSON.stringify(body))))
      return what.after === undefined ? answer : Effect.andThen(arrivedPast(offset, what.after), answer)
    })
  )
  const client = ErpClient.layer({ baseUrl: "https://erp.example.com/", apiKey: Redacted.make("sk-pages-test") }).pipe(
    Layer.provide(ErpRateLimiter.layer()),
    Layer.provide(Layer.succeed(HttpClient.HttpClient, http))
  )
  return { client, arrived, arrivedPast }
}

const Item = Schema.Struct({ id: Schema.Number })

/** The pages of `endpoint`, 10 records asked a page, 4 in flight at most: in flight 1, then 2 (0, 10), then 4. */
const export_ = (endpoint: string) => ListEndpoint.pages(endpoint, Item, { pageSize: 10, concurrency: 4 })

const calls = (spans: ReadonlyArray<Tracer.NativeSpan>) =>
  spans.filter((s) => s.name === "ErpClient.list").map((s) => ({
    offset: s.attributes.get("erp.list_offset"),
    ok: ok(s),
    cancelled: s.attributes.get("erp.cancel_reason"),
    error: s.attributes.get("error.type")
  }))

const cancelledDurations = (endpoint: string) =>
  Effect.map(
    Metric.snapshot,
    (snapshots) =>
      snapshots.filter((snapshot) =>
        snapshot.id === "http.client.request.duration" &&
        snapshot.attributes?.["erp.endpoint"] === endpoint &&
        snapshot.attributes?.["error.type"] === "cancelled"
      ).map((snapshot) => (snapshot.state as unknown as { count: number }).count)
  )

describe("pages no longer wanted are cancelled, not failed", () => {
  it.effect("the list ends while pages past it are in flight: every span ends without an error", () => {
    // 20 records: the empty page at 20 ends the list; it answers once the pages at 30, 40 and 50 are on the wire.
    const server = listServer(20, (offset) => offset === 20 ? { after: 3 } : offset > 20 ? { hang: true } : {})
    const { spans, tracer } = recorder()
    return Effect.gen(function*() {
      const pages = yield* Stream.runCollect(export_("things/ended")).pipe(Effect.withTracer(tracer))
      expect(pages.flatMap((p) => p.records.map((r) => r.id))).toEqual(Array.from({ length: 20 }, (_, i) => i))
      expect(server.arrived.slice(3).sort()).toEqual([30, 40, 50])
      expect(calls(spans)).toEqual([
        { offset: 0, ok: true, cancelled: undefined, error: undefined },
        { offset: 10, ok: true, cancelled: undefined, error: undefined },
        { offset: 20, ok: true, cancelled: undefined, error: undefined },
        { offset: 30, ok: true, cancelled: "list-ended", error: undefined },
        { offset: 40, ok: true, cancelled: "list-ended", error: undefined },
        { offset: 50, ok: true, cancelled: "list-ended", error: undefined }
      ])
      // No span of the export ended in error: the attempts cancelled are marked too.
      expect(spans.filter((s) => !ok(s)).map((s) => s.name)).toEqual([])
      const attempts = spans.filter((s) => s.name === "GET things/ended")
      expect(attempts.map((s) => s.attributes.get("erp.cancelled") ?? false)).toEqual([
        false,
        false,
        false,
        true,
        true,
        true
      ])
      expect(yield* cancelledDurations("things/ended")).toEqual([3])
      // The export's span counts what it emitted.
      const exported = spans.find((s) => s.name === "ListEndpoint.pages")!
      expect([exported.attributes.get("erp.pages"), exported.attributes.get("erp.records")]).toEqual([3, 20])
      // Every call's span is a child of the export's.
      for (const call of spans.filter((s) => s.name === "ErpClient.list")) {
        expect(call.parent._tag === "Some" && call.parent.value.spanId).toBe(exported.spanId)
      }
    }).pipe(Effect.provide(server.client))
  })

  it.effect("the grid moves after a short page: the pages past it are cancelled as paging-moved", () => {
    // The page at 20 serves 5 of 10 (the server filtered after cutting) once 30, 40, 50 are on the wire; paging goes
    // on at 25, and the pages at 30, 40, 50 first asked are not wanted.
    const server = listServer(
      45,
      (offset) => offset === 20 ? { after: 3, serve: 5 } : [30, 40, 50].includes(offset) ? { hang: true } : {}
    )
    const { spans, tracer } = recorder()
    return Effect.gen(function*() {
      const pages = yield* Stream.runCollect(export_("things/moved")).pipe(Effect.withTracer(tracer))
      expect(pages.flatMap((p) => p.records.map((r) => r.id))).toEqual(Array.from({ length: 45 }, (_, i) => i))
      const moved = calls(spans).filter((c) => c.cancelled === "paging-moved")
      expect(moved.map((c) => [c.offset, c.ok, c.cancelled])).toEqual([
        [30, true, "paging-moved"],
        [40, true, "paging-moved"],
        [50, true, "paging-moved"]
      ])
      expect(spans.filter((s) => !ok(s)).map((s) => s.name)).toEqual([])
    }).pipe(Effect.provide(server.client))
  })

  it.effect("the reader stops early (take): the page in flight is cancelled as stream-ended", () => {
    // The page at 10 answers once the page at 20 is on the wire; the reader wants 15 records.
    const server = listServer(100, (offset) => offset === 10 ? { after: 1 } : offset >= 20 ? { hang: true } : {})
    const { spans, tracer } = recorder()
    return Effect.gen(function*() {
      const records = yield* Stream.runCollect(
        ListEndpoint.stream("things/taken", Item, { pageSize: 10, concurrency: 4 }).pipe(Stream.take(15))
      ).pipe(Effect.withTracer(tracer))
      expect(records).toHaveLength(15)
      expect(calls(spans).map((c) => [c.offset, c.ok, c.cancelled])).toEqual([
        [0, true, undefined],
        [10, true, undefined],
        [20, true, "stream-ended"]
      ])
      expect(spans.filter((s) => !ok(s)).map((s) => s.name)).toEqual([])
    }).pipe(Effect.provide(server.client))
  })

  it.effect("a page fails: the export's span says its error.type, the page in flight is cancelled as stream-failed", () => {
    // The page at 10 is refused by the ERP (an ApiError) once the page at 20 is on the wire.
    const server = listServer(
      100,
      (offset) => offset === 10 ? { after: 1, refuse: "Database busy" } : offset >= 20 ? { hang: true } : {}
    )
    const { spans, tracer } = recorder()
    return Effect.gen(function*() {
      const error = yield* Effect.flip(Stream.runDrain(export_("things/failed"))).pipe(Effect.withTracer(tracer))
      expect(error._tag).toBe("ApiError")
      expect(calls(spans)).toEqual([
        { offset: 0, ok: true, cancelled: undefined, error: undefined },
        { offset: 10, ok: false, cancelled: undefined, error: "ApiError" },
        { offset: 20, ok: true, cancelled: "stream-failed", error: undefined }
      ])
      const pages = spans.find((s) => s.name === "ListEndpoint.pages")!
      expect(ok(pages)).toBe(false)
      expect(pages.attributes.get("error.type")).toBe("ApiError")
    }).pipe(Effect.provide(server.client))
  })

  it.effect("interrupted from outside (Ctrl-C): the pages in flight and the export end in error, interrupted", () => {
    const server = listServer(100, (offset) => offset >= 10 ? { hang: true } : {})
    const { spans, tracer } = recorder()
    return Effect.gen(function*() {
      const running = yield* Effect.forkChild(
        Stream.runDrain(export_("things/interrupted")).pipe(Effect.withTracer(tracer))
      )
      yield* server.arrivedPast(0, 2)
      yield* Fiber.interrupt(running)
      expect(calls(spans)).toEqual([
        { offset: 0, ok: true, cancelled: undefined, error: undefined },
        { offset: 10, ok: false, cancelled: undefined, error: "interrupted" },
        { offset: 20, ok: false, cancelled: undefined, error: "interrupted" }
      ])
      const failed = spans.filter((s) => !ok(s))
      expect(failed.map((s) => [s.name, s.attributes.get("error.type")]).sort()).toEqual([
        ["ErpClient.list", "interrupted"],
        ["ErpClient.list", "interrupted"],
        ["GET things/interrupted", "interrupted"],
        ["GET things/interrupted", "interrupted"],
        ["ListEndpoint.pages", "interrupted"]
      ])
      expect(spans.some((s) => s.attributes.has("erp.cancelled"))).toBe(false)
    }).pipe(Effect.provide(server.client))
  })
})

describe("what an export tells an operator", () => {
  it.effect("records streamed and drift events counted by endpoint, the page size and recoveries logged in the kernel's lines", () => {
    const lines: Array<{ readonly level: string; readonly text: string }> = []
    const logger = Logger.make(({ logLevel, message }) => {
      lines.push({ level: logLevel, text: (Array.isArray(message) ? message : [message]).map(String).join(" ") })
    })
    const points = (name: string) =>
      Effect.map(
        Metric.snapshot,
        (snapshots) =>
          snapshots.filter((snapshot) =>
            snapshot.id === name && snapshot.attributes?.["erp.endpoint"] === "partner/list"
          )
            .map((snapshot) => ({
              attributes: snapshot.attributes ?? {},
              count: (snapshot.state as unknown as { count: number }).count
            }))
      )
    return Effect.gen(function*() {
      const events: Array<Paginate.DriftEvent> = []
      const partners = yield* Stream.runCollect(
        Partners.stream({ pageSize: 100, safe: { onDrift: (event) => Effect.sync(() => events.push(event)) } })
      ).pipe(Effect.provide(Logger.layer([logger])), Effect.provideService(References.MinimumLogLevel, "Debug"))
      const streamed = yield* points("erp.client.records.streamed")
      expect(streamed.map((point) => [point.attributes.unit, point.count])).toEqual([["{record}", partners.length]])
      const drift = yield* points("erp.client.paging.drift")
      for (const kind of ["Shifted", "Recovered"] as const) {
        const counted = drift.filter((point) => point.attributes["erp.drift.kind"] === kind)
        expect(counted.map((point) => point.count), kind).toEqual([events.filter((e) => e._tag === kind).length])
      }
      expect(events.some((e) => e._tag === "Recovered")).toBe(true)
      // The lines are the kernel's (PagingText), at its levels.
      expect(lines).toContainEqual({
        level: "Debug",
        text: PagingText.pageSize("partner/list", { size: 30, previous: 100, reason: "served" })
      })
      for (const event of events) {
        const line = PagingText.drift("partner/list", event)
        expect(lines).toContainEqual({ level: line.level === "Warning" ? "Warn" : line.level, text: line.text })
      }
    }).pipe(
      Effect.provide(ErpTest.layer({
        sandbox: { partners: 600, maxListCount: 30, drift: { inserts: 10, deletes: 25, seed: 3 }, rateLimit: false }
      })),
      // Counted in a registry of its own: the process's has the exports of the worker's other test files too.
      Effect.provideService(Metric.MetricRegistry, new Map())
    )
  })

  it.effect("what paging learns of the server's pages: once per endpoint and process, at debug; the next export says nothing of it", () => {
    const lines: Array<{ readonly level: string; readonly text: string }> = []
    const logger = Logger.make(({ logLevel, message }) => {
      lines.push({ level: logLevel, text: (Array.isArray(message) ? message : [message]).map(String).join(" ") })
    })
    const exportAll = Stream.runCollect(Partners.stream({ pageSize: 100 })).pipe(
      Effect.provide(Logger.layer([logger])),
      Effect.provideService(References.MinimumLogLevel, "Debug")
    )
    const learned = PagingText.pageSize("partner/list", { size: 25, previous: 100, reason: "served" })
    return Effect.gen(function*() {
      expect(yield* exportAll).toHaveLength(120)
      const first = lines.splice(0)
      expect(first.filter((line) => line.text === learned)).toEqual([{ level: "Debug", text: learned }])
      expect(yield* exportAll).toHaveLength(120)
      const second = lines.splice(0)
      expect(second.filter((line) => line.text.includes("records a page"))).toEqual([])
      expect([...first, ...second].filter((line) => line.level !== "Debug")).toEqual([])
    }).pipe(Effect.provide(ErpTest.layer({ sandbox: { partners: 120, maxListCount: 25, rateLimit: false } })))
  })
})
