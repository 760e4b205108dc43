import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Fault, Seed } from "@erp-client/sandbox"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { erp, parseCsv, type Run, SECRET, startGate, startSandbox } from "./harness.js"

// `erp partners changes` and `erp api changes` through the compiled command against the sandbox (docs/changes.md):
// the changes since the last complete run, each once; a run cut short changes nothing and reports no removal.

type Started = Awaited<ReturnType<typeof startSandbox>>

let started: Started
let dir: string
const runs: Array<Run> = []
const record = (run: Run) => {
  runs.push(run)
  return run
}

beforeAll(async () => {
  // 15 pages of 20 at 20 ms each: a run can be broken or killed midway.
  started = await startSandbox({
    partners: 300,
    rateLimit: { limit: 10_000, window: "30 seconds" },
    latency: { base: "20 millis" }
  })
  dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "erp-changes-"))
})

afterAll(async () => {
  await started?.close()
  if (dir !== undefined) Fs.rmSync(dir, { recursive: true, force: true })
  for (const run of runs) expect(run.stdout + run.stderr).not.toContain(SECRET)
})

const lines = (text: string) => text === "" ? [] : text.trimEnd().split("\n")

const changes = async (state: string, extra: ReadonlyArray<string> = [], env: Record<string, string> = {}) =>
  record(
    await erp(["partners", "changes", "--since", state, "--page-size", "20", ...extra], {
      env: { ...started.env, ...env }
    })
  )

/** Each NDJSON line as `added 5`, sorted. */
const said = (run: Run) =>
  lines(run.stdout).map((line) => {
    const change = JSON.parse(line) as { change: string; id: number }
    return `${change.change} ${change.id}`
  }).sort()

const served = async () => (await started.run(started.sandbox.visiblePartners)).map((p) => Seed.recordJson(p))

