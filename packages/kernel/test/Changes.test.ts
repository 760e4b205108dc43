import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import * as Changes from "../src/Changes.js"
import * as Digest from "../src/internal/digest.js"

// The changes since the last export: digests, the table of ids read in a run, the state's encoding, the comparison.
// Through paging and a store in packages/streams/test/Changes.test.ts; the command line's in packages/cli/test.

const text = (id: Changes.Id, name: string) => JSON.stringify({ id, company_name: name })

const id = fc.oneof(
  fc.integer({ min: -1000, max: 1_000_000 }),
  fc.integer({ min: 2 ** 32 - 2, max: 2 ** 40 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.string({ maxLength: 6 })
)

/** A state's contents, whatever its arrays' types (a decoded one's ids are 32-bit when they fit). */
const plain = (state: Changes.State) => ({
  numbers: [...state.numbers],
  numberDigests: [...state.numberDigests],
  strings: state.strings,
  stringDigests: [...state.stringDigests]
})

describe("Changes", () => {
  it("a digest tells any change of the exact text apart, numbers as written included", () => {
    const a = Digest.digest("{\"id\":1,\"credit_limit\":1.10}")
    expect(Digest.digest("{\"id\":1,\"credit_limit\":1.10}")).toStrictEqual(a)
    expect(Digest.digest("{\"id\":1,\"credit_limit\":1.1}")).not.toStrictEqual(a)
    expect(Digest.digest("{\"credit_limit\":1.10,\"id\":1}")).not.toStrictEqual(a)
    expect(Digest.digest("{\"id\":12345678901234567890}")).not.toStrictEqual(
      Digest.digest("{\"id\":12345678901234567891}")
    )
    // No two of 100,000 near-identical texts share a digest (64 bits: a shared one would be a bug, not chance).
    const seen = new Set<string>()
    for (let i = 0; i < 100_000; i++) seen.add(Digest.digest(text(i, "Acme")).join(":"))
    expect(seen.size).toBe(100_000)
  })

  it("the table keeps what a Map would, numbers and strings apart, and its state is sorted", () => {
    fc.assert(fc.property(fc.array(fc.tuple(id, fc.string({ maxLength: 4 })), { maxLength: 300 }), (entries) => {
      const table = Changes.makeTable()
      const model = new Map<Changes.Id, string>()
      for (const [key, name] of entries) {
        table.add(key, text(key, name))
        model.set(Object.is(key, -0) ? 0 : key, text(key, name))
      }
      expect(table.size).toBe(model.size)
      for (const [key, body] of model) {
        expect(table.has(key)).toBe(true)
        expect(table.differs(key, body)).toBe(false)
        expect(table.differs(key, body + " ")).toBe(true)
      }
      expect(table.has("no such id") && !model.has("no such id")).toBe(false)
      const state = table.state()
      const numbers = [...model.keys()].filter((k): k is number => typeof k === "number").sort((a, b) => a - b)
      const strings = [...model.keys()].filter((k): k is string => typeof k === "string").sort()
      expect([...state.numbers]).toStrictEqual(numbers)
      expect(state.strings).toStrictEqual(strings)
      numbers.forEach((n, i) =>
        expect([state.numberDigests[2 * i], state.numberDigests[2 * i + 1]]).toStrictEqual(
          Digest.digest(model.get(n)!)
        )
      )
    }))
  })

  it("5 and \"5\" are two ids; an id added without its text has no content to differ from", () => {
    const table = Changes.makeTable()
    table.add(5, "a")
    table.add("5")
    expect(table.size).toBe(2)
    expect(table.differs("5", "b")).toBe(false)
    expect(table.differs(5, "b")).toBe(true)
  })

  it("ids beyond a double are keyed by the digits the server wrote, kept apart from numbers and strings", () => {
    const key = (text: string, idField = "id") => Changes.idOf(JSON.parse(text), idField, () => text)
    const a = key(`{"id":12345678901234567890}`)!
    const b = key(`{"id":12345678901234567891}`)!
    expect(a).not.toBe(b)
    expect([Changes.idJson(a), Changes.idJson(b)]).toStrictEqual(["12345678901234567890", "12345678901234567891"])
    expect([Changes.idValue(a), Changes.idValue(b)]).toStrictEqual(["12345678901234567890", "12345678901234567891"])
    // Not the string id with the same digits, nor the number JSON.parse makes of them.
    expect(a).not.toBe(key(`{"id":"12345678901234567890"}`))
    expect(a).not.toBe(Number("12345678901234567890"))
    // A repeated key: the last, as JSON.parse keeps it; ids a double holds exactly stay numbers.
    expect(Changes.idJson(key(`{"id":1,"id":12345678901234567890}`)!)).toBe("12345678901234567890")
    expect(key(`{"id":9007199254740991}`)).toBe(9007199254740991)
    expect(key(`{"code":"A-9"}`, "code")).toBe("A-9")
    expect(Changes.idJson("A-9")).toBe(`"A-9"`)
    // No id, or one that is neither a string nor a finite number.
    expect(key(`{"name":"x"}`)).toBeUndefined()
    expect(key(`{"id":null}`)).toBeUndefined()
    // Kept in a table and its state like any string id, and compared by them.
    const table = Changes.makeTable()
    table.add(a, `{"id":12345678901234567890}`)
    table.add(b, `{"id":12345678901234567891}`)
    const decoded = Changes.decode(Changes.encodeTable(table))
    const comparison = Changes.compare(decoded.ok ? decoded.state : Changes.empty)
    expect(comparison.judge(b, `{"id":12345678901234567891}`)).toBe("Unchanged")
    expect(comparison.removed().map(Changes.idJson)).toStrictEqual(["12345678901234567890"])
  })

  it("a page judged: added and changed in page order, by the page's own texts, none returned when not reporting", () => {
    const before = Changes.makeTable()
    before.add(1, `{"id":1,"limit":1.10}`)
    before.add(2, `{"id":2}`)
    const json = [`{"id":1,"limit":1.1}`, `{"id":2}`, `{"id":12345678901234567891}`]
    const raw = json.map((text) => JSON.parse(text) as unknown)
    // 1.10 -> 1.1 is a change of the text, which JSON.parse would not show.
    expect(Changes.judgePage(Changes.compare(before.state()), { raw, json }, "id")).toStrictEqual([
      { _tag: "Changed", index: 0, id: 1, idJson: "1", json: json[0] },
      { _tag: "Added", index: 2, id: "12345678901234567891", idJson: "12345678901234567891", json: json[2] }
    ])
    const quiet = Changes.compare(before.state())
    expect(Changes.judgePage(quiet, { raw, json }, "id", false)).toStrictEqual([])
    expect(quiet.counts()).toStrictEqual({ added: 1, changed: 1, unchanged: 1 })
    // Texts that do not pair with the records are not used: each record's own JSON is.
    expect(Changes.judgePage(Changes.compare(before.state()), { raw: [{ id: 2 }], json: [] }, "id")).toStrictEqual([])
  })

  it("a state survives its encoding, whatever its ids", () => {
    fc.assert(fc.property(fc.array(fc.tuple(id, fc.string({ maxLength: 4 })), { maxLength: 2000 }), (entries) => {
      const table = Changes.makeTable()
      for (const [key, name] of entries) table.add(key, text(key, name))
      const state = table.state()
      const bytes = Changes.encode(state)
      const back = Changes.decode(bytes)
      if (!back.ok) throw new Error(back.reason)
      expect(plain(back.state)).toStrictEqual(plain(state))
      // Encoded straight from the table: the same bytes, and the table (sorted in place) answers as before.
      expect(Changes.encodeTable(table)).toStrictEqual(bytes)
      expect(plain(table.state())).toStrictEqual(plain(state))
      const last = new Map(entries.map(([key, name]) => [Object.is(key, -0) ? 0 : key, text(key, name)]))
      for (const [key, body] of last) expect([table.has(key), table.differs(key, body)]).toStrictEqual([true, false])
    }))
  })

  it("ids of 32 bits decode as 32-bit ids, larger ones as doubles, digests in place", () => {
    for (
      const [ids, kind] of [[[1, 7, 2 ** 32 - 1], Uint32Array], [[1, 2 ** 33], Float64Array], [
        [-1, 0.5],
        Float64Array
      ]] as const
    ) {
      const table = Changes.makeTable()
      for (const key of ids) table.add(key, String(key))
      const back = Changes.decode(Changes.encode(table.state()))
      if (!back.ok) throw new Error(back.reason)
      expect(back.state.numbers).toBeInstanceOf(kind)
      expect(plain(back.state)).toStrictEqual(plain(table.state()))
    }
  })

  it("a dense list costs about 9 bytes a record; 1,000,000 fit in 10 MB", () => {
    const table = Changes.makeTable()
    for (let i = 1; i <= 1_000_000; i++) table.add(i, `{"id":${i}}`)
    const bytes = Changes.encode(table.state())
    expect(bytes.length).toBeLessThan(10_000_000)
    const back = Changes.decode(bytes)
    expect(back.ok && Changes.size(back.state)).toBe(1_000_000)
  })

  it("anything but a state is refused with a reason; one of erp changes (damaged, of another version) is said so", () => {
    const table = Changes.makeTable()
    for (const key of [3, 1, 2, "x"]) table.add(key, String(key))
    const bytes = Changes.encode(table.state())
    expect(Changes.decode(new TextEncoder().encode("{\"id\":1}\n"))).toStrictEqual({
      ok: false,
      reason: "not a state file of erp changes",
      ours: false
    })
    for (let cut = 0; cut < bytes.length; cut++) expect(Changes.decode(bytes.slice(0, cut)).ok).toBe(false)
    expect(Changes.decode(new Uint8Array([...bytes, 0]))).toMatchObject({ ok: false, ours: true })
    // A state of version 1 (no header, no checksum), as the first release wrote it.
    const v1 = new Uint8Array([
      0x45,
      0x52,
      0x50,
      0x43,
      0x48,
      0x47,
      0x00,
      0x01,
      0,
      1,
      1,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      0
    ])
    expect(Changes.decode(v1)).toStrictEqual({
      ok: false,
      reason: "a state of an earlier format (version 1), which does not say which list and server it was made for",
      ours: true
    })
  })

  it("property: every single-byte change of a real state is refused, never read as another state", () => {
    // 2,000 records as a changes run leaves them, with the source of the list.
    const table = Changes.makeTable()
    for (let i = 1; i <= 2000; i++) table.add(i, `{"id":${i},"company_name":"Partner ${i} Kft."}`)
    table.add("A-1", "{}")
    const source = Changes.sourceOf({
      baseUrl: "http://127.0.0.1:8080/",
      endpoint: "partner/list",
      idField: "id",
      where: { is_customer: 1 }
    })
    const bytes = Changes.encodeTable(table, source)
    expect(Changes.decode(bytes)).toMatchObject({ ok: true, source })
    // Every byte flipped whole, and with one bit flipped (a different bit from byte to byte): 18,000 bytes and more,
    // none read as a state. (The checksum, a CRC-32, catches any change within 32 bits in a row, whatever its value.)
    let flips = 0
    const changed = bytes.slice()
    for (let at = 0; at < bytes.length; at++) {
      for (const mask of [0xff, 1 << (at % 8)]) {
        changed[at] = bytes[at] ^ mask
        if (Changes.decode(changed).ok) throw new Error(`byte ${at} changed by ${mask} read as a state`)
        flips++
      }
      changed[at] = bytes[at]
    }
    expect(flips).toBe(2 * bytes.length)
    expect(bytes.length).toBeGreaterThan(18_000)
  })

  it("the source of a state: the server without credentials, the filters in any order; what differs, said", () => {
    const a = Changes.sourceOf({
      baseUrl: "https://key:secret@erp.example.com/api/",
      endpoint: "invoice/list",
      idField: "id",
      where: { paid: 0, year: 2026 },
      params: [["lang", "hu"], ["fields", "all"]]
    })
    expect(a.server).toBe("https://erp.example.com:443/api/")
    const b = Changes.sourceOf({
      baseUrl: "https://erp.example.com/api",
      endpoint: "invoice/list",
      idField: "id",
      where: { year: 2026, paid: false },
      params: [["fields", "all"], ["lang", "hu"]]
    })
    expect(Changes.sourceDifferences(a, b)).toStrictEqual([
      "the server: https://erp.example.com:443/api in the state, https://erp.example.com:443/api/ now"
    ])
    const back = Changes.decode(Changes.encode(Changes.empty, a))
    expect(back.ok && back.source).toStrictEqual(a)
    expect(JSON.stringify(back)).not.toContain("secret")
    const other = Changes.sourceOf({ baseUrl: "http://127.0.0.1:9090/", endpoint: "partner/list", idField: "code" })
    expect(Changes.sourceDifferences(a, other)).toStrictEqual([
      "the server: http://127.0.0.1:9090/ in the state, https://erp.example.com:443/api/ now",
      "the endpoint: partner/list in the state, invoice/list now",
      "the id field: code in the state, id now",
      "the conditions: none in the state, list_condition[paid]=0&list_condition[year]=2026 now",
      "the parameters: none in the state, fields=all&lang=hu now"
    ])
  })

  it("the end of a run: records that share an id refused unless allowed, more than half removed refused unless init", () => {
    const none = { records: 0, ids: [] }
    const run = { held: 2000, read: 2000, removed: 0, duplicates: none, init: false, allowDuplicateIds: false }
    const at = (over: Partial<Parameters<typeof Changes.refusal>[0]>) =>
      Changes.refusal({ ...run, maxRemovedRatio: 0.5, ...over })
    expect(at({})).toBeUndefined()
    expect(at({ removed: 1000, read: 1000 })).toBeUndefined()
    expect(at({ removed: 1001, read: 999 })).toMatchObject({ _tag: "TooManyRemovals", removed: 1001, held: 2000 })
    expect(at({ removed: 2000, read: 0, init: true })).toBeUndefined()
    expect(at({ removed: 2000, read: 0, maxRemovedRatio: 1 })).toBeUndefined()
    const twice = { records: 1998, ids: [1, 0] }
    expect(at({ read: 2, duplicates: twice })).toStrictEqual({
      _tag: "DuplicateIds",
      records: 1998,
      ids: [1, 0],
      read: 2000
    })
    expect(at({ read: 2, duplicates: twice, allowDuplicateIds: true })).toBeUndefined()
    const words = {
      startOver: "--init",
      otherState: "give another --since",
      allowDuplicateIds: "--allow-duplicate-ids",
      allowRemovals: "--allow-removals",
      idField: "--id-field"
    }
    const duplicated = at({ read: 2, duplicates: twice })
    if (duplicated?._tag !== "DuplicateIds") throw new Error("expected DuplicateIds")
    const idsJson = duplicated.ids.map(Changes.idJson)
    expect(Changes.duplicateIdsText("s", { ...duplicated, idsJson }, "is_customer", words)).toBe(
      "1,998 records have the id of another, distinct record (ids 1, 0): the state keeps one record per id, so they " +
        "cannot be tracked (a change of them would go unreported); 1,998 records of 2,000 share an id: is_customer " +
        "is probably not the field that tells these records apart (--id-field); the state s was left as it was and " +
        "nothing was removed (--allow-duplicate-ids keeps the first record of each id and reports the others on stderr)"
    )
    const removing = at({ removed: 2000, read: 0 })
    if (removing?._tag !== "TooManyRemovals") throw new Error("expected TooManyRemovals")
    expect(Changes.removalsText("s", removing, words)).toBe(
      "the run would remove 2,000 of the 2,000 records of the state s (more than half), as a list answering empty or " +
        "cut short for a while would: nothing was removed and the state was left as it was (--allow-removals commits " +
        "them, if the list really lost them)"
    )
  })

  it("the comparison: added, changed and unchanged as read, removed only what was not read", () => {
    const last = Changes.makeTable()
    for (let i = 1; i <= 10; i++) last.add(i, text(i, `P${i}`))
    last.add("A-1", text("A-1", "a"))
    const comparison = Changes.compare(last.state())
    const verdicts = [
      comparison.judge(1, text(1, "P1")),
      comparison.judge(2, text(2, "renamed")),
      comparison.judge(11, text(11, "new")),
      comparison.judge("A-1", text("A-1", "a")),
      comparison.judge("B-1", text("B-1", "b"))
    ]
    expect(verdicts).toStrictEqual(["Unchanged", "Changed", "Added", "Unchanged", "Added"])
    for (let i = 3; i <= 8; i++) comparison.judge(i, text(i, `P${i}`))
    expect(comparison.removed()).toStrictEqual([9, 10])
    expect(comparison.counts()).toStrictEqual({ added: 2, changed: 1, unchanged: 8 })
    // A first run: every record is added, none removed.
    const first = Changes.compare(Changes.empty)
    expect(first.judge(1, "x")).toBe("Added")
    expect(first.removed()).toStrictEqual([])
  })
})
