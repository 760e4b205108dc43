import { describe, expect, it } from "@effect/vitest"
import { Changes, Partners, type Resource } from "@erp-client/streams"
import { ErpTest } from "@erp-client/testing"
import { Cause, Effect, Exit, Layer, Random, Stream } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { Fault, KeyValueStore, platformLayer, Sandbox, Seed, storedBytes } from "./kit.js"

// Partners.changes on the in-memory ERP (ErpTest.layer), the state in a memory KeyValueStore: each change reported
// exactly once, across runs and under drift, nothing committed and no removal reported by a run cut short. One suite,
// run against both editions (TEST_PAIRS in scripts/editions.ts).

const erp = (partners = 120) =>
  Layer.merge(
    ErpTest.layer({ sandbox: { partners, rateLimit: false } }),
    KeyValueStore.layerMemory
  )

const collect = (options: Partial<Resource.ChangesOptions> = {}) =>
  Partners.changes({ key: "partners", pageSize: 25, ...options }).pipe(
    Stream.runCollect,
    Effect.map((changes) => Array.from(changes)),
    ErpTest.advancing
  )

const tags = (changes: ReadonlyArray<Changes.Change<unknown>>) =>
  changes.map((change) => `${change._tag} ${change.id}`).sort()

/** The server's partners now, by id, as the server writes them. */
const served = Effect.map(
  Effect.flatMap(Sandbox.Sandbox, (sandbox) => sandbox.visiblePartners),
  (partners) => new Map(partners.map((partner) => [partner.id as number, Seed.recordJson(partner)]))
)

/**
 * A replica kept up to date from the changes alone: an added record must be new to it, a changed or removed one
 * known: a change reported twice (or a record removed and added) breaks it.
 */
const replica = () => {
  const records = new Map<Changes.Id, string>()
  const apply = (change: Changes.Change<unknown>) => {
    switch (change._tag) {
      case "Added":
        if (records.has(change.id)) throw new Error(`added twice: ${change.id}`)
        records.set(change.id, change.json)
        return
      case "Changed":
        if (!records.has(change.id)) throw new Error(`changed but never added: ${change.id}`)
        records.set(change.id, change.json)
        return
      case "Removed":
        if (!records.delete(change.id)) throw new Error(`removed but never added: ${change.id}`)
    }
  }
  return { records, apply }
}

