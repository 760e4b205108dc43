/**
 * One export of a list endpoint, whatever the command: pages to NDJSON, CSV or a table, on stdout or in a file
 * (atomic, resumable), with progress on a terminal.
 */
import type * as ErpClient from "@erp-client/client/ErpClient"
import type * as ErpRateLimiter from "@erp-client/client/ErpRateLimiter"
import type * as Page from "@erp-client/core/Page"
import * as Changes from "@erp-client/kernel/Changes"
import type * as Paginate from "@erp-client/streams/Paginate"
import type * as Resource from "@erp-client/streams/Resource"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Output from "../Output.js"
import * as Progress from "../Progress.js"
import * as Sink from "../Sink.js"
import { Argv, type CommonArgs, counted, Leftover, note, withClient } from "./common.js"
import type { ListArgs } from "./listOptions.js"
import { commandLine } from "./outputLock.js"
import { serverOfSettings } from "./savedExport.js"

/**
 * Where paging starts: where the last page of a resumed export said, without the ids it already wrote; and what
 * drift-safe paging tells of the records it does not write (`onDrift`, for `safe`).
 */
export interface Start {
  readonly resume: Paginate.ResumePoint | undefined
  readonly resumeAfter: ReadonlyArray<string | number>
  readonly onDrift: (event: Paginate.DriftEvent) => Effect.Effect<void>
}

/**
 * The page's records as the server wrote them (`Page.json`), when they pair one for one with `page.raw`. A page that
 * drift-safe paging trimmed of records already written must have its texts trimmed alike; one that does not is written
 * from its parsed records rather than misaligned.
 */
const textsOf = (page: Page.Page<unknown>): ReadonlyArray<string> | undefined =>
  page.json !== undefined && page.json.length === page.raw.length ? page.json : undefined

// How many of the ids --safe did not write its summary names.
const NAMED_IDS = 5

/**
 * `id 17`, `ids 17, "A-9"`, `ids 1, 2, 3, 4, 5 and 7 more`: ids as the server wrote them, as JSON (a string quoted, a
 * number bare, one beyond a double with its own digits).
 */
const namedIds = (ids: ReadonlyArray<string>, total: number): string => {
  const named = ids.slice(0, NAMED_IDS).join(", ")
  const more = total - Math.min(ids.length, NAMED_IDS)
  return `${total === 1 ? "id" : "ids"} ${named}${more > 0 ? ` and ${more} more` : ""}`
}

/** How long a run took, as people read it: `0.4 s`, `59.9 s`, `12 min 5 s`. */
export const tookText = (millis: number): string => {
  const seconds = Math.max(0, millis) / 1000
  return seconds < 60 ? `${seconds.toFixed(1)} s` : `${Math.floor(seconds / 60)} min ${Math.floor(seconds % 60)} s`
}

/**
 * The line an export to a file ends with (as `changes` ends with its counts): the records the file holds, its name
 * and size, then what this run did: `1,000 records written to p.ndjson (420,789 bytes): 3 pages, 3 requests, 0.4 s`.
 * A resumed export's file holds the records of the run it resumed too, said beside the size.
 */
export const exportSummary = (summary: {
  readonly file: string
  readonly records: number
  readonly bytes: number
  /** Records the resumed run had written, if any. */
  readonly resumedRecords: number
  readonly pages: number
  readonly requests: number
  readonly millis: number
}): string =>
  `${counted(summary.records, "record")} written to ${summary.file} (${counted(summary.bytes, "byte")}` +
  (summary.resumedRecords > 0 ? `; ${summary.resumedRecords.toLocaleString("en-US")} of them by the run resumed` : "") +
  `): ${counted(summary.pages, "page")}, ${counted(summary.requests, "request")}, ${tookText(summary.millis)}`

