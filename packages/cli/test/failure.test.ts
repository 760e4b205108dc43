import { NodeContext } from "@effect/platform-node"
import { describe, expect, it, vi } from "@effect/vitest"
import { Cli, Progress, Sink } from "@erp-client/cli"
import { ErpError } from "@erp-client/core"
import { Effect, Exit, Option } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describeLookupFailure, LookupsFailed } from "../src/internal/resourceGet.js"

const kept: Sink.Kept = { part: "out.ndjson.part", records: 400, mode: "none" }

describe("Cli.describeFailure", () => {
  it("ends the line of a failed or stopped export with what it kept and how to go on", () => {
    expect(Cli.describeFailure(new ErpError.Unauthorized({ endpoint: "partner/list" }), { kept })).toEqual({
      code: 3,
      line: "partner/list: the API key was refused (Unauthorized); kept 400 records in out.ndjson.part: run the same " +
        "command with --resume to continue, or --restart to start over"
    })
    expect(Cli.describeFailure(new Cli.Interrupted({ signal: "SIGTERM" }), { kept })).toEqual({
      code: 143,
      line: "interrupted (SIGTERM); kept 400 records in out.ndjson.part: run the same command with --resume to " +
        "continue, or --restart to start over"
    })
    expect(Cli.describeFailure(new Cli.Interrupted({ signal: "SIGINT" }))).toEqual({
      code: 130,
      line: "interrupted (SIGINT)"
    })
    expect(Cli.describeFailure(new Cli.Interrupted({ signal: "SIGINT", atOnce: true })).line).toBe(
      "interrupted (SIGINT), then stopped at once by another signal"
    )
    const limited = new ErpError.RateLimited({ endpoint: "partner/list", waitedMillis: 1000 })
    expect(Cli.describeFailure(limited, { kept }).code).toBe(5)
  })

  it("says how to go on in the words of the run's own flags", () => {
    expect(Sink.describeKept({ ...kept, records: 1 })).toBe(
      "kept 1 record in out.ndjson.part: run the same command with --resume to continue, or --restart to start over"
    )
    expect(Sink.describeKept({ ...kept, mode: "resume" })).toBe(
      "kept 400 records in out.ndjson.part: run the same command again to continue, or with --restart instead of " +
        "--resume to start over"
    )
    expect(Sink.describeKept({ ...kept, mode: "restart" })).toBe(
      "kept 400 records in out.ndjson.part: run the same command with --resume instead of --restart to continue"
    )
  })

  it("a batch of lookups: 4 when only not found ones failed, 1 when any other did (it wins), each said already", () => {
    expect(Cli.describeFailure(new LookupsFailed({ notFound: 2, failed: 0 }))).toEqual({ code: 4, line: undefined })
    expect(Cli.describeFailure(new LookupsFailed({ notFound: 2, failed: 1 }))).toEqual({ code: 1, line: undefined })
    expect(Cli.describeFailure(new LookupsFailed({ notFound: 0, failed: 3 }))).toEqual({ code: 1, line: undefined })
    expect(
      describeLookupFailure(
        new ErpError.ApiError({ endpoint: "partner/get", code: 0, serverMessage: "Internal error" }),
        "id=7"
      )
    ).toBe("partner/get id=7: the server reported an error (code 0): Internal error")
    expect(describeLookupFailure(new ErpError.NotFound({ endpoint: "partner/get", selector: "id=9" }), "id=9")).toBe(
      "partner/get: not found (id=9)"
    )
  })
})

describe("signals", () => {
  it("are in --help's footer, with 143 beside 130", () => {
    const root = Cli.helpPage(["--help"], { color: false })!.replace(/\s+/g, " ")
    expect(root).toContain("130 interrupted (Ctrl-C, SIGINT), 143 terminated (SIGTERM)")
    expect(root).toContain("Signals: SIGINT and SIGTERM stop the command in order")
  })

  it.live("one heard before the command listens (at start-up) stops it in order; its copy changes nothing", () =>
    Effect.gen(function*() {
      const said: Array<string> = []
      const stderr = vi.spyOn(process.stderr, "write").mockImplementation((text) => {
        said.push(String(text))
        return true
      })
      const stdout = vi.spyOn(process.stdout, "write").mockImplementation(() => true)
      const exits: Array<number> = []
      // As bin.ts hands them over: the signals heard while the command was loading, at once.
      const signals: Cli.Signals = {
        listen: (listener) => {
          listener("SIGTERM")
          listener("SIGTERM")
        },
        exitNow: (code) => exits.push(code)
      }
      const code = yield* Cli.main(["node", "erp", "sandbox", "--port", "0"], { signals }).pipe(
        Effect.provide(NodeContext.layer),
        Effect.ensuring(Effect.sync(() => {
          stderr.mockRestore()
          stdout.mockRestore()
        }))
      )
      expect(code).toBe(143)
      expect(said).toEqual(["erp: interrupted (SIGTERM)\n"])
      expect(exits).toEqual([])
    }))

  it.live("one a second or more after the first, while stopping, ends the process at once with a line", () =>
    Effect.gen(function*() {
      const said: Array<string> = []
      const stderr = vi.spyOn(process.stderr, "write").mockImplementation((text) => {
        said.push(String(text))
        return true
      })
      const stdout = vi.spyOn(process.stdout, "write").mockImplementation(() => true)
      const exits: Array<number> = []
      const start = Date.now()
      const signals: Cli.Signals = {
        listen: (listener) => {
          listener("SIGINT")
          // The stop is still running two seconds later.
          const now = vi.spyOn(Date, "now").mockReturnValue(start + 2_000)
          listener("SIGTERM")
          now.mockRestore()
        },
        exitNow: (code) => exits.push(code)
      }
      yield* Cli.main(["node", "erp", "sandbox", "--port", "0"], { signals }).pipe(
        Effect.provide(NodeContext.layer),
        Effect.ensuring(Effect.sync(() => {
          stderr.mockRestore()
          stdout.mockRestore()
        }))
      )
      expect(exits).toEqual([130])
      expect(said[0]).toBe("erp: interrupted (SIGINT), then stopped at once by another signal\n")
    }))

  it("one within a second of the first is a copy of it; a later one ends the command at once", () => {
    expect(Cli.againAfter(10_000, 10_000)).toBe("copy")
    expect(Cli.againAfter(10_000, 10_999)).toBe("copy")
    expect(Cli.againAfter(10_000, 11_000)).toBe("at once")
  })
})

