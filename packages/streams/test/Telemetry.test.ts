import { HttpClient, HttpClientResponse } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { ErpClient, ErpRateLimiter } from "@erp-client/client"
import * as PagingText from "@erp-client/kernel/PagingText"
import { ListEndpoint, Partners } from "@erp-client/streams"
import { ErpTest } from "@erp-client/testing"
import {
  Chunk,
  Deferred,
  Effect,
  Exit,
  Fiber,
  FiberId,
  Layer,
  Logger,
  LogLevel,
  Metric,
  Redacted,
  Schema,
  Stream,
  Tracer
} from "effect"

// Pages fetched ahead and no longer wanted are the client's cancellation, not an error: their spans end without an
// error, saying why (`erp.cancel_reason`); an export interrupted from outside (Ctrl-C) still ends its spans in error.
// The list server below answers each page when the test's plan says, so which pages are in flight when the list ends
// is decided, not raced.

interface Recorded {
  readonly name: string
  readonly attributes: Map<string, unknown>
  exit: Exit.Exit<unknown, unknown> | undefined
}

/** A tracer that keeps every span, its attributes and the exit it ended with. */
const recorder = () => {
  const spans: Array<Recorded> = []
  let ids = 0
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind) => {
      const record: Recorded = { name, attributes: new Map(), exit: undefined }
      spans.push(record)
      const span: Tracer.Span = {
        _tag: "Span",
        name,
        spanId: String(++ids),
        traceId: "trace",
        parent,
        context,
        status: { _tag: "Started", startTime },
        attributes: record.attributes,
        links,
        sampled: true,
        kind,
        end: (endTime, exit) => {
          if (record.exit !== undefined) throw new Error(`${name} ended twice`)
          Object.assign(span, { status: { _tag: "Ended", startTime, endTime, exit } })
          record.exit = exit
        },
        attribute: (key, value) => {
          record.attributes.set(key, value)
        },
        event: () => {},
        addLinks: () => {}
      }
      return span
    },
    context: (f) => f()
  })
  return { spans, tracer }
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
      if (arrived.filter((o) => o > wait.past).length >= wait.count) Deferred.unsafeDone(wait.done, Exit.void)
    }
  }
  /** Settles once `count` requests past `offset` have arrived. */
  const arrivedPast = (offset: number, count: number) =>
    Effect.suspend(() => {
      const done = Deferred.unsafeMake<void>(FiberId.none)
      waiting.push({ past: offset, count, done })
      check()
      return Deferred.await(done)
    })
  const layer = Layer.succeed(
    HttpClient.HttpClient,
    HttpClient.make((request, url) =>
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
        return what.after === undefined ? answer : Effect.zipRight(arrivedPast(offset, what.after), answer)
      })
    )
  )
  const client = ErpClient.layer({ baseUrl: "https://erp.example.com/", apiKey: Redacted.make("sk-pages-test") }).pipe(
    Layer.provide(ErpRateLimiter.layer()),
    Layer.provide(layer)
  )
  return { client, arrived, arrivedPast }
}

const Item = Schema.Struct({ id: Schema.Number })

/** The pages of `endpoint`, 10 records asked a page, 4 in flight at most: in flight 1, then 2 (0, 10), then 4. */
const export_ = (endpoint: string) => ListEndpoint.pages(endpoint, Item, { pageSize: 10, concurrency: 4 })

const calls = (spans: ReadonlyArray<Recorded>) =>
  spans.filter((s) => s.name === "ErpClient.list").map((s) => ({
    offset: s.attributes.get("erp.list_offset"),
    ok: s.exit !== undefined && Exit.isSuccess(s.exit),
    cancelled: s.attributes.get("erp.cancel_reason"),
    error: s.attributes.get("error.type")
  }))

const cancelledDurations = (endpoint: string) =>
  Effect.map(
    Metric.snapshot,
    (pairs) =>
      pairs.filter((pair) =>
        pair.metricKey.name === "http.client.request.duration" &&
        pair.metricKey.tags.some((t) => t.key === "erp.endpoint" && t.value === endpoint) &&
        pair.metricKey.tags.some((t) => t.key === "error.type" && t.value === "cancelled")
      ).map((pair) => (pair.metricState as unknown as { count: number }).count)
  )

