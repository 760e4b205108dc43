import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { describe, expect, it } from "@effect/vitest"
import { ErpClient, ErpRateLimiter } from "@erp-client/client"
import * as Partners from "@erp-client/streams/Partners"
import { Effect, Exit, Layer, ManagedRuntime, Redacted } from "effect"
import { afterAll } from "vitest"
import * as Tools from "../src/internal/mcpTools.js"
import { SECRET, startSandbox } from "./harness.js"

// `erp mcp`'s tools called as functions, with the client of the command line pointed at a sandbox on loopback: what
// each answers, and how it refuses what it cannot do exactly.

type Started = Awaited<ReturnType<typeof startSandbox>>

const stops: Array<() => Promise<void>> = []
afterAll(async () => {
  for (const stop of stops.reverse()) await stop()
})

/** A sandbox, and the tools' context on a client pointed at it (a fresh cursor secret each time). */
const setUp = async (options: Parameters<typeof startSandbox>[0], checkConditions = true) => {
  const s = await startSandbox({ rateLimit: false, ...options })
  const runtime = ManagedRuntime.make(
    ErpClient.layer({ baseUrl: s.sandbox.baseUrl, apiKey: Redacted.make(SECRET), retryBaseDelay: "20 millis" }).pipe(
      Layer.provide(ErpRateLimiter.layer({ limit: 100_000 })),
      Layer.provide(FetchHttpClient.layer),
      Layer.orDie
    )
  )
  stops.push(() => s.close(), () => runtime.dispose())
  const client = await runtime.runPromise(ErpClient.ErpClient)
  const context: Tools.Context = {
    client,
    ...Tools.makeFieldsSeen(),
    cursorSecret: Tools.makeCursorSecret(),
    maxLimit: 1_000,
    defaultLimit: 100,
    checkConditions
  }
  const tools = [...Tools.resourceTools(context, Partners.resource), ...Tools.apiTools(context, [Partners.resource])]
  return { s, context, tools, ...caller(tools) }
}

interface Reported {
  readonly progress: number
  readonly total: number | undefined
  readonly message: string | undefined
}

const caller = (tools: ReadonlyArray<Tools.Tool>) => {
  const tool = (name: string) => {
    const found = tools.find((t) => t.name === name)
    if (found === undefined) throw new Error(`no tool ${name}`)
    return found
  }
  /** The tool's answer, or its failure as `{ _tag, message }`; with what it reported as progress. */
  const call = async (name: string, args: unknown) => {
    const reports: Array<Reported> = []
    const progress: Tools.Progress = {
      report: (progress, total, message) => Effect.sync(() => void reports.push({ progress, total, message }))
    }
    const exit = await Effect.runPromiseExit(tool(name).call(args, progress))
    if (Exit.isSuccess(exit)) return { answer: exit.value, failure: undefined, reports }
    const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined
    if (failure === undefined) throw new Error(`${name}: not a failure of the tool: ${String(exit.cause)}`)
    return { answer: undefined, failure: { _tag: failure._tag, message: failure.message }, reports }
  }
  const ok = async (name: string, args: unknown) => {
    const result = await call(name, args)
    if (result.answer === undefined) {
      throw new Error(`${name} failed: ${result.failure!._tag}: ${result.failure!.message}`)
    }
    return { ...result.answer, reports: result.reports }
  }
  const fails = async (name: string, args: unknown) => {
    const result = await call(name, args)
    if (result.failure === undefined) {
      throw new Error(`${name} answered: ${result.answer!.texts.join("\n").slice(0, 300)}`)
    }
    return result.failure
  }
  return { tool, call, ok, fails }
}