describe("the progress line", () => {
  it("counts records and pages and labels the page size: no total it does not know", () => {
    const snapshot = { records: 3000, pages: 30, pageSize: 100, wait: undefined }
    expect(Progress.progressLine(snapshot, 0, 2000)).toBe(
      "records 3000 · pages 30 · page size 100 · 1500 rec/s · 2.0 s"
    )
    expect(Progress.progressLine({ ...snapshot, pageSize: undefined }, 0, 2000)).toBe(
      "records 3000 · pages 30 · 1500 rec/s · 2.0 s"
    )
    expect(Progress.progressLine(snapshot, 0, 2000)).not.toMatch(/ of /)
  })

  it.scoped("done leaves the last line; clear erases it, for a summary said in its place", () =>
    Effect.gen(function*() {
      const written: Array<string> = []
      const stderr = vi.spyOn(process.stderr, "write").mockImplementation((chunk: any) => {
        written.push(String(chunk))
        return true
      })
      yield* Effect.addFinalizer(() => Effect.sync(() => stderr.mockRestore()))
      const left = yield* Effect.scoped(Effect.gen(function*() {
        const shown = yield* Progress.make({ enabled: true }).start
        shown.page(500, 500)
        yield* shown.done
        return written.splice(0)
      }))
      expect(left.at(-2)).toBe("\r\u001b[Krecords 500 · pages 1 · page size 500 · 500000 rec/s · 0.0 s")
      expect(left.at(-1)).toBe("\n")
      const cleared = yield* Effect.scoped(Effect.gen(function*() {
        const shown = yield* Progress.make({ enabled: true }).start
        shown.page(500, 500)
        yield* shown.clear
        return written.splice(0)
      }))
      // Once cleared, closing the scope draws nothing more.
      expect(cleared.at(-1)).toBe("\r\u001b[K")
      expect(cleared.join("")).not.toContain("\n")
      expect(written).toEqual([])
    }))
})

describe("Sink.file", () => {
  const flags = { command: "test" }
  const inDir = (f: (dir: string) => Effect.Effect<void, unknown, NodeContext.NodeContext>) =>
    Effect.acquireUseRelease(
      Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "erp-sink-"))),
      f,
      (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
    ).pipe(Effect.provide(NodeContext.layer))
  const page = (records: number) => ({ records, pages: records / 2, next: { offset: records, pageSize: 2, served: 2 } })

  it.live("a failed export keeps what it recorded (and its ids), whatever the mode", () =>
    inDir((dir) =>
      Effect.gen(function*() {
        const target = Path.join(dir, "out.ndjson")
        let seen: Sink.Kept | undefined
        const exit = yield* Effect.exit(Effect.scoped(Effect.gen(function*() {
          const sink = yield* Sink.file(target, { mode: "none", flags, keepIds: true })
          yield* sink.write("{\"id\":1}\n{\"id\":2}\n", page(2), [1, 2])
          seen = sink.kept()
          return yield* Effect.fail("the server went away")
        })))
        expect(Exit.isFailure(exit)).toBe(true)
        expect(seen).toEqual({ part: `${target}.part`, records: 2, mode: "none" })
        expect(Fs.readdirSync(dir).sort()).toEqual(["out.ndjson.ids.part", "out.ndjson.part", "out.ndjson.resume.json"])
        expect(Fs.readFileSync(`${target}.ids.part`, "utf8")).toBe("1\n2\n")

        // The next run finds it: refused without --resume, continued with it.
        const refused = yield* Effect.exit(Effect.scoped(Sink.file(target, { mode: "none", flags, keepIds: true })))
        expect(Exit.isFailure(refused)).toBe(true)
        yield* Effect.scoped(Effect.gen(function*() {
          const sink = yield* Sink.file(target, { mode: "resume", flags, keepIds: true })
          expect(Option.map(sink.resumed, (state) => state.records)).toEqual(Option.some(2))
          expect(sink.resumedIds).toEqual([1, 2])
          yield* sink.write("{\"id\":3}\n", { records: 3, pages: 2 }, [3])
          yield* sink.commit
          expect(sink.kept()).toBeUndefined()
        }))
        expect(Fs.readdirSync(dir)).toEqual(["out.ndjson"])
        expect(Fs.readFileSync(target, "utf8")).toBe("{\"id\":1}\n{\"id\":2}\n{\"id\":3}\n")
      })
    ))

  it.live("an export stopped before a page was recorded leaves nothing", () =>
    inDir((dir) =>
      Effect.gen(function*() {
        const target = Path.join(dir, "out.ndjson")
        for (const mode of ["none", "resume", "restart"] as const) {
          const exit = yield* Effect.exit(Effect.scoped(Effect.gen(function*() {
            const sink = yield* Sink.file(target, { mode, flags, keepIds: true })
            expect(sink.kept()).toBeUndefined()
            return yield* Effect.interrupt
          })))
          expect(Exit.isInterrupted(exit)).toBe(true)
          expect(Fs.readdirSync(dir)).toEqual([])
        }
      })
    ))
})