describe("Partners.changes", () => {
  it.effect("a first run adds every record; then 10 added, 2 renamed, 2 removed are exactly those 14; then nothing", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      const first = yield* collect()
      expect(first.length).toBe(120)
      expect(first.every((change) => change._tag === "Added")).toBe(true)
      // Records as the server wrote them.
      expect(first[0]!._tag === "Added" && first[0]!.json).toBe(Seed.recordJson(sandbox.partnerAt(0)))
      expect(yield* collect()).toStrictEqual([])

      const inserted = yield* sandbox.insertPartners(10, 50)
      yield* sandbox.renamePartners([5, 77])
      yield* sandbox.deletePartners([7, 100])
      const changes = yield* collect()
      expect(tags(changes)).toStrictEqual(
        [...inserted.map((id) => `Added ${id}`), "Changed 5", "Changed 77", "Removed 7", "Removed 100"].sort()
      )
      // Removals come last: only once the end of the list is confirmed.
      expect(changes.slice(-2).map((change) => change._tag)).toStrictEqual(["Removed", "Removed"])
      const renamed = changes.find((change) => change.id === 5)
      expect(renamed?._tag === "Changed" && renamed.record.company_name).toMatch(/ \(renamed\)$/)
      expect(yield* collect()).toStrictEqual([])
    }).pipe(Effect.provide(erp())))

  it.effect("init writes the state and reports nothing; the summary counts each kind", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      expect(yield* collect({ init: true })).toStrictEqual([])
      yield* sandbox.renamePartners([3])
      yield* sandbox.deletePartners([4])
      let summary: Changes.Summary | undefined
      const changes = yield* collect({ onSummary: (s) => Effect.sync(() => void (summary = s)) })
      expect(tags(changes)).toStrictEqual(["Changed 3", "Removed 4"])
      expect(summary).toMatchObject({ added: 0, changed: 1, removed: 1, unchanged: 118 })
      expect(summary!.stateBytes).toBeLessThan(119 * 12)
    }).pipe(Effect.provide(erp())))

  it.effect("a run cut short (the server refuses mid-list, or the reader stops) commits nothing and reports no removal", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      const store = yield* KeyValueStore.KeyValueStore
      yield* collect({ init: true })
      const before = yield* storedBytes(store, "partners")
      yield* sandbox.deletePartners([1, 2, 3])
      yield* sandbox.renamePartners([60])

      // The key is revoked once the third page is asked for: Unauthorized, past the records read.
      let pages = 0
      const refused = yield* Partners.changes({
        key: "partners",
        pageSize: 25,
        concurrency: 1
      }).pipe(
        Stream.tap(() => Effect.suspend(() => ++pages === 1 ? sandbox.revokeKey(sandbox.apiKey) : Effect.void)),
        Stream.runCollect,
        ErpTest.advancing,
        Effect.exit
      )
      expect(Exit.isFailure(refused)).toBe(true)
      expect(yield* storedBytes(store, "partners")).toStrictEqual(before)
      yield* sandbox.setKeys([sandbox.apiKey])

      // The reader stops after one change: interrupted, no removal seen, nothing committed.
      const taken = yield* Partners.changes({ key: "partners", pageSize: 25 }).pipe(
        Stream.take(1),
        Stream.runCollect,
        ErpTest.advancing
      )
      expect(Array.from(taken).map((change) => change._tag)).toStrictEqual(["Changed"])
      expect(yield* storedBytes(store, "partners")).toStrictEqual(before)

      // The next complete run reports all of it, once.
      expect(tags(yield* collect())).toStrictEqual(["Changed 60", "Removed 1", "Removed 2", "Removed 3"])
      expect(yield* collect()).toStrictEqual([])
    }).pipe(Effect.provide(erp())))

  it.effect("under drift (inserts and deletes ahead of the reader during each run), every change exactly once", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      const mirror = replica()
      for (let run = 0; run < 6; run++) {
        // During each run, after every 20th change handed on: a partner inserted and one deleted at random
        // positions, and one renamed.
        let handed = 0
        const changes = yield* Partners.changes({ key: "partners", pageSize: 25, concurrency: 2 }).pipe(
          Stream.tap(() =>
            Effect.gen(function*() {
              if (++handed % 20 !== 0) return
              const ids = yield* sandbox.partnerIds
              yield* sandbox.insertPartners(1, yield* Random.nextIntBetween(0, ids.length))
              yield* sandbox.deletePartners([ids[yield* Random.nextIntBetween(0, ids.length)]!])
              yield* sandbox.renamePartners([ids[yield* Random.nextIntBetween(0, ids.length)]!])
            })
          ),
          Stream.runCollect,
          Effect.map((changes) => Array.from(changes)),
          ErpTest.advancing
        )
        const now = yield* served
        for (const change of changes) {
          mirror.apply(change)
          // Removed only what the server no longer holds.
          if (change._tag === "Removed") expect(now.has(change.id as number)).toBe(false)
        }
      }
      // A last run without drift brings the replica to the server exactly.
      for (const change of yield* collect()) mirror.apply(change)
      expect(mirror.records).toStrictEqual(yield* served)
    }).pipe(Effect.provide(erp(300))))

  it.effect("a state that is not one is refused, never overwritten", () =>
    Effect.gen(function*() {
      const store = yield* KeyValueStore.KeyValueStore
      yield* store.set("partners", "id,company_name\n")
      const exit = yield* Effect.exit(collect())
      expect(exit).toStrictEqual(
        Exit.fail(
          new Changes.StateUnreadable({ key: "partners", reason: "not a state file of erp changes", ours: false })
        )
      )
      // Not even init overwrites what is not a state.
      expect(Exit.isFailure(yield* Effect.exit(collect({ init: true })))).toBe(true)
      expect(new TextDecoder().decode(yield* storedBytes(store, "partners"))).toBe("id,company_name\n")
    }).pipe(Effect.provide(erp(10))))

  it.effect("a state of another list (filters, endpoint, server), damaged or of an earlier format is refused and left as it was; init starts over there", () =>
    Effect.gen(function*() {
      const store = yield* KeyValueStore.KeyValueStore
      yield* collect({ where: { is_customer: 1 } })
      const customers = (yield* storedBytes(store, "partners"))!
      const all = yield* Effect.exit(collect())
      expect(all).toStrictEqual(Exit.fail(
        new Changes.StateMismatch({
          key: "partners",
          differences: ["the conditions: list_condition[is_customer]=1 in the state, none now"]
        })
      ))
      expect(yield* storedBytes(store, "partners")).toStrictEqual(customers)
      // Another server with the same partners (its base URL another port): refused too.
      const elsewhere = yield* collect({ where: { is_customer: 1 } }).pipe(
        Effect.provide(
          ErpTest.layer({ sandbox: { partners: 120, rateLimit: false }, client: { baseUrl: "http://127.0.0.1:9/" } })
        ),
        Effect.exit
      )
      expect(Exit.isFailure(elsewhere) && String(Cause.squash(elsewhere.cause))).toContain(
        "the server: https://sandbox.erp.invalid:443/ in the state, http://127.0.0.1:9/ now"
      )
      // One byte changed: damaged, refused.
      const damaged = customers.slice()
      damaged[damaged.length - 9] ^= 0x20
      yield* store.set("partners", damaged)
      const broken = yield* Effect.exit(collect({ where: { is_customer: 1 } }))
      expect(broken).toStrictEqual(Exit.fail(
        new Changes.StateUnreadable({
          key: "partners",
          reason: "the state is damaged: its checksum does not match its contents",
          ours: true
        })
      ))
      // init starts over on it (a state of erp changes): the next run reports nothing.
      expect(yield* collect({ init: true })).toStrictEqual([])
      expect(yield* collect()).toStrictEqual([])
    }).pipe(Effect.provide(erp())))

  it.effect("records that share an id: refused, nothing committed, unless allowDuplicateIds (the first of each id kept, the others counted)", () =>
    Effect.gen(function*() {
      const store = yield* KeyValueStore.KeyValueStore
      const sandbox = yield* Sandbox.Sandbox
      const refused = yield* Effect.exit(collect())
      expect(Exit.isFailure(refused)).toBe(true)
      const error = Exit.isFailure(refused) ? Cause.squash(refused.cause) : undefined
      if (!(error instanceof Changes.DuplicateIds)) throw new Error(String(error))
      // Every partner the seed made a duplicate of another's id.
      const duplicates = (yield* sandbox.visiblePartners).filter((p, i, all) =>
        all.findIndex((q) => q.id === p.id) !== i
      )
      expect(duplicates.length).toBeGreaterThan(5)
      expect(error.records).toBe(duplicates.length)
      expect(error.message).toMatch(/^\d+ records have the id of another, distinct record \(ids /)
      expect(yield* storedBytes(store, "partners")).toBeUndefined()

      let summary: Changes.Summary | undefined
      const allowed = yield* collect({
        allowDuplicateIds: true,
        onSummary: (s) => Effect.sync(() => void (summary = s))
      })
      expect(allowed.length).toBe(120 - duplicates.length)
      expect(summary?.duplicates.records).toBe(duplicates.length)
      expect(yield* storedBytes(store, "partners")).toBeInstanceOf(Uint8Array)
    }).pipe(
      Effect.provide(Layer.merge(
        ErpTest.layer({
          sandbox: { partners: 120, rateLimit: false, oddRecords: { rate: 0.2, kinds: ["duplicate-id"] } }
        }),
        KeyValueStore.layerMemory
      ))
    ))

  it.effect("one empty answer removes nothing: the end is read again; a list that stays empty is refused past half the state, unless maxRemovedRatio allows it", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      const store = yield* KeyValueStore.KeyValueStore
      yield* collect({ init: true })
      const before = yield* storedBytes(store, "partners")
      // The first list request of the run answers `data: []`.
      yield* sandbox.inject(Fault.Fault.EmptyPage())
      expect(yield* collect()).toStrictEqual([])
      expect(yield* storedBytes(store, "partners")).toStrictEqual(before)
      // Empty for every request: more than half the state would go, refused, nothing removed.
      yield* sandbox.inject(Fault.Fault.EmptyPage(), { times: Infinity })
      const emptied = yield* Effect.exit(collect())
      expect(emptied).toStrictEqual(
        Exit.fail(new Changes.TooManyRemovals({ key: "partners", removed: 120, held: 120, maxRemovedRatio: 0.5 }))
      )
      expect(yield* storedBytes(store, "partners")).toStrictEqual(before)
      // The list really is empty: allowed, it commits.
      const removed = yield* collect({ maxRemovedRatio: 1 })
      expect(removed.length).toBe(120)
      expect(removed.every((change) => change._tag === "Removed")).toBe(true)
      yield* sandbox.clearFaults
      expect(yield* collect()).toHaveLength(120)
    }).pipe(Effect.provide(erp())))

  it.effect("layerFile keeps the state in a file, replaced whole (temporary file, then rename)", () =>
    Effect.gen(function*() {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "erp-changes-"))
      try {
        const run = Partners.changes({ key: "partners.state", pageSize: 25 }).pipe(
          Stream.runCollect,
          ErpTest.advancing,
          Effect.provide(Changes.layerFile(dir).pipe(Layer.provide(platformLayer)))
        )
        expect(Array.from(yield* run)).toHaveLength(10)
        expect(Fs.readdirSync(dir)).toStrictEqual(["partners.state"])
        expect(Array.from(yield* run)).toHaveLength(0)
      } finally {
        Fs.rmSync(dir, { recursive: true, force: true })
      }
    }).pipe(Effect.provide(erp(10))))
})

