/**
 * `erp <resource> changes --since STATE` and `erp api changes ENDPOINT --since STATE`: the records added, changed and
 * removed since the last complete run (docs/changes.md), one line each, NDJSON or CSV, to stdout or a file; the state
 * replaced (atomically) only once the whole list was read and the output published.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Path from "@effect/platform/Path"
import * as ErpClient from "@erp-client/client/ErpClient"
import type * as ErpError from "@erp-client/core/ErpError"
import * as KernelChanges from "@erp-client/kernel/Changes"
import * as Changes from "@erp-client/streams/Changes"
import * as ListEndpoint from "@erp-client/streams/ListEndpoint"
import type * as Paginate from "@erp-client/streams/Paginate"
import type * as Resource from "@erp-client/streams/Resource"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Output from "../Output.js"
import * as Sink from "../Sink.js"
import {
  AnyRecord,
  Argv,
  type CommonArgs,
  note,
  parsePairs,
  redis,
  repeatable,
  shownDefault,
  verbose,
  withClient
} from "./common.js"
import { UsageError } from "./errors.js"
import { listOptions, pageSizeOf, parseWhere } from "./listOptions.js"
import { commandLine } from "./outputLock.js"
import { filterFlags } from "./resourceList.js"
import * as StateFile from "./stateFile.js"

const formats = ["ndjson", "csv"] as const

const changesOptions = {
  since: Options.file("since").pipe(
    Options.withPseudoName("STATE"),
    Options.withDescription(
      "The state the last complete run left (an id and a digest per record, about 9 bytes a record, and the list " +
        "and server it is of: a run of another list or server refuses it). Missing: a first run, every record is " +
        "added. Replaced atomically, and only once the whole list was read. One run at a time (STATE.lock); a " +
        "read-only STATE is refused."
    )
  ),
  init: Options.boolean("init").pipe(
    Options.withDescription(
      "Write STATE from the list as it is now and report nothing (sets the baseline); starts over on a STATE of " +
        "another list, damaged or of an earlier format (never on a file that is not a state)."
    )
  ),
  where: listOptions.where,
  noCheckWhere: listOptions.noCheckWhere,
  pageSize: listOptions.pageSize,
  concurrency: listOptions.concurrency,
  format: Options.choice("format", formats).pipe(
    Options.withDescription(
      "The output format. ndjson: {\"change\":\"added\"|\"changed\",\"id\":…,\"record\":{…}} with the record " +
        "exactly as sent, or {\"change\":\"removed\",\"id\":…}; csv: a change column, then the record's fields as " +
        "partners list writes them."
    ),
    shownDefault<typeof formats[number]>("ndjson")
  ),
  allowDuplicateIds: Options.boolean("allow-duplicate-ids").pipe(
    Options.withDescription(
      "Commit even when records have the id of another, distinct record: the first of each id is kept, the others " +
        "are named on stderr and their changes go unreported. Without it such a run fails and leaves STATE as it was."
    )
  ),
  allowRemovals: Options.boolean("allow-removals").pipe(
    Options.withDescription(
      "Commit a run that removes more than half of the records of STATE (without it, such a run fails and leaves " +
        "STATE as it was: a list answering empty or cut short looks so)."
    )
  ),
  output: Options.file("output").pipe(
    Options.withPseudoName("FILE"),
    Options.withDescription(
      "Write to FILE, which appears only when the run is complete (FILE.part until then), before STATE is replaced. " +
        "One run at a time (FILE.lock)."
    ),
    Options.optional
  ),
  quiet: Options.boolean("quiet").pipe(
    Options.withDescription(
      "No summary line at the end (the counts of changes and the state's size); failures are still said."
    )
  ),
  redis,
  verbose
}

interface ChangesArgs extends CommonArgs {
  readonly since: string
  readonly init: boolean
  readonly allowDuplicateIds: boolean
  readonly allowRemovals: boolean
  readonly where: ReadonlyArray<string>
  readonly noCheckWhere: boolean
  readonly pageSize: string
  readonly concurrency: number
  readonly format: typeof formats[number]
  readonly output: Option.Option<string>
  readonly quiet: boolean
}

/** The reader of stdout went away before the last change (`erp partners changes … | head -1`): a failure here. */
class ReaderGone extends Data.TaggedError("ReaderGone") {
  override get message(): string {
    return "stdout was closed by its reader before the last change"
  }
}