describe("erp partners changes", () => {
  it("a first run adds every record as the server wrote it; then 10 added, 2 renamed, 2 removed are those 14; then nothing", async () => {
    const state = Path.join(dir, "first.state")
    const first = await changes(state)
    expect(first.code).toBe(0)
    expect(lines(first.stdout)).toEqual(
      (await served()).map((json) => `{"change":"added","id":${JSON.parse(json).id},"record":${json}}`)
    )
    // About 9 bytes a record, and the header (the list and its server) and checksum.
    expect(first.stderr).toMatch(
      new RegExp(`^erp: 300 added, 0 changed, 0 removed, 0 unchanged; state ${state} \\(2,8\\d\\d bytes\\)\\n$`)
    )

    const quiet = await changes(state)
    expect([quiet.code, quiet.stdout]).toEqual([0, ""])
    expect(quiet.stderr).toMatch(/^erp: 0 added, 0 changed, 0 removed, 300 unchanged;/)

    const inserted = await started.run(started.sandbox.insertPartners(10, 150))
    await started.run(started.sandbox.renamePartners([12, 250]))
    await started.run(started.sandbox.deletePartners([30, 299]))
    const run = await changes(state)
    expect(run.code).toBe(0)
    expect(said(run)).toEqual(
      [...inserted.map((id) => `added ${id}`), "changed 12", "changed 250", "removed 30", "removed 299"].sort()
    )
    // Removals last, once the end of the list was confirmed.
    expect(lines(run.stdout).slice(-2)).toEqual([
      "{\"change\":\"removed\",\"id\":30}",
      "{\"change\":\"removed\",\"id\":299}"
    ])
    expect(run.stderr).toMatch(/^erp: 10 added, 2 changed, 2 removed, 296 unchanged;/)
    expect((await changes(state)).stdout).toBe("")
  })

  it("a run cut short by a failure midway, or killed, leaves STATE as it was, reports no removal and exits non-zero", async () => {
    const state = Path.join(dir, "cut.state")
    expect((await changes(state, ["--init"])).stdout).toBe("")
    const before = Fs.readFileSync(state)
    await started.run(started.sandbox.deletePartners([1, 2]))
    await started.run(started.sandbox.renamePartners([200]))

    // The server fails every request from the fifth list request on.
    const midway = started.listRequests(5)
    const failing = changes(state, ["--concurrency", "1"], { ERP_RETRIES: "0" })
    await midway
    await started.run(started.sandbox.inject(Fault.Fault.Status({ status: 503 }), { times: Infinity }))
    const failed = await failing
    await started.run(started.sandbox.clearFaults)
    expect(failed.code).toBe(1)
    expect(failed.stdout).not.toContain("removed")
    expect(failed.stderr).toContain(
      `the state ${state} was left as it was and no removal was reported: run the same command again`
    )
    expect(failed.stderr).toMatch(/unexpected HTTP status 503/)
    expect(Fs.readFileSync(state)).toEqual(before)

    // Killed (SIGKILL: nothing runs after it) midway.
    const killed = record(
      await erp(["partners", "changes", "--since", state, "--page-size", "20", "--concurrency", "1"], {
        env: started.env,
        via: "node",
        interruptWhen: started.listRequests(5),
        signal: "SIGKILL"
      })
    )
    expect(killed.signal).toBe("SIGKILL")
    expect(killed.stdout).not.toContain("removed")
    expect(Fs.readFileSync(state)).toEqual(before)
    // Its lock stays (nothing ran after the kill); the next run takes it over.
    expect(Fs.readdirSync(dir).filter((name) => name.startsWith("cut.state")).sort()).toEqual([
      "cut.state",
      "cut.state.lock"
    ])

    // Interrupted (Ctrl-C): 130, the same.
    const interrupted = record(
      await erp(["partners", "changes", "--since", state, "--page-size", "20", "--concurrency", "1"], {
        env: started.env,
        via: "node",
        interruptWhen: started.listRequests(5)
      })
    )
    expect(interrupted.code).toBe(130)
    expect(interrupted.stdout).not.toContain("removed")
    expect(interrupted.stderr).toContain("run the same command again")
    expect(Fs.readFileSync(state)).toEqual(before)

    // A reader that stops early (`| head -1`): 1, not the quiet end of `list`, and STATE as it was.
    const closed = record(
      await erp(["partners", "changes", "--since", state, "--page-size", "20"], {
        env: started.env,
        closeStdoutWhen: (stdout) => stdout.includes("\n")
      })
    )
    expect(closed.code).toBe(1)
    expect(closed.stderr).toContain("stdout was closed by its reader before the last change")
    expect(Fs.readFileSync(state)).toEqual(before)

    // The next complete run reports all of it, once.
    expect(said(await changes(state))).toEqual(["changed 200", "removed 1", "removed 2"])
    expect((await changes(state)).stdout).toBe("")
    expect(Fs.readdirSync(dir).filter((name) => name.startsWith("cut.state"))).toEqual(["cut.state"])
  })

  it("--init writes the state and reports nothing", async () => {
    const state = Path.join(dir, "init.state")
    const run = await changes(state, ["--init"])
    expect([run.code, run.stdout]).toEqual([0, ""])
    expect(run.stderr).toMatch(/records in the state .*; nothing reported \(--init\)/)
    expect(Fs.existsSync(state)).toBe(true)
    expect((await changes(state)).stdout).toBe("")
    // --quiet: no summary line; the state is written all the same.
    const silent = Path.join(dir, "init-quiet.state")
    expect(await changes(silent, ["--init", "--quiet"])).toMatchObject({ code: 0, stdout: "", stderr: "" })
    expect(Fs.existsSync(silent)).toBe(true)
  })

  it("--format csv --output FILE: a change column, then the record's fields; FILE published before STATE", async () => {
    const state = Path.join(dir, "csv.state")
    const file = Path.join(dir, "changes.csv")
    await changes(state, ["--init"])
    const [id] = await started.run(started.sandbox.insertPartners(1, 0))
    await started.run(started.sandbox.renamePartners([100]))
    await started.run(started.sandbox.deletePartners([101]))
    const run = await changes(state, ["--format", "csv", "--output", file])
    expect([run.code, run.stdout]).toEqual([0, ""])
    const [header, ...rows] = parseCsv(Fs.readFileSync(file, "utf8"))
    expect(header!.slice(0, 5)).toEqual(["change", "id", "company_name", "tax_number", "is_customer"])
    // In list order (the new partner is first), removals last.
    expect(rows.map((row) => `${row[0]} ${row[1]}`)).toEqual([`added ${id}`, "changed 100", "removed 101"])
    expect(rows[1]![2]).toMatch(/ \(renamed\)$/)
    expect(rows[2]!.slice(2).every((cell) => cell === "")).toBe(true)
    // Nothing changed: the header alone; with --quiet, no summary line either.
    const quiet = await changes(state, ["--format", "csv", "--output", file, "--quiet"])
    expect([quiet.code, quiet.stderr]).toEqual([0, ""])
    expect(parseCsv(Fs.readFileSync(file, "utf8"))).toEqual([[
      "change",
      "id",
      "company_name",
      "tax_number",
      "is_customer",
      "other_fields"
    ]])
  })

  it("a STATE that is not one is refused and left alone", async () => {
    const state = Path.join(dir, "not.state")
    Fs.writeFileSync(state, "id,company_name\n")
    const run = await changes(state)
    expect(run.code).toBe(1)
    expect(run.stderr).toContain(
      `cannot be read: not a state file of erp changes; refused and left as it was (give another --since)`
    )
    expect(Fs.readFileSync(state, "utf8")).toBe("id,company_name\n")
    // Not even --init overwrites a file that is not a state.
    expect((await changes(state, ["--init"])).code).toBe(1)
    expect(Fs.readFileSync(state, "utf8")).toBe("id,company_name\n")
  })

  it("a STATE damaged (one byte changed), of an earlier format or of another list is refused, left as it was, and --init starts over", async () => {
    const state = Path.join(dir, "checked.state")
    expect((await changes(state, ["--customers", "--init"])).code).toBe(0)
    const made = Fs.readFileSync(state)
    // Another filter: another list.
    const all = await changes(state)
    expect(all.code).toBe(1)
    expect(all.stderr).toContain(
      `erp: the state ${state} was made for another list (the conditions: list_condition[is_customer]=1 in the ` +
        "state, none now): refused and left as it was (--init starts a new state of this list there, or give " +
        "another --since)"
    )
    expect(all.stderr).not.toContain("run the same command again")
    expect(Fs.readFileSync(state)).toEqual(made)
    // One byte changed anywhere: damaged.
    for (const at of [9, Math.floor(made.length / 2), made.length - 1]) {
      const damaged = Buffer.from(made)
      damaged[at] = damaged[at]! ^ 0x04
      Fs.writeFileSync(state, damaged)
      const run = await changes(state, ["--customers"])
      expect(run.code).toBe(1)
      expect(run.stderr).toContain("cannot be read: the state is damaged: its checksum does not match its contents")
      expect(Fs.readFileSync(state)).toEqual(damaged)
    }
    // A state of the first format (no header, no checksum): refused with what to do.
    Fs.writeFileSync(state, Buffer.from([0x45, 0x52, 0x50, 0x43, 0x48, 0x47, 0, 1, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]))
    const old = await changes(state)
    expect(old.code).toBe(1)
    expect(old.stderr).toContain(
      "a state of an earlier format (version 1), which does not say which list and server it was made for; refused " +
        "and left as it was (--init starts a new state there, or give another --since)"
    )
    expect((await changes(state, ["--init"])).code).toBe(0)
    expect((await changes(state)).stdout).toBe("")
  })

  it("a STATE made against another server is refused, whatever the list: the server is in it (without the key)", async () => {
    const other = await startSandbox({ partners: 300, rateLimit: { limit: 10_000, window: "30 seconds" } })
    try {
      const state = Path.join(dir, "server.state")
      expect((await changes(state, ["--init"])).code).toBe(0)
      const made = Fs.readFileSync(state)
      expect(made.toString("latin1")).not.toContain(SECRET)
      const run = record(
        await erp(["partners", "changes", "--since", state, "--page-size", "20"], { env: other.env })
      )
      expect(run.code).toBe(1)
      const port = (url: string) => new URL(url).port
      expect(run.stderr).toContain(
        `(the server: http://127.0.0.1:${port(started.env.ERP_BASE_URL)}/ in the state, ` +
          `http://127.0.0.1:${port(other.env.ERP_BASE_URL)}/ now)`
      )
      expect(Fs.readFileSync(state)).toEqual(made)
    } finally {
      await other.close()
    }
  })
})