export const runExport = <E>(options: {
  readonly args: ListArgs & CommonArgs
  /** The flags a resume must repeat (see `Sink.ResumeFlags`). */
  readonly flags: Sink.ResumeFlags
  /** The endpoint the records come from: a resume of another is refused. */
  readonly endpoint: string
  /** The table's columns: a resource's declared ones, or the first page's first fields. */
  readonly table: ReadonlyArray<Resource.Column> | "fields"
  /** The first CSV columns (a resource's declared fields). */
  readonly fields?: ReadonlyArray<string> | undefined
  /** The field `--safe` tells records apart by. */
  readonly idField: string
  /**
   * Checks a record, as sent, against the endpoint's contract: a line saying how it strays, or `undefined`. Records
   * that stray are written all the same, counted on stderr at the end, and named one a line with `--verbose`.
   */
  readonly contract?: ((record: unknown, json?: string) => string | undefined) | undefined
  readonly pages: (start: Start) => Stream.Stream<Paginate.ResumablePage<unknown>, E, ErpClient.ErpClient>
}) => {
  const { args } = options
  const progress = Progress.make({ enabled: process.stderr.isTTY === true && !args.quiet })
  // Requests this run sent, for the summary: each attempt takes a place in the limit (retries too).
  let requests = 0
  const countRequests = (limiter: ErpRateLimiter.Service): ErpRateLimiter.Service => ({
    ...limiter,
    acquire: (key, deadline, bound, timeoutMillis) =>
      Effect.tap(limiter.acquire(key, deadline, bound, timeoutMillis), () => Effect.sync(() => void requests++))
  })
  // The ids a resumed drift-safe export starts from, keyed as drift-safe paging keys them (an id beyond a double by
  // the digits the server wrote: Changes.idOf).
  const idsOf = (page: Page.Page<unknown>) => {
    const texts = textsOf(page)
    return page.raw.map((record, i) =>
      Changes.idOf(record, options.idField, () => texts?.[i] ?? JSON.stringify(record))!
    )
  }
  const body = Effect.scoped(Effect.gen(function*() {
    const startedAt = yield* Clock.currentTimeMillis
    const mode: Sink.ResumeMode = args.restart ? "restart" : args.resume ? "resume" : "none"
    // The lock of an output names this run by its command line (without --redis's value: see outputLock.ts).
    const argv = yield* Effect.serviceOption(Argv)
    const sink = Option.isSome(args.output)
      ? yield* Sink.file(args.output.value, {
        mode,
        flags: options.flags,
        keepIds: args.safe,
        command: Option.match(argv, { onNone: () => undefined, onSome: commandLine }),
        // A resume against another server or endpoint is refused: its records would not be the saved ones' list.
        server: yield* serverOfSettings,
        endpoint: options.endpoint,
        onNote: note
      })
      : Sink.stdout
    if (sink.tookOver !== undefined) yield* note(`took over the stale lock ${sink.tookOver}`)
    // A failure or an interruption from here on says what the file export keeps (Cli.describeFailure).
    const leftover = yield* Effect.serviceOption(Leftover)
    if (Option.isSome(leftover)) leftover.value.watch(sink.kept)
    const resumed = Option.getOrUndefined(sink.resumed)
    const encoder = Output.encoder(args.format, {
      resumed: resumed && { columns: resumed.columns, widths: resumed.widths },
      spreadsheet: args.spreadsheet,
      table: options.table,
      fields: options.fields,
      // On a terminal, nothing the server sent is written raw (docs/cli.md); a file or a pipe gets it exactly.
      terminal: Option.isNone(args.output) && Sink.stdoutIsTerminal()
    })
    const shown = yield* progress.start
    let records = resumed?.records ?? 0
    let pages = resumed?.pages ?? 0
    // What this run wrote, for the summary.
    let pagesRun = 0
    let bytes = resumed?.bytes ?? 0
    let strays = 0
    // Records drift-safe paging did not write: each has an id already written, with other content. The first few ids
    // are named in the summary.
    let dropped = 0
    const droppedIds: Array<string> = []
    const onDrift = (event: Paginate.DriftEvent) =>
      Effect.sync(() => {
        if (event._tag !== "Dropped") return
        dropped++
        if (droppedIds.length < NAMED_IDS) droppedIds.push(event.idJson)
      })
    const check = options.contract
    // A saved export without a next page read the list whole and failed only to publish it: nothing to fetch.
    const source = resumed !== undefined && resumed.next === undefined
      ? Stream.empty
      : options.pages({ resume: resumed?.next, resumeAfter: sink.resumedIds, onDrift })
    yield* source.pipe(
      Stream.tap((page) =>
        check === undefined ? Effect.void : Effect.forEach(page.raw, (record, i) => {
          const stray = check(record, textsOf(page)?.[i])
          if (stray === undefined) return Effect.void
          strays++
          return args.verbose ? note(stray) : Effect.void
        }, { discard: true })
      ),
      Stream.runForEach((page) => {
        records += page.raw.length
        pages += 1
        pagesRun += 1
        shown.page(page.raw.length, page.next?.pageSize)
        const text = encoder.page(page.raw, textsOf(page))
        bytes += Buffer.byteLength(text)
        const layout = encoder.layout()
        return sink.write(text, {
          next: page.next,
          records,
          pages,
          ...(layout?.columns === undefined ? {} : { columns: layout.columns }),
          ...(layout?.widths === undefined ? {} : { widths: layout.widths })
        }, args.safe ? idsOf(page) : undefined)
      })
    )
    yield* sink.commit
    // An export to a file ends with its summary (the progress line, on a terminal, gives way to it); to stdout, stderr
    // says nothing unless something is wrong: the reader has the data.
    const summarized = args.quiet ? undefined : Option.getOrUndefined(args.output)
    yield* summarized === undefined ? shown.done : shown.clear
    if (strays > 0) {
      yield* note(
        `${strays} of the ${records} records written do not match the contract (written as sent; ` +
          (args.verbose ? "each is named above" : "--verbose names each") + ", --strict fails at the first)"
      )
    }
    if (dropped > 0) {
      yield* note(
        `${dropped} record${dropped === 1 ? " was" : "s were"} not written (${namedIds(droppedIds, dropped)}): ` +
          `${dropped === 1 ? "it has" : "each has"} the id of a record already written, with other content (updated ` +
          "during the export, or a distinct record that repeats an id; --safe tells records apart by id; " +
          (args.verbose ? "each is named above)" : "--verbose names each with its offset)")
      )
    }
    if (encoder.formulaCells() > 0) {
      yield* note(
        "some CSV cells start with =, +, -, @, a tab or CR, which a spreadsheet program may run as a formula; " +
          "--spreadsheet writes them as text (the data is exact without it)"
      )
    }
    if (summarized !== undefined) {
      yield* note(exportSummary({
        file: summarized,
        records,
        bytes,
        resumedRecords: resumed?.records ?? 0,
        pages: pagesRun,
        requests,
        millis: (yield* Clock.currentTimeMillis) - startedAt
      }))
    }
  }))
  return withClient(args, body, progress.observer, countRequests)
}