/** A state refused, or a run refused to commit (`Changes.Refused`), said in the command's words. */
class ChangesRefused extends Data.TaggedError("ChangesRefused")<{ readonly message: string }> {}

/** How a refusal says what to do here: with the command's flags. */
const wordsOf = (idFlag: boolean): KernelChanges.Words => ({
  startOver: "--init",
  otherState: "give another --since",
  allowDuplicateIds: "--allow-duplicate-ids",
  allowRemovals: "--allow-removals",
  idField: idFlag ? "choose it with --id-field" : undefined
})

/** The library's refusal as the command says it, naming STATE as the user gave it. */
const refused = (error: Changes.Refused, since: string, idFlag: boolean): ChangesRefused => {
  const words = wordsOf(idFlag)
  switch (error._tag) {
    case "StateUnreadable":
      return new ChangesRefused({ message: KernelChanges.unreadableText(since, error.reason, error.ours, words) })
    case "StateMismatch":
      return new ChangesRefused({ message: KernelChanges.mismatchText(since, error.differences, words) })
    case "DuplicateIds":
      return new ChangesRefused({ message: KernelChanges.duplicateIdsText(since, error, error.idField, words) })
    case "TooManyRemovals":
      return new ChangesRefused({ message: KernelChanges.removalsText(since, error, words) })
  }
}

const LABELS = { Added: "added", Changed: "changed", Removed: "removed" } as const

/**
 * Lines for a chunk of changes. NDJSON wraps each record's text as the server wrote it; CSV writes each change as the
 * record with a `change` column (first in the header; a record's own `change` field gives way to it), a removal as
 * its change and id only.
 */
const encoderOf = (
  format: typeof formats[number],
  idField: string,
  fields: ReadonlyArray<string>,
  terminal: boolean
) => {
  if (format === "ndjson") {
    return (changes: Chunk.Chunk<Changes.Change<unknown>>) => {
      let out = ""
      for (const change of changes) {
        out += change._tag === "Removed"
          ? `{"change":"removed","id":${change.idJson}}\n`
          : `{"change":"${LABELS[change._tag]}","id":${change.idJson},"record":${change.json}}\n`
      }
      return out
    }
  }
  const csv = Output.encoder("csv", {
    fields: ["change", ...(fields.length > 0 ? fields : [idField])],
    terminal
  })
  return (changes: Chunk.Chunk<Changes.Change<unknown>>) => {
    const records: Array<unknown> = []
    const texts: Array<string> = []
    for (const change of changes) {
      const label = JSON.stringify(LABELS[change._tag])
      if (change._tag === "Removed") {
        const text = `{${JSON.stringify(idField)}:${change.idJson},"change":${label}}`
        texts.push(text)
        records.push(JSON.parse(text))
      } else {
        const body = change.json.slice(0, change.json.lastIndexOf("}"))
        const text = `${body}${/\{\s*$/.test(body) ? "" : ","}"change":${label}}`
        texts.push(text)
        records.push({ ...(change.record as object), change: LABELS[change._tag] })
      }
    }
    return csv.page(records, texts)
  }
}

const plural = (n: number, one: string) => `${n.toLocaleString("en-US")} ${one}`

/**
 * One run of changes, whatever the command: the pages of `endpoint` (with `where` and `params`) come from `pages`
 * (drift-safe, handed the run's `Changes.Tracking`).
 */