describe("records that share an id", () => {
  let twins: Started
  beforeAll(async () => {
    // A few partners served with the id of the partner before them (partner 10 with partner 3's id, say).
    twins = await startSandbox({
      partners: 300,
      oddRecords: { rate: 0.02, kinds: ["duplicate-id"] },
      rateLimit: { limit: 10_000, window: "30 seconds" }
    })
  })
  afterAll(async () => {
    await twins?.close()
  })

  it("fail the run by default (exit 1, STATE as it was, how many and which ids); --allow-duplicate-ids commits and names them", async () => {
    const partners = await twins.run(twins.sandbox.visiblePartners)
    const ids = partners.map((p) => p.id as number)
    const twice = ids.filter((id, i) => ids.indexOf(id) !== i)
    expect(twice.length).toBeGreaterThan(1)
    const state = Path.join(dir, "twins.state")
    const run = record(
      await erp(["partners", "changes", "--since", state, "--page-size", "50"], { env: twins.env })
    )
    expect(run.code).toBe(1)
    const named = [...new Set(twice)].slice(0, 5).join(", ")
    expect(run.stderr).toContain(`erp: ${twice.length} records have the id of another, distinct record (ids ${named}`)
    expect(run.stderr).toContain("--allow-duplicate-ids keeps the first record of each id")
    expect(run.stdout).not.toContain("removed")
    expect(Fs.existsSync(state)).toBe(false)

    const allowed = record(
      await erp(["partners", "changes", "--since", state, "--page-size", "50", "--allow-duplicate-ids"], {
        env: twins.env
      })
    )
    expect(allowed.code).toBe(0)
    expect(lines(allowed.stdout).length).toBe(300 - twice.length)
    expect(allowed.stderr).toContain(`erp: ${twice.length} records were left out of the state (ids `)
    expect(allowed.stderr).toContain(`erp: ${300 - twice.length} added, 0 changed, 0 removed, 0 unchanged`)
  })

  it("--id-field on a field most records share: refused, with a hint that the field is the wrong one", async () => {
    const state = Path.join(dir, "flag.state")
    const run = record(
      await erp(["api", "changes", "partner/list", "--since", state, "--id-field", "is_customer"], { env: started.env })
    )
    const count = (await served()).length
    expect(run.code).toBe(1)
    const shared = (count - 2).toLocaleString("en-US")
    expect(run.stderr).toMatch(
      new RegExp(`^erp: ${shared} records have the id of another, distinct record \\(ids [01], [01]\\)`)
    )
    expect(run.stderr).toContain(
      `${(count - 2).toLocaleString("en-US")} records of ${count} share an id: is_customer is probably not the ` +
        "field that tells these records apart (choose it with --id-field)"
    )
    expect(Fs.existsSync(state)).toBe(false)
  })
})