/** The data of a list answer, the records' ids as the server wrote them (read from the text: exact past 2^53). */
const listData = (text: string) => {
  const data = JSON.parse(text) as {
    endpoint: string
    where: Record<string, string>
    returned: number
    more: boolean
    cursor?: string
    records: Array<Record<string, unknown>>
  }
  const ids = [...text.matchAll(/[{,]"id":(-?[0-9]+)/g)].map((match) => match[1]!)
  expect(ids.length).toBe(data.records.length)
  return { ...data, ids }
}

/**
 * A JSON Schema check of what `outputSchema`s use (type, properties, required, additionalProperties, items, minimum):
 * a host checks `structuredContent` against the schema, and refuses the answer when it does not match.
 */
const schemaErrors = (schema: any, value: unknown, path = "$"): Array<string> => {
  const errors: Array<string> = []
  const types = schema.type === undefined ? undefined : [schema.type].flat() as Array<string>
  const typeOf = (v: unknown) =>
    v === null ? "null" : Array.isArray(v) ? "array" : Number.isInteger(v) ? "integer" : typeof v
  if (types !== undefined) {
    const actual = typeOf(value)
    const fits = types.includes(actual) || (actual === "integer" && types.includes("number"))
    if (!fits) return [`${path}: ${actual}, not ${types.join("|")}`]
  }
  if (typeof schema.minimum === "number" && typeof value === "number" && value < schema.minimum) {
    errors.push(`${path}: below ${schema.minimum}`)
  }
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const record = value as Record<string, unknown>
    for (const name of schema.required ?? []) if (!(name in record)) errors.push(`${path}.${name}: required`)
    for (const [name, v] of Object.entries(record)) {
      const property = schema.properties?.[name]
      if (property !== undefined) errors.push(...schemaErrors(property, v, `${path}.${name}`))
      else if (schema.additionalProperties === false) errors.push(`${path}.${name}: not allowed`)
      else if (typeof schema.additionalProperties === "object") {
        errors.push(...schemaErrors(schema.additionalProperties, v, `${path}.${name}`))
      }
    }
  }
  if (Array.isArray(value) && schema.items !== undefined) {
    value.forEach((item, i) => errors.push(...schemaErrors(schema.items, item, `${path}[${i}]`)))
  }
  return errors
}