const runChanges = (options: {
  readonly args: ChangesArgs
  readonly command: string
  readonly endpoint: string
  readonly where: Record<string, string>
  readonly params: ReadonlyArray<readonly [string, string]>
  readonly idField: string
  /** Whether the user chose the id field (`--id-field`): a hint names the flag. */
  readonly idFlag: boolean
  readonly fields: ReadonlyArray<string>
  readonly pages: (
    tracking: Changes.Tracking
  ) => Stream.Stream<Paginate.ResumablePage<unknown>, ErpError.ErpError, ErpClient.ErpClient>
}) => {
  const { args } = options
  const body = Effect.scoped(Effect.gen(function*() {
    const path = yield* Path.Path
    const argv = yield* Effect.serviceOption(Argv)
    const running = Option.match(argv, { onNone: () => options.command, onSome: commandLine })
    // STATE: the file its name stands for, written through a link to it, locked for the run as an --output is.
    const held = yield* StateFile.hold(args.since, { command: running })
    if (held.tookOver !== undefined) yield* note(`took over the stale lock ${held.tookOver}`)
    const state = held.path
    // Not resumable: a run cut short commits no state, so the next run reports the same changes again from the start;
    // it leaves no part behind.
    const sink = Option.isSome(args.output)
      ? yield* Sink.file(args.output.value, {
        mode: "restart",
        flags: { command: options.command, "--since": state, "--format": args.format },
        command: running,
        resumable: false,
        onNote: note
      })
      : Sink.stdout
    if (sink.tookOver !== undefined) yield* note(`took over the stale lock ${sink.tookOver}`)
    // On a terminal, CSV cells are escaped as a table's (NDJSON is, by Sink.stdout); a file gets them exactly.
    const encode = encoderOf(
      args.format,
      options.idField,
      options.fields,
      Option.isNone(args.output) && Sink.stdoutIsTerminal()
    )
    let written = 0
    let pages = 0
    let summary: Changes.Summary | undefined
    // The state records the list it is of, the server included: one of another list is refused.
    const source = KernelChanges.sourceOf({
      baseUrl: (yield* ErpClient.ErpClient).baseUrl,
      endpoint: options.endpoint,
      idField: options.idField,
      where: options.where,
      params: options.params
    })
    yield* Changes.make(options.pages, {
      key: path.basename(state),
      idField: options.idField,
      source,
      init: args.init,
      allowDuplicateIds: args.allowDuplicateIds,
      maxRemovedRatio: args.allowRemovals ? 1 : undefined,
      // A CSV of no change is its header.
      beforeCommit: Effect.zipRight(
        Effect.suspend(() =>
          written === 0 && args.format === "csv" && !args.init
            ? sink.write(encode(Chunk.empty()), { records: 0, pages: 0 })
            : Effect.void
        ),
        sink.commit
      ),
      onSummary: (s) => Effect.sync(() => void (summary = s))
    }).pipe(
      Stream.runForEachChunk((changes) => {
        if (Chunk.isEmpty(changes)) return Effect.void
        written += Chunk.size(changes)
        pages++
        return sink.write(encode(changes), { records: written, pages })
      }),
      Effect.provide(Changes.layerFile(path.dirname(state))),
      // Named as the user gave it, not by its key in the store (its file name), in the command's words.
      Effect.catchIf(
        (error): error is Changes.Refused =>
          error instanceof Changes.StateUnreadable || error instanceof Changes.StateMismatch ||
          error instanceof Changes.DuplicateIds || error instanceof Changes.TooManyRemovals,
        (error) => Effect.fail(refused(error, args.since, options.idFlag))
      )
    )
    if (summary !== undefined && summary.duplicates.records > 0) {
      yield* note(KernelChanges.duplicatesNote(summary.duplicates))
    }
    if (summary !== undefined && !args.quiet) {
      yield* note(
        args.init
          ? `${plural(summary.added + summary.changed + summary.unchanged, "records")} in the state ${args.since} ` +
            `(${plural(summary.stateBytes, "bytes")}); nothing reported (--init)`
          : `${plural(summary.added, "added")}, ${plural(summary.changed, "changed")}, ` +
            `${plural(summary.removed, "removed")}, ${plural(summary.unchanged, "unchanged")}; state ${args.since} ` +
            `(${plural(summary.stateBytes, "bytes")})`
      )
    }
  }))
  return withClient(args, body).pipe(
    // Not the quiet end `list` has: the changes after the ones read were not delivered, and STATE was not replaced.
    Effect.catchIf(
      (error): error is Sink.StdoutClosed => error instanceof Sink.StdoutClosed,
      () => Effect.fail(new ReaderGone())
    ),
    // A refusal said what to do; any other failure cut the run short.
    Effect.onExit((exit) =>
      Exit.isSuccess(exit) || refusedAtOnce(exit)
        ? Effect.void
        : note(`the state ${args.since} was left as it was and no removal was reported: run the same command again`)
    )
  )
}