describe("an empty or cut short answer", () => {
  it("one empty answer removes nothing (the end is read again); an empty list for longer is refused past half the state, unless --allow-removals", async () => {
    const state = Path.join(dir, "empty.state")
    expect((await changes(state, ["--init"])).code).toBe(0)
    const made = Fs.readFileSync(state)
    const count = (await served()).length
    // The first list request answers `data: []`.
    await started.run(started.sandbox.inject(Fault.Fault.EmptyPage()))
    const once = await changes(state)
    expect([once.code, once.stdout]).toEqual([0, ""])
    expect(once.stderr).toMatch(new RegExp(`^erp: 0 added, 0 changed, 0 removed, ${count} unchanged;`))
    // Every list request answers empty: 300 of 300 would go.
    await started.run(started.sandbox.inject(Fault.Fault.EmptyPage(), { times: Infinity }))
    try {
      const emptied = await changes(state)
      expect(emptied.code).toBe(1)
      expect(emptied.stdout).toBe("")
      expect(emptied.stderr).toContain(
        `erp: the run would remove ${count} of the ${count} records of the state ${state} (more than half), as a list ` +
          "answering empty or cut short for a while would: nothing was removed and the state was left as it was " +
          "(--allow-removals commits them, if the list really lost them)"
      )
      expect(Fs.readFileSync(state)).toEqual(made)
      const allowed = await changes(state, ["--allow-removals"])
      expect(allowed.code).toBe(0)
      expect(lines(allowed.stdout).length).toBe(count)
      expect(allowed.stderr).toMatch(new RegExp(`^erp: 0 added, 0 changed, ${count} removed, 0 unchanged;`))
    } finally {
      await started.run(started.sandbox.clearFaults)
    }
    expect(said(await changes(state)).length).toBe(count)
  })
})