describe("pages no longer wanted are cancelled, not failed", () => {
  it.effect("the list ends while pages past it are in flight: every span ends without an error", () => {
    // 20 records: the empty page at 20 ends the list; it answers once the pages at 30, 40 and 50 are on the wire.
    const server = listServer(20, (offset) => offset === 20 ? { after: 3 } : offset > 20 ? { hang: true } : {})
    const { spans, tracer } = recorder()
    return Effect.gen(function*() {
      const pages = yield* Stream.runCollect(export_("things/ended")).pipe(Effect.withTracer(tracer))
      expect(Chunk.toReadonlyArray(pages).flatMap((p) => p.records.map((r) => r.id))).toEqual(
        Array.from({ length: 20 }, (_, i) => i)
      )
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
      expect(spans.filter((s) => !Exit.isSuccess(s.exit!)).map((s) => s.name)).toEqual([])
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
      expect(Chunk.toReadonlyArray(pages).flatMap((p) => p.records.map((r) => r.id))).toEqual(
        Array.from({ length: 45 }, (_, i) => i)
      )
      // (Pages in flight past the end of the list are cancelled too, as list-ended: how many depends on the window.)
      const moved = calls(spans).filter((c) => c.cancelled === "paging-moved")
      expect(moved.map((c) => [c.offset, c.ok, c.cancelled])).toEqual([
        [30, true, "paging-moved"],
        [40, true, "paging-moved"],
        [50, true, "paging-moved"]
      ])
      expect(spans.filter((s) => !Exit.isSuccess(s.exit!)).map((s) => s.name)).toEqual([])
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
      expect(Chunk.size(records)).toBe(15)
      expect(calls(spans).map((c) => [c.offset, c.ok, c.cancelled])).toEqual([
        [0, true, undefined],
        [10, true, undefined],
        [20, true, "stream-ended"]
      ])
      expect(spans.filter((s) => !Exit.isSuccess(s.exit!)).map((s) => s.name)).toEqual([])
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
      expect(Exit.isFailure(pages.exit!)).toBe(true)
      expect(pages.attributes.get("error.type")).toBe("ApiError")
    }).pipe(Effect.provide(server.client))
  })

  it.effect("interrupted from outside (Ctrl-C): the pages in flight and the export end in error, interrupted", () => {
    const server = listServer(100, (offset) => offset >= 10 ? { hang: true } : {})
    const { spans, tracer } = recorder()
    return Effect.gen(function*() {
      const running = yield* Effect.fork(Stream.runDrain(export_("things/interrupted")).pipe(Effect.withTracer(tracer)))
      yield* server.arrivedPast(0, 2)
      yield* Fiber.interrupt(running)
      expect(calls(spans)).toEqual([
        { offset: 0, ok: true, cancelled: undefined, error: undefined },
        { offset: 10, ok: false, cancelled: undefined, error: "interrupted" },
        { offset: 20, ok: false, cancelled: undefined, error: "interrupted" }
      ])
      const failed = spans.filter((s) => !Exit.isSuccess(s.exit!))
      expect(failed.map((s) => [s.name, Exit.isInterrupted(s.exit!), s.attributes.get("error.type")]).sort()).toEqual([
        ["ErpClient.list", true, "interrupted"],
        ["ErpClient.list", true, "interrupted"],
        ["GET things/interrupted", true, "interrupted"],
        ["GET things/interrupted", true, "interrupted"],
        ["ListEndpoint.pages", true, "interrupted"]
      ])
      expect(spans.some((s) => s.attributes.has("erp.cancelled"))).toBe(false)
    }).pipe(Effect.provide(server.client))
  })
})

describe("what an export tells an operator", () => {
  it.effect("what paging learns of the server's pages: once per endpoint and process, at debug; the next export says nothing of it", () => {
    const lines: Array<{ readonly level: string; readonly text: string }> = []
    const logger = Logger.make(({ logLevel, message }) => {
      lines.push({ level: logLevel.label, text: (Array.isArray(message) ? message : [message]).map(String).join(" ") })
    })
    const exportAll = Stream.runCollect(Partners.stream({ pageSize: 100 })).pipe(
      Effect.provide(Logger.replace(Logger.defaultLogger, logger)),
      Logger.withMinimumLogLevel(LogLevel.Debug)
    )
    const learned = PagingText.pageSize("partner/list", { size: 25, previous: 100, reason: "served" })
    return Effect.gen(function*() {
      expect(Chunk.size(yield* exportAll)).toBe(120)
      const first = lines.splice(0)
      expect(first.filter((line) => line.text === learned)).toEqual([{ level: "DEBUG", text: learned }])
      expect(Chunk.size(yield* exportAll)).toBe(120)
      const second = lines.splice(0)
      expect(second.filter((line) => line.text.includes("records a page"))).toEqual([])
      expect([...first, ...second].filter((line) => line.level !== "DEBUG")).toEqual([])
    }).pipe(Effect.provide(ErpTest.layer({ sandbox: { partners: 120, maxListCount: 25, rateLimit: false } })))
  })
})
