/**
 * The saved state of an unfinished export (every resumable export to a file records one after each complete page, and
 * keeps it when it fails or is stopped), and the checks a run makes before it continues one: the file is whole (its
 * checksum), it was made against the same server and endpoint with the same flags, and the files it describes are
 * there and unchanged (their checksums). Its layout and the words for what differs are the kernel's
 * (`@erp-client/kernel/ResumeFile`).
 */
import * as Environment from "@erp-client/client/Environment"
import * as ResumeFile from "@erp-client/kernel/ResumeFile"
import type * as Paginate from "@erp-client/streams/Paginate"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Files from "./files.js"

export const ResumeFlags = Schema.Record({
  key: Schema.String,
  value: Schema.Union(Schema.String, Schema.Number, Schema.Boolean, Schema.Array(Schema.String))
})

const Crc = Schema.String.pipe(Schema.pattern(/^[0-9a-f]{8}$/))

export const ResumeState = Schema.Struct({
  /** The server the records came from (`ResumeFile.serverOf`: scheme, host, port, path; never a key). */
  server: Schema.optional(Schema.String),
  /** The endpoint the records came from. */
  endpoint: Schema.optional(Schema.String),
  flags: ResumeFlags,
  /** Where paging goes on (the last page's `next`), with what it had learned; absent once the list was read whole. */
  next: Schema.optional(Schema.Struct({
    offset: Schema.Number,
    pageSize: Schema.Number,
    served: Schema.Number,
    overlap: Schema.optional(Schema.Number),
    /** A short page not yet settled: its length. */
    suspect: Schema.optional(Schema.Number),
    /** After a short page: hashes of the last records written, which a filtering server serves again at `offset`. */
    tail: Schema.optional(Schema.Array(Schema.Number))
  })),
  /** The length of `FILE.part` after that page: anything beyond is a page cut short. */
  bytes: Schema.Number,
  /** The CRC-32 of those `bytes` of `FILE.part`. */
  partCrc: Crc,
  records: Schema.Number,
  pages: Schema.Number,
  /** The output's layout (see `Output.Layout`). */
  columns: Schema.optional(Schema.Array(Schema.String)),
  widths: Schema.optional(Schema.Array(Schema.Number)),
  /** Drift-safe paging: the length of `FILE.ids.part` (every id written, one JSON value a line) after that page. */
  idsBytes: Schema.optional(Schema.Number),
  /** The CRC-32 of those `idsBytes` of `FILE.ids.part`. */
  idsCrc: Schema.optional(Crc)
})

export type ResumeState = typeof ResumeState.Type

/**
 * `next` is the library's resume point, every field of it: decoding drops a field the schema does not name, so a
 * field missed here would be lost between a run and its resume (the tail was: a filtering server's repeats were
 * written twice). Compile time checks both ways.
 */
type Same<A, B> = [A] extends [B] ? [B] extends [A] ? true : false : false
export const nextIsResumePoint: Same<
  Required<NonNullable<ResumeState["next"]>>,
  Required<Paginate.ResumePoint>
> = true

const decodeContent = Schema.decodeUnknownEither(ResumeState)
const encodeContent = Schema.encodeSync(ResumeState)

/** The text of a resume file for `state`: sealed with its checksum (`ResumeFile.seal`). */
export const encode = (state: ResumeState): string => ResumeFile.seal(encodeContent(state))

/**
 * The server this run reads from, as a resume file records it (`ResumeFile.serverOf` of `ERP_BASE_URL`, read as the
 * client reads it: from the current `ConfigProvider`), or `undefined` when it is not set (the client refuses that).
 */
export const serverOfSettings: Effect.Effect<string | undefined> = Config.string(Environment.client.baseUrl).pipe(
  Effect.map(ResumeFile.serverOf),
  Effect.orElseSucceed(() => undefined)
)

/** The files of an export to `target`. */
export const paths = (target: string) => ({
  part: `${target}.part`,
  state: `${target}.resume.json`,
  ids: `${target}.ids.part`
})