describe("list tools page by cursor", () => {
  let big: Awaited<ReturnType<typeof setUp>>
  const ids = (s: Started) => s.run(s.sandbox.partnerIds)

  it("through 3,000 partners in pages of 1,000: every partner once, in order, and progress told", async () => {
    big = await setUp({ partners: 3_000, maxListCount: 1_000 })
    const all: Array<string> = []
    let cursor: string | undefined
    let calls = 0
    do {
      const answer = await big.ok("partners_list", cursor === undefined ? { limit: 1_000 } : { limit: 1_000, cursor })
      const data = listData(answer.texts[0]!)
      all.push(...data.ids)
      cursor = data.cursor
      expect(data.more).toBe(cursor !== undefined)
      expect(answer.reports.length).toBeGreaterThan(0)
      expect(answer.reports.at(-1)!.progress).toBe(data.returned)
      calls++
    } while (cursor !== undefined)
    expect(calls).toBe(3)
    expect(all).toEqual((await ids(big.s)).map(String))
  })

  it("api_list pages the same list by its cursor, and a cursor goes on across the two tools", async () => {
    const first = listData((await big.ok("api_list", { endpoint: "partner/list", limit: 7 })).texts[0]!)
    expect(first.ids).toEqual(["1", "2", "3", "4", "5", "6", "7"])
    const second = listData(
      (await big.ok("partners_list", { limit: 3, cursor: first.cursor })).texts[0]!
    )
    expect(second.ids).toEqual(["8", "9", "10"])
    const third = listData((await big.ok("api_list", { endpoint: "partner/list", cursor: second.cursor })).texts[0]!)
    expect(third.ids[0]).toBe("11")
    expect(third.returned).toBe(100)
  })

  it("a cursor keeps its where: given alone, or with the same where; another where is refused", async () => {
    const first = await big.ok("partners_list", { customers: true, limit: 5 })
    const data = listData(first.texts[0]!)
    expect(data.where).toEqual({ is_customer: "1" })
    expect(first.texts.at(-1)).toContain("\"cursor\"")
    const alone = listData((await big.ok("partners_list", { cursor: data.cursor, limit: 5 })).texts[0]!)
    expect(alone.where).toEqual({ is_customer: "1" })
    expect(alone.records.every((record) => record.is_customer === 1)).toBe(true)
    expect(Number(alone.ids[0])).toBeGreaterThan(Number(data.ids.at(-1)))
    const same = listData(
      (await big.ok("partners_list", { where: { is_customer: 1 }, cursor: data.cursor, limit: 5 })).texts[0]!
    )
    expect(same.ids).toEqual(alone.ids)
    const other = await big.fails("partners_list", { where: { is_customer: 0 }, cursor: data.cursor })
    expect(other._tag).toBe("InvalidArguments")
    const widened = await big.fails("partners_list", { customers: false, cursor: data.cursor })
    expect(widened.message).toContain("the cursor goes on with the list of partner/list where {\"is_customer\":\"1\"}")
    const params = await big.fails("api_list", { endpoint: "partner/list", params: { x: "1" }, cursor: data.cursor })
    expect(params._tag).toBe("InvalidArguments")
    const endpoint = await big.fails("api_list", { endpoint: "invoice/list", cursor: data.cursor })
    expect(endpoint.message).toContain("the cursor goes on with partner/list, not invoice/list")
  })

  it("a tampered, made-up or another process's cursor is refused", async () => {
    const { cursor } = listData((await big.ok("partners_list", { limit: 2 })).texts[0]!)
    const [payload, signature] = cursor!.split(".") as [string, string]
    const state = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"))
    expect(state.o).toBe(2)
    const moved = Buffer.from(JSON.stringify({ ...state, o: 500 })).toString("base64url")
    const flip = (text: string, at: number) => text.slice(0, at) + (text[at] === "A" ? "B" : "A") + text.slice(at + 1)
    const elsewhere = await setUp({ partners: 10 })
    for (const bad of [`${moved}.${signature}`, flip(cursor!, 3), flip(cursor!, cursor!.length - 1), "abc", ""]) {
      const refused = await big.fails("partners_list", { cursor: bad })
      expect(refused).toEqual({
        _tag: "InvalidArguments",
        message: "cursor: the cursor is not one this server gave, or was changed: call again without cursor (a " +
          "cursor holds only while this server runs)"
      })
    }
    expect((await elsewhere.fails("partners_list", { cursor }))._tag).toBe("InvalidArguments")
  })
})

describe("a list that changes between two calls", () => {
  it("records removed or added before the cursor: the next call goes on after the last one returned", async () => {
    const { s, ok } = await setUp({ partners: 400 })
    const first = listData((await ok("partners_list", { limit: 100 })).texts[0]!)
    expect(first.ids.at(-1)).toBe("100")
    // Five partners before the cursor's place are removed: read by the offset alone, 101 to 105 would be skipped.
    await s.run(s.sandbox.deletePartners([20, 21, 22, 23, 24]))
    const second = await ok("partners_list", { limit: 100, cursor: first.cursor })
    const after = listData(second.texts[0]!)
    expect(after.ids).toEqual(Array.from({ length: 100 }, (_, i) => String(101 + i)))
    expect(second.texts[1]).toContain("is now 5 places earlier")
    // Three added before it: read by the offset alone, 198 to 200 would come again.
    await s.run(s.sandbox.insertPartners(3, 10))
    const third = listData((await ok("partners_list", { limit: 10, cursor: after.cursor })).texts[0]!)
    expect(third.ids).toEqual(Array.from({ length: 10 }, (_, i) => String(201 + i)))
    // The last partner returned is removed: the list goes on after the one before it, which is still there.
    await s.run(s.sandbox.deletePartners([210]))
    const fourth = await ok("partners_list", { limit: 5, cursor: third.cursor })
    expect(listData(fourth.texts[0]!).ids).toEqual(["211", "212", "213", "214", "215"])
    expect(fourth.texts[1]).toContain("was removed since")
  })

  it("more removed before the cursor than it can look back over: refused, nothing skipped", async () => {
    const { s, ok, fails } = await setUp({ partners: 600 })
    const first = listData((await ok("partners_list", { limit: 300 })).texts[0]!)
    await s.run(s.sandbox.deletePartners(Array.from({ length: 150 }, (_, i) => 100 + i)))
    const refused = await fails("partners_list", { limit: 100, cursor: first.cursor })
    expect(refused._tag).toBe("ListChanged")
    expect(refused.message).toContain("partner/list changed since this cursor was given")
    expect(refused.message).toContain("call again without cursor")
    // Every partner that was in the list then is still there to read from the start.
    const again = listData((await ok("partners_list", { limit: 1_000 })).texts[0]!)
    expect(again.returned).toBe(450)
  })
})

