import type * as ErpRules from "../ErpRules.js"
import * as Envelope from "./envelope.js"
import * as Exact from "./exactNumber.js"
import type * as Invoices from "./invoices.js"
import type * as PartnerStore from "./partnerStore.js"
import type * as Resources from "./resources.js"

/**
 * What the answers depend on.
 *
 * @internal
 */
export interface Config {
  readonly store: PartnerStore.PartnerStore
  /** The invoices `invoice/list` and `invoice/get` serve (none when absent). */
  readonly invoices?: Invoices.Table | undefined
  /** The declared kinds of record (`ErpRules.Options.resources`). */
  readonly resources?: ReadonlyArray<Resources.Table> | undefined
  /** The largest page served. */
  readonly maxListCount: number
  /** The page served when `list_count` is absent; refused when `undefined`. */
  readonly defaultListCount: number | undefined
  readonly messages: Envelope.Messages
  /** Runs right before each list answer (drift), after the request was found valid. */
  readonly beforeList: () => void
  /** Serve every page from offset 0, whatever `list_offset` says (`ErpRules.Options.ignoreOffset`). */
  readonly ignoreOffset?: boolean | undefined
  /** The conditions a list does not apply (`ErpRules.Options.ignoreConditions`). */
  readonly ignoreConditions?: "all" | "unknown" | undefined
  /** The largest page from the N-th list page on (`ErpRules.Options.maxListCountSchedule`). */
  readonly maxListCountSchedule?: ErpRules.Options["maxListCountSchedule"]
}

/**
 * The normal answer to a request that the rate limit let through and no fault replaced: its body text, and for a
 * list page, how many records it holds and how many hidden ones were dropped from its cut (for the request log).
 *
 * @internal
 */
export interface Answered {
  readonly body: string
  readonly records?: number | undefined
  readonly hidden?: number | undefined
}

/** @internal */
export type Answer = (endpoint: string, params: URLSearchParams, keyValid: boolean) => Answered

/**
 * The largest page served to the `page`-th list page (1-based): `maxListCount`, or the `max` of the last schedule
 * entry whose `fromRequest` it has reached.
 *
 * @internal
 */
export const largestPage = (
  maxListCount: number,
  schedule: ErpRules.Options["maxListCountSchedule"],
  page: number
): number => {
  let largest = maxListCount
  let from = Number.NEGATIVE_INFINITY
  for (const step of schedule ?? []) {
    // The latest step reached wins, whatever order the schedule was written in.
    if (page >= step.fromRequest && step.fromRequest >= from) {
      from = step.fromRequest
      largest = Math.max(1, Math.floor(step.max))
    }
  }
  return largest
}

// The contract says clients send both paging parameters; only plain decimal integers are accepted, so a client
// that sends `1e3`, `-1` or nothing sees an error instead of a guess.
const nonNegativeInt = (value: string | null): number | undefined => {
  if (value === null || !/^\d+$/.test(value)) return undefined
  const n = Number(value)
  return Number.isSafeInteger(n) ? n : undefined
}

const CONDITION = /^list_condition\[(.*)\]$/

/**
 * The `list_condition[field]=value` pairs of a query, in order.
 *
 * @internal
 */
export const conditionsOf = (params: URLSearchParams): ReadonlyArray<readonly [string, string]> => {
  const conditions: Array<readonly [string, string]> = []
  for (const [name, value] of params) {
    const match = CONDITION.exec(name)
    if (match !== null) conditions.push([match[1], value])
  }
  return conditions
}

// List bodies kept while the store does not change: an export, and a benchmark that repeats one, asks the same pages
// again and again, and generating and serializing them is most of the server's work per request. Any insert or
// delete drops them all; the cache holds at most this many characters (about 2 bytes each).
const MAX_CACHED_CHARS = 16 * 1024 * 1024

// How many records of a list, from its start, name the fields its conditions may use (`ignoreConditions: "unknown"`).
const FIELDS_FROM = 100

