/**
 * The saved state of an unfinished export (every export to a file records one after each complete page, and keeps it
 * when it fails or is stopped), and the checks a run makes before it touches one: same flags, files there.
 */
import type { PlatformError } from "@effect/platform/Error"
import * as FileSystem from "@effect/platform/FileSystem"
import type * as Paginate from "@erp-client/streams/Paginate"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/** A flag's value: a switch, a number, a text, or a repeated flag's values. */
export type FlagValue = string | number | boolean | ReadonlyArray<string>

const word = (value: string | number): string =>
  typeof value === "number" || /^[A-Za-z0-9_.,:/@%+=-]+$/.test(value) ? String(value) : JSON.stringify(value)

/** `--page-size 20`, `--safe`, `no --safe`, `--where a=1 --where b=2`, `no --where`; `command` reads as itself. */
export const describeFlag = (name: string, value: FlagValue | undefined): string => {
  if (name === "command") return typeof value === "string" ? value : "another command"
  if (value === undefined || value === false) return `no ${name}`
  if (value === true) return name
  if (typeof value === "object") {
    return value.length === 0
      ? `no ${name}`
      : value.map((v) => `${name} ${word(v)}`).join(" ")
  }
  return `${name} ${word(value)}`
}

const same = (a: FlagValue | undefined, b: FlagValue | undefined): boolean => JSON.stringify(a) === JSON.stringify(b)

/** `the saved export used --page-size 20, this run --page-size 50`, or `undefined` when the flags agree. */
export const flagDifference = (
  saved: Readonly<Record<string, FlagValue>>,
  now: Readonly<Record<string, FlagValue>>
): string | undefined => {
  const names = [...Object.keys(now), ...Object.keys(saved).filter((name) => !(name in now))]
  const differ = names.filter((name) => !same(saved[name], now[name]))
  if (differ.length === 0) return undefined
  const before = differ.map((name) => describeFlag(name, saved[name])).join(" and ")
  const after = differ.map((name) => describeFlag(name, now[name])).join(" and ")
  return `the saved export used ${before}, this run ${after}`
}

export const ResumeFlags = Schema.Record({
  key: Schema.String,
  value: Schema.Union(Schema.String, Schema.Number, Schema.Boolean, Schema.Array(Schema.String))
})

export const ResumeState = Schema.Struct({
  version: Schema.Literal(2),
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
  records: Schema.Number,
  pages: Schema.Number,
  /** The output's layout (see `Output.Layout`). */
  columns: Schema.optional(Schema.Array(Schema.String)),
  widths: Schema.optional(Schema.Array(Schema.Number)),
  /** Drift-safe paging: the length of `FILE.ids.part` (every id written, one JSON value a line) after that page. */
  idsBytes: Schema.optional(Schema.Number)
})

/**
 * `next` is the library's resume point, every field of it: decoding drops a field the schema does not name, so a
 * field missed here would be lost between a run and its resume (the tail was: a filtering server's repeats were
 * written twice). Compile time checks both ways.
 */
type Same<A, B> = [A] extends [B] ? [B] extends [A] ? true : false : false
export const nextIsResumePoint: Same<
  Required<NonNullable<typeof ResumeState.Type.next>>,
  Required<Paginate.ResumePoint>
> = true

const decodeState = Schema.decodeUnknownEither(Schema.parseJson(ResumeState))

/** The files of an export to `target`. */
export const paths = (target: string) => ({
  part: `${target}.part`,
  state: `${target}.resume.json`,
  ids: `${target}.ids.part`
})

/**
 * What the saved export of `target` lets this run do: start fresh, resume from a state, or nothing (the reason).
 * Reads only; `restart` removes the saved export first, on purpose.
 */
export const inspect = (
  target: string,
  options: {
    readonly mode: "none" | "resume" | "restart"
    readonly flags: typeof ResumeFlags.Type
    readonly keepIds: boolean
  }
): Effect.Effect<
  Option.Option<typeof ResumeState.Type> | { readonly refused: string },
  PlatformError,
  FileSystem.FileSystem
> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const files = paths(target)
    const discard = "--restart discards it"
    if (options.mode === "restart") {
      yield* Effect.forEach([files.state, files.part, files.ids], (file) => fs.remove(file, { force: true }), {
        discard: true
      })
      return Option.none()
    }
    if (!(yield* fs.exists(files.state))) return Option.none()
    if (options.mode === "none") {
      return {
        refused: `${target}: an unfinished export is saved beside it (${files.state}); continue it with --resume, or ` +
          "discard it with --restart"
      }
    }
    const state = decodeState(yield* fs.readFileString(files.state))
    if (state._tag === "Left") return { refused: `--resume: ${files.state} is not a saved export; ${discard}` }
    const difference = flagDifference(state.right.flags, options.flags)
    if (difference !== undefined) {
      return { refused: `--resume: ${difference}; use the same flags, or --restart to discard it` }
    }
    const partSize = yield* fs.stat(files.part).pipe(Effect.map((info) => Number(info.size)), Effect.option)
    if (Option.isNone(partSize) || partSize.value < state.right.bytes) {
      return { refused: `--resume: ${files.part} is missing or shorter than the saved export says; ${discard}` }
    }
    if (options.keepIds && !(yield* fs.exists(files.ids))) {
      return { refused: `--resume: ${files.ids} (the ids a drift-safe export wrote) is missing; ${discard}` }
    }
    return Option.some(state.right)
  })