describe("count tools", () => {
  it("tell progress after every page: records so far, no total", async () => {
    const { ok } = await setUp({ partners: 2_500, maxListCount: 1_000 })
    const answer = await ok("partners_count", {})
    const data = JSON.parse(answer.texts[0]!)
    expect(data.count).toBe(2_500)
    expect(answer.reports.length).toBe(data.pages)
    expect(answer.reports.length).toBeGreaterThanOrEqual(3)
    expect(answer.reports.slice(0, 3).map((r) => r.progress)).toEqual([1_000, 2_000, 2_500])
    expect(answer.reports.every((r) => r.total === undefined)).toBe(true)
    expect(answer.reports[0]!.message).toBe("1000 partners counted in partner/list (1 page)")
    const api = await ok("api_count", { endpoint: "partner/list", where: { is_customer: 1 } })
    expect(JSON.parse(api.texts[0]!).count).toBeGreaterThan(0)
    expect(api.reports.at(-1)!.progress).toBe(JSON.parse(api.texts[0]!).count)
  })
})

describe("numbers past 2^53 - 1 in the arguments", () => {
  const big = "12345678901234571890"
  let tools: Awaited<ReturnType<typeof setUp>>

  it("as JSON numbers: refused, naming the argument and how to pass it", async () => {
    // Every partner's id is past a double's integers: 12345678901234567890 plus 1000 times its index.
    tools = await setUp({ partners: 20, oddRecords: { rate: 1, kinds: ["id-beyond-double"] } })
    const asNumber = JSON.parse(`{"id":${big}}`)
    for (
      const [name, args, path] of [
        ["partners_get", asNumber, "id"],
        ["partners_list", { where: asNumber }, "where.id"],
        ["partners_count", { where: asNumber }, "where.id"],
        ["api_get", { endpoint: "partner/get", params: asNumber }, "params.id"],
        ["api_list", { endpoint: "partner/list", where: asNumber }, "where.id"]
      ] as const
    ) {
      const refused = await tools.fails(name, args)
      expect(refused._tag, name).toBe("InvalidArguments")
      expect(refused.message, name).toBe(
        `${path}: a whole number past 2^53 - 1 (9007199254740991) cannot be passed as a JSON number (it arrived as ` +
          "12345678901234571264, a neighbour's value): pass it as a string of digits, e.g. \"12345678901234571890\""
      )
    }
    const body = await tools.fails("api_post", { endpoint: "partner/create", body: { credit: JSON.parse(big) } })
    expect(body.message).toContain("body.credit: a whole number past 2^53 - 1")
    expect(body.message).toContain("give the body as JSON text in json instead")
  })

  it("as strings of digits: sent as written, the partner found exactly", async () => {
    const served = (await tools.s.run(tools.s.sandbox.visiblePartners))[4]!
    // The fixture: the fifth partner's id, which a double reads as another number.
    expect(String(served.id)).toBe(big)
    expect(String(BigInt(Number(big)))).not.toBe(big)
    const got = await tools.ok("partners_get", { id: big })
    expect(got.texts[0]).toContain(`{"id":${big},`)
    expect(got.structured).toBe(got.texts[0])
    const listed = await tools.ok("partners_list", { where: { id: big } })
    const data = listData(listed.texts[0]!)
    expect(data.ids).toEqual([big])
    expect(data.where).toEqual({ id: big })
    expect(data.records[0]!.company_name).toBe(JSON.parse(got.texts[0]!).company_name)
    const api = await tools.ok("api_get", { endpoint: "partner/get", params: { id: big } })
    expect(api.texts[0]).toBe(got.texts[0])
    const counted = await tools.ok("api_count", { endpoint: "partner/list", where: { id: big } })
    expect(JSON.parse(counted.texts[0]!).count).toBe(1)
    // Its neighbour by a double's reckoning is another partner, or none.
    const neighbour = await tools.call("partners_get", { id: "12345678901234571264" })
    expect(neighbour.failure?._tag).toBe("NotFound")
    expect(neighbour.failure?.message).toContain("id=12345678901234571264")
  })
})