describe("erp partners changes under a list that grows every request", () => {
  it("commits, in a few requests a page: 2 inserted and 1 deleted, or 1 and 1, before every list answer", async () => {
    for (const [inserts, deletes, pageSize] of [[2, 1, "auto"], [1, 1, "auto"], [2, 1, "100"]] as const) {
      const growing = await startSandbox({
        partners: 2000,
        rateLimit: { limit: 10_000, window: "30 seconds" },
        drift: { inserts, deletes, seed: 3 }
      })
      try {
        const state = Path.join(dir, `grows-${inserts}-${deletes}-${pageSize}.state`)
        for (const run of [0, 1]) {
          await growing.run(growing.sandbox.resetStats)
          const result = record(
            await erp(["partners", "changes", "--since", state, "--page-size", pageSize], { env: growing.env })
          )
          expect(result.code, result.stderr).toBe(0)
          expect(Fs.existsSync(state)).toBe(true)
          // 2,000 records at 450 a page (the sandbox serves 500), or 90 (pages of 100): each page, and at most the 3
          // pages asked ahead of it (4 in flight) that its being short made useless, and a few more at the end (the
          // end found again, afresh, when the state holds records not read), however the list grows meanwhile. How
          // many of the pages ahead were already asked depends on how fast the answers came; the bound does not.
          const requests = (await growing.run(growing.sandbox.stats)).byEndpoint["/partner/list"] ?? 0
          const pages = Math.ceil(2100 / (pageSize === "auto" ? 450 : 90))
          expect(requests, `${inserts}:${deletes} at ${pageSize}, run ${run}`).toBeLessThanOrEqual(4 * pages + 12)
        }
      } finally {
        await growing.close()
      }
    }
  })
})

describe("erp api changes", () => {
  it("any list endpoint, records told apart by --id-field", async () => {
    const state = Path.join(dir, "api.state")
    const first = record(
      await erp(["api", "changes", "partner/list", "--since", state, "--id-field", "id", "--page-size", "50"], {
        env: started.env
      })
    )
    expect(first.code).toBe(0)
    expect(lines(first.stdout).length).toBe((await served()).length)
    await started.run(started.sandbox.renamePartners([42]))
    const next = record(
      await erp(["api", "changes", "partner/list", "--since", state], { env: started.env })
    )
    expect(said(next)).toEqual(["changed 42"])
  })
})