describe("Changes.layerFile", () => {
  // The store on the real file system, in a directory of its own (0700, this user's).
  const inDir = <A, E>(f: (dir: string, store: KeyValueStore.KeyValueStore) => Effect.Effect<A, E>) =>
    Effect.gen(function*() {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "erp-layer-file-"))
      try {
        const store = yield* Effect.gen(function*() {
          return yield* KeyValueStore.KeyValueStore
        }).pipe(Effect.provide(Changes.layerFile(dir).pipe(Layer.provide(platformLayer))))
        return yield* f(dir, store)
      } finally {
        Fs.rmSync(dir, { recursive: true, force: true })
      }
    })
  const bytes = new Uint8Array([1, 2, 3])

  it.effect("a read-only state is refused and left as it was, mode and all", () =>
    inDir((dir, store) =>
      Effect.gen(function*() {
        const file = Path.join(dir, "partners.state")
        Fs.writeFileSync(file, "the last state")
        Fs.chmodSync(file, 0o444)
        const exit = yield* Effect.exit(store.set("partners.state", bytes))
        expect(Exit.isFailure(exit)).toBe(true)
        expect(String(exit)).toContain("read-only for this user (mode 0444): it is not replaced")
        expect(Fs.readFileSync(file, "utf8")).toBe("the last state")
        expect(Fs.statSync(file).mode & 0o777).toBe(0o444)
        expect(Fs.readdirSync(dir)).toStrictEqual(["partners.state"])
      })
    ))

  it.effect("a replaced state keeps its mode, whatever the umask; nothing is left beside it", () =>
    inDir((dir, store) =>
      Effect.gen(function*() {
        const file = Path.join(dir, "partners.state")
        for (const mode of [0o664, 0o600, 0o640]) {
          Fs.writeFileSync(file, "the last state")
          Fs.chmodSync(file, mode)
          yield* store.set("partners.state", bytes)
          expect(new Uint8Array(Fs.readFileSync(file))).toStrictEqual(bytes)
          expect(Fs.statSync(file).mode & 0o777).toBe(mode)
        }
        expect(Fs.readdirSync(dir)).toStrictEqual(["partners.state"])
      })
    ))

  it.effect("a state that is a symbolic link is written through to its file; the link stays", () =>
    inDir((dir, store) =>
      Effect.gen(function*() {
        Fs.mkdirSync(Path.join(dir, "real"))
        const real = Path.join(dir, "real", "partners.state")
        Fs.writeFileSync(real, "the last state")
        Fs.symlinkSync("real/partners.state", Path.join(dir, "partners.state"))
        // A link to a state not made yet: made where it leads.
        Fs.symlinkSync("real/new.state", Path.join(dir, "new.state"))
        yield* store.set("partners.state", bytes)
        yield* store.set("new.state", bytes)
        expect(Fs.readlinkSync(Path.join(dir, "partners.state"))).toBe("real/partners.state")
        expect(new Uint8Array(Fs.readFileSync(real))).toStrictEqual(bytes)
        expect(new Uint8Array(Fs.readFileSync(Path.join(dir, "real", "new.state")))).toStrictEqual(bytes)
        expect(Fs.readdirSync(Path.join(dir, "real")).sort()).toStrictEqual(["new.state", "partners.state"])
        expect([...(yield* storedBytes(store, "partners.state"))!]).toStrictEqual([1, 2, 3])
      })
    ))
})