describe("where fields", () => {
  it("a field neither declared nor seen is refused, with the fields that exist", async () => {
    const { fails, ok } = await setUp({ partners: 30, invoices: 10, ignoreConditions: "unknown" })
    const refused = await fails("partners_list", { where: { nonexistent_field: 1 } })
    expect(refused).toEqual({
      _tag: "InvalidArguments",
      message: "where: \"nonexistent_field\" is not a field of the records of partner/list: the fields that exist " +
        "are id, company_name, tax_number, is_customer (declared by the contract, and seen in the records read so " +
        "far; api_endpoints lists them)"
    })
    expect((await fails("partners_count", { where: { nonexistent_field: 1 } }))._tag).toBe("InvalidArguments")
    expect((await fails("api_list", { endpoint: "partner/list", where: { nonexistent_field: 1 } }))._tag).toBe(
      "InvalidArguments"
    )
    // An endpoint never read: the condition is sent, and a server that ignored it is caught by its records.
    const ignored = await fails("api_list", { endpoint: "invoice/list", where: { nonexistent_field: 1 } })
    expect(ignored._tag).toBe("ConditionIgnored")
    expect(ignored.message).toContain("the server ignored the condition nonexistent_field=1")
    // Read once, its fields are known: the same call is refused before any request, naming them.
    await ok("api_list", { endpoint: "invoice/list", limit: 2 })
    const known = await fails("api_count", { endpoint: "invoice/list", where: { nonexistent_field: 1 } })
    expect(known._tag).toBe("InvalidArguments")
    expect(known.message).toMatch(
      /^where: "nonexistent_field" is not a field of the records of invoice\/list: the fields that exist are id, /
    )
    expect(known.message).toContain("(seen in the records read so far; api_endpoints lists them)")
    // A field seen in the records (not declared) may be named.
    const fields = Object.keys(
      JSON.parse((await ok("api_list", { endpoint: "invoice/list", limit: 1 })).texts[0]!)
        .records[0]
    )
    expect(fields.length).toBeGreaterThan(1)
  })

  it("on an endpoint never read, a where nothing matches says its fields could not be checked", async () => {
    const { ok } = await setUp({ partners: 5, invoices: 5 })
    for (const name of ["api_list", "api_count"]) {
      const answer = await ok(name, { endpoint: "invoice/list", where: { nonexistent_field: 1 } })
      expect(answer.texts[1], name).toBe(
        "No record matched. invoice/list had not been read before, so the fields of where (nonexistent_field) could " +
          "not be checked: if one is misspelt, nothing matches it. Call without where (limit 1) to see the fields of " +
          "its records; from then on a where naming another is refused."
      )
    }
  })

  it("without the check of conditions (--no-check-where), a where is sent as given, any field", async () => {
    const { ok } = await setUp({ partners: 30, ignoreConditions: "unknown" }, false)
    const all = await ok("partners_count", { where: { nonexistent_field: 1 } })
    expect(all.texts).toEqual([
      "{\"endpoint\":\"partner/list\",\"where\":{\"nonexistent_field\":\"1\"},\"count\":30,\"pages\":2}"
    ])
  })

  it("a server that ignores a condition on a known field: an error, not the whole list", async () => {
    const { fails } = await setUp({ partners: 30, ignoreConditions: "all" })
    for (const [name, args] of [["partners_list", { customers: true }], ["partners_count", { customers: true }]]) {
      const failure = await fails(name as string, args)
      expect(failure._tag, name as string).toBe("ConditionIgnored")
      expect(failure.message).toContain("is_customer=1")
    }
  })
})