// Refused before anything was read (STATE or FILE locked by another run, or not to be replaced), or refused by the
// state's own checks (another list or server, damaged, records sharing an id, too many removals): its line says all.
const refusedAtOnce = (exit: Exit.Exit<unknown, unknown>) =>
  Exit.isFailure(exit) && Option.exists(
    Cause.failureOption(exit.cause),
    (error) =>
      error instanceof StateFile.StateRefused || error instanceof Sink.OutputLocked || error instanceof ChangesRefused
  )

const checkArgs = (args: ChangesArgs): Either.Either<void, UsageError> => {
  if (pageSizeOf(args) === undefined) {
    return Either.left(new UsageError({ reason: "--page-size must be auto or a whole number from 1 to 10000" }))
  }
  if (args.concurrency < 1 || args.concurrency > 64) {
    return Either.left(new UsageError({ reason: "--concurrency must be from 1 to 64" }))
  }
  return Either.void
}

/** What `<resource> changes` does, in one line. */
export const changesSummary = (resource: Resource.Any): string =>
  `The ${resource.name} added, changed and removed since the last run (--since STATE)`

/** `erp <resource> changes`. */
export const changesCommand = (resource: Resource.Any) =>
  Command.make(
    "changes",
    {
      filters: filterFlags(resource),
      ...changesOptions
    },
    (args) =>
      Effect.gen(function*() {
        yield* checkArgs(args)
        let where: Record<string, unknown> = yield* parseWhere(resource.list, args.where)
        for (const filter of resource.filters) {
          if (args.filters[filter.flag] === true) where = { ...where, ...filter.where }
        }
        return yield* runChanges({
          args,
          command: `erp ${resource.name} changes`,
          endpoint: resource.list,
          where: where as Record<string, string>,
          params: [],
          idField: resource.idField,
          idFlag: false,
          fields: resource.fields,
          pages: (tracking) =>
            ListEndpoint.pages(resource.list, AnyRecord, {
              where: where as Record<string, string>,
              checkConditions: !args.noCheckWhere,
              pageSize: pageSizeOf(args),
              concurrency: args.concurrency,
              safe: { idField: resource.idField, ...tracking },
              exact: true
            })
        })
      })
  ).pipe(Command.withDescription(
    `${changesSummary(resource)}: the whole list read drift-safe, each record compared by a digest of its exact ` +
      "text; one line per change, removals once the end of the list is confirmed, STATE replaced only then. A run " +
      "that fails or is interrupted leaves STATE as it was, reports no removal and exits non-zero: run it again."
  ))

/** `erp api changes ENDPOINT`. */
export const apiChanges = Command.make(
  "changes",
  {
    endpoint: Args.text({ name: "ENDPOINT" }).pipe(
      Args.withDescription("The list endpoint's path after ERP_BASE_URL, e.g. invoice/list.")
    ),
    params: Options.text("param").pipe(
      Options.withAlias("p"),
      Options.withPseudoName("NAME=VALUE"),
      Options.withDescription("A query parameter, sent with every page."),
      repeatable
    ),
    idField: Options.text("id-field").pipe(
      Options.withPseudoName("NAME"),
      Options.withDescription("The field that identifies a record."),
      shownDefault("id")
    ),
    ...changesOptions
  },
  (args) =>
    Effect.gen(function*() {
      const path = yield* ErpClient.validateEndpoint(args.endpoint)
      const query = yield* parsePairs("-p", "NAME=VALUE", args.params)
      yield* checkArgs(args)
      const where = yield* parseWhere(path, args.where)
      return yield* runChanges({
        args,
        command: `erp api changes ${path}`,
        endpoint: path,
        where: where as Record<string, string>,
        params: query,
        idField: args.idField,
        idFlag: true,
        fields: [],
        pages: (tracking) =>
          ListEndpoint.pages(path, AnyRecord, {
            where,
            checkConditions: !args.noCheckWhere,
            params: query,
            pageSize: pageSizeOf(args),
            concurrency: args.concurrency,
            safe: { idField: args.idField, ...tracking },
            exact: true
          })
      })
    })
).pipe(Command.withDescription(
  "The records of a list endpoint added, changed and removed since the last run (--since STATE), as partners " +
    "changes reports them: records told apart by --id-field."
))
