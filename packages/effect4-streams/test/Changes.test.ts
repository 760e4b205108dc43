import { NodeServices } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Changes, Partners, type Resource } from "@erp-client/effect4-streams"
import { ErpTest, Fault, Sandbox } from "@erp-client/effect4-testing"
import * as Seed from "@erp-client/fake-erp/Seed"
import { Cause, Effect, Exit, Layer, Random, Stream } from "effect"
import { KeyValueStore } from "effect/persistence"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

// Partners.changes of the Effect 4 edition on its test kit, the state in a memory KeyValueStore: the Effect 3
// edition's tests (packages/streams/test/Changes.test.ts), on the same kernel.

const erp = (partners = 120) =>
  Layer.merge(ErpTest.layer({ sandbox: { partners, rateLimit: false } }), KeyValueStore.layerMemory)

const collect = (options: Partial<Resource.ChangesOptions> = {}) =>
  Partners.changes({ key: "partners", pageSize: 25, ...options }).pipe(Stream.runCollect, ErpTest.advancing)

const tags = (changes: ReadonlyArray<Changes.Change<unknown>>) =>
  changes.map((change) => `${change._tag} ${change.id}`).sort()

const served = Effect.map(
  Effect.flatMap(Sandbox.Sandbox, (sandbox) => sandbox.visiblePartners),
  (partners) => new Map(partners.map((partner) => [partner.id as number, Seed.recordJson(partner)]))
)