/** The CRC-32 of the first `length` bytes of `path` (never read through a link), or none when it is shorter. */
export const crcOf = (path: string, length: number): Effect.Effect<Option.Option<number>, Files.FileError> =>
  Effect.scoped(Effect.gen(function*() {
    const handle = yield* Files.openExisting(path, "r")
    if ((yield* handle.stat).size < length) return Option.none()
    const chunk = new Uint8Array(Math.min(length, 1 << 20))
    let crc = 0
    for (let done = 0; done < length;) {
      const read = yield* handle.read(chunk.subarray(0, Math.min(chunk.length, length - done)), done)
      if (read === 0) return Option.none()
      crc = ResumeFile.crc32(chunk.subarray(0, read), crc)
      done += read
    }
    return Option.some(crc)
  }))

/**
 * What the saved export of `target` (the file its name stands for) lets this run do: start fresh, resume from a state,
 * or nothing (the reason). Reads only; `restart` removes the saved export first, on purpose (the names, never what a
 * link at one points to).
 */
export const inspect = (
  target: string,
  options: {
    readonly mode: "none" | "resume" | "restart"
    readonly header: ResumeFile.Header
    readonly keepIds: boolean
    /** How the user named the output, for messages. */
    readonly name?: string | undefined
    /** How the files beside it are named in messages (`name`, unless it is a link that leads elsewhere). */
    readonly shown?: string | undefined
  }
): Effect.Effect<Option.Option<ResumeState> | { readonly refused: string }, Files.FileError> =>
  Effect.gen(function*() {
    const files = paths(target)
    const named = paths(options.shown ?? target)
    const discard = "--restart discards it and starts over"
    if (options.mode === "restart") {
      yield* Effect.forEach([files.state, files.part, files.ids], Files.remove, { discard: true })
      return Option.none()
    }
    if (Option.isNone(yield* Files.lstat(files.state))) return Option.none()
    if (options.mode === "none") {
      return {
        refused: `${options.name ?? target}: an unfinished export is saved beside it (${named.state}); continue it ` +
          "with --resume, or discard it with --restart"
      }
    }
    const text = yield* Files.readText(files.state).pipe(
      Effect.map(Either.right),
      Effect.catchIf((error) => error.code === "ELOOP", () => Effect.succeed(Either.left("is a symbolic link")))
    )
    if (Either.isLeft(text)) return { refused: `--resume: ${named.state} ${text.left}, not a saved export; ${discard}` }
    if (Option.isNone(text.right)) return Option.none()
    const unsealed = ResumeFile.unseal(text.right.value)
    if (!unsealed.ok) return { refused: `--resume: ${named.state} ${unsealed.reason}; ${discard}` }
    const decoded = decodeContent(unsealed.content)
    if (Either.isLeft(decoded)) {
      return { refused: `--resume: ${named.state} is not a saved export of this version of erp; ${discard}` }
    }
    const state = decoded.right
    const difference = ResumeFile.headerDifference(
      { server: state.server, endpoint: state.endpoint, flags: state.flags },
      options.header
    )
    if (difference !== undefined) {
      return { refused: `--resume: ${difference}, or --restart to discard it and start over` }
    }
    const unchanged = (real: string, path: string, length: number, crc: string | undefined, what: string) =>
      crcOf(real, length).pipe(
        Effect.map((actual) =>
          Option.isNone(actual)
            ? `--resume: ${path} (${what}) is missing or shorter than the saved export says; ${discard}`
            : ResumeFile.crcText(actual.value) !== crc
            ? `--resume: ${path} (${what}) does not match the saved export: it was changed or damaged since; ${discard}`
            : undefined
        ),
        Effect.catchIf(
          (error) => error.code === "ENOENT" || error.code === "ELOOP",
          () =>
            Effect.succeed(
              `--resume: ${path} (${what}) is missing or is a symbolic link, not the saved export's; ${discard}`
            )
        )
      )
    const part = yield* unchanged(files.part, named.part, state.bytes, state.partCrc, "the records written")
    if (part !== undefined) return { refused: part }
    if (options.keepIds) {
      const ids = yield* unchanged(
        files.ids,
        named.ids,
        state.idsBytes ?? 0,
        state.idsCrc ?? ResumeFile.crcText(0),
        "the ids a drift-safe export wrote"
      )
      if (ids !== undefined) return { refused: ids }
    }
    return Option.some(state)
  })