/** @internal */
export const make = (config: Config): Answer => {
  const { store } = config
  const bodies = new Map<string, Answered>()
  // The fields of each list's first records, read once: what `ignoreConditions: "unknown"` knows.
  const knownFields = new Map<string, ReadonlySet<string>>()
  const applied = (
    endpoint: string,
    conditions: ReadonlyArray<readonly [string, string]>,
    first: () => ReadonlyArray<object>
  ): ReadonlyArray<readonly [string, string]> => {
    if (config.ignoreConditions === undefined || conditions.length === 0) return conditions
    if (config.ignoreConditions === "all") return []
    let known = knownFields.get(endpoint)
    if (known === undefined) {
      known = new Set(first().flatMap((record) => Object.keys(record)))
      knownFields.set(endpoint, known)
    }
    const fields = known
    return conditions.filter(([field]) => fields.has(field))
  }
  let cachedChars = 0
  let bodiesVersion = store.version()
  // List pages served so far, for the schedule of the largest page.
  let pages = 0

  const fail = (message: string): Answered => ({ body: Envelope.failure(message) })

  const list = (endpoint: string, params: URLSearchParams): Answered => {
    const offset = nonNegativeInt(params.get("list_offset"))
    const countParam = params.get("list_count")
    const count = countParam === null && config.defaultListCount !== undefined
      ? config.defaultListCount
      : nonNegativeInt(countParam)
    if (offset === undefined) return fail("list_offset is required and must be a non-negative integer")
    if (count === undefined) return fail("list_count is required and must be a non-negative integer")
    const asked = conditionsOf(params)
    if (endpoint === "/invoice/list") {
      const from = config.ignoreOffset === true ? 0 : offset
      const conditions = applied(endpoint, asked, () => config.invoices?.page(0, FIELDS_FROM, []) ?? [])
      const records = config.invoices?.page(from, Math.min(count, config.maxListCount), conditions) ?? []
      return { body: Envelope.success(records), records: records.length, hidden: 0 }
    }
    const declared = config.resources?.find((table) => table.list === endpoint)
    if (declared !== undefined) {
      const from = config.ignoreOffset === true ? 0 : offset
      const conditions = applied(endpoint, asked, () => declared.page(0, FIELDS_FROM, []))
      const records = declared.page(from, Math.min(count, config.maxListCount), conditions)
      return { body: Envelope.success(records), records: records.length, hidden: 0 }
    }
    config.beforeList()
    if (store.version() !== bodiesVersion) {
      bodies.clear()
      cachedChars = 0
      bodiesVersion = store.version()
    }
    pages += 1
    const served = Math.min(count, largestPage(config.maxListCount, config.maxListCountSchedule, pages))
    const from = config.ignoreOffset === true ? 0 : offset
    const conditions = applied(endpoint, asked, () => store.page(0, FIELDS_FROM, []).records)
    const key = `${from}/${served}/${JSON.stringify(conditions)}`
    const cached = bodies.get(key)
    if (cached !== undefined) return cached
    const page = store.page(from, served, conditions)
    const exact = store.mayHoldExact && page.records.some(Exact.holdsExact)
    const answered: Answered = {
      body: Envelope.success(page.records, exact),
      records: page.records.length,
      hidden: page.hidden
    }
    if (cachedChars + answered.body.length > MAX_CACHED_CHARS) {
      bodies.clear()
      cachedChars = 0
    }
    bodies.set(key, answered)
    cachedChars += answered.body.length
    return answered
  }

  const getInvoice = (params: URLSearchParams): Answered => {
    const id = params.get("id")
    const number = params.get("number")
    if (id === null && number === null) return fail("id or number is required")
    const table = config.invoices
    // Both selectors: the invoice of that number, if it has that id (as for partners).
    const byNumber = table !== undefined && number !== null ? table.byNumber(number) : undefined
    const found = table === undefined
      ? undefined
      : number !== null
      ? byNumber !== undefined && (id === null || String(byNumber.id) === id) ? byNumber : undefined
      : table.byId(id!)
    return found === undefined ? fail(config.messages.notFound) : { body: Envelope.success(found) }
  }

  const get = (params: URLSearchParams): Answered => {
    const id = params.get("id")
    const name = params.get("company_name")
    if (id === null && name === null) return fail("id or company_name is required")
    // Any decimal integer is an id, also one beyond a double (an `id-beyond-double` partner's).
    const idValue = id !== null && /^\d+$/.test(id) ? BigInt(id) : undefined
    const named = name !== null ? store.byName(name) : undefined
    const found = id !== null && name !== null
      // Both selectors: the contract does not say (docs/erp-api-v2.md, "Gaps in the endpoint list"); the partner of
      // that name, if it serves that id.
      ? named !== undefined && idValue !== undefined && BigInt(String(named.id)) === idValue ? named : undefined
      : name !== null
      ? named
      : idValue === undefined
      ? undefined
      : store.byId(idValue.toString())
    return found === undefined
      ? fail(config.messages.notFound)
      : { body: Envelope.success(found, store.mayHoldExact && Exact.holdsExact(found)) }
  }

  const getDeclared = (table: Resources.Table, params: URLSearchParams): Answered => {
    const found = table.find(params)
    return found === "missing"
      ? fail(`${table.lookups.join(" or ")} is required`)
      : found === undefined
      ? fail(config.messages.notFound)
      : { body: Envelope.success(found) }
  }

  return (endpoint, params, keyValid) => {
    if (!keyValid) return fail(config.messages.unauthorized)
    switch (endpoint) {
      case "/partner/list":
      case "/invoice/list":
        return list(endpoint, params)
      case "/partner/get":
        return get(params)
      case "/invoice/get":
        return getInvoice(params)
    }
    const table = config.resources?.find((table) => table.get === endpoint)
    // Only endpoints `endpointOf` knows arrive here: one not a get endpoint is a declared list.
    return table === undefined ? list(endpoint, params) : getDeclared(table, params)
  }
}