describe("Partners.changes (Effect 4)", () => {
  it.effect("a first run adds every record; then 10 added, 2 renamed, 2 removed are exactly those 14; then nothing", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      const first = yield* collect()
      expect(first.length).toBe(120)
      expect(first.every((change) => change._tag === "Added")).toBe(true)
      expect(yield* collect()).toStrictEqual([])
      const inserted = yield* sandbox.insertPartners(10, 50)
      yield* sandbox.renamePartners([5, 77])
      yield* sandbox.deletePartners([7, 100])
      const changes = yield* collect()
      expect(tags(changes)).toStrictEqual(
        [...inserted.map((id) => `Added ${id}`), "Changed 5", "Changed 77", "Removed 7", "Removed 100"].sort()
      )
      expect(changes.slice(-2).map((change) => change._tag)).toStrictEqual(["Removed", "Removed"])
      expect(yield* collect()).toStrictEqual([])
    }).pipe(Effect.provide(erp())))

  it.effect("a run cut short commits nothing and reports no removal", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      const store = yield* KeyValueStore.KeyValueStore
      yield* collect({ init: true })
      const before = yield* store.getUint8Array("partners")
      yield* sandbox.deletePartners([1, 2, 3])
      yield* sandbox.renamePartners([60])
      let pages = 0
      const refused = yield* Partners.changes({ key: "partners", pageSize: 25, concurrency: 1 }).pipe(
        Stream.tap(() => Effect.suspend(() => ++pages === 1 ? sandbox.revokeKey(sandbox.apiKey) : Effect.void)),
        Stream.runCollect,
        ErpTest.advancing,
        Effect.exit
      )
      expect(Exit.isFailure(refused)).toBe(true)
      expect(yield* store.getUint8Array("partners")).toStrictEqual(before)
      yield* sandbox.setKeys([sandbox.apiKey])
      const taken = yield* Partners.changes({ key: "partners", pageSize: 25 }).pipe(
        Stream.take(1),
        Stream.runCollect,
        ErpTest.advancing
      )
      expect(taken.map((change) => change._tag)).toStrictEqual(["Changed"])
      expect(yield* store.getUint8Array("partners")).toStrictEqual(before)
      expect(tags(yield* collect())).toStrictEqual(["Changed 60", "Removed 1", "Removed 2", "Removed 3"])
    }).pipe(Effect.provide(erp())))

  it.effect("under drift, every change exactly once: a replica kept from the changes alone ends equal to the server", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      const replica = new Map<Changes.Id, string>()
      const apply = (change: Changes.Change<unknown>) => {
        if (change._tag === "Added") {
          expect(replica.has(change.id)).toBe(false)
          replica.set(change.id, change.json)
        } else if (change._tag === "Changed") {
          expect(replica.has(change.id)).toBe(true)
          replica.set(change.id, change.json)
        } else {
          expect(replica.delete(change.id)).toBe(true)
        }
      }
      for (let run = 0; run < 5; run++) {
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
          ErpTest.advancing
        )
        const now = yield* served
        for (const change of changes) {
          apply(change)
          if (change._tag === "Removed") expect(now.has(change.id as number)).toBe(false)
        }
      }
      for (const change of yield* collect()) apply(change)
      expect(replica).toStrictEqual(yield* served)
    }).pipe(Effect.provide(erp(300))))
  it.effect("a state of another list or another server is refused and left as it was; init starts over there", () =>
    Effect.gen(function*() {
      const store = yield* KeyValueStore.KeyValueStore
      yield* collect({ where: { is_customer: 1 } })
      const customers = yield* store.getUint8Array("partners")
      const all = yield* Effect.exit(collect())
      expect(all).toStrictEqual(Exit.fail(
        new Changes.StateMismatch({
          key: "partners",
          differences: ["the conditions: list_condition[is_customer]=1 in the state, none now"]
        })
      ))
      const elsewhere = yield* collect({ where: { is_customer: 1 } }).pipe(
        Effect.provide(
          ErpTest.layer({ sandbox: { partners: 120, rateLimit: false }, client: { baseUrl: "http://127.0.0.1:9/" } })
        ),
        Effect.exit
      )
      expect(Exit.isFailure(elsewhere) && String(Cause.squash(elsewhere.cause))).toContain(
        "the server: https://sandbox.erp.invalid:443/ in the state, http://127.0.0.1:9/ now"
      )
      expect(yield* store.getUint8Array("partners")).toStrictEqual(customers)
      expect(yield* collect({ init: true })).toStrictEqual([])
      expect(yield* collect()).toStrictEqual([])
    }).pipe(Effect.provide(erp())))

  it.effect("records that share an id: refused, nothing committed, unless allowDuplicateIds", () =>
    Effect.gen(function*() {
      const store = yield* KeyValueStore.KeyValueStore
      const refused = yield* Effect.exit(collect())
      const error = Exit.isFailure(refused) ? Cause.squash(refused.cause) : undefined
      if (!(error instanceof Changes.DuplicateIds)) throw new Error(String(error))
      expect(error.records).toBeGreaterThan(5)
      expect(yield* store.getUint8Array("partners")).toBeUndefined()
      let summary: Changes.Summary | undefined
      const allowed = yield* collect({
        allowDuplicateIds: true,
        onSummary: (s) => Effect.sync(() => void (summary = s))
      })
      expect(allowed.length + error.records).toBe(120)
      expect(summary?.duplicates.records).toBe(error.records)
    }).pipe(
      Effect.provide(Layer.merge(
        ErpTest.layer({
          sandbox: { partners: 120, rateLimit: false, oddRecords: { rate: 0.2, kinds: ["duplicate-id"] } }
        }),
        KeyValueStore.layerMemory
      ))
    ))

  it.effect("one empty answer removes nothing; an empty list is refused past half the state unless allowed", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.Sandbox
      const store = yield* KeyValueStore.KeyValueStore
      yield* collect({ init: true })
      const before = yield* store.getUint8Array("partners")
      yield* sandbox.inject(Fault.Fault.EmptyPage())
      expect(yield* collect()).toStrictEqual([])
      yield* sandbox.inject(Fault.Fault.EmptyPage(), { times: Infinity })
      expect(yield* Effect.exit(collect())).toStrictEqual(
        Exit.fail(new Changes.TooManyRemovals({ key: "partners", removed: 120, held: 120, maxRemovedRatio: 0.5 }))
      )
      expect(yield* store.getUint8Array("partners")).toStrictEqual(before)
      expect((yield* collect({ maxRemovedRatio: 1 })).length).toBe(120)
    }).pipe(Effect.provide(erp())))
})

describe("Changes.layerFile (Effect 4)", () => {
  // The store on the real file system, in a directory of its own (0700, this user's).
  const inDir = <A, E>(f: (dir: string, store: KeyValueStore.KeyValueStore) => Effect.Effect<A, E>) =>
    Effect.gen(function*() {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "erp-layer-file-"))
      try {
        const store = yield* Effect.gen(function*() {
          return yield* KeyValueStore.KeyValueStore
        }).pipe(Effect.provide(Changes.layerFile(dir).pipe(Layer.provide(NodeServices.layer))))
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
        const read = yield* store.getUint8Array("partners.state")
        expect(read === undefined ? undefined : [...read]).toStrictEqual([1, 2, 3])
      })
    ))
})