describe("STATE and FILE on disk", () => {
  const OTHER_KEY = "sk-live-second-run-never-sent"
  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")

  it(
    "two runs on one STATE: the second refuses at once, naming the first, and touches nothing",
    { timeout: 180_000 },
    async () => {
      const state = Path.join(dir, "locked.state")
      // Every run goes through the gate (the state names the server it was made with): the --init with it open, the
      // first run's requests held there until the second has exited.
      const gate = await startGate(started.sandbox.baseUrl)
      const env = { ERP_BASE_URL: gate.url, ERP_API_KEY: SECRET }
      try {
        gate.open()
        expect((await changes(state, ["--init"], env)).code).toBe(0)
        gate.close()
        const before = Fs.readFileSync(state)
        let firstEnded = false
        const first = erp(["partners", "changes", "--since", state, "--page-size", "20"], { env, via: "node" })
          .then(record).finally(() => {
            firstEnded = true
          })
        // Until its first request arrives, however slow the start on a loaded machine; a first run that ended
        // without one fails here with what it said.
        while (!gate.seen(SECRET) && !firstEnded) await new Promise((r) => setTimeout(r, 20))
        expect(gate.seen(SECRET), firstEnded ? (await first).stderr : "").toBe(true)
        await started.run(started.sandbox.resetStats)
        const second = record(
          await erp(["partners", "changes", "--since", state, "--page-size", "20"], {
            env: { ...env, ERP_API_KEY: OTHER_KEY },
            via: "node"
          })
        )
        // Nothing reached the server, or even the gate, from the second run (the first's are still held).
        expect(gate.seen(OTHER_KEY)).toBe(false)
        expect((await started.run(started.sandbox.stats)).requests).toBe(0)
        gate.open()
        const holder = await first
        expect(second.code).toBe(1)
        expect(second.stdout).toBe("")
        expect(second.stderr).toMatch(
          new RegExp(
            `^erp: ${escape(state)} is being written by another run \\(pid ${holder.pid} on host ${
              escape(Os.hostname())
            } since [^\\n]+, running erp partners changes --since ${escape(state)} --page-size 20\\); nothing was ` +
              "touched\\n"
          )
        )
        expect(holder.code, holder.stderr).toBe(0)
        expect(Fs.readFileSync(state)).toEqual(before)
        expect(Fs.readdirSync(dir).filter((name) => name.startsWith("locked.state"))).toEqual(["locked.state"])
      } finally {
        gate.open()
        await gate.stop()
      }
    }
  )

  it("a read-only STATE is refused before anything is read: exit 1, the file and its mode as they were", async () => {
    const state = Path.join(dir, "readonly.state")
    expect((await changes(state, ["--init"])).code).toBe(0)
    const before = Fs.readFileSync(state)
    Fs.chmodSync(state, 0o444)
    await started.run(started.sandbox.resetStats)
    const run = await changes(state)
    expect(run.code).toBe(1)
    expect(run.stderr).toBe(
      `erp: the state ${state} is read-only for this user (mode 0444): it is not replaced, and nothing was read; ` +
        "make it writable, or give another --since\n"
    )
    expect(Fs.readFileSync(state)).toEqual(before)
    expect(Fs.statSync(state).mode & 0o777).toBe(0o444)
    expect((await started.run(started.sandbox.stats)).requests).toBe(0)
  })

  it("a STATE that is a link is written through to its file, which keeps its mode; the link stays", async () => {
    const real = Path.join(dir, "real.state")
    const link = Path.join(dir, "link.state")
    Fs.symlinkSync("real.state", link)
    expect((await changes(link, ["--init"])).code).toBe(0)
    expect(Fs.readlinkSync(link)).toBe("real.state")
    Fs.chmodSync(real, 0o640)
    const [id] = await started.run(started.sandbox.insertPartners(1, 0))
    const run = await changes(link)
    expect(run.code, run.stderr).toBe(0)
    expect(said(run)).toEqual([`added ${id}`])
    expect(Fs.readlinkSync(link)).toBe("real.state")
    expect(Fs.statSync(real).mode & 0o777).toBe(0o640)
    expect((await changes(link)).stdout).toBe("")
    expect(Fs.readdirSync(dir).filter((name) => /^(real|link)\.state/.test(name)).sort()).toEqual([
      "link.state",
      "real.state"
    ])
  })

  it("a run with --output that fails midway leaves no FILE.part and no FILE.resume.json (changes starts over)", async () => {
    const state = Path.join(dir, "failing.state")
    const file = Path.join(dir, "failing.ndjson")
    expect((await changes(state, ["--init"])).code).toBe(0)
    await started.run(started.sandbox.renamePartners([3]))
    const midway = started.listRequests(5)
    const running = changes(state, ["--concurrency", "1", "--output", file], { ERP_RETRIES: "0" })
    await midway
    await started.run(started.sandbox.inject(Fault.Fault.Status({ status: 503 }), { times: Infinity }))
    const run = await running
    await started.run(started.sandbox.clearFaults)
    expect(run.code).toBe(1)
    expect(run.stderr).not.toContain("kept")
    expect(Fs.readdirSync(dir).filter((name) => name.startsWith("failing.ndjson"))).toEqual([])
    expect(said(await changes(state))).toEqual(["changed 3"])
  })
})