describe("typed results", () => {
  it("declared resources' tools have an outputSchema their structured answer fits, the same text as texts[0]", async () => {
    const { ok, tool, tools } = await setUp({
      partners: 60,
      oddRecords: {
        rate: 0.5,
        kinds: [
          "number-beyond-double",
          "tax-number-empty",
          "tax-number-null",
          "company-name-null",
          "customer-flag-string",
          "customer-flag-absent",
          "extra-object"
        ]
      }
    })
    for (const t of tools) {
      if (t.name.startsWith("partners_")) {
        expect(t.outputSchema?.type, t.name).toBe("object")
        expect(t.toolset).toBe("partners")
      } else {
        expect(t.outputSchema, t.name).toBeUndefined()
        expect(t.toolset).toBe(t.write ? "writes" : "api")
      }
    }
    const answers = [
      ["partners_list", await ok("partners_list", { limit: 60 })],
      ["partners_list", await ok("partners_list", { limit: 3 })],
      ["partners_count", await ok("partners_count", {})],
      ...await Promise.all(
        Array.from(
          { length: 20 },
          (_, i) => ok("partners_get", { id: i + 1 }).then((a) => ["partners_get", a] as const)
        )
      )
    ] as const
    for (const [name, answer] of answers) {
      expect(answer.structured, name).toBe(answer.texts[0])
      const value = JSON.parse(answer.structured!)
      expect(schemaErrors(tool(name).outputSchema, value), name).toEqual([])
    }
    // The schema checks what it says: a list answer without its records, or with a record that is not an object,
    // does not fit.
    const list = JSON.parse(answers[1][1].structured!)
    expect(schemaErrors(tool("partners_list").outputSchema, { ...list, records: undefined })).not.toEqual([])
    expect(schemaErrors(tool("partners_list").outputSchema, { ...list, records: [1] })).not.toEqual([])
    expect(list.cursor).toEqual(expect.any(String))
    // The record schema names the declared fields, with no types: a null or empty value fits.
    const record = tool("partners_get").outputSchema as any
    expect(Object.keys(record.properties)).toEqual(["id", "company_name", "tax_number", "is_customer"])
    expect(Object.values(record.properties).every((p: any) => p.type === undefined && p.description.length > 0))
      .toBe(true)
    expect(schemaErrors(record, { id: "x", company_name: null, tax_number: "", extra: [1] })).toEqual([])
  })
})

describe("the endpoint catalogue", () => {
  it("lists the declared resources, and the endpoints called with the fields seen, sending nothing", async () => {
    const { s, context, ok } = await setUp({ partners: 5, invoices: 3 })
    await s.run(s.sandbox.resetStats)
    const before = JSON.parse((await ok("api_endpoints", {})).texts[0]!)
    expect(before.declared).toEqual([{
      name: "partners",
      description: Partners.resource.description,
      list: "partner/list",
      get: "partner/get",
      tools: ["partners_get", "partners_list", "partners_count"],
      idField: "id",
      fields: ["id", "company_name", "tax_number", "is_customer"],
      selectors: [
        { param: "id", kind: "integer", description: "A partner's id." },
        { param: "company_name", kind: "text", description: Partners.byCompanyName.description }
      ],
      filters: { customers: { where: { is_customer: 1 }, description: "Customers only (is_customer=1)." } }
    }])
    expect(before.called).toEqual([])
    expect((await s.run(s.sandbox.stats)).requests).toBe(0)
    await ok("api_list", { endpoint: "invoice/list", limit: 1 })
    await ok("partners_get", { id: 2 })
    const after = JSON.parse(Tools.catalogue(context, [Partners.resource]))
    expect(after.called.map((c: any) => c.endpoint)).toEqual(["invoice/list", "partner/get"])
    expect(after.called[1].fieldsSeen).toEqual(expect.arrayContaining(["id", "company_name"]))
    expect((await ok("api_endpoints", {})).texts[0]).toBe(JSON.stringify(after))
  })
})
