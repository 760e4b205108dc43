import * as Option from "effect/Option"
import type * as Sandbox from "../Sandbox.js"
import * as Envelope from "./envelope.js"
import type * as PartnerStore from "./partnerStore.js"

/**
 * What the answers depend on.
 *
 * @internal
 */
export interface Config {
  readonly store: PartnerStore.PartnerStore
  /** The largest page served. */
  readonly maxListCount: number
  /** The page served when `list_count` is absent; refused when `undefined`. */
  readonly defaultListCount: number | undefined
  readonly messages: Envelope.Messages
  /** Runs right before each list answer (drift), after the request was found valid. */
  readonly beforeList: () => void
}

/**
 * The body text of the normal answer to a request that the rate limit let through and no fault replaced.
 *
 * @internal
 */
export type Answer = (endpoint: Sandbox.Endpoint, params: URLSearchParams, keyValid: boolean) => string

// The contract says clients send both paging parameters; only plain decimal integers are accepted, so a client
// that sends `1e3`, `-1` or nothing sees an error instead of a guess.
const nonNegativeInt = (value: string | null): Option.Option<number> => {
  if (value === null || !/^\d+$/.test(value)) return Option.none()
  const n = Number(value)
  return Number.isSafeInteger(n) ? Option.some(n) : Option.none()
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
// again and again, and generating and serializing them is most of the sandbox's work per request. Any insert or
// delete drops them all; the cache holds at most this many characters (about 2 bytes each).
const MAX_CACHED_CHARS = 16 * 1024 * 1024

/** @internal */
export const make = (config: Config): Answer => {
  const { store } = config
  const bodies = new Map<string, string>()
  let cachedChars = 0
  let bodiesVersion = store.version()

  const list = (params: URLSearchParams): string => {
    const offset = nonNegativeInt(params.get("list_offset"))
    const countParam = params.get("list_count")
    const count = countParam === null && config.defaultListCount !== undefined
      ? Option.some(config.defaultListCount)
      : nonNegativeInt(countParam)
    if (Option.isNone(offset)) return Envelope.failure("list_offset is required and must be a non-negative integer")
    if (Option.isNone(count)) return Envelope.failure("list_count is required and must be a non-negative integer")
    const conditions = conditionsOf(params)
    config.beforeList()
    if (store.version() !== bodiesVersion) {
      bodies.clear()
      cachedChars = 0
      bodiesVersion = store.version()
    }
    const served = Math.min(count.value, config.maxListCount)
    const key = `${offset.value}/${served}/${JSON.stringify(conditions)}`
    const cached = bodies.get(key)
    if (cached !== undefined) return cached
    const body = Envelope.success(store.page(offset.value, served, conditions))
    if (cachedChars + body.length > MAX_CACHED_CHARS) {
      bodies.clear()
      cachedChars = 0
    }
    bodies.set(key, body)
    cachedChars += body.length
    return body
  }

  const get = (params: URLSearchParams): string => {
    const id = params.get("id")
    const name = params.get("company_name")
    if (id === null && name === null) return Envelope.failure("id or company_name is required")
    const byId = id === null ? Option.none() : Option.flatMap(nonNegativeInt(id), store.byId)
    const byName = name === null ? Option.none() : store.byName(name)
    // Both selectors: the contract does not say (docs/erp-api-v2.md, "Gaps in the endpoint list"); they must agree.
    const found = id !== null && name !== null
      ? Option.filter(byId, (partner) => Option.exists(byName, (other) => other.id === partner.id))
      : id !== null
      ? byId
      : byName
    return Option.match(found, { onNone: () => Envelope.failure(config.messages.notFound), onSome: Envelope.success })
  }

  return (endpoint, params, keyValid) => {
    if (!keyValid) return Envelope.failure(config.messages.unauthorized)
    return endpoint === "/partner/list" ? list(params) : get(params)
  }
}