describe("erp partners changes under drift", () => {
  it("partners inserted and deleted during every list request: each change reported once, no record removed that is there", async () => {
    const drifting = await startSandbox({
      partners: 400,
      rateLimit: { limit: 10_000, window: "30 seconds" },
      drift: { inserts: 2, deletes: 2, seed: 7 }
    })
    try {
      const state = Path.join(dir, "drift.state")
      // What the changes alone say the list holds: an added id must be new to it, a changed or removed one known.
      const replica = new Set<number>()
      let beforeLast = new Set<number>()
      for (let run = 0; run < 3; run++) {
        beforeLast = new Set(await drifting.run(drifting.sandbox.partnerIds))
        const result = record(
          await erp(["partners", "changes", "--since", state, "--page-size", "25", "--concurrency", "1"], {
            env: drifting.env
          })
        )
        expect(result.code).toBe(0)
        const now = new Set(await drifting.run(drifting.sandbox.partnerIds))
        for (const line of lines(result.stdout)) {
          const change = JSON.parse(line) as { change: string; id: number }
          if (change.change === "added") {
            expect(replica.has(change.id)).toBe(false)
            replica.add(change.id)
          } else if (change.change === "changed") {
            expect(replica.has(change.id)).toBe(true)
          } else {
            expect(replica.delete(change.id)).toBe(true)
            // Removed only what the server no longer holds.
            expect(now.has(change.id)).toBe(false)
          }
        }
      }
      expect((await drifting.run(drifting.sandbox.stats)).deleted).toBeGreaterThan(0)
      // Every partner there for the whole last run (so for a whole run at least) was reported: none was lost.
      const survivors = await drifting.run(drifting.sandbox.partnerIds)
      expect(survivors.filter((id) => beforeLast.has(id) && !replica.has(id))).toEqual([])
      expect(replica.size).toBeGreaterThan(350)
    } finally {
      await drifting.close()
    }
  })
})

describe("ids beyond a double", () => {
  // Partners whose ids JSON.parse rounds (12345678901234567890 plus 1000 times an index: a double near 1.2e19 is
  // 2,048 wide, so neighbours meet). Keyed by the rounded double, --safe left 30 of 2,000 out and changes counted
  // 1,970 added, both with exit 0.
  let odd: Started
  beforeAll(async () => {
    odd = await startSandbox({
      partners: 400,
      oddRecords: { rate: 0.3, kinds: ["id-beyond-double"] },
      rateLimit: { limit: 10_000, window: "30 seconds" }
    })
  })
  afterAll(async () => {
    await odd?.close()
  })
  const idText = (json: string) => /^\{"id":(-?[0-9][^,}]*)/.exec(json)![1]!

  it("--safe writes every record, and changes tells every one apart, by the digits the server wrote", async () => {
    const servedNow = (await odd.run(odd.sandbox.visiblePartners)).map((p) => Seed.recordJson(p))
    const beyond = servedNow.filter((json) => !Number.isSafeInteger(Number(idText(json))))
    // The case holds: several of them, and some that a double cannot tell apart.
    expect(beyond.length).toBeGreaterThan(50)
    expect(new Set(beyond.map((json) => Number(idText(json)))).size).toBeLessThan(beyond.length)

    const list = record(await erp(["partners", "list", "--safe", "--page-size", "20"], { env: odd.env }))
    expect(list.code, list.stderr).toBe(0)
    expect(lines(list.stdout)).toEqual(servedNow)
    expect(list.stderr).not.toContain("not written")

    const state = Path.join(dir, "beyond.state")
    const first = record(await erp(["partners", "changes", "--since", state, "--page-size", "20"], { env: odd.env }))
    expect(first.code, first.stderr).toBe(0)
    expect(lines(first.stdout)).toEqual(
      servedNow.map((json) => `{"change":"added","id":${idText(json)},"record":${json}}`)
    )
    expect(first.stderr).toMatch(/^erp: 400 added, 0 changed, 0 removed, 0 unchanged;/)

    // One of them renamed, one removed: that one changed and that one removed, by their own digits.
    const own = await odd.run(odd.sandbox.partnerIds)
    const positions = servedNow.flatMap((json, i) => Number.isSafeInteger(Number(idText(json))) ? [] : [i])
    const [renamedAt, removedAt] = [positions[3]!, positions[4]!]
    await odd.run(odd.sandbox.renamePartners([own[renamedAt]!]))
    await odd.run(odd.sandbox.deletePartners([own[removedAt]!]))
    const run = record(await erp(["partners", "changes", "--since", state, "--page-size", "20"], { env: odd.env }))
    expect(run.code, run.stderr).toBe(0)
    expect(lines(run.stdout).map((line) => /^\{"change":"(\w+)","id":([^,}]+)/.exec(line)!.slice(1).join(" ")))
      .toEqual([`changed ${idText(servedNow[renamedAt]!)}`, `removed ${idText(servedNow[removedAt]!)}`])
    expect(run.stderr).toMatch(/^erp: 0 added, 1 changed, 1 removed, 398 unchanged;/)
  })
})
